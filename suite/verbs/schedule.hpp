#pragma once
// Pair schedules for the verbs matrix: every unordered pair of participants exactly once, in
// rounds of disjoint pairs that can run concurrently (no participant twice in a round).
#include <utility>
#include <vector>

namespace fabricproof {

using Pair = std::pair<int, int>;  // (lower, higher) participant indices
using Rounds = std::vector<std::vector<Pair>>;

// The circle method: N-1 rounds of N/2 pairs for even N; for odd N a phantom participant makes
// N rounds, each with one participant resting.
Rounds round_robin(int participants);

}  // namespace fabricproof
