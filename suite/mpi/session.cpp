#include "mpi/session.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>

namespace fabricproof::mpi {
namespace {

constexpr int kTagGather = 101;
constexpr int kTagClock = 102;

double wall_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

}  // namespace

Session::Session(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    finalize_ = true;
  }
  // Errors come back as codes so adapters can turn them into findings instead of aborting.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
}

Session::~Session() {
  if (finalize_) MPI_Finalize();
}

std::string Session::library_version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<size_t>(length));
  version = version.substr(0, version.find_first_of(",\n"));
  return version;
}

void Session::abort(int code) const { MPI_Abort(MPI_COMM_WORLD, code); std::abort(); }

bool wait_until(MPI_Request& request, Clock::time_point deadline, MPI_Status* status) {
  int done = 0;
  for (;;) {
    MPI_Test(&request, &done, status);
    if (done) return true;
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

std::vector<std::optional<std::string>> gather_to_root(const Session& s, const std::string& mine, Clock::time_point deadline) {
  if (!s.is_root()) {
    MPI_Request request;
    MPI_Isend(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, 0, kTagGather, s.world(), &request);
    if (!wait_until(request, deadline)) MPI_Cancel(&request);
    return {};
  }
  std::vector<std::optional<std::string>> all(static_cast<size_t>(s.size()));
  all[0] = mine;
  // Receive in whatever order ranks deliver; a slow rank does not hold up the others.
  int pending = s.size() - 1;
  while (pending > 0 && Clock::now() <= deadline) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTagGather, s.world(), &flag, &status);
    if (!flag) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    int count = 0;
    MPI_Get_count(&status, MPI_CHAR, &count);
    std::string payload(static_cast<size_t>(count), '\0');
    MPI_Recv(payload.data(), count, MPI_CHAR, status.MPI_SOURCE, kTagGather, s.world(), MPI_STATUS_IGNORE);
    all[static_cast<size_t>(status.MPI_SOURCE)] = std::move(payload);
    --pending;
  }
  return all;
}

std::optional<std::string> broadcast_from_root(const Session& s, const std::string& value, Clock::time_point deadline) {
  uint64_t length = value.size();
  MPI_Request request;
  MPI_Ibcast(&length, 1, MPI_UINT64_T, 0, s.world(), &request);
  if (!wait_until(request, deadline)) return std::nullopt;
  std::string out = s.is_root() ? value : std::string(length, '\0');
  if (length > static_cast<uint64_t>(std::numeric_limits<int>::max())) return std::nullopt;
  MPI_Ibcast(out.data(), static_cast<int>(length), MPI_CHAR, 0, s.world(), &request);
  if (!wait_until(request, deadline)) return std::nullopt;
  return out;
}

std::vector<double> clock_offsets(const Session& s, const std::vector<int>& skip, Clock::time_point deadline) {
  constexpr int kRounds = 8;
  std::vector<double> offsets(static_cast<size_t>(s.size()), 0.0);
  auto skipped = [&](int r) { return std::find(skip.begin(), skip.end(), r) != skip.end(); };
  if (!s.is_root()) {
    if (skipped(s.rank())) return offsets;
    for (int i = 0; i < kRounds; ++i) {
      double ping = 0;
      MPI_Request request;
      MPI_Irecv(&ping, 1, MPI_DOUBLE, 0, kTagClock, s.world(), &request);
      if (!wait_until(request, deadline)) {
        MPI_Cancel(&request);
        return offsets;
      }
      double now = wall_seconds();
      MPI_Send(&now, 1, MPI_DOUBLE, 0, kTagClock, s.world());
    }
    return offsets;
  }
  for (int r = 1; r < s.size(); ++r) {
    if (skipped(r)) continue;
    double best_rtt = std::numeric_limits<double>::infinity();
    for (int i = 0; i < kRounds; ++i) {
      const double t0 = wall_seconds();
      MPI_Send(&t0, 1, MPI_DOUBLE, r, kTagClock, s.world());
      double remote = 0;
      MPI_Request request;
      MPI_Irecv(&remote, 1, MPI_DOUBLE, r, kTagClock, s.world(), &request);
      if (!wait_until(request, deadline)) {
        MPI_Cancel(&request);
        break;
      }
      const double t2 = wall_seconds();
      if (t2 - t0 < best_rtt) {
        best_rtt = t2 - t0;
        offsets[static_cast<size_t>(r)] = remote - (t0 + t2) / 2;
      }
    }
  }
  return offsets;
}

}  // namespace fabricproof::mpi
