#pragma once
// Order statistics shared by the rules and the report views.
#include <vector>

namespace fabricproof {

// The median (the mean of the two middle values for an even count); 0 for no values.
double median(std::vector<double> values);

}  // namespace fabricproof
