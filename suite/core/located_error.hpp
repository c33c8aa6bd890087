#pragma once
// A failure and where it happened: the node, the rank and the device, so that a phase that ends on
// it names them in the report ("node3 rank 2 mlx5_0: ibv_create_qp: ..."). The node and rank are
// this process's, set once by the MPI session; the device is the thrower's.
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace fabricproof {

struct Location {
  std::string host;
  std::optional<int> rank;
  std::string device;  // "mlx5_0", "GPU 1"; empty when the failure is not a device's
};
std::string describe(const Location& where);  // "node3 rank 2 mlx5_0"

void set_process_location(const std::string& host, int rank);
const Location& process_location();

// The one error style for a recoverable failure (a device call, a file, a peer's answer): thrown
// as a LocatedError, and caught where it becomes data (a row's error, the ranks' agreement on one,
// a finding) with failure_of. No function returns an empty string for success. mpi::Lost (a rank
// stopped answering) is not one: it ends the run.
class LocatedError : public std::runtime_error {
 public:
  LocatedError(const std::string& device, const std::string& what);
  const Location& where() const { return where_; }

 private:
  Location where_;
};

// Runs `step`: nothing when it finished, the failure's words when it threw a LocatedError.
template <typename Step>
std::optional<std::string> failure_of(Step&& step) {
  try {
    std::forward<Step>(step)();
    return std::nullopt;
  } catch (const LocatedError& e) {
    return std::string(e.what());
  }
}

}  // namespace fabricproof
