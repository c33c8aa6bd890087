#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "collectives/engine.hpp"
#include "core/collective_pattern.hpp"

namespace fabricproof::collectives {
namespace {

MPI_Datatype mpi_type(DataType t) {
  switch (t) {
    case DataType::float32: return MPI_FLOAT;
    case DataType::float64: return MPI_DOUBLE;
    case DataType::int32: return MPI_INT32_T;
  }
  return MPI_FLOAT;
}

MPI_Op mpi_op(ReduceOp op) { return op == ReduceOp::max ? MPI_MAX : op == ReduceOp::min ? MPI_MIN : MPI_SUM; }

std::string mpi_error(const char* call, int code) {
  if (code == MPI_SUCCESS) return "";
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return fmt::format("{}: {}", call, std::string(text, static_cast<size_t>(length)));
}

class MpiEngine : public Engine {
 public:
  MpiEngine(MPI_Comm group, uint64_t max_bytes) : comm_(group), send_(max_bytes), recv_(max_bytes) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &ranks_);
    // Errors come back as codes (and then as a row's error) instead of ending the job.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }

  std::string name() const override { return "mpi"; }
  // MPI_IN_PLACE means the same as NCCL's in-place for these two; MPI_Bcast is always in place.
  bool supports_in_place(CollOp op) const override { return op == CollOp::allreduce || op == CollOp::allgather; }

  std::string fill(const CollCall& call) override {
    switch (call.dtype) {
      case DataType::float32: return fill_as<float>(call);
      case DataType::float64: return fill_as<double>(call);
      case DataType::int32: return fill_as<int32_t>(call);
    }
    return "unknown data type";
  }

  std::string run(const CollCall& call, int calls, double* seconds) override {
    const double start = MPI_Wtime();
    for (int i = 0; i < calls; ++i)
      if (auto error = call_once(call); !error.empty()) return error;
    *seconds = MPI_Wtime() - start;
    return "";
  }

  std::string count_wrong(const CollCall& call, uint64_t* wrong) override {
    switch (call.dtype) {
      case DataType::float32: *wrong = wrong_as<float>(call); break;
      case DataType::float64: *wrong = wrong_as<double>(call); break;
      case DataType::int32: *wrong = wrong_as<int32_t>(call); break;
    }
    return "";
  }

 private:
  std::string call_once(const CollCall& c) {
    const auto type = mpi_type(c.dtype);
    const int chunk = static_cast<int>(c.chunk);  // clipped to INT_MAX elements by the plan
    void* in = c.in_place ? MPI_IN_PLACE : send_.data();
    void* out = recv_.data();
    switch (c.op) {
      case CollOp::allreduce: return mpi_error("MPI_Allreduce", MPI_Allreduce(in, out, chunk, type, mpi_op(c.redop), comm_));
      case CollOp::allgather: return mpi_error("MPI_Allgather", MPI_Allgather(in, chunk, type, out, chunk, type, comm_));
      case CollOp::reduce_scatter:
        return mpi_error("MPI_Reduce_scatter_block", MPI_Reduce_scatter_block(send_.data(), out, chunk, type, mpi_op(c.redop), comm_));
      case CollOp::broadcast: return mpi_error("MPI_Bcast", MPI_Bcast(out, chunk, type, 0, comm_));
      case CollOp::alltoall: return mpi_error("MPI_Alltoall", MPI_Alltoall(send_.data(), chunk, type, out, chunk, type, comm_));
    }
    return "unknown collective";
  }

  // The input goes to the send buffer, or into the output buffer where the in-place form (and
  // MPI_Bcast, which has no separate send buffer) reads it. The rest of the output is zeroed: no
  // expected element is 0, so an output the call never wrote cannot pass.
  template <typename T>
  std::string fill_as(const CollCall& c) {
    const uint64_t in_count = coll_input_elements(c.op, c.chunk, ranks_);
    const uint64_t out_count = coll_output_elements(c.op, c.chunk, ranks_);
    auto* out = reinterpret_cast<T*>(recv_.data());
    std::memset(out, 0, out_count * sizeof(T));
    T* in = reinterpret_cast<T*>(send_.data());
    if (c.in_place) in = out + coll_in_place_offset(c.op, rank_, c.chunk);
    if (c.op == CollOp::broadcast) {
      if (rank_ != 0) return "";
      in = out;
    }
    coll_fill_input(in, in_count, rank_);
    return "";
  }

  template <typename T>
  uint64_t wrong_as(const CollCall& c) const {
    const uint64_t out_count = coll_output_elements(c.op, c.chunk, ranks_);
    return coll_count_wrong(reinterpret_cast<const T*>(recv_.data()), out_count, c.op, c.redop, rank_, ranks_, c.chunk);
  }

  MPI_Comm comm_;
  int rank_ = 0;
  int ranks_ = 1;
  std::vector<std::byte> send_;
  std::vector<std::byte> recv_;
};

}  // namespace

std::unique_ptr<Engine> make_mpi_engine(MPI_Comm group, uint64_t max_bytes) { return std::make_unique<MpiEngine>(group, max_bytes); }

Usable usable_host_memory(int ranks_on_node) {
  // Half of what the kernel can hand out now, shared by the node's ranks: the rest stays for the
  // MPI library's own buffers, the page cache and whatever else runs there.
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const uint64_t available = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  const int ranks = ranks_on_node > 0 ? ranks_on_node : 1;
  return {available / 2 / static_cast<uint64_t>(ranks),
          fmt::format("half of the node's available memory ({} MiB) shared by its {} rank(s)", available >> 20, ranks)};
}

}  // namespace fabricproof::collectives
