#pragma once
// Judging the verbs matrix: bandwidth against the slower port's rate, outliers against the best
// pair, latency by link layer, payload checks, and a diagnosis for every slow pair drawn from the
// inventory in the seed's order (MTU, PFC, cable/rate, PCIe, NUMA).
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "inventory/inventory.hpp"
#include "core/profile.hpp"
#include "verbs/verbs_model.hpp"

namespace fabricproof {

std::vector<Finding> check_verbs(const VerbsSection& section, const ClusterFacts& cluster, const Profile& profile);

// The rounds to run again before judging (VerbsOptions::remeasure): each round with a pair whose
// first measurement broke a figure rule (bandwidth or latency, absolute or against the typical
// pair), with the tests that broke one. The whole round runs again, so that the re-measured pair
// sees the same concurrent traffic as the first time.
struct RoundToRemeasure {
  int round = 0;
  std::vector<std::string> tests;  // in run order
};
FABRICPROOF_JSON(RoundToRemeasure, round, tests)
std::vector<RoundToRemeasure> rounds_to_remeasure(const VerbsSection& section, const ClusterFacts& cluster, const Profile& profile);

// One cause the evidence points at, and the triage step it belongs to.
struct Cause {
  TriageStep step = TriageStep::other;
  std::string text;
};

// What the inventory (and the pair's counter deltas) says about a slow or failing pair, most
// likely cause first. Never empty: without evidence it says what to check, in order.
std::vector<Cause> diagnose_pair(const VerbsEndpoint& a, const VerbsEndpoint& b, const ClusterFacts& cluster,
                                       const PairResult* pair);

}  // namespace fabricproof
