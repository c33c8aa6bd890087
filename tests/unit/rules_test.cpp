// Every inventory rule with a passing and a failing case, on hand-built facts.
#include <gtest/gtest.h>

#include "inventory/inventory_rules.hpp"
#include "facts.hpp"

namespace fabricproof {
namespace {

using test::cluster;
using test::hca;
using test::ib_port;
using test::node;
using test::roce_port;
using test::with_id;
using test::with_id_and_subject;

std::vector<Finding> judge(const ClusterFacts& c, const Profile& p = default_profile(), InventoryCheckOptions o = {}) {
  return check_inventory(c, p, o);
}

Profile profile_from(const std::string& json) {
  auto load = load_profile_text(json, "test.json");
  EXPECT_TRUE(load.profile) << (load.errors.empty() ? "" : load.errors.front());
  return *load.profile;
}

TEST(PortState, ActiveLinkUpPasses) {
  auto f = with_id(judge(cluster({node("n1", {hca("mlx5_0", ib_port())})})), "port_state");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::pass);
  EXPECT_EQ(f[0].subject, "n1/mlx5_0:1");
}

TEST(PortState, DisabledPortFailsWithCableHint) {
  auto port = ib_port();
  port.state = "DOWN";
  port.phys_state = "DISABLED";
  auto f = with_id(judge(cluster({node("n1", {hca("mlx5_1", port)})})), "port_state");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_EQ(f[0].measured, "DOWN/DISABLED");
  EXPECT_NE(f[0].hint.find("administratively disabled"), std::string::npos);
}

TEST(PortState, InitWithLinkUpOnInfinibandPointsAtTheSubnetManager) {
  auto port = ib_port();
  port.state = "INIT";
  auto f = with_id(judge(cluster({node("n1", {hca("mlx5_0", port)})})), "port_state");
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_NE(f[0].hint.find("subnet manager"), std::string::npos);
}

TEST(PortState, RocePortWithDownNetdevNamesTheNetdev) {
  auto port = roce_port();
  port.state = "DOWN";
  port.phys_state = "DISABLED";
  port.netdev = "eth1";
  port.netdev_operstate = "down";
  auto f = with_id(judge(cluster({node("n1", {hca("rxe0", port)})})), "port_state");
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_NE(f[0].hint.find("ip link set eth1 up"), std::string::npos) << f[0].hint;
}

TEST(PortRate, PortBelowItsPeersFailsWhenTheProfileSetsNoRate) {
  auto c = cluster({node("n1", {hca("mlx5_0", ib_port(200))}), node("n2", {hca("mlx5_0", ib_port(100))})});
  auto f = judge(c);
  auto slow = with_id_and_subject(f, "port_rate", "n2/mlx5_0:1");
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].verdict, Verdict::fail);
  EXPECT_EQ(slow[0].expected, 200.0);
  EXPECT_NE(slow[0].hint.find("Cable or transceiver"), std::string::npos);
  EXPECT_EQ(with_id_and_subject(f, "port_rate", "n1/mlx5_0:1")[0].verdict, Verdict::pass);
}

TEST(PortRate, ProfileRateIsTheExpectation) {
  auto profile = load_profile("ib-hdr200-4x4").profile.value();
  EXPECT_EQ(with_id(judge(cluster({node("n1", {hca("mlx5_0", ib_port(200))})}), profile), "port_rate")[0].verdict, Verdict::pass);
  EXPECT_EQ(with_id(judge(cluster({node("n1", {hca("mlx5_0", ib_port(100))})}), profile), "port_rate")[0].verdict, Verdict::fail);
  EXPECT_EQ(with_id(judge(cluster({node("n1", {hca("mlx5_0", ib_port(400))})}), profile), "port_rate")[0].verdict, Verdict::warn);
}

TEST(PortRate, DownPortsHaveNoRateFinding) {
  auto port = ib_port(10);  // ibstat's placeholder rate of a port without link
  port.state = "DOWN";
  port.phys_state = "POLLING";
  EXPECT_TRUE(with_id(judge(cluster({node("n1", {hca("mlx5_0", port)})})), "port_rate").empty());
}

TEST(LinkLayer, MustMatchTheProfile) {
  auto profile = load_profile("ib-hdr200-4x4").profile.value();
  EXPECT_EQ(with_id(judge(cluster({node("n1", {hca("mlx5_0", ib_port())})}), profile), "port_link_layer")[0].verdict, Verdict::pass);
  auto f = with_id(judge(cluster({node("n1", {hca("mlx5_0", roce_port())})}), profile), "port_link_layer");
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_EQ(f[0].measured, "Ethernet");
  EXPECT_TRUE(with_id(judge(cluster({node("n1", {hca("mlx5_0", ib_port())})})), "port_link_layer").empty());
}

TEST(Roce, HealthyPortPassesEveryRoceRule) {
  auto f = judge(cluster({node("n1", {hca("mlx5_0", roce_port())})}));
  for (const char* id : {"roce_mtu", "roce_netdev_mtu", "roce_v2_gid"}) {
    auto rows = with_id(f, id);
    ASSERT_EQ(rows.size(), 1u) << id;
    EXPECT_EQ(rows[0].verdict, Verdict::pass) << id;
  }
  EXPECT_TRUE(with_id(f, "ib_subnet_manager").empty());
}

TEST(Roce, Mtu1500FailsBothMtuRulesWithTheMtuHint) {
  auto port = roce_port();
  port.netdev_mtu = 1500;
  port.active_mtu = 1024;
  auto f = judge(cluster({node("n3", {hca("rxe0", port)})}));
  auto mtu = with_id(f, "roce_mtu");
  EXPECT_EQ(mtu[0].verdict, Verdict::fail);
  EXPECT_EQ(mtu[0].measured["active_mtu"], 1024);
  EXPECT_EQ(mtu[0].expected, 4096);
  EXPECT_NE(mtu[0].hint.find("MTU first"), std::string::npos);
  auto netdev = with_id(f, "roce_netdev_mtu");
  EXPECT_EQ(netdev[0].verdict, Verdict::fail);
  EXPECT_EQ(netdev[0].measured["mtu"], 1500);
}

TEST(Roce, ProfileSetsTheMtuThresholds) {
  auto port = roce_port();
  port.netdev_mtu = 4200;
  auto profile = profile_from(R"({"schema": "fabricproof.profile/1", "name": "x", "roce": {"min_netdev_mtu": 4200}})");
  EXPECT_EQ(with_id(judge(cluster({node("n1", {hca("mlx5_0", port)})}), profile), "roce_netdev_mtu")[0].verdict, Verdict::pass);
}

TEST(Roce, MissingNetdevIsAnError) {
  auto port = roce_port();
  port.netdev.clear();
  port.netdev_mtu.reset();
  EXPECT_EQ(with_id(judge(cluster({node("n1", {hca("mlx5_0", port)})})), "roce_netdev_mtu")[0].verdict, Verdict::error);
}

TEST(Roce, NoRoceV2GidFails) {
  auto port = roce_port();
  port.gids = {{0, "fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8", "IB/RoCE v1", "ens1f0"}};
  port.roce_v2_gid_index.reset();
  auto f = with_id(judge(cluster({node("n1", {hca("mlx5_0", port)})})), "roce_v2_gid");
  EXPECT_EQ(f[0].verdict, Verdict::fail);
}

TEST(Roce, NcclGidIndexMustPointAtRoceV2) {
  auto n = node("n1", {hca("mlx5_0", roce_port())});
  EXPECT_TRUE(with_id(judge(cluster({n})), "nccl_gid_index").empty());  // not set: nothing to check
  n.ranks[0].env["NCCL_IB_GID_INDEX"] = "2";                            // RoCE v1 at index 2
  auto bad = with_id(judge(cluster({n})), "nccl_gid_index");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].verdict, Verdict::fail);
  EXPECT_EQ(bad[0].measured["type_at_index"], "IB/RoCE v1");
  EXPECT_NE(bad[0].hint.find("NCCL_IB_GID_INDEX=3"), std::string::npos) << bad[0].hint;
  n.ranks[0].env["NCCL_IB_GID_INDEX"] = "3";
  EXPECT_EQ(with_id(judge(cluster({n})), "nccl_gid_index")[0].verdict, Verdict::pass);
  n.ranks[0].env["NCCL_IB_GID_INDEX"] = "17";  // an empty slot
  EXPECT_EQ(with_id(judge(cluster({n})), "nccl_gid_index")[0].verdict, Verdict::fail);
}

TEST(Infiniband, LidAndSmLidMustBeAssigned) {
  EXPECT_EQ(with_id(judge(cluster({node("n1", {hca("mlx5_0", ib_port())})})), "ib_subnet_manager")[0].verdict, Verdict::pass);
  auto port = ib_port();
  port.state = "INIT";
  port.lid = 0xffff;  // sample 006: LID 0xffff while the SM has not configured the port
  port.sm_lid = 0;
  auto f = with_id(judge(cluster({node("n1", {hca("mlx5_0", port)})})), "ib_subnet_manager");
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_NE(f[0].hint.find("opensm"), std::string::npos);
}

TEST(Pcie, DowntrainedHcaFailsAndHealthyPasses) {
  auto healthy = cluster({node("n1", {hca("mlx5_0", roce_port())})});
  EXPECT_EQ(with_id(judge(healthy), "hca_pcie_link")[0].verdict, Verdict::pass);
  auto gen3 = healthy;
  gen3.nodes[0].rdma_devices[0].pcie = {8.0, 16.0, 3, 4, 16, 16};  // sample 009: Gen4 card at Gen3
  auto f = with_id(judge(gen3), "hca_pcie_link");
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_EQ(f[0].measured, "Gen3 x16");
  EXPECT_EQ(f[0].expected, "Gen4 x16");
  auto x8 = healthy;
  x8.nodes[0].rdma_devices[0].pcie = {16.0, 16.0, 4, 4, 8, 16};
  EXPECT_EQ(with_id(judge(x8), "hca_pcie_link")[0].verdict, Verdict::fail);
  auto virtual_device = healthy;
  virtual_device.nodes[0].rdma_devices[0].pcie = {};
  EXPECT_EQ(with_id(judge(virtual_device), "hca_pcie_link")[0].verdict, Verdict::skip);
}

TEST(Pcie, IdleGpuSpeedWarnsButLostLanesFail) {
  auto c = cluster({node("n1", {})});
  GpuFacts gpu;
  gpu.index = 0;
  gpu.pcie = {2.5, 16.0, 1, 4, 16, 16};  // sample 021: idle GPU at Gen1
  c.nodes[0].gpus = {gpu};
  EXPECT_EQ(with_id(judge(c), "gpu_pcie_link")[0].verdict, Verdict::warn);
  c.nodes[0].gpus[0].pcie = {16.0, 16.0, 4, 4, 8, 16};
  EXPECT_EQ(with_id(judge(c), "gpu_pcie_link")[0].verdict, Verdict::fail);
  c.nodes[0].gpus[0].pcie = {16.0, 16.0, 4, 4, 16, 16};
  EXPECT_EQ(with_id(judge(c), "gpu_pcie_link")[0].verdict, Verdict::pass);
}

ClusterFacts gpu_and_hca_node() {
  auto c = cluster({node("n1", {hca("mlx5_0", ib_port())})});
  GpuFacts gpu;
  gpu.index = 0;
  gpu.name = "NVIDIA A100-SXM4-40GB";
  gpu.pcie = {16.0, 16.0, 4, 4, 16, 16};
  c.nodes[0].gpus = {gpu};
  return c;
}

TEST(GpuDirect, PeermemLoadedAndPersistedPasses) {
  auto c = gpu_and_hca_node();
  c.nodes[0].software.nvidia_peermem.loaded = true;
  c.nodes[0].software.nvidia_peermem_persisted = true;
  c.nodes[0].software.nvidia_peermem_persisted_in = "/etc/modules-load.d/nvidia-peermem.conf";
  auto f = judge(c);
  EXPECT_EQ(with_id(f, "gpudirect_driver")[0].verdict, Verdict::pass);
  EXPECT_EQ(with_id(f, "peermem_persisted")[0].verdict, Verdict::pass);
  c.nodes[0].software.nvidia_peermem_persisted = false;
  EXPECT_EQ(with_id(judge(c), "peermem_persisted")[0].verdict, Verdict::warn);
}

TEST(GpuDirect, NeitherPeermemNorDmabufFailsWithLoadOrderHint) {
  auto c = gpu_and_hca_node();
  auto f = with_id(judge(c), "gpudirect_driver");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_NE(f[0].hint.find("install OFED first, then the NVIDIA driver"), std::string::npos);
}

TEST(GpuDirect, DmabufOnBothSidesIsEnough) {
  auto c = gpu_and_hca_node();
  c.nodes[0].gpus[0].dmabuf_supported = true;
  c.nodes[0].rdma_devices[0].dmabuf_supported = true;
  EXPECT_EQ(with_id(judge(c), "gpudirect_driver")[0].verdict, Verdict::pass);
  c.nodes[0].rdma_devices[0].dmabuf_supported = false;
  EXPECT_EQ(with_id(judge(c), "gpudirect_driver")[0].verdict, Verdict::fail);
}

TEST(GpuDirect, NoFindingWithoutBothGpusAndHcas) {
  EXPECT_TRUE(with_id(judge(cluster({node("n1", {hca("mlx5_0", ib_port())})})), "gpudirect_driver").empty());
}

TEST(Counts, ProfileCountsOfHcasAndGpus) {
  auto profile = load_profile("ib-hdr200-4x4").profile.value();
  auto c = gpu_and_hca_node();
  auto f = judge(c, profile);
  EXPECT_EQ(with_id(f, "hca_count")[0].verdict, Verdict::fail);
  EXPECT_EQ(with_id(f, "hca_count")[0].measured, 1);
  EXPECT_EQ(with_id(f, "gpu_count")[0].verdict, Verdict::fail);
  auto full = c;
  full.nodes[0].rdma_devices = {hca("mlx5_0", ib_port()), hca("mlx5_1", ib_port()), hca("mlx5_2", ib_port()), hca("mlx5_3", ib_port())};
  full.nodes[0].gpus = {c.nodes[0].gpus[0], c.nodes[0].gpus[0], c.nodes[0].gpus[0], c.nodes[0].gpus[0]};
  for (int i = 0; i < 4; ++i) full.nodes[0].gpus[i].index = i;
  auto g = judge(full, profile);
  EXPECT_EQ(with_id(g, "hca_count")[0].verdict, Verdict::pass);
  EXPECT_EQ(with_id(g, "gpu_count")[0].verdict, Verdict::pass);
}

TEST(Counts, NodeWithoutHcaWarnsWithTheReasonUnderTheDefaultProfile) {
  auto c = cluster({node("n1", {})});
  c.nodes[0].absent.push_back({"rdma_devices", "no /sys/class/infiniband: no RDMA driver loaded"});
  auto f = with_id(judge(c), "hca_count");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::warn);
  EXPECT_NE(f[0].hint.find("no RDMA driver loaded"), std::string::npos);
  EXPECT_TRUE(with_id(judge(cluster({node("n1", {hca("mlx5_0", ib_port())})})), "hca_count").empty());
}

TEST(Counts, GpuOnThePciBusThatCudaCannotSeeFails) {
  auto c = cluster({node("n1", {})});
  GpuFacts gpu;
  gpu.pci = "0000:47:00.0";
  c.nodes[0].gpus = {gpu};
  auto f = with_id(judge(c), "gpu_visible");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_NE(f[0].hint.find("No driver is bound"), std::string::npos);
}

TEST(Counts, OneRankPerGpu) {
  auto c = gpu_and_hca_node();
  EXPECT_TRUE(with_id(judge(c), "rank_per_gpu").empty());  // 1 rank, 1 GPU
  c.nodes[0].ranks.push_back(c.nodes[0].ranks[0]);
  auto f = with_id(judge(c), "rank_per_gpu");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::warn);
  EXPECT_NE(f[0].hint.find("Duplicate GPU detected"), std::string::npos) << "what NCCL then says: " << f[0].hint;
}

// What an H100 with healthy memory reports (nvidia-smi -q -d ECC,ROW_REMAPPER).
GpuMemoryHealth healthy_memory() {
  GpuMemoryHealth h;
  h.ecc_enabled = true;
  h.ecc_enabled_after_reboot = true;
  h.uncorrected_since_driver_load = 0;
  h.uncorrected_lifetime = 0;
  h.rows_remapped_correctable = 0;
  h.rows_remapped_uncorrectable = 0;
  h.row_remap_pending = false;
  h.row_remap_failed = false;
  return h;
}

TEST(GpuMemory, HealthyMemoryWithEccOnPasses) {
  auto c = gpu_and_hca_node();
  c.nodes[0].gpus[0].memory_health = healthy_memory();
  auto f = judge(c);
  auto health = with_id_and_subject(f, "gpu_memory_health", "n1/gpu0");
  ASSERT_EQ(health.size(), 1u);
  EXPECT_EQ(health[0].verdict, Verdict::pass);
  EXPECT_EQ(health[0].measured["row_remap_pending"], false);
  ASSERT_EQ(with_id(f, "gpu_ecc").size(), 1u);
  EXPECT_EQ(with_id(f, "gpu_ecc")[0].verdict, Verdict::pass);
}

TEST(GpuMemory, EachProblemFailsNamingItAndTheFailedRemapComesFirst) {
  struct Case {
    const char* what;
    void (*set)(GpuMemoryHealth&);
    const char* measured;
    const char* hint;
  };
  const std::vector<Case> cases = {
      {"pending remap", [](GpuMemoryHealth& h) { h.row_remap_pending = true; }, "a row remap is pending", "nvidia-smi -r"},
      {"failed remap", [](GpuMemoryHealth& h) { h.row_remap_failed = true; h.row_remap_pending = true; },
       "row remapping failed; a row remap is pending", "RMA"},
      {"uncorrected errors", [](GpuMemoryHealth& h) { h.uncorrected_since_driver_load = 2; },
       "2 uncorrectable ECC error(s) since the driver loaded", "Xid 48"},
      {"pending page retirement", [](GpuMemoryHealth& h) { h.page_retirement_pending = true; }, "a page retirement is pending", "reboot"},
  };
  ASSERT_FALSE(cases.empty());
  for (const auto& k : cases) {
    auto c = gpu_and_hca_node();
    c.nodes[0].gpus[0].memory_health = healthy_memory();
    k.set(c.nodes[0].gpus[0].memory_health);
    auto f = with_id(judge(c), "gpu_memory_health");
    ASSERT_EQ(f.size(), 1u) << k.what;
    EXPECT_EQ(f[0].verdict, Verdict::fail) << k.what;
    EXPECT_EQ(f[0].measured, k.measured) << k.what;
    EXPECT_NE(f[0].hint.find(k.hint), std::string::npos) << k.what << ": " << f[0].hint;
  }
}

TEST(GpuMemory, NotReadIsNotProvenNeverHealthy) {
  auto c = gpu_and_hca_node();  // as a report from before the check: nothing read, no reason
  auto f = with_id(judge(c), "gpu_memory_health");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::not_proven);
  EXPECT_EQ(f[0].measured, "not read");
  EXPECT_TRUE(with_id(judge(c), "gpu_ecc").empty()) << "no ECC mode read, no ECC finding";
  c.nodes[0].gpus[0].memory_health.unread = "libnvidia-ml.so.1 not loadable: no such file";
  c.nodes[0].gpus[0].memory_health.ecc_enabled = true;  // the mode alone says nothing of errors
  f = with_id(judge(c), "gpu_memory_health");
  EXPECT_EQ(f[0].verdict, Verdict::not_proven);
  EXPECT_EQ(f[0].measured, "libnvidia-ml.so.1 not loadable: no such file");
}

TEST(GpuMemory, EccOffOrSwitchedOffAtTheNextRebootWarns) {
  auto c = gpu_and_hca_node();
  c.nodes[0].gpus[0].memory_health = healthy_memory();
  c.nodes[0].gpus[0].memory_health.ecc_enabled_after_reboot = false;
  auto f = with_id(judge(c), "gpu_ecc");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::warn);
  EXPECT_NE(f[0].hint.find("nvidia-smi -e 1"), std::string::npos);
  c.nodes[0].gpus[0].memory_health.ecc_enabled = false;
  c.nodes[0].gpus[0].memory_health.ecc_enabled_after_reboot = true;
  EXPECT_EQ(with_id(judge(c), "gpu_ecc")[0].verdict, Verdict::warn);
}

TEST(GpuMemory, AGpuCudaCannotSeeIsLeftToGpuVisible) {
  auto c = gpu_and_hca_node();
  c.nodes[0].gpus[0].index.reset();
  EXPECT_TRUE(with_id(judge(c), "gpu_memory_health").empty());
  EXPECT_EQ(with_id(judge(c), "gpu_visible").size(), 1u);
}

TEST(GpuMemory, TheHealthRoundTripsThroughTheReportsJson) {
  GpuFacts g;
  g.memory_health = healthy_memory();
  g.memory_health.rows_remapped_correctable = 3;
  const GpuFacts back = nlohmann::json(g).get<GpuFacts>();
  EXPECT_EQ(back.memory_health.rows_remapped_correctable, 3u);
  EXPECT_EQ(back.memory_health.row_remap_pending, false);
  EXPECT_FALSE(back.memory_health.page_retirement_pending.has_value());
  const GpuFacts old = nlohmann::json::parse(R"({"index": 0, "name": "NVIDIA H100"})").get<GpuFacts>();
  EXPECT_FALSE(old.memory_health.row_remap_pending.has_value()) << "a report from before the check reads as not read";
}

TEST(Clock, OffsetBeyondTheProfileFails) {
  auto c = cluster({node("n1", {}), node("n2", {})});
  c.nodes[1].clock_offset_s = 30.0;
  auto f = judge(c);
  EXPECT_EQ(with_id_and_subject(f, "clock_offset", "n1")[0].verdict, Verdict::pass);
  auto skewed = with_id_and_subject(f, "clock_offset", "n2");
  EXPECT_EQ(skewed[0].verdict, Verdict::fail);
  EXPECT_NE(skewed[0].hint.find("chrony"), std::string::npos);
}

TEST(ClusterShape, ExpectNodesMismatchNamesTheHostsFound) {
  auto c = cluster({node("node1", {}), node("node2", {}), node("node4", {})});
  auto f = with_id(judge(c, default_profile(), {4}), "node_count");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::fail);
  EXPECT_NE(f[0].hint.find("found 3 (node1, node2, node4)"), std::string::npos) << f[0].hint;
  EXPECT_EQ(with_id(judge(c, default_profile(), {3}), "node_count")[0].verdict, Verdict::pass);
  EXPECT_TRUE(with_id(judge(c), "node_count").empty());
  auto profile = load_profile("ib-hdr200-4x4").profile.value();  // cluster.nodes = 4
  EXPECT_EQ(with_id(judge(c, profile), "node_count")[0].verdict, Verdict::fail);
}

TEST(ClusterShape, SilentRanksAndProbeErrorsAreErrors) {
  auto c = cluster({node("n1", {})});
  c.missing_ranks = {3};
  c.nodes[0].probe_errors.push_back({"/sys/class/infiniband", "Too many levels of symbolic links"});
  auto f = judge(c);
  EXPECT_EQ(with_id(f, "rank_answered")[0].verdict, Verdict::error);
  EXPECT_EQ(with_id(f, "probe_read")[0].verdict, Verdict::error);
  EXPECT_TRUE(with_id(judge(cluster({node("n1", {})})), "rank_answered").empty());
}

}  // namespace
}  // namespace fabricproof
