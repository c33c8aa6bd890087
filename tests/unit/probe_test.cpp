// The sysfs probe against fixture trees built from real layouts (tests/fixtures/sysfs/README.md)
// and the real sysfs subtrees of tests/fixtures/sysfs-samples/022.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "core/located_error.hpp"
#include "inventory/inventory_rules.hpp"
#include "inventory/pci_vpd.hpp"
#include "facts.hpp"
#include "paths.hpp"
#include "inventory/host.hpp"
#include "inventory/sysfs_rdma.hpp"

namespace fabricproof {
namespace {

namespace fs = std::filesystem;
using test::with_id;
using test::with_id_and_subject;

const RdmaDevice& device(const NodeFacts& n, const std::string& name) {
  for (const auto& d : n.rdma_devices)
    if (d.name == name) return d;
  throw std::runtime_error("no device " + name);
}

std::vector<Finding> judge(const NodeFacts& n) {
  ClusterFacts c;
  c.nodes = {n};
  c.world_size = 1;
  return check_inventory(c, default_profile(), {});
}

TEST(SysfsProbe, InfinibandHdrNodeFromSample001) {
  const NodeFacts n = probe::probe_node_files(test::fixture("sysfs/ib-hdr200-cx6"));
  EXPECT_TRUE(n.probe_errors.empty()) << n.probe_errors.front().source << ": " << n.probe_errors.front().message;
  EXPECT_EQ(n.host, "gpu-ib-01");
  EXPECT_EQ(n.software.os, "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(n.software.kernel, "5.15.0-105-generic");
  EXPECT_EQ(n.cpu_model, "AMD EPYC 7402 24-Core Processor");
  ASSERT_EQ(n.numa_nodes.size(), 2u);
  EXPECT_EQ(n.numa_nodes[1].cpus, "24-47");
  ASSERT_EQ(n.rdma_devices.size(), 2u);

  const auto& hdr = device(n, "mlx5_0");
  EXPECT_EQ(hdr.hca_type, "MT4123");
  EXPECT_EQ(hdr.fw_ver, "20.33.1048");
  EXPECT_EQ(hdr.node_guid, "1070:fd03:008e:b580");
  EXPECT_EQ(hdr.pci, "0000:41:00.0");
  EXPECT_EQ(hdr.driver, "mlx5_core");
  EXPECT_EQ(hdr.numa_node, 0);
  EXPECT_EQ(hdr.pcie.current_gen, 4);
  EXPECT_EQ(hdr.pcie.max_width, 16);
  ASSERT_EQ(hdr.ports.size(), 1u);
  const auto& p = hdr.ports[0];
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.phys_state, "LINK_UP");
  EXPECT_EQ(p.rate_gbps, 200);
  EXPECT_EQ(p.width_code, 2);
  EXPECT_EQ(p.speed_code, 64);
  EXPECT_EQ(p.link_layer, "InfiniBand");
  EXPECT_EQ(p.lid, 569);
  EXPECT_EQ(p.sm_lid, 393);
  EXPECT_FALSE(p.active_mtu);  // InfiniBand: only ibv_query_port knows it
  ASSERT_EQ(p.gids.size(), 1u);  // the zero GID at index 1 is an empty slot
  EXPECT_EQ(p.netdev, "ib0");
  EXPECT_EQ(p.netdev_mtu, 4092);
  EXPECT_EQ(p.counters.at("link_downed"), 1u);
  EXPECT_EQ(p.counters.count("lifespan"), 0u);

  const auto& down = device(n, "mlx5_1").ports.at(0);
  EXPECT_EQ(down.state, "DOWN");
  EXPECT_EQ(down.phys_state, "DISABLED");
  EXPECT_EQ(down.lid, 0xffff);
  EXPECT_EQ(down.sm_lid, 0);

  EXPECT_TRUE(n.software.mlx5_core.loaded);
  EXPECT_EQ(n.software.mlx5_core.flavor, "ofed");
  EXPECT_EQ(n.software.mlx5_core.version, "5.8-1.0.1");
  EXPECT_EQ(n.software.mlx5_core.path, "updates/dkms/mlx5_core.ko");
  EXPECT_EQ(n.software.nvidia_driver, "535.161.08");
  EXPECT_TRUE(n.software.nvidia_peermem.loaded);
  EXPECT_TRUE(n.software.nvidia_peermem_persisted);
  EXPECT_EQ(n.software.nvidia_peermem_persisted_in, "/etc/modules-load.d/nvidia-peermem.conf");

  ASSERT_EQ(n.gpus.size(), 1u);
  EXPECT_EQ(n.gpus[0].pci, "0000:47:00.0");
  EXPECT_EQ(n.gpus[0].driver, "nvidia");
  EXPECT_FALSE(n.gpus[0].index);
  EXPECT_EQ(n.gpus[0].pcie.current_gen, 1);

  const auto f = judge(n);
  EXPECT_EQ(with_id_and_subject(f, "port_state", "gpu-ib-01/mlx5_0:1")[0].verdict, Verdict::pass);
  EXPECT_EQ(with_id_and_subject(f, "port_state", "gpu-ib-01/mlx5_1:1")[0].verdict, Verdict::fail);
  EXPECT_EQ(with_id_and_subject(f, "ib_subnet_manager", "gpu-ib-01/mlx5_0:1")[0].verdict, Verdict::pass);
  EXPECT_EQ(with_id(f, "gpu_pcie_link")[0].verdict, Verdict::warn);  // idle GPU at Gen1
  EXPECT_EQ(with_id(f, "gpu_visible")[0].verdict, Verdict::fail);    // on the bus, no CUDA here
  EXPECT_EQ(with_id(f, "gpudirect_driver")[0].verdict, Verdict::pass);
}

TEST(SysfsProbe, RoceGidTablesFromSamples015And016) {
  const NodeFacts n = probe::probe_node_files(test::fixture("sysfs/roce-cx7-gid-tables"));
  EXPECT_TRUE(n.probe_errors.empty());
  const auto& a = device(n, "mlx5_0");
  EXPECT_EQ(a.sys_image_guid, device(n, "mlx5_1").sys_image_guid);  // two PFs of one card
  const auto& p = a.ports.at(0);
  EXPECT_EQ(p.link_layer, "Ethernet");
  ASSERT_EQ(p.gids.size(), 6u);
  EXPECT_EQ(p.gids[1].type, "RoCE v2");
  EXPECT_EQ(p.gids[4].type, "IB/RoCE v1");
  EXPECT_EQ(p.roce_v2_gid_index, 5);  // not 3: two link-local addresses come first
  EXPECT_EQ(p.netdev, "ens1f0");
  EXPECT_EQ(p.netdev_mtu, 9000);
  EXPECT_EQ(p.active_mtu, 4096);
  EXPECT_EQ(p.active_mtu_source, "netdev");
  EXPECT_EQ(p.qos.traffic_class, "Global tclass=106");
  EXPECT_EQ(p.qos.ecn_np_enabled_prio3, true);
  EXPECT_EQ(p.qos.default_roce_mode, "RoCE v2");  // configfs rdma_cm, where its entry exists
  EXPECT_EQ(p.qos.default_roce_tos, 106);
  EXPECT_EQ(p.qos.rdma_cm_unread, "");

  const auto& holes = device(n, "mlx5_1").ports.at(0);
  ASSERT_EQ(holes.gids.size(), 4u);
  EXPECT_EQ(holes.gids.front().index, 4);
  EXPECT_EQ(holes.roce_v2_gid_index, 7);
  EXPECT_EQ(holes.netdev_mtu, 1500);
  EXPECT_EQ(holes.active_mtu, 1024);
  EXPECT_FALSE(holes.qos.ecn_np_enabled_prio3);
  EXPECT_EQ(holes.qos.default_roce_mode, "");  // no entry: the reason, never a guess
  EXPECT_FALSE(holes.qos.default_roce_tos.has_value());
  EXPECT_EQ(holes.qos.rdma_cm_unread, "no rdma_cm configfs entry for mlx5_1 (created by mkdir /sys/kernel/config/rdma_cm/mlx5_1 as root)");

  // The birth certificate: both functions of the card answer the same VPD (sample 021's CX-7).
  EXPECT_EQ(a.part_number, "MCX755106AS-HEAT");
  EXPECT_EQ(a.serial_number, "MT24216006W0");
  EXPECT_EQ(device(n, "mlx5_1").serial_number, "MT24216006W0");
  EXPECT_EQ(a.board_name.rfind("NVIDIA ConnectX-7 Adapter Card, 200GbE / NDR200", 0), 0u);
  // A rank that is not its node's first leaves the VPD alone (slow reads, once per node).
  const NodeFacts other_rank = probe::probe_node_files(test::fixture("sysfs/roce-cx7-gid-tables"), /*read_vpd=*/false);
  EXPECT_EQ(device(other_rank, "mlx5_0").serial_number, "");

  EXPECT_EQ(n.software.mlx5_core.flavor, "inbox");
  EXPECT_EQ(n.software.mlx5_core.version, "");
  EXPECT_FALSE(n.software.nvidia_peermem.loaded);

  const auto f = judge(n);
  EXPECT_EQ(with_id_and_subject(f, "roce_mtu", "gpu-roce-02/mlx5_0:1")[0].verdict, Verdict::pass);
  EXPECT_EQ(with_id_and_subject(f, "roce_mtu", "gpu-roce-02/mlx5_1:1")[0].verdict, Verdict::fail);
  EXPECT_EQ(with_id_and_subject(f, "roce_netdev_mtu", "gpu-roce-02/mlx5_1:1")[0].verdict, Verdict::fail);
  EXPECT_EQ(with_id_and_subject(f, "roce_v2_gid", "gpu-roce-02/mlx5_1:1")[0].verdict, Verdict::pass);
  EXPECT_EQ(with_id_and_subject(f, "hca_pcie_link", "gpu-roce-02/mlx5_0")[0].verdict, Verdict::pass);
}

TEST(SysfsProbe, DowntrainedPcieLinkFromSample009) {
  const NodeFacts n = probe::probe_node_files(test::fixture("sysfs/pcie-gen3-cx6dx"));
  const auto& d = device(n, "mlx5_2");
  EXPECT_EQ(d.pci, "0000:30:00.0");
  EXPECT_EQ(d.board_id, "FB_0000000025");
  EXPECT_EQ(d.pcie.current_gen, 3);
  EXPECT_EQ(d.pcie.max_gen, 4);
  EXPECT_EQ(d.pcie.current_width, 16);
  EXPECT_EQ(d.ports.at(0).rate_gbps, 2.5);
  EXPECT_EQ(d.ports.at(0).roce_v2_gid_index, 3);
  const auto f = with_id(judge(n), "hca_pcie_link");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_EQ(f[0].measured, "Gen3 x16");
  EXPECT_EQ(f[0].expected, "Gen4 x16");
}

// The sample stores sysfs symlinks as text files holding the link target; make them links.
void materialize_links(const fs::path& root) {
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    const auto name = entry.path().filename().string();
    const bool link_like = entry.path().parent_path().filename() == "infiniband" || name == "device";
    if (!link_like) continue;
    std::ifstream in(entry.path());
    std::string target;
    std::getline(in, target);
    if (target.rfind("../", 0) != 0) continue;
    in.close();
    fs::remove(entry.path());
    fs::create_symlink(target, entry.path());
  }
}

TEST(SysfsProbe, RealSysfsSubtreesOfSample022) {
  const fs::path sample = test::fixture("sysfs-samples/022-sysfs-ib-ports");  // its README: where it was published
  ASSERT_TRUE(fs::exists(sample)) << sample;
  test::TempDir tmp("sample022");
  fs::copy(sample, tmp.path(), fs::copy_options::recursive);
  for (auto& entry : fs::recursive_directory_iterator(tmp.path())) fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add);

  const fs::path mlx4_root = tmp.path() / "mlx4-fdr-stampede-c412-603";
  materialize_links(mlx4_root);
  probe::FileReader files(mlx4_root);
  std::vector<Absence> absent;
  auto devices = probe::read_rdma_devices(files, absent);
  ASSERT_EQ(devices.size(), 1u);
  const auto& mlx4 = devices[0];
  EXPECT_EQ(mlx4.name, "mlx4_0");
  EXPECT_EQ(mlx4.fw_ver, "2.11.500");
  EXPECT_EQ(mlx4.hca_type, "MT4099");
  EXPECT_EQ(mlx4.pci, "0000:82:00.0");
  EXPECT_EQ(mlx4.numa_node, 1);
  const auto& p = mlx4.ports.at(0);
  EXPECT_EQ(p.state, "ACTIVE");
  EXPECT_EQ(p.phys_state, "LINK_UP");
  EXPECT_EQ(p.rate_gbps, 56);
  EXPECT_EQ(p.width, "4X");
  EXPECT_EQ(p.speed_name, "FDR");
  EXPECT_EQ(p.link_layer, "InfiniBand");
  EXPECT_EQ(p.lid, 0x3a4);
  EXPECT_EQ(p.sm_lid, 0x1);
  EXPECT_FALSE(p.roce_v2_gid_index);
  EXPECT_EQ(p.netdev, "ib0");  // IPoIB, datagram mode
  EXPECT_EQ(p.netdev_mtu, 2044);

  const fs::path qib_root = tmp.path() / "qib-qdr-qle7340";
  materialize_links(qib_root);
  probe::FileReader qib_files(qib_root);
  auto qib = probe::read_rdma_devices(qib_files, absent);
  ASSERT_EQ(qib.size(), 1u);
  EXPECT_EQ(qib[0].ports.at(0).rate_gbps, 40);
  EXPECT_EQ(qib[0].ports.at(0).speed_name, "QDR");
  EXPECT_EQ(qib[0].ports.at(0).lid, 0x12a);
  EXPECT_TRUE(qib[0].pci.empty());  // the dump has no device link for qib0
}

TEST(SysfsProbe, UnreadableSysfsIsAProbeErrorNotACrash) {
  test::TempDir tmp("unreadable");
  fs::create_directories(tmp.path() / "sys" / "class");
  fs::create_symlink("infiniband", tmp.path() / "sys" / "class" / "infiniband");  // a loop: ELOOP
  const NodeFacts n = probe::probe_node_files(tmp.path());
  bool named = false;
  for (const auto& e : n.probe_errors) named |= e.source == "/sys/class/infiniband";
  EXPECT_TRUE(named);
  EXPECT_TRUE(n.rdma_devices.empty());
  const auto f = judge(n);
  EXPECT_FALSE(with_id(f, "probe_read").empty());
  EXPECT_EQ(with_id(f, "probe_read")[0].verdict, Verdict::error);
}

TEST(SysfsProbe, EmptyRootReportsAbsenceWithReasons) {
  test::TempDir tmp("empty");
  const NodeFacts n = probe::probe_node_files(tmp.path());
  EXPECT_TRUE(n.rdma_devices.empty());
  ASSERT_GE(n.absent.size(), 2u);
  EXPECT_EQ(n.absent[0].what, "rdma_devices");
  EXPECT_NE(n.absent[0].reason.find("no /sys/class/infiniband"), std::string::npos);
  const auto absent = [&](const std::string& what) {
    return std::any_of(n.absent.begin(), n.absent.end(), [&](const auto& a) { return a.what == what; });
  };
  EXPECT_TRUE(absent("gpus"));
  EXPECT_TRUE(absent("addresses"));  // a saved tree has no netlink: said, not silently empty
  ASSERT_EQ(n.probe_errors.size(), 1u);  // no hostname: the node cannot be named
  EXPECT_EQ(n.probe_errors[0].source, "/proc/sys/kernel/hostname");
}

TEST(HostProbe, RelevantEnvironmentKeepsOnlyWhatChecksNeed) {
  const char* vars[] = {"NCCL_IB_GID_INDEX=3", "PATH=/usr/bin", "UCX_TLS=rc", "CUDA_VISIBLE_DEVICES=0,1", "FABRICPROOF_X=1", "NCCLX=no", nullptr};
  auto env = probe::relevant_environment(const_cast<char**>(vars));
  EXPECT_EQ(env.size(), 4u);
  EXPECT_EQ(env.at("NCCL_IB_GID_INDEX"), "3");
  EXPECT_EQ(env.count("PATH"), 0u);
  EXPECT_FALSE(probe::cpus_allowed().empty());
}

// PCI VPD bytes: the fixture's (sample 021, lspci -vvv) parse with a good checksum; damaged ones
// give an error that says what is wrong instead of a wrong serial.
TEST(PciVpd, ParsesTheConnectX7SampleAndRejectsDamage) {
  std::ifstream in(test::fixture("sysfs/roce-cx7-gid-tables/sys/devices/pci0000:16/0000:16:00.0/0000:17:00.0/vpd"), std::ios::binary);
  ASSERT_TRUE(in);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const PciVpd vpd = parse_pci_vpd(bytes);
  EXPECT_EQ(vpd.part_number, "MCX755106AS-HEAT");
  EXPECT_EQ(vpd.serial_number, "MT24216006W0");
  EXPECT_EQ(vpd.engineering_change, "A8");
  EXPECT_TRUE(vpd.checksum_ok);

  std::string flipped = bytes;
  flipped[10] ^= 0x01;  // one bit in the product name
  EXPECT_FALSE(parse_pci_vpd(flipped).checksum_ok);

  const auto cut = failure_of([&] { parse_pci_vpd(bytes.substr(0, 40)); });
  ASSERT_TRUE(cut);
  EXPECT_NE(cut->find("claims"), std::string::npos) << *cut;
  EXPECT_THROW(parse_pci_vpd(std::string(64, '\xff')), LocatedError);
  EXPECT_THROW(parse_pci_vpd(""), LocatedError);
}

}  // namespace
}  // namespace fabricproof
