#pragma once
// The pairwise RDMA verbs matrix as data: what was planned (endpoints, rounds, options) and what
// each pair measured. Produced by the verbs phase, judged by verbs_rules, rendered as a matrix.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_optional.hpp"
#include "core/located_fault.hpp"
#include "core/status.hpp"

namespace fabricproof {

inline const std::vector<std::string> kVerbsTests = {"write_bw", "write_bw_bidir", "send_bw", "write_lat"};
// --verbs-mode auto: the full matrix up to this many nodes (15 rounds), locate above.
constexpr int kLocateAbove = 16;
// The bandwidth curve (--verbs-sizes): RDMA WRITE from a to b at each size, as `ib_write_bw -a`.
// Figures for the curve; only a size that does not complete is judged (it fails the pair).
inline const std::string kVerbsSizesTest = "write_bw_sizes";

// What a test's figure is: a latency (lower is better) or a bandwidth, and whether it belongs to
// the pair as a whole (a round trip, both directions at once) rather than to one direction.
struct VerbsTestType {
  bool latency = false;
  bool both_ways = false;
  const char* unit = "Gb/s";
};
VerbsTestType verbs_test_type(const std::string& test);

// One HCA port of one node, and the rank that drives it in the matrix.
struct VerbsEndpoint {
  std::string host;
  std::string device;
  int port = 1;
  int rank = 0;
  std::optional<int> gid_index;  // RoCE: the port's RoCE v2 IPv4 GID unless --verbs-gid-index
  std::string link_layer;
  std::optional<double> rate_gbps;
  std::optional<int> active_mtu;
  std::string state;  // a port that is not ACTIVE is planned but not measured
  // The component measured (the report's birth certificate has the rest): PCI slot and serial.
  std::string pci;
  std::string serial;
  // Why this rank drives it: "rank 2: CPUs 16-31 on NUMA node 1 of mlx5_2; its GPU 2 PIX".
  std::string placement;
  std::string label() const { return host + "/" + device; }
};

struct VerbsOptions {
  uint64_t bw_bytes = 65536;      // perftest's default message size for bandwidth
  double duration_s = 2.0;        // per test and direction; 0 = use iterations
  std::optional<double> margin_s; // duration mode: warm-up and cool-down left out of the window (default duration / 4, as perftest's -D)
  uint64_t iterations = 0;
  int qps = 1;
  int tx_depth = 128;
  std::optional<int> gid_index;   // override the per-port RoCE v2 GID
  uint64_t lat_bytes = 2;
  uint64_t lat_iterations = 1000;
  std::vector<std::string> tests = kVerbsTests;
  // "rounds" (the full matrix, disjoint pairs concurrently), "isolated" (one pair at a time),
  // "locate" (suite/locate: a few rounds that name the bad node, port, link or leaf, not every
  // pair) or, on the command line, "auto" (locate above kLocateAbove nodes, else rounds).
  std::string mode = "rounds";
  std::string leaf_map;           // --leaf-map: the file that says which leaf each HCA hangs from (locate)
  bool locate_isolated = false;   // --verbs-locate-isolated: each locate round's pairs one at a time
  std::string rails = "matched";  // "matched" (mlx5_0 <-> mlx5_0) or "all"
  double timeout_s = 30;          // deadline of every wait inside a pair
  std::optional<int> traffic_class;  // IP ToS / GRH traffic class of every QP (--verbs-tclass, else NCCL_IB_TC)
  std::string traffic_class_source;  // "--verbs-tclass", "NCCL_IB_TC" or "" (the device default)
  // A round with a pair that broke a figure rule runs once more, with the broken tests only, before
  // the pairs are judged: a dip the re-measurement does not repeat is a warning, not a failure.
  // On by default on the command line; false here so that a report older than it reads back true.
  bool remeasure = false;
  // Memory registered with IBV_ACCESS_RELAXED_ORDERING, as perftest does by default. On by default
  // on the command line (--no-verbs-relaxed-ordering); false here, as reports before it ran without.
  bool relaxed_ordering = false;
  std::vector<uint64_t> sizes;  // the curve's message sizes (--verbs-sizes; none: no curve)
  // The window of a duration-mode test: `margin` at each end is left out.
  double margin() const { return margin_s.value_or(duration_s / 4); }
};

struct LatencyStats {
  double min_usec = 0;
  double avg_usec = 0;
  double p50_usec = 0;
  double p99_usec = 0;
  double max_usec = 0;
  uint64_t samples = 0;
};

struct TestResult {
  std::string test;             // one of kVerbsTests, or kVerbsSizesTest
  int from = 0;                 // endpoint index: the writer / sender (bidir and latency: a)
  int to = 0;
  Status status = Status::ok;
  std::string reason;           // the verbs status of an error, or why it was not measured
  uint64_t bytes = 0;           // message size
  uint64_t messages = 0;
  double seconds = 0;
  std::optional<double> gbps;   // 1e9 bit/s; bidir: both directions together
  std::optional<LatencyStats> latency;  // one-way, half the round trip, like ib_write_lat
  std::optional<uint64_t> verified;     // send_bw: messages whose payload was checked
  std::optional<uint64_t> mismatches;   // ... and words that differed
};

struct PairResult {
  int task = 0;
  int round = 0;
  int a = 0;  // endpoint indices
  int b = 0;
  std::vector<TestResult> tests;
  // Port counters that moved while this pair ran: endpoint label -> counter -> delta.
  std::map<std::string, std::map<std::string, int64_t>> counter_deltas;
};

// --verbs-mode locate: its faults (core/located_fault.hpp) name verbs task ids as their tests.
// What --verbs-mode locate ran and found, and how much of the fabric it exercised: a pass from
// locate claims no more than the pairs and leaf-to-leaf paths it tested.
struct VerbsLocate {
  std::string figure;  // what the pairs were compared by ("write_bw: Gb/s, the slower way")
  double slow_below = 0;  // a test under this share of its rail's healthy rate is slow (0: a report from before it was recorded)
  int rounds = 0;
  int nodes = 0;
  int rails = 0;
  bool leaves_known = false;
  std::string leaves_from;         // "--leaf-map FILE", the ports' neighbours, or why none ("unknown: ...")
  int transient_dips = 0;          // slow tests that did not come back when repeated
  std::vector<LocatedFault> faults;
  std::vector<std::string> unresolved;  // suspects the tests could not settle: not a pass
  std::vector<std::string> leaf_map_problems;  // --leaf-map: what is wrong with it (then the leaves were not used)
  uint64_t pairs_tested = 0;
  uint64_t pairs_total = 0;
  uint64_t leaf_paths_tested = 0;
  uint64_t leaf_paths_total = 0;
  int nodes_tested = 0;
};

// --verbs-mode locate compares pairs by one test's figure: a bandwidth test's where one runs
// (write_bw first), else write_lat's, whose figure is round trips per second (1 / median latency),
// so that higher is better for both.
std::string locate_figure_test(const std::vector<std::string>& tests);
// The pair's figure by that test, the slower way; none when a way did not complete.
std::optional<double> locate_figure(const PairResult& r, const std::string& test);

struct VerbsSection {
  VerbsOptions options;
  std::vector<VerbsEndpoint> endpoints;
  int rounds = 0;
  std::vector<PairResult> pairs;
  std::vector<PairResult> remeasured;  // the rounds run again (VerbsOptions::remeasure), every pair of them
  std::optional<VerbsLocate> locate;   // --verbs-mode locate
};
FABRICPROOF_JSON(VerbsLocate, figure, slow_below, rounds, nodes, rails, leaves_known, leaves_from, transient_dips, faults, unresolved, leaf_map_problems, pairs_tested, pairs_total,
                 leaf_paths_tested, leaf_paths_total, nodes_tested)

FABRICPROOF_JSON(VerbsEndpoint, host, device, port, rank, gid_index, link_layer, rate_gbps, active_mtu, state, pci, serial, placement)
FABRICPROOF_JSON(VerbsOptions, bw_bytes, duration_s, margin_s, iterations, qps, tx_depth, gid_index, lat_bytes, lat_iterations, tests,
                 mode, leaf_map, locate_isolated, rails, timeout_s, traffic_class, traffic_class_source, remeasure, relaxed_ordering,
                 sizes)
FABRICPROOF_JSON(LatencyStats, min_usec, avg_usec, p50_usec, p99_usec, max_usec, samples)
FABRICPROOF_JSON(TestResult, test, from, to, status, reason, bytes, messages, seconds, gbps, latency, verified, mismatches)
FABRICPROOF_JSON(PairResult, task, round, a, b, tests, counter_deltas)

// One test of the section as a square table: rows are the writer/sender, columns the receiver.
// A cell holds a figure (Gb/s, or the p50 one-way latency in usec) or the reason there is none.
struct VerbsMatrixCell {
  std::optional<double> value;
  std::string reason;  // empty when measured or on the diagonal
  bool diagonal = false;
};
struct VerbsMatrix {
  std::string test;
  std::string unit;                 // "Gb/s" or "usec (p50, one-way)"
  std::vector<std::string> labels;  // "node/hca" per endpoint
  std::vector<std::vector<VerbsMatrixCell>> cells;
};
VerbsMatrix verbs_matrix(const VerbsSection& section, const std::string& test);

// The report's `verbs` section: the section itself plus `matrix` (derived, written for readers of
// the JSON; read back, it is derived again from the pairs): per test {unit, cells}, and labels.
// A cell is a figure, null on the diagonal, or {"reason": ...}.
void to_json(nlohmann::json& j, const VerbsSection& section);
void from_json(const nlohmann::json& j, VerbsSection& section);

LatencyStats latency_stats(std::vector<double> samples_usec);

// The results a pair (a, b) will produce, in run order: write_bw and send_bw in each direction
// (a->b, then b->a), write_bw_bidir and write_lat once for the pair. Status "ok", no figures.
std::vector<TestResult> planned_results(const VerbsOptions& options, int a, int b);

// How long one planned step may run on a healthy pair, for a round's budget: a bandwidth test its
// duration, or in iteration mode the pair's timeout (the rate is not known beforehand; its
// progress notes keep the round's end waiting past that); a latency test, which sends no sign of
// life while it runs, as long as its round trips take at kSlowRoundTripS each, at least its
// duration (or the timeout in iteration mode) as before.
inline constexpr double kSlowRoundTripS = 0.002;  // the Soft-RoCE lab under a 3x slower CPU: ~1 ms
double step_budget_s(const VerbsOptions& options, const TestResult& step);

}  // namespace fabricproof
