#pragma once
// Which pairs the verbs phase measures, in which round, driven by which ranks. Rank 0 builds the
// plan from the inventory and broadcasts it; every rank then runs its own tasks round by round.
#include <string>
#include <vector>

#include "inventory/inventory.hpp"
#include "core/profile.hpp"
#include "verbs/verbs_model.hpp"

namespace fabricproof {

struct VerbsTask {
  int id = 0;
  int round = 0;
  int a = 0;  // endpoint indices; a reports
  int b = 0;
  std::string skip_reason;  // planned but not run (a port that is not ACTIVE)
};
FABRICPROOF_JSON(VerbsTask, id, round, a, b, skip_reason)

struct VerbsPlan {
  VerbsOptions options;
  std::vector<VerbsEndpoint> endpoints;
  std::vector<VerbsTask> tasks;
  int rounds = 0;
};
FABRICPROOF_JSON(VerbsPlan, options, endpoints, tasks, rounds)

// Endpoints: every port of every device the profile includes, on every node; each driven by the
// node's rank closest to it (its CPUs on the HCA's NUMA node, then its GPU's PCIe path to the HCA),
// the rails spread over the ranks first (at most ceil(ports / ranks) each); the endpoint says why. Pairs: only across nodes;
// rail-matched (the i-th HCA of one node with the i-th of the other) unless options.rails is
// "all". Rounds: the round-robin schedule over nodes, rails in parallel; "isolated" runs one pair
// per round.
VerbsPlan plan_verbs(const ClusterFacts& cluster, const Profile& profile, const VerbsOptions& options);

// A rank runs its pairs of a round one after another, and the pairs of a round take each step
// together (the app's step gate): a rank in two pairs of one round would hold the gate for both.
// Such a round is split so that every rank drives at most one pair per round (a node with more
// rails than ranks, or ranks moved after planning); a task that does not run (a port not ACTIVE)
// occupies no rank. plan_verbs does it; a caller that moves endpoints to other ranks does it again.
void one_pair_per_rank(VerbsPlan& plan);

}  // namespace fabricproof
