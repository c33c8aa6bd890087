#pragma once
// What the kernels' launchers share: error text, a grid size, and the counting pattern (a device
// counter zeroed, a kernel that adds to it, the count copied back, the stream synchronized).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace fabricproof::kernels::detail {

inline std::string error_text(cudaError_t e) {
  return e == cudaSuccess ? "" : std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

inline unsigned grid_for(uint64_t count) {
  const uint64_t blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

// `launch(counter)` starts a kernel on `stream` that adds to *counter (device memory). On success
// *count holds the total; the stream is synchronized either way.
template <typename Launch>
std::string count_on_device(cudaStream_t stream, uint64_t* count, Launch launch) {
  unsigned long long* counter = nullptr;
  if (auto e = cudaMallocAsync(&counter, sizeof(*counter), stream); e != cudaSuccess) return error_text(e);
  std::string error = error_text(cudaMemsetAsync(counter, 0, sizeof(*counter), stream));
  if (error.empty()) {
    launch(counter);
    error = error_text(cudaGetLastError());
  }
  unsigned long long host = 0;
  if (error.empty()) error = error_text(cudaMemcpyAsync(&host, counter, sizeof(host), cudaMemcpyDeviceToHost, stream));
  cudaFreeAsync(counter, stream);
  if (const auto sync = error_text(cudaStreamSynchronize(stream)); error.empty()) error = sync;
  if (error.empty()) *count = host;
  return error;
}

}  // namespace fabricproof::kernels::detail
