// The collective sweeps' pure core: sizes and clipping, busbw factors, the verification pattern,
// and the scaling / ceiling / data rules on hand-built results.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "collectives/collective_model.hpp"
#include "collectives/collective_data.hpp"
#include "collectives/collective_rules.hpp"
#include "core/profile.hpp"
#include "facts.hpp"

namespace fabricproof {
namespace {

using test::with_id;

TEST(SweepSizes, EightBytesToEightGigabytesByTwoIs31Sizes) {
  const auto sizes = sweep_sizes(8, 8ull << 30, 2);
  ASSERT_EQ(sizes.size(), 31u);
  EXPECT_EQ(sizes.front(), 8u);
  EXPECT_EQ(sizes[1], 16u);
  EXPECT_EQ(sizes.back(), 8ull << 30);
}

TEST(SweepSizes, StopsAtTheMaximumAndHandlesOddFactors) {
  EXPECT_EQ(sweep_sizes(8, 64 << 20, 2).size(), 24u);  // 8 B .. 64 MiB: the integration test's rows
  EXPECT_EQ(sweep_sizes(1000, 1000000, 10), (std::vector<uint64_t>{1000, 10000, 100000, 1000000}));
  EXPECT_EQ(sweep_sizes(8, 100, 4), (std::vector<uint64_t>{8, 32}));
  EXPECT_EQ(sweep_sizes(8, 8, 2), (std::vector<uint64_t>{8}));
  EXPECT_TRUE(sweep_sizes(16, 8, 2).empty());
  EXPECT_TRUE(sweep_sizes(0, 8, 2).empty());
  EXPECT_EQ(sweep_sizes(8, 1024, 1), (std::vector<uint64_t>{8}));  // no growth: one size, never a loop
}

// nccl-tests' startColl: call i at span x (i mod buffer/span), inside the buffer, so that no two
// consecutive calls touch the same memory while the buffer holds two slices or more.
TEST(CallOffset, EveryCallTakesTheNextSliceAsNcclTestsDoes) {
  const uint64_t buffer = 1u << 30, span = 16u << 20;  // 16 MiB in a 1 GiB buffer: 64 slices
  EXPECT_EQ(coll_call_offset(span, buffer, 0), 0u);
  EXPECT_EQ(coll_call_offset(span, buffer, 1), span);
  EXPECT_EQ(coll_call_offset(span, buffer, 63), 63 * span);
  EXPECT_EQ(coll_call_offset(span, buffer, 64), 0u);
  for (int call = 0; call < 200; ++call) EXPECT_LE(coll_call_offset(span + 8, buffer, call) + span + 8, buffer) << call;
  EXPECT_EQ(coll_call_offset(buffer, buffer, 5), 0u) << "the top size has one slice";
  EXPECT_EQ(coll_call_offset(0, buffer, 5), 0u);
  EXPECT_EQ(coll_call_offset(buffer + 1, buffer, 5), 0u) << "never past the buffer";
}

TEST(SizeClip, KeepsTheTopSizeWhenItFits) {
  const auto clip = clip_max_bytes(8, 64 << 20, 2, 1ull << 30, 2, 1ull << 31, "test memory");
  EXPECT_EQ(clip.max_bytes, 64u << 20);
  EXPECT_TRUE(clip.reason.empty());
}

TEST(SizeClip, ClipsToTheLargestSweepSizeThatFitsAndSaysWhy) {
  // 3 GiB usable for two buffers: 1.5 GiB each, so 1 GiB is the largest power of two that fits.
  const auto clip = clip_max_bytes(8, 8ull << 30, 2, 3ull << 30, 2, UINT64_MAX / 8, "half of the node's memory");
  EXPECT_EQ(clip.max_bytes, 1ull << 30);
  EXPECT_NE(clip.reason.find("8G clipped to 1G"), std::string::npos) << clip.reason;
  EXPECT_NE(clip.reason.find("half of the node's memory"), std::string::npos) << clip.reason;
}

// MPI counts are int. 8 GiB of float is 2^31 elements, one more than INT_MAX: allreduce and
// broadcast split it into two calls; allgather, reduce_scatter and alltoall count per rank.
TEST(SizeClip, MpiIntCountsSplitWholeBuffersAndLimitPerRankCounts) {
  constexpr uint64_t kIntMax = 2147483647ull;
  EXPECT_EQ(max_call_bytes(CollOp::allreduce, DataType::float32, 4, kIntMax), UINT64_MAX);
  EXPECT_EQ(max_call_bytes(CollOp::broadcast, DataType::float64, 4, kIntMax), UINT64_MAX);
  const uint64_t float_per_rank = (kIntMax / 4 * 4) * 4;  // whole 16-byte groups of float
  EXPECT_EQ(max_call_bytes(CollOp::allgather, DataType::float32, 4, kIntMax), float_per_rank * 4);
  EXPECT_EQ(max_call_bytes(CollOp::alltoall, DataType::float64, 1, kIntMax), (kIntMax / 2 * 2) * 8);
  const auto clip = clip_max_bytes(8, 32ull << 30, 2, 1ull << 40, 2, max_call_bytes(CollOp::reduce_scatter, DataType::float32, 1, kIntMax), "plenty");
  EXPECT_EQ(clip.max_bytes, 4ull << 30) << "2^31 - 4 floats per rank on one rank: 8 GiB does not fit, 4 GiB does";
  EXPECT_NE(clip.reason.find("one call takes at most"), std::string::npos) << clip.reason;
  const auto pieces = split_count(1ull << 31, kIntMax);  // 8 GiB of float
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0], (std::pair<uint64_t, uint64_t>{0, kIntMax}));
  EXPECT_EQ(pieces[1], (std::pair<uint64_t, uint64_t>{kIntMax, 1}));
  for (const auto& [offset, count] : split_count(5ull << 31, kIntMax)) EXPECT_LE(count, kIntMax) << offset;
  EXPECT_TRUE(split_count(0, kIntMax).empty());
}

TEST(SizeClip, NothingFitsGivesZero) {
  EXPECT_EQ(clip_max_bytes(1024, 4096, 2, 1000, 2, UINT64_MAX / 8, "tiny").max_bytes, 0u);
}

TEST(BusBandwidth, FactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::allreduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::allreduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::allreduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::allreduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::allgather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::reduce_scatter, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::alltoall, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::broadcast, 32), 1.0);
}

TEST(BusBandwidth, TimingUsesDecimalGigabytes) {
  const auto t = coll_timing(CollOp::allreduce, 1000000000, 4, 0.5, 3);
  EXPECT_DOUBLE_EQ(t.time_us, 500000);
  EXPECT_DOUBLE_EQ(t.algbw_GBps, 2.0);
  EXPECT_DOUBLE_EQ(t.busbw_GBps, 3.0);
  EXPECT_EQ(t.wrong, 3u);
}

TEST(CallShape, ChunkedOpsSplitTheSizeAcrossRanks) {
  EXPECT_EQ(chunk_elements(CollOp::allreduce, 64, DataType::float32, 4), 16u);
  EXPECT_EQ(chunk_elements(CollOp::allgather, 64, DataType::float32, 4), 4u);
  EXPECT_EQ(call_elements(CollOp::allgather, 64, DataType::float32, 4), 16u);
  EXPECT_EQ(chunk_elements(CollOp::reduce_scatter, 8, DataType::float32, 4), 0u);  // too small: left out
  EXPECT_EQ(chunk_elements(CollOp::alltoall, 64, DataType::float64, 2), 4u);
  // Per-rank counts rounded down to 16 bytes, as nccl-tests sizes them: 1000 bytes of float on 3
  // ranks is 83 floats per rank in plain division, 80 (320 bytes) in nccl-tests.
  EXPECT_EQ(chunk_elements(CollOp::allgather, 1000, DataType::float32, 3), 80u);
  EXPECT_EQ(call_elements(CollOp::allgather, 1000, DataType::float32, 3) * 4, 960u);
  EXPECT_EQ(chunk_elements(CollOp::reduce_scatter, 1000, DataType::float64, 3), 40u);
  EXPECT_EQ(chunk_elements(CollOp::alltoall, 100, DataType::int32, 4), 4u);  // 6 per rank, 4 in whole 16 bytes
  EXPECT_EQ(chunk_elements(CollOp::allreduce, 1000, DataType::float32, 3), 250u) << "whole-buffer ops are not rounded";
  EXPECT_EQ(coll_input_elements(CollOp::reduce_scatter, 4, 4), 16u);
  EXPECT_EQ(coll_output_elements(CollOp::reduce_scatter, 4, 4), 4u);
  EXPECT_EQ(coll_output_elements(CollOp::allgather, 4, 4), 16u);
}

TEST(CallShape, NamesParseBothWays) {
  ASSERT_FALSE(collective_names().empty());
  for (const auto& name : collective_names()) EXPECT_EQ(to_string(*coll_op_from(name)), name);
  EXPECT_EQ(coll_op_from("reduce-scatter"), CollOp::reduce_scatter);
  EXPECT_FALSE(coll_op_from("allreduce2"));
  EXPECT_EQ(data_type_from("float32"), DataType::float32);
  EXPECT_EQ(size_of(*data_type_from("double")), 8);
  EXPECT_FALSE(data_type_from("half"));
  EXPECT_FALSE(reduce_op_from("prod"));
}

// A host simulation of each collective over `ranks` ranks, from the inputs coll_fill_input writes:
// the checker must accept the true result and count every corrupted element.
template <typename T>
std::vector<std::vector<T>> simulate(CollOp op, ReduceOp redop, int ranks, uint64_t chunk) {
  std::vector<std::vector<T>> in(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    in[r].resize(coll_input_elements(op, chunk, ranks));
    coll_fill_input(in[r].data(), in[r].size(), r);
  }
  std::vector<std::vector<T>> out(static_cast<size_t>(ranks), std::vector<T>(coll_output_elements(op, chunk, ranks)));
  for (int r = 0; r < ranks; ++r)
    for (uint64_t i = 0; i < out[r].size(); ++i) {
      switch (op) {
        case CollOp::allreduce:
        case CollOp::reduce_scatter: {
          const uint64_t at = op == CollOp::allreduce ? i : r * chunk + i;
          double v = in[0][at];
          for (int k = 1; k < ranks; ++k) v = coll_combine(redop, v, in[k][at]);
          out[r][i] = static_cast<T>(v);
          break;
        }
        case CollOp::allgather: out[r][i] = in[i / chunk][i % chunk]; break;
        case CollOp::broadcast: out[r][i] = in[0][i]; break;
        case CollOp::alltoall: out[r][i] = in[i / chunk][r * chunk + i % chunk]; break;
      }
    }
  return out;
}

TEST(Verification, TrueResultsPassAndCorruptionsAreCounted) {
  const int ranks = 5;
  const uint64_t chunk = 37;
  for (const auto& name : collective_names()) {
    const CollOp op = *coll_op_from(name);
    for (ReduceOp redop : {ReduceOp::sum, ReduceOp::max, ReduceOp::min}) {
      auto out = simulate<float>(op, redop, ranks, chunk);
      for (int r = 0; r < ranks; ++r)
        EXPECT_EQ(coll_count_wrong(out[r].data(), out[r].size(), op, redop, r, ranks, chunk), 0u) << name << " rank " << r;
      out[2][3] += 1;
      out[2][out[2].size() - 1] = 0;  // an element the call never wrote
      EXPECT_EQ(coll_count_wrong(out[2].data(), out[2].size(), op, redop, 2, ranks, chunk), 2u) << name;
    }
  }
}

TEST(Verification, ValuesStayExactInFloatAndInt) {
  // Sums of values in 1..16 over many ranks stay integers below 2^24: exact in float.
  EXPECT_EQ(coll_reduced_value(ReduceOp::sum, 1024, 12345), static_cast<float>(coll_reduced_value(ReduceOp::sum, 1024, 12345)));
  for (uint64_t i = 0; i < 64; ++i) {
    EXPECT_GE(coll_input_value(3, i), 1);
    EXPECT_LE(coll_input_value(3, i), 16);
  }
  EXPECT_NE(coll_input_value(0, 5), coll_input_value(1, 5));  // ranks differ: a swapped chunk is caught
  const auto out = simulate<int32_t>(CollOp::allreduce, ReduceOp::sum, 3, 8);
  EXPECT_EQ(coll_count_wrong(out[1].data(), out[1].size(), CollOp::allreduce, ReduceOp::sum, 1, 3, 8), 0u);
}

TEST(Verification, InPlaceOffsetsMatchNcclAndMpi) {
  EXPECT_EQ(coll_in_place_offset(CollOp::allreduce, 3, 100), 0);
  EXPECT_EQ(coll_in_place_offset(CollOp::allgather, 3, 100), 300);
  EXPECT_EQ(coll_in_place_offset(CollOp::reduce_scatter, 3, 100), 0) << "the input is the whole buffer";
  EXPECT_EQ(coll_in_place_offset(CollOp::alltoall, 3, 100), -1);
}

// The pattern has no short period: ranks 16 apart and blocks shifted by 16 (64 bytes of float) or
// any other distance differ, where the old (7 i + 13 r) mod 16 pattern repeated.
TEST(Verification, PatternHasNoShortPeriodInRankOrIndex) {
  constexpr uint64_t n = 4096;
  for (const int other : {1, 16, 32, 256}) {
    uint64_t same = 0;
    for (uint64_t i = 0; i < n; ++i) same += coll_input_value(0, i) == coll_input_value(other, i);
    EXPECT_LT(same, n / 8) << "rank 0 and rank " << other << " send nearly the same data";
  }
  for (const uint64_t shift : {1ull, 4ull, 16ull, 64ull, 1024ull}) {
    uint64_t same = 0;
    for (uint64_t i = 0; i < n; ++i) same += coll_input_value(5, i) == coll_input_value(5, i + shift);
    EXPECT_LT(same, n / 8) << "a block shifted by " << shift << " elements would go unseen";
  }
  // A 16-element (64-byte) shift of rank 1's allgather chunk is caught.
  const auto out = simulate<float>(CollOp::allgather, ReduceOp::sum, 4, 64);
  ASSERT_EQ(out[2].size(), 4u * 64);
  auto shifted = out[2];
  for (size_t i = 64; i + 16 < 128; ++i) shifted[i] = out[2][i + 16];
  EXPECT_GT(coll_count_wrong(shifted.data(), shifted.size(), CollOp::allgather, ReduceOp::sum, 2, 4, 64), 40u);
}

TEST(Scaling, GroupsAreOneTwoFourAndAll) {
  EXPECT_EQ(scaling_node_counts(4), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(scaling_node_counts(1), (std::vector<int>{1}));
  EXPECT_EQ(scaling_node_counts(6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(scaling_node_counts(8), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_TRUE(scaling_node_counts(0).empty());
}

// ---- rules ----

CollResult result(const std::string& engine, int nodes, std::vector<std::pair<uint64_t, double>> busbw, uint64_t wrong = 0) {
  CollResult r;
  r.engine = engine;
  r.op = "allreduce";
  r.nodes = nodes;
  r.ranks = nodes * 4;
  for (int i = 0; i < nodes; ++i) r.hosts.push_back("node" + std::to_string(i + 1));
  for (auto [bytes, b] : busbw) {
    CollRow row;
    row.bytes = bytes;
    row.count = bytes / 4;
    row.out_of_place.busbw_GBps = b;
    row.out_of_place.wrong = wrong;
    r.rows.push_back(row);
  }
  r.peak_busbw_GBps = peak_busbw(r.rows);
  return r;
}

ClusterFacts four_nodes(int nics, double rate) {
  std::vector<NodeFacts> nodes;
  for (int i = 1; i <= 4; ++i) {
    std::vector<RdmaDevice> devices;
    for (int d = 0; d < nics; ++d) devices.push_back(test::hca("mlx5_" + std::to_string(d), test::ib_port(rate)));
    nodes.push_back(test::node("node" + std::to_string(i), devices, 4));
  }
  return test::cluster(nodes);
}

TEST(CollectiveRules, FiveTimesDropFromOneToTwoNodesFailsAsNoRdma) {
  const auto cluster = four_nodes(4, 200);
  const auto findings = check_collectives({result("nccl", 1, {{1 << 20, 100}, {8ull << 30, 180}}),
                                           result("nccl", 2, {{1 << 20, 20}, {8ull << 30, 12}})},
                                          cluster, default_profile());
  const auto scaling = with_id(findings, "collective_scaling");
  ASSERT_EQ(scaling.size(), 1u);
  EXPECT_EQ(scaling[0].verdict, Verdict::fail);
  EXPECT_EQ(scaling[0].measured["bytes"], 8ull << 30);
  EXPECT_DOUBLE_EQ(scaling[0].measured["drop"].get<double>(), 15.0);
  EXPECT_NE(scaling[0].hint.find("RDMA not used"), std::string::npos);
}

TEST(CollectiveRules, HealthyScalingPassesAndMpiIsOnlyABaseline) {
  const auto cluster = four_nodes(4, 200);
  auto findings = check_collectives({result("nccl", 1, {{8ull << 30, 180}}), result("nccl", 2, {{8ull << 30, 90}})}, cluster,
                                    default_profile());
  EXPECT_EQ(with_id(findings, "collective_scaling").at(0).verdict, Verdict::pass);
  findings = check_collectives({result("mpi", 1, {{1 << 20, 10}}), result("mpi", 2, {{1 << 20, 0.5}})}, cluster, default_profile());
  EXPECT_EQ(with_id(findings, "collective_scaling").at(0).verdict, Verdict::skip);
  EXPECT_TRUE(with_id(findings, "collective_busbw").empty());
}

TEST(CollectiveRules, OneRankOnOneNodeCannotJudgeScaling) {
  auto one = result("nccl", 1, {{1 << 20, 0}});
  one.ranks = 1;
  const auto f = with_id(check_collectives({one, result("nccl", 2, {{1 << 20, 10}})}, four_nodes(1, 100), default_profile()),
                         "collective_scaling");
  EXPECT_EQ(f.at(0).verdict, Verdict::skip);
}

TEST(CollectiveRules, ScalingComparesTheLargestSizeBothGroupsRan) {
  // The 2-node sweep stopped early (an error): compare at 1 MiB, not at 8 GiB.
  const auto findings = check_collectives({result("nccl", 1, {{1 << 20, 50}, {8ull << 30, 180}}), result("nccl", 2, {{1 << 20, 40}})},
                                          four_nodes(4, 200), default_profile());
  const auto scaling = with_id(findings, "collective_scaling").at(0);
  EXPECT_EQ(scaling.verdict, Verdict::pass);
  EXPECT_EQ(scaling.measured["bytes"], 1 << 20);
}

TEST(CollectiveRules, InterNodeBusbwAgainstNicCeiling) {
  // 4 x HDR 200 Gb/s per node: 100 GB/s ceiling; 0.88 passes, below 0.7 fails, between warns.
  const auto cluster = four_nodes(4, 200);
  EXPECT_DOUBLE_EQ(*nic_ceiling_GBps({"node1", "node2"}, cluster, default_profile()), 100);
  auto verdict_at = [&](double busbw) {
    const auto f = with_id(check_collectives({result("nccl", 4, {{8ull << 30, busbw}})}, cluster, default_profile()), "collective_busbw");
    return f.at(0).verdict;
  };
  EXPECT_EQ(verdict_at(90), Verdict::pass);
  EXPECT_EQ(verdict_at(80), Verdict::warn);
  EXPECT_EQ(verdict_at(50), Verdict::fail);
  EXPECT_EQ(verdict_at(120), Verdict::warn);  // above the NIC: Tree at 2 nodes; rerun with Ring
}

TEST(CollectiveRules, CeilingUsesTheWeakestNodeAndSkipsWhenUnknown) {
  auto cluster = four_nodes(2, 200);
  cluster.nodes[1].rdma_devices[1].ports[0].state = "DOWN";  // node2 has one usable rail
  EXPECT_DOUBLE_EQ(*nic_ceiling_GBps({"node1", "node2"}, cluster, default_profile()), 25);
  EXPECT_DOUBLE_EQ(*nic_ceiling_GBps({"node1"}, cluster, default_profile()), 50);
  EXPECT_FALSE(nic_ceiling_GBps({"node9"}, cluster, default_profile()));
  auto lab = load_profile("lab-soft-roce");
  ASSERT_TRUE(lab.profile);
  const auto f = with_id(check_collectives({result("nccl", 2, {{1 << 20, 0.01}})}, cluster, *lab.profile), "collective_busbw");
  EXPECT_EQ(f.at(0).verdict, Verdict::skip);
}

TEST(CollectiveRules, WrongElementsAndErrorsFail) {
  auto bad = result("mpi", 1, {{1 << 20, 1}, {2 << 20, 1}}, 0);
  bad.rows[1].out_of_place.wrong = 7;
  bad.rows[1].in_place = CollTiming{1, 1, 1, 2};
  auto findings = check_collectives({bad}, four_nodes(1, 100), default_profile());
  const auto data = with_id(findings, "collective_data").at(0);
  EXPECT_EQ(data.verdict, Verdict::fail);
  EXPECT_EQ(data.measured["wrong_elements"], 9);
  EXPECT_EQ(data.measured["sizes_with_errors"], nlohmann::json::array({"2M"}));
  auto broken = result("nccl", 2, {});
  broken.status = Status::error;
  broken.reason = "at 1048576 bytes: rank 3 of the group: the collective did not complete within 120 s";
  findings = check_collectives({broken}, four_nodes(1, 100), default_profile());
  EXPECT_EQ(with_id(findings, "collective_error").at(0).verdict, Verdict::fail);
  EXPECT_EQ(with_id(findings, "collective_data").at(0).verdict, Verdict::pass);
}

TEST(CollectiveRules, ScalingTableHasOneEntryPerEngineAndOp) {
  const auto table = scaling_table({result("mpi", 1, {{1 << 20, 4}}), result("mpi", 2, {{1 << 20, 1}}), result("mpi", 4, {{1 << 20, 2}})},
                                   four_nodes(2, 200), default_profile());
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table[0].bytes, 1u << 20);
  ASSERT_EQ(table[0].groups.size(), 3u);
  EXPECT_EQ(table[0].groups[2].nodes, 4);
  ASSERT_TRUE(table[0].groups[1].vs_one_node.has_value());
  EXPECT_DOUBLE_EQ(*table[0].groups[1].vs_one_node, 0.25);
  // The NIC ceiling is decided here, for every writer: 2 NICs x 200 Gb/s / 8 per node; none for one node.
  EXPECT_FALSE(table[0].groups[0].nic_ceiling_GBps.has_value());
  ASSERT_TRUE(table[0].groups[2].nic_ceiling_GBps.has_value());
  EXPECT_DOUBLE_EQ(*table[0].groups[2].nic_ceiling_GBps, 50.0);
}

TEST(CollectiveRows, PrintLikeNcclTests) {
  CollRow row;
  row.bytes = 1048576;
  row.count = 262144;
  row.dtype = "float";
  row.redop = "sum";
  row.out_of_place = coll_timing(CollOp::allreduce, row.bytes, 4, 0.001, 0);
  const auto line = coll_row_line(row);
  EXPECT_NE(line.find("1048576"), std::string::npos);
  EXPECT_NE(line.find("1000.0"), std::string::npos) << line;  // time in us
  EXPECT_NE(line.find("1.05"), std::string::npos) << line;    // algbw GB/s
  EXPECT_NE(line.find("1.57"), std::string::npos) << line;    // busbw = 1.5 x algbw
  EXPECT_NE(coll_header_line().find("busbw"), std::string::npos);
}

}  // namespace
}  // namespace fabricproof

namespace fabricproof {
namespace {

// One row per operation (collective_ops.hpp), and the rules derived from it are nccl-tests'.
TEST(CollectiveOps, OneRowPerOperationHoldsItsRules) {
  ASSERT_EQ(kCollectiveOps.size(), collective_names().size());
  std::set<std::string> names;
  for (const auto& c : kCollectiveOps) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_EQ(coll_op_from(c.name), c.op);
    EXPECT_FALSE(std::string(c.expected).empty()) << c.name;
    EXPECT_DOUBLE_EQ(bus_factor(c.op, 1), c.op == CollOp::broadcast ? 1.0 : 0.0) << c.name << ": one rank moves nothing between ranks";
  }
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::allreduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(CollOp::alltoall, 8), 7.0 / 8);
  EXPECT_TRUE(reduces(CollOp::reduce_scatter));
  EXPECT_FALSE(reduces(CollOp::allgather));
  // The in-place forms MPI has agree with where the data helpers put the input.
  for (const auto& c : kCollectiveOps) {
    if (!c.mpi_in_place) continue;
    EXPECT_GE(coll_in_place_offset(c.op, 1, 16), 0) << c.name;
  }
}

}  // namespace
}  // namespace fabricproof
