#pragma once
// MPI adapter: the session (init/finalize), and the few collectives the orchestration needs, each
// with a deadline so that a dead or hung rank is named instead of hanging the run.
#include <mpi.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace fabricproof::mpi {

using Clock = std::chrono::steady_clock;

class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  bool is_root() const { return rank_ == 0; }
  MPI_Comm world() const { return MPI_COMM_WORLD; }
  std::string library_version() const;  // "Open MPI v4.1.4, ..." first line

  // Ends the whole job. Only main calls it, after rank 0 has written the report.
  [[noreturn]] void abort(int code) const;

 private:
  bool finalize_ = false;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
};

// Every rank sends `mine` to rank 0. On rank 0 the result holds one entry per rank; a rank that
// did not deliver before `deadline` is nullopt. Other ranks get an empty vector.
std::vector<std::optional<std::string>> gather_to_root(const Session& s, const std::string& mine, Clock::time_point deadline);

// Rank 0's `value` on every rank; nullopt when it did not arrive before the deadline.
std::optional<std::string> broadcast_from_root(const Session& s, const std::string& value, Clock::time_point deadline);

// Wall-clock offset of each rank against rank 0 (seconds, positive = ahead), by ping-pong keeping
// the exchange with the shortest round trip. Meaningful on rank 0; `skip` lists ranks to leave out
// (they did not answer earlier). Every rank not in `skip` must call it.
std::vector<double> clock_offsets(const Session& s, const std::vector<int>& skip, Clock::time_point deadline);

// Waits for `request` until the deadline, yielding the CPU (ranks are oversubscribed in tests).
bool wait_until(MPI_Request& request, Clock::time_point deadline, MPI_Status* status = MPI_STATUS_IGNORE);

}  // namespace fabricproof::mpi
