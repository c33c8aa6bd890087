// GPU <-> HCA path classes on real machines: the hwloc XML exports in tests/fixtures/topologies, each
// class checked against the ground truth in that folder's README (derived by hand from the trees),
// including the pair that the XML cannot decide.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "inventory/topology.hpp"
#include "inventory/topology_rules.hpp"
#include "report/markdown.hpp"
#include "report/report.hpp"
#include "facts.hpp"
#include "paths.hpp"
#include "inventory/hwloc_topology.hpp"

namespace fabricproof {
namespace {

namespace fs = std::filesystem;

// GPU (name or PCI id) -> HCA (name) -> class.
using Truth = std::map<std::string, std::map<std::string, std::string>>;

class RealTopology : public ::testing::Test {
 protected:
  TopologyFacts read(const std::string& file) {
    const auto path = test::fixture("topologies") / file;
    if (!fs::exists(path)) return {};
    auto facts = topology::read_topology(path.string());
    EXPECT_EQ(facts.error, "") << file;
    return facts;
  }

  static int find(const std::vector<TopoDevice>& list, const std::string& key) {
    for (size_t i = 0; i < list.size(); ++i)
      if (list[i].name == key || list[i].pci == key || list[i].pci == "0000:" + key) return static_cast<int>(i);
    return -1;
  }

  void expect_truth(const std::string& file, const Truth& truth, size_t gpus, size_t hcas) {
    ASSERT_TRUE(fs::exists(test::fixture("topologies") / file)) << file;
    const auto facts = read(file);
    ASSERT_EQ(facts.gpus.size(), gpus) << file;
    ASSERT_EQ(facts.hcas.size(), hcas) << file;
    for (const auto& [gpu, row] : truth) {
      const int g = find(facts.gpus, gpu);
      ASSERT_GE(g, 0) << file << ": no GPU " << gpu;
      for (const auto& [hca, expected] : row) {
        const int h = find(facts.hcas, hca);
        ASSERT_GE(h, 0) << file << ": no HCA " << hca;
        EXPECT_EQ(facts.classes[g][h], expected) << file << ": " << gpu << " <-> " << hca;
      }
    }
  }
};

TEST_F(RealTopology, Xe8640WithSncAndPcieGen5Switches) {
  expect_truth("flux-core__ipa20__xe8640-4xH100-cx7-cx6.xml",
               {{"cuda1", {{"mlx5_2", "PIX"}, {"mlx5_0", "SYS"}, {"mlx5_1", "SYS"}, {"mlx5_3", "SYS"}}},
                {"cuda0", {{"mlx5_2", "SYS"}, {"mlx5_0", "PIX"}, {"mlx5_1", "PIX"}, {"mlx5_3", "SYS"}}},
                {"cuda3", {{"mlx5_2", "SYS"}, {"mlx5_0", "SYS"}, {"mlx5_1", "SYS"}, {"mlx5_3", "PIX"}}},
                {"cuda2", {{"mlx5_2", "SYS"}, {"mlx5_0", "SYS"}, {"mlx5_1", "SYS"}, {"mlx5_3", "SYS"}}}},
               4, 4);
  if (IsSkipped() || HasFatalFailure()) return;  // the helper skipped or failed: nothing to look into
  const auto facts = read("flux-core__ipa20__xe8640-4xH100-cx7-cx6.xml");
  EXPECT_EQ(facts.gpus[find(facts.gpus, "cuda0")].numa_node, 3);  // SNC4: NUMA node, not socket
  EXPECT_EQ(facts.hcas[find(facts.hcas, "mlx5_0")].port_state, "ACTIVE");
  EXPECT_EQ(facts.hcas[find(facts.hcas, "mlx5_1")].port_state, "DOWN");
}

TEST_F(RealTopology, JuwelsBoosterOnePairPerSwitchAndNps4) {
  expect_truth("psmgmt__topo.jwb0004__juwels-booster-4xA100-4xHDR.xml",
               {{"44:00.0", {{"mlx5_1", "PIX"}, {"mlx5_0", "SYS"}, {"mlx5_3", "SYS"}, {"mlx5_2", "SYS"}}},
                {"03:00.0", {{"mlx5_1", "SYS"}, {"mlx5_0", "PIX"}, {"mlx5_3", "SYS"}, {"mlx5_2", "SYS"}}},
                {"c4:00.0", {{"mlx5_1", "SYS"}, {"mlx5_0", "SYS"}, {"mlx5_3", "PIX"}, {"mlx5_2", "SYS"}}},
                {"84:00.0", {{"mlx5_1", "SYS"}, {"mlx5_0", "SYS"}, {"mlx5_3", "SYS"}, {"mlx5_2", "PIX"}}}},
               4, 4);
}

TEST_F(RealTopology, MeluxinaHwloc1FormatWithGpusWithoutLocalHca) {
  expect_truth("psmgmt__topo.mel2001__meluxina-4xA100-2xHDR.xml",
               {{"44:00.0", {{"mlx5_0", "PIX"}, {"mlx5_1", "SYS"}}},
                {"03:00.0", {{"mlx5_0", "SYS"}, {"mlx5_1", "SYS"}}},
                {"c3:00.0", {{"mlx5_0", "SYS"}, {"mlx5_1", "SYS"}}},
                {"84:00.0", {{"mlx5_0", "SYS"}, {"mlx5_1", "PIX"}}}},
               4, 2);
  if (IsSkipped() || HasFatalFailure()) return;
  const auto facts = read("psmgmt__topo.mel2001__meluxina-4xA100-2xHDR.xml");
  EXPECT_EQ(facts.hcas[find(facts.hcas, "mlx5_0")].port_state, "DOWN");  // the PIX HCA of 44:00.0 is down
}

TEST_F(RealTopology, JuwelsClusterTwoGpusAndAnHcaPerPlxSwitch) {
  expect_truth("psmgmt__topo.jwc09n003__juwels-cluster-4xV100-2xEDR.xml",
               {{"5d:00.0", {{"mlx5_0", "PIX"}, {"mlx5_1", "SYS"}}},
                {"5e:00.0", {{"mlx5_0", "PIX"}, {"mlx5_1", "SYS"}}},
                {"88:00.0", {{"mlx5_0", "SYS"}, {"mlx5_1", "PIX"}}},
                {"89:00.0", {{"mlx5_0", "SYS"}, {"mlx5_1", "PIX"}}}},
               4, 2);
}

TEST_F(RealTopology, LassenSocketDirectHcaIsNodeAcrossHostBridges) {
  expect_truth("mpibind__coral-lassen__power9-4xV100-cx5-socketdirect.xml",
               {{"cuda0", {{"mlx5_0", "NODE"}, {"mlx5_1", "NODE"}, {"mlx5_2", "SYS"}, {"mlx5_3", "SYS"}}},
                {"cuda1", {{"mlx5_0", "NODE"}, {"mlx5_1", "NODE"}, {"mlx5_2", "SYS"}, {"mlx5_3", "SYS"}}},
                {"cuda2", {{"mlx5_0", "SYS"}, {"mlx5_1", "SYS"}, {"mlx5_2", "NODE"}, {"mlx5_3", "NODE"}}},
                {"cuda3", {{"mlx5_0", "SYS"}, {"mlx5_1", "SYS"}, {"mlx5_2", "NODE"}, {"mlx5_3", "NODE"}}}},
               4, 4);
  EXPECT_EQ(nccl_path_class("NODE"), "PHB");  // NCCL's name for the same path
}

TEST_F(RealTopology, PascalTwoGpusAndHcaUnderOneSwitch) {
  expect_truth("mpibind__cts1-pascal__2xP100-cx5-one-switch.xml", {{"cuda0", {{"mlx5_0", "PIX"}}}, {"cuda1", {{"mlx5_0", "PIX"}}}}, 2, 1);
}

TEST_F(RealTopology, Juropa3WithoutIoLocalityIsUnknownNotGuessed) {
  expect_truth("psmgmt__topo.j3c053__juropa3-2xK20X-cx3-no-io-locality.xml",
               {{"01:00.0", {{"mlx4_0", "PHB"}}}, {"82:00.0", {{"mlx4_0", "unknown"}}}}, 2, 1);
}

TEST_F(RealTopology, Dgx2GpuPairsCoverPixPxbNodeSys) {
  const std::string file = "hwloc__nvidiaDGX2__16xV100-gpus-only.xml";
  ASSERT_TRUE(fs::exists(test::fixture("topologies") / file)) << file;
  const auto loaded = topology::load((test::fixture("topologies") / file).string());
  // hwloc 3 exported this file (format 3.0); Debian 12's hwloc 2.9 cannot import it.
  if (loaded.error.find("is newer than this hwloc") != std::string::npos) GTEST_SKIP() << loaded.error;
  ASSERT_EQ(loaded.error, "");
  ASSERT_EQ(loaded.gpus.size(), 16u) << "NVSwitches are not GPUs";
  EXPECT_TRUE(loaded.hcas.empty());
  auto object = [&](const std::string& name) {
    for (size_t i = 0; i < loaded.gpus.size(); ++i)
      if (loaded.gpus[i].name == name) return loaded.gpu_objects[i];
    ADD_FAILURE() << "no " << name;
    return -1;
  };
  EXPECT_EQ(path_class(loaded.tree, object("nvml0"), object("nvml1")), "PIX");
  EXPECT_EQ(path_class(loaded.tree, object("nvml0"), object("nvml2")), "PXB");
  EXPECT_EQ(path_class(loaded.tree, object("nvml0"), object("nvml4")), "NODE");
  EXPECT_EQ(path_class(loaded.tree, object("nvml0"), object("nvml8")), "SYS");
  EXPECT_EQ(path_class(loaded.tree, object("nvml12"), object("nvml15")), "NODE");
}

// A node whose PCI tree is a real machine's export, driven by one rank with `env`.
ClusterFacts node_with(const std::string& file, std::map<std::string, std::string> env = {}) {
  auto n = test::node("gpu01", {}, 1);
  n.topology = topology::read_topology((test::fixture("topologies") / file).string());
  n.ranks[0].env = std::move(env);
  return test::cluster({n});
}

std::map<std::string, Verdict> path_verdicts(const std::vector<Finding>& findings) {
  std::map<std::string, Verdict> out;
  for (const auto& f : test::with_id(findings, "gpu_hca_path")) out[f.subject] = f.verdict;
  return out;
}

TEST_F(RealTopology, EveryGpuWithAnHcaInItsSwitchPasses) {
  const auto v = path_verdicts(check_topology(node_with("psmgmt__topo.jwb0004__juwels-booster-4xA100-4xHDR.xml"), default_profile()));
  ASSERT_EQ(v.size(), 4u);
  for (const auto& [subject, verdict] : v) EXPECT_EQ(verdict, Verdict::pass) << subject;
}

TEST_F(RealTopology, GpusWhoseClosestHcaIsAcrossNumaWarn) {
  const auto findings = check_topology(node_with("psmgmt__topo.mel2001__meluxina-4xA100-2xHDR.xml"), default_profile());
  const auto v = path_verdicts(findings);
  EXPECT_EQ(v.at("gpu01/0000:44:00.0 (0000:44:00.0)"), Verdict::pass);
  EXPECT_EQ(v.at("gpu01/0000:03:00.0 (0000:03:00.0)"), Verdict::warn);
  EXPECT_EQ(v.at("gpu01/0000:c3:00.0 (0000:c3:00.0)"), Verdict::warn);
  for (const auto& f : test::with_id_and_subject(findings, "gpu_hca_path", "gpu01/0000:03:00.0 (0000:03:00.0)")) {
    EXPECT_EQ(f.measured["class"], "SYS");
    EXPECT_NE(f.hint.find("another NUMA node"), std::string::npos) << f.hint;
  }
}

TEST_F(RealTopology, NodeClassWarnsAndGdrLevelIsCheckedAgainstIt) {
  const std::string lassen = "mpibind__coral-lassen__power9-4xV100-cx5-socketdirect.xml";
  auto findings = check_topology(node_with(lassen, {{"NCCL_NET_GDR_LEVEL", "PXB"}}), default_profile());
  for (const auto& [subject, verdict] : path_verdicts(findings)) EXPECT_EQ(verdict, Verdict::warn) << subject;
  auto level = test::with_id(findings, "nccl_net_gdr_level");
  ASSERT_EQ(level.size(), 1u);
  EXPECT_EQ(level[0].verdict, Verdict::warn);
  EXPECT_EQ(level[0].measured["gpus_without_gdr"].size(), 4u);  // NODE is PHB to NCCL, beyond PXB
  findings = check_topology(node_with(lassen, {{"NCCL_NET_GDR_LEVEL", "PHB"}}), default_profile());
  EXPECT_EQ(test::with_id(findings, "nccl_net_gdr_level").at(0).verdict, Verdict::pass);
  findings = check_topology(node_with(lassen, {{"NCCL_NET_GDR_LEVEL", "near"}}), default_profile());
  EXPECT_EQ(test::with_id(findings, "nccl_net_gdr_level").at(0).verdict, Verdict::warn);
  EXPECT_TRUE(test::with_id(check_topology(node_with(lassen), default_profile()), "nccl_net_gdr_level").empty());
}

TEST_F(RealTopology, UnknownLocalityIsSkippedNotJudged) {
  const auto v = path_verdicts(check_topology(node_with("psmgmt__topo.j3c053__juropa3-2xK20X-cx3-no-io-locality.xml"), default_profile()));
  EXPECT_EQ(v.at("gpu01/0000:82:00.0 (0000:82:00.0)"), Verdict::skip);
  EXPECT_EQ(v.at("gpu01/0000:01:00.0 (0000:01:00.0)"), Verdict::warn);  // PHB
}

TEST_F(RealTopology, MarkdownShowsThePathMatrix) {
  Report report;
  set_cluster(report, node_with("psmgmt__topo.jwc09n003__juwels-cluster-4xV100-2xEDR.xml"));
  const auto md = render_markdown(report);
  EXPECT_NE(md.find("## GPU-HCA paths on gpu01"), std::string::npos);
  EXPECT_NE(md.find("| 0000:5d:00.0 (NUMA 0) | PIX | SYS |"), std::string::npos) << md;
  // and the facts survive the report's JSON round trip
  const auto back = nlohmann::json(report).get<Report>();
  ASSERT_TRUE(back.nodes.at(0).topology);
  EXPECT_EQ(back.nodes[0].topology->classes, report.nodes[0].topology->classes);
}

TEST(Topology, GdrLevelNamesAndLegacyNumbers) {
  EXPECT_EQ(parse_gdr_level("PIX"), 1);
  EXPECT_EQ(parse_gdr_level("phb"), 3);
  EXPECT_EQ(parse_gdr_level("SYS"), 4);
  EXPECT_EQ(parse_gdr_level("2"), 2);
  EXPECT_EQ(parse_gdr_level("5"), 4);
  EXPECT_FALSE(parse_gdr_level("NODE"));
  EXPECT_FALSE(parse_gdr_level(""));
}

TEST(Topology, CascadedSwitchesArePxb) {
  // Machine(NUMA 0) -> host bridge -> root port -> upper switch up -> {down -> lower up -> down -> GPU A,
  //                                                                    down -> lower up -> down -> GPU B}
  using K = TopoObject::Kind;
  TopoTree t;
  auto add = [&](int parent, K kind) {
    t.objects.push_back({parent, kind, kind == K::cpu_side ? std::vector<int>{0} : std::vector<int>{}});
    return static_cast<int>(t.objects.size()) - 1;
  };
  const int machine = add(-1, K::cpu_side), host = add(machine, K::host_bridge), root = add(host, K::bridge), up = add(root, K::bridge);
  const int a = add(add(add(add(up, K::bridge), K::bridge), K::bridge), K::pci_device);
  const int b = add(add(add(add(up, K::bridge), K::bridge), K::bridge), K::pci_device);
  const int lower_up = t.objects[static_cast<size_t>(t.objects[static_cast<size_t>(a)].parent)].parent;
  const int c = add(add(lower_up, K::bridge), K::pci_device);
  EXPECT_EQ(path_class(t, a, b), "PXB");
  EXPECT_EQ(path_class(t, a, c), "PIX");
  EXPECT_EQ(path_class(t, a, add(add(host, K::bridge), K::pci_device)), "PHB");
  EXPECT_EQ(path_class(t, a, 999), "unknown");
}

TEST(Topology, BadXmlIsNamedNotThrown) {
  test::TempDir tmp("topo");
  const auto bad = tmp.path() / "broken.xml";
  std::ofstream(bad) << "<topology><object type=";
  const auto facts = topology::read_topology(bad.string());
  EXPECT_NE(facts.error.find(bad.string()), std::string::npos) << facts.error;
  EXPECT_TRUE(facts.gpus.empty());
}

TEST(Topology, ThisMachineLoads) {
  const auto facts = topology::read_topology();
  EXPECT_EQ(facts.error, "");
  EXPECT_NE(facts.source.find("hwloc"), std::string::npos);
  EXPECT_EQ(facts.classes.size(), facts.gpus.size());
}

TEST(Topology, PathRanksOrderClosestFirst) {
  EXPECT_LT(path_rank("PIX"), path_rank("PXB"));
  EXPECT_LT(path_rank("PHB"), path_rank("NODE"));
  EXPECT_LT(path_rank("SYS"), path_rank("unknown"));
}

}  // namespace
}  // namespace fabricproof
