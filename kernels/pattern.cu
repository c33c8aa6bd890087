#include <cuda_runtime.h>

#include "core/pattern.hpp"
#include "kernels/pattern.hpp"

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

std::string error_text(cudaError_t e) { return e == cudaSuccess ? "" : std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

unsigned grid_for(uint64_t count) {
  const uint64_t blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

}  // namespace

std::string fill_pattern(void* device_ptr, size_t bytes, uint64_t seed, void* stream) {
  if (bytes % 4) return "fill_pattern: size must be a multiple of 4 bytes";
  const uint64_t count = bytes / 4;
  auto s = static_cast<cudaStream_t>(stream);
  fill_kernel<<<grid_for(count), 256, 0, s>>>(static_cast<uint32_t*>(device_ptr), count, seed);
  if (auto e = cudaGetLastError(); e != cudaSuccess) return error_text(e);
  return error_text(cudaStreamSynchronize(s));
}

std::string count_mismatches(const void* device_ptr, size_t bytes, uint64_t seed, uint64_t* mismatches, void* stream) {
  if (bytes % 4) return "count_mismatches: size must be a multiple of 4 bytes";
  const uint64_t count = bytes / 4;
  auto s = static_cast<cudaStream_t>(stream);
  unsigned long long* counter = nullptr;
  if (auto e = cudaMallocAsync(&counter, sizeof(*counter), s); e != cudaSuccess) return error_text(e);
  std::string error = error_text(cudaMemsetAsync(counter, 0, sizeof(*counter), s));
  if (error.empty()) {
    verify_kernel<<<grid_for(count), 256, 0, s>>>(static_cast<const uint32_t*>(device_ptr), count, seed, counter);
    error = error_text(cudaGetLastError());
  }
  unsigned long long host = 0;
  if (error.empty()) error = error_text(cudaMemcpyAsync(&host, counter, sizeof(host), cudaMemcpyDeviceToHost, s));
  cudaFreeAsync(counter, s);
  if (const auto sync = error_text(cudaStreamSynchronize(s)); error.empty()) error = sync;
  if (error.empty()) *mismatches = host;
  return error;
}

}  // namespace fabricproof::kernels
