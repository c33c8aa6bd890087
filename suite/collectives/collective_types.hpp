#pragma once
// The enums of the collective sweeps, alone so that CUDA kernels can include them
// (collectives/collective_data.hpp) without the JSON model.
namespace fabricproof {
enum class CollOp { allreduce, allgather, reduce_scatter, broadcast, alltoall };
enum class DataType { float32, float64, int32 };
enum class ReduceOp { sum, max, min };
}  // namespace fabricproof
