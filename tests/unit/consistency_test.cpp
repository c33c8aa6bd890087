#include "inventory/consistency.hpp"

#include <gtest/gtest.h>

#include "facts.hpp"

namespace fabricproof {
namespace {

using test::cluster;
using test::hca;
using test::node;
using test::roce_port;
using test::with_id;

ClusterFacts four_roce_nodes() {
  return cluster({node("node1", {hca("rxe0", roce_port())}), node("node2", {hca("rxe0", roce_port())}),
                  node("node3", {hca("rxe0", roce_port())}), node("node4", {hca("rxe0", roce_port())})});
}

TEST(Consistency, IdenticalNodesPassEveryAttribute) {
  auto f = check_consistency(four_roce_nodes(), default_profile());
  EXPECT_GE(f.size(), 15u);
  for (const auto& finding : f) EXPECT_EQ(finding.verdict, Verdict::pass) << finding.id;
}

TEST(Consistency, MtuFaultNamesTheOddNode) {
  auto c = four_roce_nodes();
  c.nodes[2].rdma_devices[0].ports[0].netdev_mtu = 1500;
  c.nodes[2].rdma_devices[0].ports[0].active_mtu = 1024;
  auto f = check_consistency(c, default_profile());
  for (const char* id : {"consistency_netdev_mtus", "consistency_active_mtus"}) {
    auto rows = with_id(f, id);
    ASSERT_EQ(rows.size(), 1u) << id;
    EXPECT_EQ(rows[0].verdict, Verdict::fail) << id;
    EXPECT_NE(rows[0].hint.find("node3"), std::string::npos) << rows[0].hint;
    EXPECT_EQ(rows[0].hint.find("node1"), std::string::npos) << rows[0].hint;
  }
  auto netdev = with_id(f, "consistency_netdev_mtus")[0];
  EXPECT_EQ(netdev.expected, "9000");
  EXPECT_EQ(netdev.measured["1500"], nlohmann::json({"node3"}));
  EXPECT_EQ(netdev.measured["9000"], nlohmann::json({"node1", "node2", "node4"}));
}

TEST(Consistency, FirmwareDriverAndLibraryMismatchesFail) {
  auto c = four_roce_nodes();
  c.nodes[1].rdma_devices[0].fw_ver = "20.31.1014";
  c.nodes[3].software.nccl = "2.18.3";
  c.nodes[0].software.mlx5_core = {true, "", "kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko", "inbox", ""};
  auto f = check_consistency(c, default_profile());
  EXPECT_NE(with_id(f, "consistency_hca_firmware")[0].hint.find("node2"), std::string::npos);
  EXPECT_NE(with_id(f, "consistency_nccl_version")[0].hint.find("node4 (2.18.3)"), std::string::npos);
  EXPECT_NE(with_id(f, "consistency_mlx5_driver")[0].hint.find("node1 (inbox"), std::string::npos);
  for (const char* id : {"consistency_hca_firmware", "consistency_nccl_version", "consistency_mlx5_driver"})
    EXPECT_EQ(with_id(f, id)[0].verdict, Verdict::fail) << id;
}

TEST(Consistency, MissingHcaChangesCountAndModels) {
  auto c = four_roce_nodes();
  c.nodes[3].rdma_devices.clear();
  auto f = check_consistency(c, default_profile());
  auto count = with_id(f, "consistency_hca_count")[0];
  EXPECT_EQ(count.verdict, Verdict::fail);
  EXPECT_NE(count.hint.find("node4 (0)"), std::string::npos) << count.hint;
}

TEST(Consistency, KernelSkewIsJudgedByTheOsKernelSetting) {
  auto c = four_roce_nodes();
  c.nodes[0].software.kernel = "6.1.0-57-amd64";
  auto kernel = with_id(check_consistency(c, default_profile()), "consistency_kernel")[0];
  EXPECT_EQ(kernel.verdict, Verdict::warn);
}

TEST(Consistency, TieHasNoMajorityAndNamesEveryNode) {
  auto c = cluster({node("a", {hca("mlx5_0", roce_port())}), node("b", {hca("mlx5_0", roce_port())})});
  c.nodes[1].software.cuda_runtime = "12.2";
  auto f = with_id(check_consistency(c, default_profile()), "consistency_cuda_runtime")[0];
  EXPECT_EQ(f.verdict, Verdict::fail);
  EXPECT_EQ(f.expected, "one value on every node (no majority)");
  EXPECT_NE(f.hint.find("a (12.4)"), std::string::npos);
  EXPECT_NE(f.hint.find("b (12.2)"), std::string::npos);
}

TEST(Consistency, OneNodeIsSkippedWithTheReason) {
  auto f = check_consistency(cluster({node("solo", {})}), default_profile());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].verdict, Verdict::skip);
}

TEST(Consistency, ProfileDeviceListLimitsWhatIsCompared) {
  auto c = four_roce_nodes();
  c.nodes[0].rdma_devices.push_back(hca("mlx5_9", roce_port()));  // e.g. a storage NIC on one node
  auto only_rxe = load_profile_text(R"({"schema": "fabricproof.profile/1", "name": "x", "ports": {"devices": ["rxe0"]}})", "x.json").profile.value();
  EXPECT_EQ(with_id(check_consistency(c, only_rxe), "consistency_hca_count")[0].verdict, Verdict::pass);
  EXPECT_EQ(with_id(check_consistency(c, default_profile()), "consistency_hca_count")[0].verdict, Verdict::fail);
}

}  // namespace
}  // namespace fabricproof
