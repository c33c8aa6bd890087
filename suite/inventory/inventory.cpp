#include "inventory/inventory.hpp"

#include <algorithm>

namespace fabricproof {

Subject port_subject(const NodeFacts& node, const RdmaDevice& device, const PortFacts& port) {
  return Subject::port(node.host, device.name, port.port);
}

ClusterFacts merge_rank_facts(const std::vector<std::optional<NodeFacts>>& per_rank) {
  ClusterFacts cluster;
  cluster.world_size = static_cast<int>(per_rank.size());
  for (size_t rank = 0; rank < per_rank.size(); ++rank) {
    const auto& facts = per_rank[rank];
    if (!facts) {
      cluster.missing_ranks.push_back(static_cast<int>(rank));
      continue;
    }
    auto same_host = [&](const NodeFacts& n) { return n.host == facts->host; };
    auto it = std::find_if(cluster.nodes.begin(), cluster.nodes.end(), same_host);
    if (it == cluster.nodes.end()) {
      cluster.nodes.push_back(*facts);  // ranks arrive in order: the lowest rank's view wins
      continue;
    }
    it->ranks.insert(it->ranks.end(), facts->ranks.begin(), facts->ranks.end());
    if (!it->topology && facts->topology) it->topology = facts->topology;  // read by one rank per node
    if (it->subnet_managers.empty() && it->subnet_managers_unread.empty()) {  // asked by one rank per node too
      it->subnet_managers = facts->subnet_managers;
      it->subnet_managers_unread = facts->subnet_managers_unread;
    }
    for (auto& d : it->rdma_devices)  // so are the VPD and the neighbours: take them from whichever rank read them
      for (const auto& other : facts->rdma_devices) {
        if (other.name != d.name) continue;
        if (d.serial_number.empty() && !other.serial_number.empty()) {
          d.board_name = other.board_name;
          d.part_number = other.part_number;
          d.serial_number = other.serial_number;
        }
        for (auto& p : d.ports)
          for (const auto& q : other.ports)
            if (q.port == p.port && !p.neighbour && q.neighbour) p.neighbour = q.neighbour;
      }
    for (auto& g : it->gpus)
      for (const auto& other : facts->gpus)
        if (other.pci == g.pci && g.serial.empty()) g.serial = other.serial;
    // Two machines answering to one hostname would be silently merged: keep the evidence.
    if (facts->boot_id != it->boot_id) {
      it->probe_errors.push_back({"/proc/sys/kernel/random/boot_id",
                                  "rank " + std::to_string(rank) + " reports host '" + facts->host +
                                      "' with a different boot_id: two machines share a hostname"});
    }
  }
  return cluster;
}

std::optional<std::string> node_env(const NodeFacts& node, const std::string& key) {
  for (const auto& r : node.ranks)
    if (auto it = r.env.find(key); it != r.env.end()) return it->second;
  return std::nullopt;
}

}  // namespace fabricproof
