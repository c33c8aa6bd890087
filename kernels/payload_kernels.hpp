#pragma once
// Deterministic data patterns on the GPU (core/payload_pattern.hpp). Word i depends on (seed, i) only, so a
// receiver can check a buffer without a copy of what was sent. A CUDA failure (or a size that is
// not whole words) is a LocatedError; `stream` is a cudaStream_t passed as void* to keep CUDA out
// of this header.
#include <cstddef>
#include <cstdint>
#include <string>

namespace fabricproof::kernels {

// Fills `bytes` (a multiple of 4) at `device_ptr` with pattern words.
void fill_pattern(void* device_ptr, size_t bytes, uint64_t seed, void* stream = nullptr);

// The words that differ from the pattern (the stream synchronized by the launcher).
uint64_t count_mismatches(const void* device_ptr, size_t bytes, uint64_t seed, void* stream = nullptr);

}  // namespace fabricproof::kernels
