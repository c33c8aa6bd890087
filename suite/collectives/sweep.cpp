#include "collectives/sweep.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>

namespace fabricproof::collectives {
namespace {

// The first error of any rank in the group, as "rank N: text", on every rank ("" when none).
std::string agree_on_error(MPI_Comm group, const std::string& mine) {
  int rank = 0, failed = mine.empty() ? 0 : 1, any = 0;
  MPI_Comm_rank(group, &rank);
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, group);
  if (!any) return "";
  // The lowest failing rank tells its error to everybody.
  int candidate = failed ? rank : INT32_MAX, first = 0;
  MPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, group);
  std::array<char, 512> text{};
  if (rank == first) std::strncpy(text.data(), mine.c_str(), text.size() - 1);
  MPI_Bcast(text.data(), static_cast<int>(text.size()), MPI_CHAR, first, group);
  return fmt::format("rank {} of the group: {}", first, text.data());
}

struct Measured {
  CollTiming timing;
  std::string error;
};

Measured measure(Engine& engine, MPI_Comm group, const SweepPlan& plan, const CollCall& call, uint64_t bytes, int ranks) {
  double seconds = 0, ignored = 0;
  uint64_t wrong = 0;
  std::string error = engine.fill(call);
  if (error.empty() && plan.warmup > 0) error = engine.run(call, plan.warmup, &ignored);
  if (auto agreed = agree_on_error(group, error); !agreed.empty()) return {{}, agreed};
  MPI_Barrier(group);
  error = engine.run(call, plan.iters, &seconds);
  if (error.empty()) error = engine.fill(call);
  if (error.empty()) error = engine.run(call, 1, &ignored);
  if (error.empty()) error = engine.count_wrong(call, &wrong);
  if (auto agreed = agree_on_error(group, error); !agreed.empty()) return {{}, agreed};
  double slowest = 0;
  uint64_t wrong_total = 0;
  MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, group);
  MPI_Allreduce(&wrong, &wrong_total, 1, MPI_UINT64_T, MPI_SUM, group);
  return {coll_timing(call.op, bytes, ranks, slowest / std::max(plan.iters, 1), wrong_total), ""};
}

}  // namespace

CollResult run_sweep(Engine& engine, MPI_Comm group, const SweepPlan& plan, const std::function<void(const CollRow&)>& row_done) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(group, &rank);
  MPI_Comm_size(group, &ranks);
  CollResult result;
  result.engine = engine.name();
  result.op = std::string(to_string(plan.op));
  result.ranks = ranks;
  for (const uint64_t bytes : plan.sizes) {
    CollCall call{plan.op, plan.dtype, plan.redop, chunk_elements(plan.op, bytes, plan.dtype, ranks), false};
    if (call.chunk == 0) continue;  // below one element per rank
    CollRow row;
    row.bytes = call_elements(plan.op, bytes, plan.dtype, ranks) * static_cast<uint64_t>(size_of(plan.dtype));
    row.count = call_elements(plan.op, bytes, plan.dtype, ranks);
    row.dtype = std::string(to_string(plan.dtype));
    row.redop = reduces(plan.op) ? std::string(to_string(plan.redop)) : "none";
    auto out = measure(engine, group, plan, call, row.bytes, ranks);
    if (out.error.empty() && plan.in_place && engine.supports_in_place(plan.op)) {
      call.in_place = true;
      auto in = measure(engine, group, plan, call, row.bytes, ranks);
      if (!in.error.empty()) out.error = in.error;
      row.in_place = in.timing;
    }
    if (!out.error.empty()) {
      result.status = "error";
      result.reason = fmt::format("at {} bytes: {}", row.bytes, out.error);
      break;
    }
    row.out_of_place = out.timing;
    result.rows.push_back(row);
    if (rank == 0 && row_done) row_done(row);
  }
  result.peak_busbw_GBps = peak_busbw(result.rows);
  return result;
}

}  // namespace fabricproof::collectives
