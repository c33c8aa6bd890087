#include "inventory/ib_neighbours.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

namespace fabricproof {

std::string normal_guid(const std::string& guid) {
  std::string hex;
  for (char c : guid)
    if (std::isxdigit(static_cast<unsigned char>(c))) hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (guid.rfind("0x", 0) == 0 && hex.size() > 1) hex.erase(0, 1);  // the "0x" prefix's 0 (its x is no hex digit)
  return hex.size() < 16 ? std::string(16 - hex.size(), '0') + hex : hex;
}

void apply_ibnetdiscover(ClusterFacts& cluster, const cabling::IbTopology& topology, const std::string& name) {
  std::map<std::pair<std::string, int>, cabling::CaPort> by_port;
  for (const auto& p : cabling::ca_ports(topology)) by_port.emplace(std::pair{normal_guid(p.node_guid), p.port}, p);
  // A switch is named by its description where that names one switch; default descriptions
  // ("SwitchIB Mellanox Technologies") are shared, and then its GUID is added.
  std::map<std::string, int> descs;
  for (const auto& n : topology.nodes)
    if (n.kind == "Switch") ++descs[n.desc];
  auto switch_name = [&](const cabling::CaPort& c) {
    return descs[c.switch_desc] == 1 ? c.switch_desc : fmt::format("{} [S-{}]", c.switch_desc, c.switch_guid);
  };
  const std::string problem = topology.errors.empty() ? "" : fmt::format("{} ({} problem(s))", topology.errors.front(), topology.errors.size());
  for (auto& node : cluster.nodes)
    for (auto& d : node.rdma_devices)
      for (auto& port : d.ports) {
        if (port.link_layer != "InfiniBand") continue;
        const auto found = by_port.find({normal_guid(d.node_guid), port.port});
        if (found == by_port.end()) {
          if (port.neighbour && port.neighbour->source == "smp" && port.neighbour->unread.empty()) continue;  // the node read it itself
          port.neighbour = PortNeighbour{"ibnetdiscover", "", "", "", "",
                                         !problem.empty() ? problem
                                                          : fmt::format("{}: no cable of node GUID {} port {} in it", name, d.node_guid, port.port)};
          continue;
        }
        const auto& c = found->second;
        port.neighbour = PortNeighbour{"ibnetdiscover", switch_name(c), "guid " + c.switch_guid,
                                       std::to_string(c.switch_port), "", ""};
      }
}

void name_shared_switch_descriptions(ClusterFacts& cluster) {
  std::map<std::string, std::set<std::string>> ids;
  for (const auto& node : cluster.nodes)
    for (const auto& d : node.rdma_devices)
      for (const auto& p : d.ports)
        if (p.neighbour && p.neighbour->source == "smp" && p.neighbour->unread.empty()) ids[p.neighbour->switch_name].insert(p.neighbour->switch_id);
  for (auto& node : cluster.nodes)
    for (auto& d : node.rdma_devices)
      for (auto& p : d.ports)
        if (p.neighbour && p.neighbour->source == "smp" && p.neighbour->unread.empty() && ids[p.neighbour->switch_name].size() > 1)
          p.neighbour->switch_name += fmt::format(" [{}]", p.neighbour->switch_id);
}

}  // namespace fabricproof
