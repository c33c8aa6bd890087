#include <cuda_runtime.h>

#include "core/payload_pattern.hpp"
#include "kernels/launch.cuh"
#include "kernels/payload_kernels.hpp"

namespace fabricproof::kernels {
namespace {

__global__ void fill_kernel(uint32_t* words, uint64_t count, uint64_t seed) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    words[i] = pattern_word(seed, i);
}

__global__ void verify_kernel(const uint32_t* words, uint64_t count, uint64_t seed, unsigned long long* mismatches) {
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    local += words[i] != pattern_word(seed, i);
  if (local) atomicAdd(mismatches, local);
}

}  // namespace

using detail::check_cuda;
using detail::grid_for;

void fill_pattern(void* device_ptr, size_t bytes, uint64_t seed, void* stream) {
  if (bytes % 4) detail::fail("fill_pattern: size must be a multiple of 4 bytes");
  const uint64_t count = bytes / 4;
  auto s = static_cast<cudaStream_t>(stream);
  fill_kernel<<<grid_for(count), 256, 0, s>>>(static_cast<uint32_t*>(device_ptr), count, seed);
  check_cuda(cudaGetLastError());
  check_cuda(cudaStreamSynchronize(s));
}

uint64_t count_mismatches(const void* device_ptr, size_t bytes, uint64_t seed, void* stream) {
  if (bytes % 4) detail::fail("count_mismatches: size must be a multiple of 4 bytes");
  const uint64_t count = bytes / 4;
  auto s = static_cast<cudaStream_t>(stream);
  return detail::count_on_device(s, [&](unsigned long long* counter) {
    verify_kernel<<<grid_for(count), 256, 0, s>>>(static_cast<const uint32_t*>(device_ptr), count, seed, counter);
  });
}

}  // namespace fabricproof::kernels
