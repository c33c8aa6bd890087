#pragma once
// Deterministic data patterns on the GPU (core/payload_pattern.hpp). Word i depends on (seed, i) only, so a
// receiver can check a buffer without a copy of what was sent. Launchers return "" on success or
// the CUDA error text; `stream` is a cudaStream_t passed as void* to keep CUDA out of this header.
#include <cstddef>
#include <cstdint>
#include <string>

namespace fabricproof::kernels {

// Fills `bytes` (a multiple of 4) at `device_ptr` with pattern words.
std::string fill_pattern(void* device_ptr, size_t bytes, uint64_t seed, void* stream = nullptr);

// Counts words that differ from the pattern; the count lands in *mismatches (host memory) after
// the stream is synchronized by the launcher.
std::string count_mismatches(const void* device_ptr, size_t bytes, uint64_t seed, uint64_t* mismatches, void* stream = nullptr);

}  // namespace fabricproof::kernels
