#include "collectives/sweep.hpp"

#include <fmt/format.h>

#include "core/located_error.hpp"
#include "core/units.hpp"
#include "mpi/exchange.hpp"

namespace fabricproof::collectives {
namespace {

struct Measured {
  CollTiming timing;
  std::optional<std::string> error;  // the group's agreed failure
};

// An engine's failure is caught here (failure_of), so that every rank reaches the agreement.
Measured measure(mpi::Session& s, Engine& engine, MPI_Comm group, const SweepPlan& plan, const CollCall& call, uint64_t bytes, int ranks,
                 const std::string& step) {
  const auto deadline = [&] { return mpi::deadline_in(plan.timeout_s); };
  double seconds = 0;
  uint64_t wrong = 0;
  // The group meets with a polled barrier first: a rank that stopped or died between two sizes is
  // then named (mpi::Lost, rank 0's roll call) instead of leaving the others in a call that may
  // block (an NCCL warm-up on a blocking communicator, which only the watchdog can end).
  mpi::barrier(s, group, deadline(), "the group meeting at a new size");
  auto failed = failure_of([&] {
    engine.fill(call);
    if (plan.warmup > 0) engine.run(call, plan.warmup);
  });
  if (auto agreed = mpi::agree_on_error(s, group, failed, deadline())) return {{}, agreed};
  s.set_step("collectives", fmt::format("{}: {} timed calls", step, call.in_place ? "in-place" : "out-of-place"), false);
  // Busy-polled, so that the ranks leave it within microseconds of each other (as nccl-tests'
  // blocking MPI_Barrier) and still answer rank 0's roll call: a rank stopped before the timed
  // calls is then named by the roll call at once, not by elimination after the others' watchdogs.
  mpi::barrier(s, group, deadline(), "the barrier before the timed calls", mpi::Poll::busy);
  failed = failure_of([&] {
    seconds = engine.run(call, plan.iters);
    s.set_step("collectives", fmt::format("{}: {} checked call", step, call.in_place ? "in-place" : "out-of-place"), false);
    engine.fill(call);  // the checked call starts from the pattern again
    engine.run(call, 1);
    wrong = engine.count_wrong(call);
  });
  if (auto agreed = mpi::agree_on_error(s, group, failed, deadline())) return {{}, agreed};
  // nccl-tests averages the ranks' times by default (-a 1); the slowest rank is the other choice.
  const bool slowest = plan.time_stat == "max";
  const double combined = mpi::allreduce(s, group, seconds, slowest ? MPI_MAX : MPI_SUM, deadline(), "the ranks' times");
  const double seconds_per_call = (slowest ? combined : combined / ranks) / std::max(plan.iters, 1);
  const uint64_t wrong_total = mpi::allreduce(s, group, wrong, MPI_SUM, deadline(), "the count of wrong elements");
  return {coll_timing(call.op, bytes, ranks, seconds_per_call, wrong_total), std::nullopt};
}

}  // namespace

void run_sweep(mpi::Session& session, Engine& engine, MPI_Comm group, const SweepPlan& plan, CollResult& result,
               const std::function<void(const CollRow&)>& row_done) {
  const int rank = mpi::rank_in(group), ranks = mpi::size_of(group);
  result.engine = engine.name();
  result.timing = engine.timing();
  result.op = std::string(to_string(plan.op));
  result.time_stat = plan.time_stat;
  result.ranks = ranks;
  for (const uint64_t bytes : plan.sizes) {
    CollCall call{plan.op, plan.dtype, plan.redop, chunk_elements(plan.op, bytes, plan.dtype, ranks), false};
    if (call.chunk == 0) continue;  // below one element per rank
    CollRow row;
    row.bytes = call_elements(plan.op, bytes, plan.dtype, ranks) * static_cast<uint64_t>(size_of(plan.dtype));
    row.count = call_elements(plan.op, bytes, plan.dtype, ranks);
    row.dtype = std::string(to_string(plan.dtype));
    row.redop = reduces(plan.op) ? std::string(to_string(plan.redop)) : "none";
    const auto step = fmt::format("{}: {} ({} bytes)", plan.label, format_size(row.bytes), row.bytes);
    session.set_step("collectives", step, false);
    auto out = measure(session, engine, group, plan, call, row.bytes, ranks, step);
    if (!out.error && plan.in_place && engine.supports_in_place(plan.op)) {
      call.in_place = true;
      auto in = measure(session, engine, group, plan, call, row.bytes, ranks, step);
      if (in.error) out.error = in.error;
      row.in_place = in.timing;
    }
    if (out.error) {
      result.status = Status::error;
      result.reason = fmt::format("at {} bytes: {}", row.bytes, *out.error);
      break;
    }
    row.out_of_place = out.timing;
    result.rows.push_back(row);
    result.peak_busbw_GBps = peak_busbw(result.rows);
    if (rank == 0 && row_done) row_done(row);
  }
}

}  // namespace fabricproof::collectives
