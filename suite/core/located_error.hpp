#pragma once
// A failure and where it happened: the node, the rank and the device, so that a phase that ends on
// it names them in the report ("node3 rank 2 mlx5_0: ibv_create_qp: ..."). The node and rank are
// this process's, set once by the MPI session; the device is the thrower's.
#include <optional>
#include <stdexcept>
#include <string>

namespace fabricproof {

struct Location {
  std::string host;
  std::optional<int> rank;
  std::string device;  // "mlx5_0", "GPU 1"; empty when the failure is not a device's
};
std::string describe(const Location& where);  // "node3 rank 2 mlx5_0"

void set_process_location(const std::string& host, int rank);
const Location& process_location();

class LocatedError : public std::runtime_error {
 public:
  LocatedError(const std::string& device, const std::string& what);
  const Location& where() const { return where_; }

 private:
  Location where_;
};

}  // namespace fabricproof
