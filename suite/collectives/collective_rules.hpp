#pragma once
// Collective sweeps -> findings and the scaling table. Pure: results and inventory in, verdicts out.
#include <nlohmann/json.hpp>
#include <vector>

#include "collectives/collective_model.hpp"
#include "core/finding.hpp"
#include "inventory/inventory.hpp"
#include "core/profile.hpp"

namespace fabricproof {

// Rules: wrong elements fail; an engine error fails; NCCL busbw at the largest common size falling
// `scaling_drop_factor` or more from 1 to 2 nodes fails ("RDMA not used between nodes"); NCCL
// multi-node busbw against NICs x rate / 8 (when the profile judges absolute figures).
std::vector<Finding> check_collectives(const std::vector<CollResult>& results, const ClusterFacts& cluster, const Profile& profile);

// --collective-mode locate: each named node fails with its answer line, each suspect it could not
// settle is not proven, and nothing named (after at least one round) passes with what it tested.
std::vector<Finding> check_collective_locate(const CollLocate& locate);

// One row per engine and op at the largest size every group completed: busbw per group, against
// one node and against the NIC ceiling of the group's nodes.
std::vector<ScalingRow> scaling_table(const std::vector<CollResult>& results, const ClusterFacts& cluster, const Profile& profile);

// NICs x rate / 8 in GB/s per node for the hosts of a group: the fewest ACTIVE ports (of the
// profile's devices) on any of its nodes times the slowest rate among them. nullopt when unknown.
std::optional<double> nic_ceiling_GBps(const std::vector<std::string>& hosts, const ClusterFacts& cluster, const Profile& profile);

}  // namespace fabricproof
