#pragma once
// Which leaf switch each HCA hangs from, as the integrator writes it (or a cabling tool derives it
// from ibnetdiscover): "<host> <leaf>" (every HCA of the host on that leaf) or "<host> <device>
// <leaf>" (one HCA: rail-optimised fabrics have a leaf per rail) per line, '#' comments, blank
// lines. Every problem names the file and the line.
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cabling/rails.hpp"
#include "locate/fabric.hpp"

namespace fabricproof::locate {

struct LeafMap {
  std::map<std::string, std::string> by_host;                           // host -> leaf
  std::map<std::pair<std::string, std::string>, std::string> by_device;  // (host, device) -> leaf
  std::vector<std::string> errors;                                      // "NAME:LINE: problem"
  // The leaf of one HCA: its own line, else its host's; empty when the map does not say.
  std::string leaf_of(const std::string& host, const std::string& device) const;
};

LeafMap parse_leaf_map(std::string_view text, const std::string& name);
// The --leaf-map file as either form: an ibnetdiscover topology file gives each cabled CA port's
// switch (its GUID) as the leaf of "<host> <device>", read from the CA's node description (rdma-ndd
// sets it to "<hostname> <device>"); anything else is read as the lines above.
LeafMap read_leaf_map(const std::string& text, const std::string& name);

// The leaves the run read itself: each cabled port's neighbour switch (lldpd, --ibnetdiscover) as
// the leaf of "<host> <device>". Ports whose neighbour was not read are left out (assign_leaves
// then says which HCAs the map lacks).
LeafMap leaf_map_of_ports(const std::vector<cabling::CabledPort>& ports);

// Leaves numbered per rail for the planner, from the HCA on each rail of each node (devices[node][rail],
// empty where the node has no such rail). A map that leaves some HCA out gives no leaves at all
// (Fabric::leaf empty) and returns the HCAs it left out: a partial map would make them one leaf.
std::vector<std::string> assign_leaves(Fabric& fabric, const LeafMap& map, const std::vector<std::vector<std::string>>& devices);

}  // namespace fabricproof::locate
