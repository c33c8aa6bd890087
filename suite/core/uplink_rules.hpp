#pragma once
// Judges the uplink phase: every measurement present (a missing one fails closed), the path to the
// storage target off the data fabric, all nodes together carrying the cluster's ingest need, and
// each node's share reachable with one flow or only with parallel streams (the seed: one TCP flow
// gets one link, so a dataloader must open several).
#include <vector>

#include "core/finding.hpp"
#include "core/uplink_model.hpp"

namespace fabricproof {

// The need is the section's (the phase resolves --uplink-need or the profile's uplink.ingest_gbps).
std::vector<Finding> check_uplink(const UplinkSection& section);

}  // namespace fabricproof
