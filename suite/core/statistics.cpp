#include "core/statistics.hpp"

#include <algorithm>

namespace fabricproof {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto mid = values.begin() + static_cast<long>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  if (values.size() % 2) return *mid;
  return (*std::max_element(values.begin(), mid) + *mid) / 2;  // nth_element left the lower half before mid
}

}  // namespace fabricproof
