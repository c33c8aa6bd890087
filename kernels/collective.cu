#include <cuda_runtime.h>

#include "core/collective_pattern.hpp"
#include "kernels/collective.hpp"

namespace fabricproof::kernels {
namespace {

template <typename T>
__global__ void fill_kernel(T* input, uint64_t count, int rank) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    input[i] = static_cast<T>(coll_input_value(rank, i));
}

template <typename T>
__global__ void check_kernel(const T* output, uint64_t count, CollOp op, ReduceOp redop, int rank, int ranks, uint64_t chunk,
                             unsigned long long* wrong) {
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    local += output[i] != static_cast<T>(coll_expected_value(op, redop, rank, ranks, chunk, i));
  if (local) atomicAdd(wrong, local);
}

std::string error_text(cudaError_t e) { return e == cudaSuccess ? "" : std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

unsigned grid_for(uint64_t count) {
  const uint64_t blocks = (count + 255) / 256;
  return static_cast<unsigned>(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

int element_size(DataType type) { return type == DataType::float64 ? 8 : 4; }

}  // namespace

std::string fill_collective(void* input, uint64_t in_count, void* output, uint64_t out_count, DataType type, int rank, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  if (auto e = cudaMemsetAsync(output, 0, out_count * element_size(type), s); e != cudaSuccess) return error_text(e);
  switch (type) {
    case DataType::float32: fill_kernel<<<grid_for(in_count), 256, 0, s>>>(static_cast<float*>(input), in_count, rank); break;
    case DataType::float64: fill_kernel<<<grid_for(in_count), 256, 0, s>>>(static_cast<double*>(input), in_count, rank); break;
    case DataType::int32: fill_kernel<<<grid_for(in_count), 256, 0, s>>>(static_cast<int32_t*>(input), in_count, rank); break;
  }
  if (auto e = cudaGetLastError(); e != cudaSuccess) return error_text(e);
  return error_text(cudaStreamSynchronize(s));
}

std::string count_collective_wrong(const void* output, uint64_t out_count, CollOp op, ReduceOp redop, DataType type, int rank,
                                   int ranks, uint64_t chunk, uint64_t* wrong, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  unsigned long long* counter = nullptr;
  if (auto e = cudaMallocAsync(&counter, sizeof(*counter), s); e != cudaSuccess) return error_text(e);
  std::string error = error_text(cudaMemsetAsync(counter, 0, sizeof(*counter), s));
  if (error.empty()) {
    const unsigned grid = grid_for(out_count);
    switch (type) {
      case DataType::float32:
        check_kernel<<<grid, 256, 0, s>>>(static_cast<const float*>(output), out_count, op, redop, rank, ranks, chunk, counter);
        break;
      case DataType::float64:
        check_kernel<<<grid, 256, 0, s>>>(static_cast<const double*>(output), out_count, op, redop, rank, ranks, chunk, counter);
        break;
      case DataType::int32:
        check_kernel<<<grid, 256, 0, s>>>(static_cast<const int32_t*>(output), out_count, op, redop, rank, ranks, chunk, counter);
        break;
    }
    error = error_text(cudaGetLastError());
  }
  unsigned long long host = 0;
  if (error.empty()) error = error_text(cudaMemcpyAsync(&host, counter, sizeof(host), cudaMemcpyDeviceToHost, s));
  cudaFreeAsync(counter, s);
  if (const auto sync = error_text(cudaStreamSynchronize(s)); error.empty()) error = sync;
  if (error.empty()) *wrong = host;
  return error;
}

}  // namespace fabricproof::kernels
