// `compare` on hand-built pairs of reports: a swapped HCA, a slower pair, a faster one, a missing
// node, a busbw regression, a GPU's memory worn since the baseline.
#include <gtest/gtest.h>

#include "collectives/collective_model.hpp"
#include "verbs/verbs_model.hpp"
#include "facts.hpp"
#include "report/compare.hpp"

namespace fabricproof {
namespace {

using test::with_id;
using test::with_id_and_subject;

// Two nodes with one HCA each, one verbs pair (write_bw each way, latency) and an allreduce sweep.
Report report(double a_to_b_gbps, double busbw_8m, const std::string& node2_guid = "0c42:a103:0062:b420") {
  auto hca = [](const std::string& pci, const std::string& guid) {
    auto d = test::hca("mlx5_0", test::ib_port());
    d.pci = pci;
    d.node_guid = guid;
    d.serial_number = "MT2421600" + guid.substr(guid.size() - 4);  // the VPD serial travels with the board
    return d;
  };
  auto c = test::cluster({test::node("node1", {hca("0000:41:00.0", "0c42:a103:0062:b410")}), test::node("node2", {hca("0000:41:00.0", node2_guid)})});
  Report r;
  set_cluster(r, c);
  VerbsSection v;
  v.endpoints = {{"node1", "mlx5_0", 1, 0, std::nullopt, "InfiniBand", 200.0, 4096, "ACTIVE", "", "", ""},
                 {"node2", "mlx5_0", 1, 1, std::nullopt, "InfiniBand", 200.0, 4096, "ACTIVE", "", "", ""}};
  PairResult p;
  p.a = 0;
  p.b = 1;
  VerbsOptions o;
  o.tests = {"write_bw", "write_lat"};
  p.tests = planned_results(o, 0, 1);
  for (auto& t : p.tests) {
    if (t.test == "write_bw") t.gbps = t.from == 0 ? a_to_b_gbps : 190.0;
    if (t.test == "write_lat") t.latency = LatencyStats{1.0, 1.1, 1.1, 1.4, 2.0, 1000};
  }
  v.pairs = {p};
  r.verbs = v;
  CollResult res;
  res.engine = "nccl";
  res.op = "allreduce";
  res.nodes = 2;
  res.ranks = 8;
  for (uint64_t bytes : {64ull << 10, 8ull << 20}) {
    CollRow row;
    row.bytes = bytes;
    row.out_of_place.busbw_GBps = bytes == (8ull << 20) ? busbw_8m : 1.0;
    res.rows.push_back(row);
  }
  r.collectives = CollectivesSection{};
  r.collectives->results = {res};
  return r;
}

TEST(Compare, IdenticalRunsPass) {
  const auto findings = compare_reports(report(190, 40), report(189, 39.5), 0.05);
  EXPECT_EQ(worst_verdict(findings), Verdict::pass);
  EXPECT_EQ(with_id(findings, "compare_verbs").size(), 3u);  // write_bw both ways, latency
  EXPECT_EQ(with_id(findings, "compare_busbw").size(), 1u) << "sizes below 1 MiB are not judged";
  EXPECT_TRUE(with_id(findings, "compare_component").empty());
}

TEST(Compare, SwappedHcaIsNamedBySlotWithOldAndNewIdentity) {
  const auto findings = compare_reports(report(190, 40), report(190, 40, "0c42:a103:00ff:0001"), 0.05);
  const auto changed = with_id_and_subject(findings, "compare_component", "node2 HCA 0000:41:00.0");
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].verdict, Verdict::warn);
  EXPECT_EQ(changed[0].measured["old"]["node_guid"], "0c42:a103:0062:b420");
  EXPECT_EQ(changed[0].measured["new"]["node_guid"], "0c42:a103:00ff:0001");
  EXPECT_EQ(changed[0].measured["old"]["serial"], "MT2421600b420");
  EXPECT_EQ(changed[0].measured["new"]["serial"], "MT24216000001");
}

TEST(Compare, SlowerPairFailsAndFasterPasses) {
  auto findings = compare_reports(report(190, 40), report(150, 40), 0.05);
  const auto slow = with_id_and_subject(findings, "compare_verbs", "node1/mlx5_0 -> node2/mlx5_0 (write_bw)");
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].verdict, Verdict::fail);
  EXPECT_NEAR(slow[0].measured["change"].get<double>(), 150.0 / 190 - 1, 1e-12);
  EXPECT_EQ(worst_verdict(findings), Verdict::fail);
  findings = compare_reports(report(150, 40), report(190, 40), 0.05);
  EXPECT_EQ(with_id_and_subject(findings, "compare_verbs", "node1/mlx5_0 -> node2/mlx5_0 (write_bw)").at(0).verdict, Verdict::pass);
}

TEST(Compare, MissingNodeFailsAndItsMeasurementsAreNotMeasured) {
  auto next = report(190, 40);
  next.nodes.pop_back();
  next.verbs->pairs.clear();
  const auto findings = compare_reports(report(190, 40), next, 0.05);
  EXPECT_EQ(with_id_and_subject(findings, "compare_node", "node2").at(0).verdict, Verdict::fail);
  for (const auto& f : with_id(findings, "compare_verbs")) EXPECT_EQ(f.verdict, Verdict::warn) << f.subject;
}

TEST(Compare, BusbwRegressionBeyondTheLimitFails) {
  const auto findings = compare_reports(report(190, 40), report(190, 37), 0.05);  // -7.5%
  const auto busbw = with_id(findings, "compare_busbw");
  ASSERT_EQ(busbw.size(), 1u);
  EXPECT_EQ(busbw[0].subject, "nccl allreduce 2 node(s) 8M");
  EXPECT_EQ(busbw[0].verdict, Verdict::fail);
  EXPECT_EQ(with_id(compare_reports(report(190, 40), report(190, 38.5), 0.05), "compare_busbw").at(0).verdict, Verdict::pass);  // -3.75%
}

// node2 gets one H100 whose memory NVML read: rows remapped (correctable, uncorrectable) and
// uncorrectable errors over the board's life.
void with_gpu(Report& r, const std::string& uuid, unsigned correctable, unsigned uncorrectable, uint64_t lifetime) {
  GpuFacts g;
  g.index = 0;
  g.name = "NVIDIA H100 80GB HBM3";
  g.pci = "0000:1b:00.0";
  g.uuid = uuid;
  g.memory_health.uncorrected_since_driver_load = 0;
  g.memory_health.uncorrected_lifetime = lifetime;
  g.memory_health.rows_remapped_correctable = correctable;
  g.memory_health.rows_remapped_uncorrectable = uncorrectable;
  g.memory_health.row_remap_pending = false;
  g.memory_health.row_remap_failed = false;
  r.nodes.at(1).gpus = {g};
}

TEST(Compare, GpuMemoryWornSinceTheBaselineWarnsAndUnchangedPasses) {
  const std::string uuid = "GPU-5a3c7e2f-0d41-4b8e-9f6a-2c1d0e9b8a77";
  auto base = report(190, 40), next = report(190, 40);
  with_gpu(base, uuid, 1, 0, 0);
  with_gpu(next, uuid, 3, 1, 2);
  auto gpu = with_id(compare_reports(base, next, 0.05), "compare_gpu_memory");
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(gpu[0].subject, "node2 GPU 0000:1b:00.0");
  EXPECT_EQ(gpu[0].verdict, Verdict::warn);
  EXPECT_EQ(gpu[0].measured["rows_remapped"]["baseline"], 1);
  EXPECT_EQ(gpu[0].measured["rows_remapped"]["new"], 4);
  EXPECT_EQ(gpu[0].measured["uncorrected_lifetime"]["new"], 2);
  EXPECT_NE(gpu[0].hint.find("3 row(s) remapped and 2 uncorrectable error(s) since the baseline"), std::string::npos) << gpu[0].hint;
  gpu = with_id(compare_reports(base, base, 0.05), "compare_gpu_memory");
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(gpu[0].verdict, Verdict::pass);
}

TEST(Compare, GpuMemoryOfASwappedOrUnreadBoardIsNotCompared) {
  auto base = report(190, 40), swapped = report(190, 40), unread = report(190, 40);
  with_gpu(base, "GPU-5a3c7e2f-0d41-4b8e-9f6a-2c1d0e9b8a77", 0, 0, 0);
  with_gpu(swapped, "GPU-0b9d1c44-7e20-4f3a-8c5d-61a2b3c4d5e6", 5, 0, 0);  // a replacement with a past of its own
  with_gpu(unread, "GPU-5a3c7e2f-0d41-4b8e-9f6a-2c1d0e9b8a77", 0, 0, 0);
  unread.nodes.at(1).gpus[0].memory_health = GpuMemoryHealth{};  // NVML not loaded: gpu_memory_health says not proven
  EXPECT_TRUE(with_id(compare_reports(base, swapped, 0.05), "compare_gpu_memory").empty());
  EXPECT_EQ(with_id_and_subject(compare_reports(base, swapped, 0.05), "compare_component", "node2 GPU 0000:1b:00.0").at(0).verdict, Verdict::warn);
  EXPECT_TRUE(with_id(compare_reports(base, unread, 0.05), "compare_gpu_memory").empty());
}

}  // namespace
}  // namespace fabricproof
