#pragma once
// One collective, one place, as nccl-tests keeps one operation in one `struct testColl`
// (src/all_reduce.cu): its name, how a size becomes counts, its bus-bandwidth factor, whether it
// reduces, its in-place form in MPI, and the result every rank checks. The element values and the
// in-place offsets are computed in collectives/collective_data.hpp, shared with the CUDA kernels;
// each engine's call (MPI_I*, nccl*) is a switch over CollOp there, kept complete by -Wswitch.
// Adding an operation: a CollOp value (collective_types.hpp), a row here, its expected element in
// collective_data.hpp, its call in mpi_engine.cpp and nccl_engine.cpp.
#include <array>

#include "collectives/collective_types.hpp"

namespace fabricproof {

struct CollectiveOp {
  CollOp op;
  const char* name;          // as --collective-ops and the report name it
  bool chunked;              // the size is split into one chunk per rank (rounded down to 16 bytes, as nccl-tests)
  bool reduces;              // combines values with a ReduceOp (sum, max, min); the others move them
  double (*bus_factor)(double ranks);  // busbw = algbw x this (nccl-tests' doc/PERFORMANCE.md)
  bool mpi_in_place;         // MPI_IN_PLACE reads the input where NCCL's in-place form does
  bool mpi_whole_buffer;     // one MPI call per piece of at most INT_MAX elements (the others: one call)
  const char* expected;      // what every rank's result holds (collective_data.hpp computes it)
};

inline constexpr std::array<CollectiveOp, 5> kCollectiveOps = {{
    {CollOp::allreduce, "allreduce", false, true, [](double n) { return 2 * (n - 1) / n; }, true, true,
     "element i: the reduction over all ranks of their element i"},
    {CollOp::allgather, "allgather", true, false, [](double n) { return (n - 1) / n; }, true, false,
     "chunk r: rank r's input"},
    {CollOp::reduce_scatter, "reduce_scatter", true, true, [](double n) { return (n - 1) / n; }, true, false,
     "rank r: the reduction over all ranks of their chunk r"},
    {CollOp::broadcast, "broadcast", false, false, [](double) { return 1.0; }, false, true,
     "rank 0's input on every rank"},
    {CollOp::alltoall, "alltoall", true, false, [](double n) { return (n - 1) / n; }, false, false,
     "on rank r, chunk k: rank k's chunk r"},
}};

// Every CollOp has its row, at its own index.
constexpr bool collective_table_is_complete() {
  for (size_t i = 0; i < kCollectiveOps.size(); ++i)
    if (static_cast<size_t>(kCollectiveOps[i].op) != i) return false;
  return static_cast<size_t>(CollOp::alltoall) + 1 == kCollectiveOps.size();
}
static_assert(collective_table_is_complete(), "one row per CollOp, in the enum's order");

constexpr const CollectiveOp& collective_op(CollOp op) { return kCollectiveOps[static_cast<size_t>(op)]; }

}  // namespace fabricproof
