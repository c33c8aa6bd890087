#pragma once
// The control path and the fabric's management: firmware identical across HCAs of one model within
// a node; one master subnet manager and one SM LID seen from every InfiniBand port; the default
// route and the route to the launch node not through the data fabric.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/finding.hpp"
#include "core/profile.hpp"
#include "inventory/inventory.hpp"

namespace fabricproof {

std::vector<Finding> check_control_path(const ClusterFacts& cluster);

}  // namespace fabricproof
