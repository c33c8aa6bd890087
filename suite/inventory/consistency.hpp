#pragma once
// Cross-node consistency: every node of an accepted cluster runs the same hardware models,
// firmware, drivers, libraries and MTUs. The odd node is named.
#include <vector>

#include "core/finding.hpp"
#include "inventory/inventory.hpp"
#include "core/profile.hpp"

namespace fabricproof {

std::vector<Finding> check_consistency(const ClusterFacts& cluster, const Profile& profile);

}  // namespace fabricproof
