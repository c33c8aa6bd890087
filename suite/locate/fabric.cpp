#include "locate/fabric.hpp"

#include <algorithm>

namespace fabricproof::locate {

int Fabric::leaf_count(int rail) const {
  if (leaf.empty()) return 1;
  const auto& row = leaf[static_cast<size_t>(rail)];
  return row.empty() ? 1 : *std::max_element(row.begin(), row.end()) + 1;
}

const char* to_string(FaultKind kind) {
  switch (kind) {
    case FaultKind::node: return "node";
    case FaultKind::port: return "port";
    case FaultKind::link: return "link";
    case FaultKind::leaf: return "leaf";
  }
  return "?";
}

double upper_quartile(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t at = values.size() * 3 / 4;
  std::nth_element(values.begin(), values.begin() + static_cast<long>(at), values.end());
  return values[at];
}

}  // namespace fabricproof::locate
