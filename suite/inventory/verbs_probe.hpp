#pragma once
#include "inventory/inventory.hpp"

namespace fabricproof::verbs {

// Adds what only libibverbs knows to the sysfs inventory: firmware (ibv_query_device), active and
// max MTU, width/speed codes (active_speed_ex for XDR where the header has it), GID types
// (ibv_query_gid_ex), DMA-BUF registration support, and the libibverbs / rdma-core versions.
void augment_with_verbs(NodeFacts& node);

}  // namespace fabricproof::verbs
