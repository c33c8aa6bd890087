#pragma once
// hwloc adapter: the machine's PCI tree (live, or an lstopo XML export) as a core TopoTree, with
// the GPUs and HCAs found in it. hwloc rather than walking sysfs by hand, so that real machines'
// XML exports are test input (shared/topologies).
#include <string>

#include "inventory/topology.hpp"

namespace fabricproof::topology {

// `xml_path` empty: this machine. Never throws; a failure is in `error`.
LoadedTopology load(const std::string& xml_path = "");

// load() then classify_topology().
TopologyFacts read_topology(const std::string& xml_path = "");

}  // namespace fabricproof::topology
