#pragma once
#include "inventory/inventory.hpp"

namespace fabricproof::verbs {

// Asks SMInfo, as `sminfo` does, through every ACTIVE InfiniBand port of the node: at the port's
// SM LID (the master it follows) and at its own LID (an SM running on this host answers there).
// Needs root (/dev/infiniband/umad* are root-only) and libibumad; otherwise the node records why
// not (subnet_managers_unread), never a guess. RoCE ports have no subnet manager.
void augment_with_subnet_managers(NodeFacts& node);

}  // namespace fabricproof::verbs
