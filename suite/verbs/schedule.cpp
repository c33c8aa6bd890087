#include "verbs/schedule.hpp"

#include <algorithm>

namespace fabricproof {

Rounds round_robin(int participants) {
  Rounds rounds;
  if (participants < 2) return rounds;
  const int n = participants % 2 ? participants + 1 : participants;  // n-1 is the phantom when odd
  std::vector<int> ring(n);
  for (int i = 0; i < n; ++i) ring[i] = i;
  for (int r = 0; r < n - 1; ++r) {
    std::vector<Pair> round;
    for (int i = 0; i < n / 2; ++i) {
      const int a = ring[i], b = ring[n - 1 - i];
      if (a >= participants || b >= participants) continue;  // paired with the phantom: rests
      round.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
    std::rotate(ring.begin() + 1, ring.end() - 1, ring.end());  // participant 0 stays, the rest turn
  }
  return rounds;
}

}  // namespace fabricproof
