#pragma once
// The sweep harness: one engine, one group of ranks, every size of the plan, out-of-place and
// in-place, warm-up, timed calls and a verified call, like nccl-tests. Engine-agnostic.
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
  int warmup = 5;
  bool in_place = true;
};

// Every rank of `group` calls it. Per size and form: fill, warm-up calls, a barrier, the timed
// calls (time = the slowest rank's), then fill again, one call and a count of wrong elements (sum
// over ranks). The first error on any rank ends the sweep for all of them: the result then has
// status "error" and the rows completed before. Meaningful on the group's rank 0, which also gets
// `row_done` after each size.
CollResult run_sweep(Engine& engine, MPI_Comm group, const SweepPlan& plan, const std::function<void(const CollRow&)>& row_done);

}  // namespace fabricproof::collectives
