#pragma once
// What the kernels' launchers share: the CUDA check (a failure is a LocatedError naming the GPU), a
// grid size, and the counting pattern (a device counter zeroed, a kernel that adds to it, the count
// copied back, the stream synchronized).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/located_error.hpp"

namespace fabricproof::kernels::detail {

[[noreturn]] inline void fail(const std::string& what) {
  int device = -1;
  cudaGetDevice(&device);
  throw LocatedError("GPU " + std::to_string(device), what);
}

inline void check_cuda(cudaError_t e) {
  if (e != cudaSuccess) fail(std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e));
}

inline unsigned grid_for(uint64_t count) {
  const uint64_t blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

// `launch(counter)` starts a kernel on `stream` that adds to *counter (device memory); the total.
// The counter is freed and the stream synchronized whatever failed.
template <typename Launch>
uint64_t count_on_device(cudaStream_t stream, Launch launch) {
  unsigned long long* counter = nullptr;
  check_cuda(cudaMallocAsync(&counter, sizeof(*counter), stream));
  cudaError_t error = cudaMemsetAsync(counter, 0, sizeof(*counter), stream);
  if (error == cudaSuccess) {
    launch(counter);
    error = cudaGetLastError();
  }
  unsigned long long host = 0;
  if (error == cudaSuccess) error = cudaMemcpyAsync(&host, counter, sizeof(host), cudaMemcpyDeviceToHost, stream);
  cudaFreeAsync(counter, stream);
  const cudaError_t sync = cudaStreamSynchronize(stream);
  check_cuda(error != cudaSuccess ? error : sync);
  return host;
}

}  // namespace fabricproof::kernels::detail
