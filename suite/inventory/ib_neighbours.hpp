#pragma once
// InfiniBand ports' neighbours from an ibnetdiscover topology file (`--ibnetdiscover FILE`, read by
// rank 0): each HCA port found in it by its node GUID and port number gets the switch and switch
// port at the cable's other end. Pure.
#include <string>

#include "cabling/ibnetdiscover.hpp"
#include "inventory/inventory.hpp"

namespace fabricproof {

// "58a2:e103:00da:e626" (sysfs) and "0002c90300337140" (ibnetdiscover) as one form: 16 hex digits.
std::string normal_guid(const std::string& guid);

// Fills every InfiniBand port's neighbour from the topology (or says why not: the file's own
// problems, or the port not in it). Ethernet ports keep what lldpd said.
void apply_ibnetdiscover(ClusterFacts& cluster, const cabling::IbTopology& topology, const std::string& name);

// The switches the nodes read themselves (a directed-route SMP, source "smp") are named by their
// descriptions; a description that several switches share across the cluster (a default such as
// "SwitchIB Mellanox Technologies") gets the switch's GUID added, as from ibnetdiscover.
void name_shared_switch_descriptions(ClusterFacts& cluster);

}  // namespace fabricproof
