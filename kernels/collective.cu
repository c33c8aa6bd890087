#include <cuda_runtime.h>

#include "collectives/collective_data.hpp"
#include "kernels/collective.hpp"
#include "kernels/launch.cuh"

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

int element_size(DataType type) { return type == DataType::float64 ? 8 : 4; }

}  // namespace

using detail::check_cuda;
using detail::grid_for;

void fill_collective(void* input, uint64_t in_count, void* output, uint64_t out_count, DataType type, int rank, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  check_cuda(cudaMemsetAsync(output, 0, out_count * element_size(type), s));
  switch (type) {
    case DataType::float32: fill_kernel<<<grid_for(in_count), 256, 0, s>>>(static_cast<float*>(input), in_count, rank); break;
    case DataType::float64: fill_kernel<<<grid_for(in_count), 256, 0, s>>>(static_cast<double*>(input), in_count, rank); break;
    case DataType::int32: fill_kernel<<<grid_for(in_count), 256, 0, s>>>(static_cast<int32_t*>(input), in_count, rank); break;
  }
  check_cuda(cudaGetLastError());
  check_cuda(cudaStreamSynchronize(s));
}

uint64_t count_collective_wrong(const void* output, uint64_t out_count, CollOp op, ReduceOp redop, DataType type, int rank, int ranks,
                                uint64_t chunk, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  const unsigned grid = grid_for(out_count);
  return detail::count_on_device(s, [&](unsigned long long* counter) {
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
  });
}

}  // namespace fabricproof::kernels
