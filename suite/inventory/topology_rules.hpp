#pragma once
// The GPU <-> HCA topology of each node -> findings. Pure.
#include <vector>

#include "core/finding.hpp"
#include "inventory/inventory.hpp"
#include "core/profile.hpp"

namespace fabricproof {

// Per GPU, the path to its closest HCA (the one NCCL would use): PIX/PXB pass, PHB/NODE warn
// (through the CPU root complex), SYS warns (across NUMA nodes), unknown is skipped with the
// reason. NCCL_NET_GDR_LEVEL, when the ranks set it, against those classes: a GPU whose path is
// farther than the level gets no GPUDirect RDMA from NCCL.
std::vector<Finding> check_topology(const ClusterFacts& cluster, const Profile& profile);

// NCCL_NET_GDR_LEVEL as NCCL reads it: LOC, PIX, PXB, PHB, SYS or the legacy numbers 0..5.
// Returns the farthest class GPUDirect is allowed for (0 LOC .. 4 SYS), nullopt when unreadable.
std::optional<int> parse_gdr_level(const std::string& text);

}  // namespace fabricproof
