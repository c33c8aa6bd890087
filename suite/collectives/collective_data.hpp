#pragma once
// The data of a verified collective call, shared by the host check (MPI engine) and the CUDA
// kernels (NCCL engine), like nccl-tests' -c: every input element is a small integer drawn from a
// hash of (rank, index), so every result element is known without a copy of any peer's data, and
// the pattern has no short period: no two ranks send the same data, and a block delivered shifted
// by any number of elements, or from the wrong rank, differs in about 15 of every 16 elements.
// Values stay in 1..16, so sums over a million ranks stay exact in float and int32.
#include <cstdint>

#include "collectives/collective_types.hpp"
#include "core/payload_pattern.hpp"  // FABRICPROOF_HOST_DEVICE

namespace fabricproof {

// splitmix64's finaliser: every input bit changes every output bit with probability 1/2.
FABRICPROOF_HOST_DEVICE inline uint64_t coll_mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

FABRICPROOF_HOST_DEVICE inline double coll_input_value(int rank, uint64_t index) {
  const uint64_t seed = coll_mix(static_cast<uint64_t>(rank) + 0x9e3779b97f4a7c15ull);  // one stream per rank
  return static_cast<double>(1 + (coll_mix(seed ^ index) >> 60));
}

FABRICPROOF_HOST_DEVICE inline double coll_combine(ReduceOp op, double a, double b) {
  if (op == ReduceOp::max) return a > b ? a : b;
  if (op == ReduceOp::min) return a < b ? a : b;
  return a + b;
}

FABRICPROOF_HOST_DEVICE inline double coll_reduced_value(ReduceOp op, int ranks, uint64_t index) {
  double value = coll_input_value(0, index);
  for (int k = 1; k < ranks; ++k) value = coll_combine(op, value, coll_input_value(k, index));
  return value;
}

// Elements this rank contributes (its send buffer) and receives (its result), for a call whose
// rank-local chunk is `chunk` elements (chunk_elements()).
FABRICPROOF_HOST_DEVICE inline uint64_t coll_input_elements(CollOp op, uint64_t chunk, int ranks) {
  return op == CollOp::reduce_scatter || op == CollOp::alltoall ? chunk * static_cast<uint64_t>(ranks) : chunk;
}
FABRICPROOF_HOST_DEVICE inline uint64_t coll_output_elements(CollOp op, uint64_t chunk, int ranks) {
  return op == CollOp::allgather || op == CollOp::alltoall ? chunk * static_cast<uint64_t>(ranks) : chunk;
}

// Where call `call` of a run reads and writes, in bytes into each of a rank's buffers of
// `buffer_bytes`: nccl-tests' startColl moves every call to the next slice of the buffers, a slice
// being the larger of a rank's input and output (`span` bytes), "so that we avoid cache effects".
// Without it, a size the GPU's L2 holds is timed from cache (an H200's 60 MB: a 1-rank allreduce of
// 16 MiB took 6.9 us a call against nccl-tests' 11, 2026-12-04).
inline uint64_t coll_call_offset(uint64_t span, uint64_t buffer_bytes, int call) {
  const uint64_t slices = span > 0 && buffer_bytes >= span ? buffer_bytes / span : 1;
  return span * (static_cast<uint64_t>(call) % slices);
}

// Element `index` of the result on `rank` (broadcast: root 0).
FABRICPROOF_HOST_DEVICE inline double coll_expected_value(CollOp op, ReduceOp redop, int rank, int ranks, uint64_t chunk,
                                                          uint64_t index) {
  switch (op) {
    case CollOp::allreduce: return coll_reduced_value(redop, ranks, index);
    case CollOp::reduce_scatter: return coll_reduced_value(redop, ranks, static_cast<uint64_t>(rank) * chunk + index);
    case CollOp::allgather: return coll_input_value(static_cast<int>(index / chunk), index % chunk);
    case CollOp::broadcast: return coll_input_value(0, index);
    case CollOp::alltoall:
      return coll_input_value(static_cast<int>(index / chunk), static_cast<uint64_t>(rank) * chunk + index % chunk);
  }
  return 0;
}

// Where the input starts inside the output buffer for the in-place form (elements), or -1 when
// the op has no in-place form here. NCCL and MPI agree on these: allreduce and broadcast use the
// whole buffer, allgather finds each rank's chunk at rank x chunk, reduce_scatter reads the whole
// buffer (the result's place in it differs: NCCL at rank x chunk, MPI_IN_PLACE at 0).
FABRICPROOF_HOST_DEVICE inline int64_t coll_in_place_offset(CollOp op, int rank, uint64_t chunk) {
  if (op == CollOp::allreduce || op == CollOp::broadcast || op == CollOp::reduce_scatter) return 0;
  if (op == CollOp::allgather) return static_cast<int64_t>(static_cast<uint64_t>(rank) * chunk);
  return -1;
}

// Host versions of the fill and the check (the MPI engine; kernels/collective.cu does the same on
// the GPU).
template <typename T>
void coll_fill_input(T* input, uint64_t count, int rank) {
  for (uint64_t i = 0; i < count; ++i) input[i] = static_cast<T>(coll_input_value(rank, i));
}

template <typename T>
uint64_t coll_count_wrong(const T* output, uint64_t count, CollOp op, ReduceOp redop, int rank, int ranks, uint64_t chunk) {
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < count; ++i) wrong += output[i] != static_cast<T>(coll_expected_value(op, redop, rank, ranks, chunk, i));
  return wrong;
}

}  // namespace fabricproof
