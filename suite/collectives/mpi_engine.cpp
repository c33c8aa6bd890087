#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "collectives/engine.hpp"
#include "collectives/collective_data.hpp"
#include "core/located_error.hpp"

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

// A failed MPI call (the group's error handler returns codes) as a LocatedError naming the call.
void check_mpi(const char* call, int code) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw LocatedError("", fmt::format("{}: {}", call, std::string(text, static_cast<size_t>(length))));
}

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
  }
  return "an unknown thread level";
}

constexpr uint64_t kMaxCount = 2147483647;  // INT_MAX: MPI-3 counts

class MpiEngine : public Engine {
 public:
  MpiEngine(mpi::Session& session, MPI_Comm group, uint64_t max_bytes, double timeout_s)
      : session_(session), comm_(group), timeout_s_(timeout_s), send_(new std::byte[max_bytes]), recv_(new std::byte[max_bytes]) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &ranks_);
    // Errors come back as codes (and then as a row's error) instead of ending the job.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  }

  std::string name() const override { return "mpi"; }
  // The thread level is named because it moves the figures: Open MPI locks its progress loop at any
  // level above MPI_THREAD_SINGLE (PyTorch's MPI backend asks for MULTIPLE): 1.5% at 1 MiB on shared
  // memory, measured at FUNNELED (docs/benchmarks.md).
  std::string timing() const override {
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    return fmt::format("MPI_Wtime over the calls, each the blocking MPI call applications make (a call that never returns is the "
                       "watchdog's); MPI at {}",
                       thread_level_name(level));
  }
  // MPI_IN_PLACE reads the input where NCCL's in-place form does (collective_ops.hpp; the result of
  // reduce_scatter lands at the start of the buffer, not at rank x chunk); MPI_Bcast is always in place.
  bool supports_in_place(CollOp op) const override { return collective_op(op).mpi_in_place; }

  void fill(const CollCall& call) override {
    switch (call.dtype) {
      case DataType::float32: return fill_as<float>(call);
      case DataType::float64: return fill_as<double>(call);
      case DataType::int32: return fill_as<int32_t>(call);
    }
  }

  // The blocking collective, as a bare MPI_Allreduce loop calls it: its non-blocking form polled
  // to a deadline is another algorithm in Open MPI (libnbc), 68% slower at 1 MiB on 2 ranks. The
  // deadline is the watchdog's instead: the job ends when no call returns within the timeout
  // (mpi/session.hpp; the roll call and the finaliser know that a rank may be blocked here).
  double run(const CollCall& c, int calls) override {
    const auto pieces = pieces_of(c);
    const auto stall = std::chrono::duration_cast<mpi::Clock::duration>(std::chrono::duration<double>(timeout_s_));
    mpi::Session::Watch watch(session_, stall, fmt::format("MPI {} of {} elements", to_string(c.op), c.chunk), comm_);
    const double start = MPI_Wtime();
    for (int i = 0; i < calls; ++i) {
      for (const auto& [offset, count] : pieces) call(c, offset, static_cast<int>(count));
      watch.progress();
    }
    return MPI_Wtime() - start;
  }

  uint64_t count_wrong(const CollCall& call) override {
    switch (call.dtype) {
      case DataType::float32: return wrong_as<float>(call);
      case DataType::float64: return wrong_as<double>(call);
      case DataType::int32: return wrong_as<int32_t>(call);
    }
    return 0;
  }

 private:
  // MPI counts are int: allreduce and broadcast of more than 2^31-1 elements go as several calls
  // on consecutive pieces (element-wise ops, so the result is the same); the per-rank counts of
  // the others are bounded by the plan (max_call_bytes).
  static std::vector<std::pair<uint64_t, uint64_t>> pieces_of(const CollCall& c) {
    const auto pieces = collective_op(c.op).mpi_whole_buffer ? split_count(c.chunk, kMaxCount) : std::vector<std::pair<uint64_t, uint64_t>>{{0, c.chunk}};
    for (const auto& piece : pieces)
      if (piece.second > kMaxCount) throw LocatedError("", fmt::format("{} elements per rank: more than one MPI call can take", piece.second));
    return pieces;
  }

  void call(const CollCall& c, uint64_t offset, int count) {
    const auto type = mpi_type(c.dtype);
    const size_t skip = offset * static_cast<size_t>(size_of(c.dtype));
    void* in = c.in_place ? MPI_IN_PLACE : send_data() + skip;
    void* out = recv_data() + skip;
    switch (c.op) {
      case CollOp::allreduce: return check_mpi("MPI_Allreduce", MPI_Allreduce(in, out, count, type, mpi_op(c.redop), comm_));
      case CollOp::allgather: return check_mpi("MPI_Allgather", MPI_Allgather(in, count, type, out, count, type, comm_));
      case CollOp::reduce_scatter:
        return check_mpi("MPI_Reduce_scatter_block",
                         MPI_Reduce_scatter_block(c.in_place ? MPI_IN_PLACE : send_data(), out, count, type, mpi_op(c.redop), comm_));
      case CollOp::broadcast: return check_mpi("MPI_Bcast", MPI_Bcast(out, count, type, 0, comm_));
      case CollOp::alltoall: return check_mpi("MPI_Alltoall", MPI_Alltoall(send_data(), count, type, out, count, type, comm_));
    }
  }

  // The input goes to the send buffer, or into the output buffer where the in-place form (and
  // MPI_Bcast, which has no separate send buffer) reads it. The rest of the output is zeroed: no
  // expected element is 0, so an output the call never wrote cannot pass.
  template <typename T>
  void fill_as(const CollCall& c) {
    const uint64_t in_count = coll_input_elements(c.op, c.chunk, ranks_);
    const uint64_t out_count = coll_output_elements(c.op, c.chunk, ranks_);
    auto* out = reinterpret_cast<T*>(recv_data());
    std::memset(out, 0, std::max(in_count, out_count) * sizeof(T));
    T* in = reinterpret_cast<T*>(send_data());
    if (c.in_place) in = out + coll_in_place_offset(c.op, rank_, c.chunk);
    if (c.op == CollOp::broadcast) {
      if (rank_ != 0) return;
      in = out;
    }
    coll_fill_input(in, in_count, rank_);
  }

  template <typename T>
  uint64_t wrong_as(const CollCall& c) const {
    const uint64_t out_count = coll_output_elements(c.op, c.chunk, ranks_);
    return coll_count_wrong(reinterpret_cast<const T*>(recv_data()), out_count, c.op, c.redop, rank_, ranks_, c.chunk);
  }

  mpi::Session& session_;
  MPI_Comm comm_;
  double timeout_s_;
  int rank_ = 0;
  int ranks_ = 1;
  // Not zeroed here (new[] without ()): fill() writes what each size reads, and zeroing 2 x
  // max-bytes up front made the ranks reach the first, 8-byte step seconds apart (2 GiB for 4
  // ranks of a 256 MiB sweep), which its exchange deadline counted.
  std::unique_ptr<std::byte[]> send_, recv_;
  std::byte* send_data() { return send_.get(); }
  std::byte* recv_data() { return recv_.get(); }
  const std::byte* recv_data() const { return recv_.get(); }
};

}  // namespace

std::unique_ptr<Engine> make_mpi_engine(mpi::Session& session, MPI_Comm group, uint64_t max_bytes, double timeout_s) {
  return std::make_unique<MpiEngine>(session, group, max_bytes, timeout_s);
}

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
