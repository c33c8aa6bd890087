#pragma once
// The sweep harness: one engine, one group of ranks, every size of the plan, out-of-place and
// in-place, warm-up, timed calls and a verified call, like nccl-tests. Engine-agnostic; every wait
// on the other ranks of the group goes through suite/mpi with the plan's deadline.
#include <functional>
#include <vector>

#include "collectives/engine.hpp"

namespace fabricproof::collectives {

struct SweepPlan {
  CollOp op = CollOp::allreduce;
  DataType dtype = DataType::float32;
  ReduceOp redop = ReduceOp::sum;
  std::vector<uint64_t> sizes;  // bytes, ascending
  int iters = 20;
  int warmup = 1;  // per size and form: nccl-tests' one untimed call before its barrier
  bool in_place = true;
  double timeout_s = 120;  // any wait on the other ranks of the group
  std::string time_stat = "avg";  // a row's time: the ranks' average (nccl-tests' default) or the slowest ("max")
  std::string label;       // "allreduce on 2 node(s)": the step in flight, with the size
};

// Every rank of `group` calls it. Per size and form: a polled barrier (a silent rank is named),
// fill, warm-up calls, a busy-polled barrier, the timed calls (time = the ranks' average or the
// slowest rank's, plan.time_stat), then fill again, one call and a count of wrong elements (sum
// over ranks). The first error on any rank ends the sweep for all of them: `result` then has
// status "error" and the rows completed before. `result` is filled as the sweep goes, so that the
// rows before an mpi::Lost are kept. Meaningful on the group's rank 0, which also gets `row_done`
// after each size.
void run_sweep(mpi::Session& session, Engine& engine, MPI_Comm group, const SweepPlan& plan, CollResult& result,
               const std::function<void(const CollRow&)>& row_done);

}  // namespace fabricproof::collectives
