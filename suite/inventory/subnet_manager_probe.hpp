#pragma once
#include "inventory/inventory.hpp"

namespace fabricproof::verbs {

// Asks SMInfo, as `sminfo` does, through every ACTIVE InfiniBand port of the node: at the port's
// SM LID (the master it follows) and at its own LID (an SM running on this host answers there).
// Needs root (/dev/infiniband/umad* are root-only) and libibumad; otherwise the node records why
// not (subnet_managers_unread), never a guess. RoCE ports have no subnet manager.
void augment_with_subnet_managers(NodeFacts& node);

// Each InfiniBand port whose link is up gets the node at the far end of its cable as its neighbour
// (source "smp"): NodeInfo and NodeDescription by a directed-route SMP one hop out, as `smpquery
// -D nodeinfo 0,<port>` (root and libibumad; otherwise the port says why not).
void augment_with_hop_one_neighbours(NodeFacts& node);

}  // namespace fabricproof::verbs
