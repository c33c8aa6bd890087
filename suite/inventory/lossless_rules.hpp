#pragma once
// The seed's RoCE lossless advice as rules, on every RoCE port: PFC on exactly the RoCE priority,
// trust DSCP, the DSCP the traffic carries (NCCL_IB_TC >> 2, else the device default class, else
// the profile's) mapped to that priority, the RoCE class given bandwidth by ETS, ECN on it where
// readable, RDMA-CM defaulting to RoCE v2; the same DCB configuration on every node.
// A fact the node could not give (DCB unreadable on a driver without dcbnl) is a skip with the
// reason, never a pass or a fail.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/finding.hpp"
#include "core/profile.hpp"
#include "inventory/inventory.hpp"

namespace fabricproof {

std::vector<Finding> check_roce_qos(const ClusterFacts& cluster, const Profile& profile);

}  // namespace fabricproof
