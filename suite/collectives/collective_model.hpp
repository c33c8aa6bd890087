#pragma once
// Collective sweeps as data: the ops and their bus-bandwidth factors, data types, sweep sizes, the
// clip of the top size, and one result per engine, op and node group. The conventions follow
// nccl-tests (doc/PERFORMANCE.md): `bytes` is the size column of nccl-tests, algbw = bytes / time,
// busbw = algbw x the op's factor for n ranks, GB = 1e9 bytes.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/collective_ops.hpp"
#include "collectives/collective_types.hpp"
#include "core/json_optional.hpp"
#include "core/located_fault.hpp"
#include "core/status.hpp"

namespace fabricproof {

// The names of the collectives (collective_ops.hpp), for --collective-ops.
const std::vector<std::string>& collective_names();

std::string_view to_string(CollOp op);
std::string_view to_string(DataType type);
std::string_view to_string(ReduceOp op);
std::optional<CollOp> coll_op_from(std::string_view name);
std::optional<DataType> data_type_from(std::string_view name);  // "float", "float32", "double", "int32", ...
std::optional<ReduceOp> reduce_op_from(std::string_view name);
int size_of(DataType type);
bool reduces(CollOp op);  // allreduce and reduce_scatter combine values; the others move them

// busbw / algbw for `ranks` ranks: allreduce 2(n-1)/n; allgather, reduce_scatter, alltoall
// (n-1)/n; broadcast 1. One rank moves no data between ranks: the factor is 0 for the n-1 forms.
double bus_factor(CollOp op, int ranks);

// Elements per rank-local chunk of a call of `bytes` (nccl-tests' size column): allgather,
// reduce_scatter and alltoall split `bytes` into `ranks` chunks rounded down to 16 bytes, as
// nccl-tests does; the others use the whole buffer. 0 when the size is too small for one element
// per chunk (the size is then left out).
uint64_t chunk_elements(CollOp op, uint64_t bytes, DataType type, int ranks);
// Elements of the call as nccl-tests prints them (the whole buffer).
uint64_t call_elements(CollOp op, uint64_t bytes, DataType type, int ranks);

// min, min*factor, ... up to max (inclusive), each a whole number of bytes, strictly increasing.
std::vector<uint64_t> sweep_sizes(uint64_t min_bytes, uint64_t max_bytes, double factor);

struct SizeClip {
  uint64_t max_bytes = 0;  // the top size that will run
  std::string reason;      // empty when nothing was clipped
};
// The largest sweep size (min * factor^k) not above what one rank can hold (`usable_bytes` for
// `buffers` buffers of the top size each) nor above `max_call_bytes`, the most one call can take.
SizeClip clip_max_bytes(uint64_t min_bytes, uint64_t max_bytes, double factor, uint64_t usable_bytes, int buffers,
                        uint64_t max_call_bytes, const std::string& usable_why);

// The most bytes one call of `op` can take when its counts are at most `max_count` elements
// (MPI's int): the per-rank count of allgather, reduce_scatter and alltoall limits them; allreduce
// and broadcast are split into calls of at most `max_count` (split_count), so nothing limits them.
uint64_t max_call_bytes(CollOp op, DataType type, int ranks, uint64_t max_count);

// [offset, count) pieces of at most `max_count` elements covering `count` elements.
std::vector<std::pair<uint64_t, uint64_t>> split_count(uint64_t count, uint64_t max_count);

struct SweepOptions {
  std::string engine = "auto";  // "nccl", "mpi" or "auto" (NCCL when every node has a GPU)
  std::vector<std::string> ops = {"allreduce"};
  std::string dtype = "float";
  std::string redop = "sum";
  uint64_t min_bytes = 8;
  uint64_t max_bytes = 8ull << 30;
  bool max_bytes_given = false;  // --max-bytes on the command line (else the profile may bound it)
  double factor = 2;
  int iters = 20;
  int warmup = 1;
  bool in_place = true;         // also time the in-place form (allreduce, allgather, broadcast)
  bool ring = false;            // NCCL_ALGO=Ring for the groups (Tree can beat the NIC at 2 nodes)
  double timeout_s = 120;       // deadline of every wait on the collective
  std::string time_stat = "avg";  // a row's time over the ranks: "avg" (nccl-tests' default) or "max" (the slowest)
  std::string nccl_comm = "blocking";    // the NCCL communicator's form: blocking | split | nonblocking
  std::string gpu_buffers = "cudaMalloc";  // the NCCL engine's buffers: cudaMalloc | ncclMemAlloc
  // "scaling" (the sweep on 1, 2, 4 ... nodes), "locate" (allreduce on groups side by side, halved
  // until the slow node is named: suite/locate) or, on the command line, "auto" (locate above
  // kCollectiveLocateAbove nodes). Resolved by the phase's plan.
  std::string mode = "auto";
  // --locate-ranks-as-nodes, a testing aid: each rank stands for a node in locate, so that one
  // machine with many ranks exercises the localisation (a node's ranks are otherwise one node).
  bool ranks_as_nodes = false;
  // The soak's collective: the scaling mode's last group only (every node), not 1, 2, 4, ...
  bool all_nodes_only = false;
  // Whether NCCL must run the sweeps (rank 0, from the cluster spec; not in the report's options):
  // unset, "auto" may pick MPI only on a cluster without GPUs; false (the spec waives NCCL), also
  // where NCCL cannot run on GPU nodes; true, never.
  std::optional<bool> nccl_required;
};

struct CollTiming {
  double time_us = 0;      // per call: the ranks' average or the slowest rank's (CollResult::time_stat)
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  uint64_t wrong = 0;      // elements that differed from the expected result, all ranks
};

struct CollRow {
  uint64_t bytes = 0;
  uint64_t count = 0;
  std::string dtype;
  std::string redop;
  CollTiming out_of_place;
  std::optional<CollTiming> in_place;
};

struct CollResult {
  std::string engine;
  std::string op;
  int nodes = 0;
  int ranks = 0;
  std::vector<std::string> hosts;
  Status status = Status::ok;  // ok or error (rows hold what completed before it)
  std::string reason;
  std::vector<CollRow> rows;
  double peak_busbw_GBps = 0;
  std::string time_stat = "max";  // how the rows' times combine the ranks: "avg" or "max" (reports before it: max)
  std::string timing;             // how the engine timed its calls (Engine::timing)
};

// Timing of one form of a call that took `seconds_per_call` (the ranks' average or the slowest).
CollTiming coll_timing(CollOp op, uint64_t bytes, int ranks, double seconds_per_call, uint64_t wrong);
double peak_busbw(const std::vector<CollRow>& rows);

// The table rank 0 prints as rows complete, in nccl-tests' layout: size, count, type, redop, then
// time (us), algbw, busbw (GB/s) and #wrong out-of-place and, when measured, in-place.
std::string coll_header_line();
std::string coll_row_line(const CollRow& row);

// Node-count groups of the scaling runs: 1, 2, 4, ... and always all nodes.
std::vector<int> scaling_node_counts(int nodes);

// One node-count group of the scaling runs: the first `nodes` nodes and their ranks.
struct CollGroup {
  int nodes = 0;
  std::vector<std::string> hosts;
  std::vector<int> ranks;
};

// The top size of the sweep as asked and as it ran, and why it was lowered.
struct SweepClip {
  uint64_t requested_max_bytes = 0;
  uint64_t max_bytes = 0;
  std::string reason;
};

// One group of a scaling row: busbw at the row's size, and the NIC ceiling of its nodes (k NICs x
// rate / 8) decided by the rules, so that no writer has to reload the profile.
struct ScalingGroup {
  int nodes = 0;
  int ranks = 0;
  std::optional<double> busbw_GBps;
  double peak_busbw_GBps = 0;
  std::optional<double> vs_one_node;
  std::optional<double> nic_ceiling_GBps;  // groups of 2 nodes or more
};

// 1 -> 2 -> 4 nodes for one engine and op, at the largest size every group ran.
struct ScalingRow {
  std::string engine;
  std::string op;
  uint64_t bytes = 0;
  std::vector<ScalingGroup> groups;
};

// --collective-mode auto: the scaling sweep up to this many nodes, locate above (as the verbs matrix).
constexpr int kCollectiveLocateAbove = 16;

// One allreduce of --collective-mode locate: a group of nodes in one round, its bus bandwidth at
// the locate size, or why it has none.
struct CollLocateTest {
  int round = 0;
  std::vector<std::string> hosts;  // or "rank N" with --locate-ranks-as-nodes
  std::optional<double> busbw_GBps;
  std::string reason;
};

// What --collective-mode locate ran and found. Its faults' tests are indices into `tests`.
struct CollLocate {
  std::string op = "allreduce";
  uint64_t bytes = 0;
  int rounds = 0;
  int nodes = 0;
  bool ranks_as_nodes = false;
  int transient_dips = 0;
  std::vector<LocatedFault> faults;
  std::vector<std::string> unresolved;  // suspects the tests could not settle: not a pass
  std::vector<CollLocateTest> tests;
  int nodes_tested = 0;
};

// The report's `collectives` section.
struct CollectivesSection {
  std::string engine;
  SweepOptions options;
  SweepClip clip;
  std::vector<CollGroup> groups;
  std::vector<CollResult> results;
  std::vector<ScalingRow> scaling;
  std::vector<std::string> nccl_logs;          // per-rank NCCL_DEBUG logs kept in the report directory
  std::vector<std::string> nccl_logs_missing;  // "rank N: NCCL log file X not found (NCCL_DEBUG_FILE)"
  std::optional<CollLocate> locate;            // --collective-mode locate (then no scaling groups)
};

FABRICPROOF_JSON(SweepOptions, engine, ops, dtype, redop, min_bytes, max_bytes, factor, iters, warmup, in_place, ring, timeout_s, time_stat,
                 nccl_comm, gpu_buffers, mode, ranks_as_nodes)
FABRICPROOF_JSON(CollTiming, time_us, algbw_GBps, busbw_GBps, wrong)
FABRICPROOF_JSON(CollRow, bytes, count, dtype, redop, out_of_place, in_place)
FABRICPROOF_JSON(CollResult, engine, op, nodes, ranks, hosts, status, reason, rows, peak_busbw_GBps, time_stat, timing)
FABRICPROOF_JSON(CollGroup, nodes, hosts, ranks)
FABRICPROOF_JSON(SweepClip, requested_max_bytes, max_bytes, reason)
FABRICPROOF_JSON(ScalingGroup, nodes, ranks, busbw_GBps, peak_busbw_GBps, vs_one_node, nic_ceiling_GBps)
FABRICPROOF_JSON(ScalingRow, engine, op, bytes, groups)
FABRICPROOF_JSON(CollLocateTest, round, hosts, busbw_GBps, reason)
FABRICPROOF_JSON(CollLocate, op, bytes, rounds, nodes, ranks_as_nodes, transient_dips, faults, unresolved, tests, nodes_tested)
FABRICPROOF_JSON(CollectivesSection, engine, options, clip, groups, results, scaling, nccl_logs, nccl_logs_missing, locate)

}  // namespace fabricproof
