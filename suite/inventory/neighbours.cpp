#include "inventory/neighbours.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "cabling/lldp.hpp"
#include "inventory/host.hpp"

namespace fabricproof::probe {
namespace {

// The netdev that carries a port's frames: its own, or a software device's parent (rxe).
std::string netdev_of(const RdmaDevice& d, const PortFacts& p) { return !p.netdev.empty() ? p.netdev : d.parent; }

PortNeighbour neighbour_on(const cabling::LldpNeighbours& table, const std::string& netdev) {
  for (const auto& n : table.neighbours)
    if (n.local_interface == netdev && !n.chassis_id.empty()) {
      return {"lldpd", n.chassis_name.value_or(n.chassis_id), fmt::format("{} {}", n.chassis_id_type, n.chassis_id), n.port_id,
              n.port_descr.value_or(""), ""};
    }
  return {"lldpd", "", "", "", "", fmt::format("no LLDP neighbour heard on {} (lldpd sees none: is LLDP on at the switch port?)", netdev)};
}

}  // namespace

void assign_port_neighbours(NodeFacts& node, const std::string& lldpcli_output, const std::string& unread_why) {
  cabling::LldpNeighbours table;
  if (unread_why.empty()) table = cabling::parse_lldp(lldpcli_output, "lldpcli -f json0 show neighbors");
  const std::string why = !unread_why.empty() ? unread_why : table.errors.empty() ? "" : table.errors.front();
  for (auto& d : node.rdma_devices)
    for (auto& p : d.ports) {
      if (p.link_layer == "InfiniBand") {
        p.neighbour = PortNeighbour{"", "", "", "", "", "InfiniBand: its switch comes from ibnetdiscover (pass its output with --ibnetdiscover FILE)"};
        continue;
      }
      const auto netdev = netdev_of(d, p);
      if (!why.empty()) p.neighbour = PortNeighbour{"lldpd", "", "", "", "", why};
      else if (netdev.empty()) p.neighbour = PortNeighbour{"lldpd", "", "", "", "", "no netdev for this port"};
      else p.neighbour = neighbour_on(table, netdev);
    }
}

void read_port_neighbours(NodeFacts& node) {
  for (const char* tool : {"/usr/sbin/lldpcli", "/usr/bin/lldpcli"}) {
    if (access(tool, X_OK) != 0) continue;
    const auto out = run_tool(tool, {"-f", "json0", "show", "neighbors"}, 10);
    return assign_port_neighbours(node, out.output, out.ran ? "" : fmt::format("lldpcli: {} (is lldpd running?)", out.error));
  }
  assign_port_neighbours(node, "", "lldpcli not found: install and run lldpd to read each port's switch");
}

}  // namespace fabricproof::probe
