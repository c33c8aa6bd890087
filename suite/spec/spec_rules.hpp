#pragma once
// Judges a finished run against the cluster spec, fail-closed: every node, device, phase, pair and
// floor the spec declares must have been found and measured; what is missing fails with the reason
// it was not measured (the phase's own reason, the pair's, the node that did not answer).
#include <vector>

#include "core/finding.hpp"
#include "core/profile.hpp"
#include "report/report.hpp"
#include "spec/spec.hpp"

namespace fabricproof {

// What the spec requires beyond what it lists: NCCL when GPUs are declared, GPUDirect when GPUs
// and RDMA devices are, the verbs matrix when RDMA devices are declared on two nodes or more.
bool spec_needs_nccl(const ClusterSpec& spec);
bool spec_needs_gpudirect(const ClusterSpec& spec);
bool spec_needs_verbs(const ClusterSpec& spec);
// The phases the run must select to measure what the spec declares (the listed ones included).
std::vector<std::string> spec_required_phases(const ClusterSpec& spec);

std::vector<Finding> check_spec(const ClusterSpec& spec, const Report& report, const Profile& profile);

}  // namespace fabricproof
