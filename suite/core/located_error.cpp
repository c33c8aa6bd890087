#include "core/located_error.hpp"

#include <fmt/format.h>

namespace fabricproof {
namespace {
Location& location() {
  static Location l;
  return l;
}
}  // namespace

std::string describe(const Location& where) {
  std::string out = where.host;
  if (where.rank) out += fmt::format("{}rank {}", out.empty() ? "" : " ", *where.rank);
  if (!where.device.empty()) out += (out.empty() ? "" : " ") + where.device;
  return out;
}

void set_process_location(const std::string& host, int rank) {
  location().host = host;
  location().rank = rank;
}

const Location& process_location() { return location(); }

LocatedError::LocatedError(const std::string& device, const std::string& what) : std::runtime_error(what), where_(process_location()) {
  where_.device = device;
}

}  // namespace fabricproof
