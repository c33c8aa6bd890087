#pragma once
// Fill and check the data of a verified collective call on the GPU (collectives/collective_data.hpp),
// like nccl-tests' -c. A CUDA failure is a LocatedError naming the GPU; `stream` is a cudaStream_t
// passed as void* to keep CUDA out of this header. Both synchronize the stream.
#include <cstdint>
#include <string>

#include "collectives/collective_types.hpp"

namespace fabricproof::kernels {

// Zeroes `output` (out_count elements), then writes this rank's input pattern (in_count elements)
// at `input`, which may lie inside `output` (the in-place forms).
void fill_collective(void* input, uint64_t in_count, void* output, uint64_t out_count, DataType type, int rank, void* stream = nullptr);

// The output elements that differ from the expected result of the call on `rank`.
uint64_t count_collective_wrong(const void* output, uint64_t out_count, CollOp op, ReduceOp redop, DataType type, int rank, int ranks,
                                uint64_t chunk, void* stream = nullptr);

}  // namespace fabricproof::kernels
