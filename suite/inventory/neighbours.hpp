#pragma once
// Each RoCE port's LLDP neighbour, from lldpd (`lldpcli -f json0 show neighbors`) where it runs;
// else each port says why none was read. InfiniBand ports say that their neighbours come from
// ibnetdiscover (not read by the run yet).
#include "inventory/inventory.hpp"

namespace fabricproof::probe {

void read_port_neighbours(NodeFacts& node);

// The same from a neighbour table already read (`lldpcli` output), or from why it could not be.
void assign_port_neighbours(NodeFacts& node, const std::string& lldpcli_output, const std::string& unread_why);

}  // namespace fabricproof::probe
