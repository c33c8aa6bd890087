#pragma once
// Each RoCE port's LLDP neighbour: from lldpd (`lldpcli -f json0 show neighbors`) where it runs;
// else, when asked to (listen_s > 0, root), from the LLDP frames the switch sends on the port's
// netdev within listen_s seconds (a switch sends one every 30 s by default); else each port says
// why none was read. InfiniBand ports say that their neighbours come from ibnetdiscover.
#include <string>
#include <vector>

#include "cabling/lldp.hpp"
#include "inventory/inventory.hpp"

namespace fabricproof::probe {

void read_port_neighbours(NodeFacts& node, double listen_s);

// The same from a neighbour table already read (`lldpcli` output), or from why it could not be.
void assign_port_neighbours(NodeFacts& node, const std::string& lldpcli_output, const std::string& unread_why);

// The first LLDP frame heard on each netdev within `seconds` (a packet socket each, joined to the
// LLDP multicast group; root). A netdev that cannot be listened on is in errors.
cabling::LldpNeighbours listen_for_lldp(const std::vector<std::string>& netdevs, double seconds);

}  // namespace fabricproof::probe
