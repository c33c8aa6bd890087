#include "inventory/neighbours.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "cabling/lldp.hpp"
#include "cabling/lldp_frame.hpp"
#include "core/located_error.hpp"
#include "inventory/host.hpp"

namespace fabricproof::probe {
namespace {

constexpr uint16_t kLldpEthertype = 0x88cc;

// The netdev that carries a port's frames: its own, or a software device's parent (rxe).
std::string netdev_of(const RdmaDevice& d, const PortFacts& p) { return !p.netdev.empty() ? p.netdev : d.parent; }

// A table's neighbour on a netdev; `source` says how it was read ("lldpd", "lldp frames"), and
// `silence` why a netdev without one has none.
PortNeighbour neighbour_on(const cabling::LldpNeighbours& table, const std::string& netdev, const std::string& source, const std::string& silence) {
  for (const auto& n : table.neighbours)
    if (n.local_interface == netdev && !n.chassis_id.empty()) {
      return {source, n.chassis_name.value_or(n.chassis_id), fmt::format("{} {}", n.chassis_id_type, n.chassis_id), n.port_id,
              n.port_descr.value_or(""), ""};
    }
  return {source, "", "", "", "", fmt::format("no LLDP neighbour heard on {} ({})", netdev, silence)};
}

// Every RoCE port's neighbour from `table`, or `why` none could be read at all.
void assign_from(NodeFacts& node, const cabling::LldpNeighbours& table, const std::string& why, const std::string& source,
                 const std::string& silence) {
  for (auto& d : node.rdma_devices)
    for (auto& p : d.ports) {
      if (p.link_layer == "InfiniBand") {
        p.neighbour = PortNeighbour{"", "", "", "", "", "InfiniBand: its switch comes from ibnetdiscover (pass its output with --ibnetdiscover FILE)"};
        continue;
      }
      const auto netdev = netdev_of(d, p);
      if (!why.empty()) p.neighbour = PortNeighbour{source, "", "", "", "", why};
      else if (netdev.empty()) p.neighbour = PortNeighbour{source, "", "", "", "", "no netdev for this port"};
      else p.neighbour = neighbour_on(table, netdev, source, silence);
    }
}

// The netdevs of the node's RoCE ports.
std::vector<std::string> roce_netdevs(const NodeFacts& node) {
  std::vector<std::string> out;
  for (const auto& d : node.rdma_devices)
    for (const auto& p : d.ports)
      if (p.link_layer != "InfiniBand" && !netdev_of(d, p).empty() && std::find(out.begin(), out.end(), netdev_of(d, p)) == out.end())
        out.push_back(netdev_of(d, p));
  return out;
}

// A packet socket on one netdev for LLDP frames, joined to LLDP's multicast group; throws why not.
int lldp_socket(const std::string& netdev) {
  const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(kLldpEthertype));
  if (fd < 0) throw LocatedError("", fmt::format("{}: no packet socket: {} (listening needs root)", netdev, std::strerror(errno)));
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(kLldpEthertype);
  addr.sll_ifindex = static_cast<int>(if_nametoindex(netdev.c_str()));
  if (addr.sll_ifindex == 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    throw LocatedError("", fmt::format("{}: cannot listen there: {}", netdev, why));
  }
  packet_mreq group{};
  group.mr_ifindex = addr.sll_ifindex;
  group.mr_type = PACKET_MR_MULTICAST;
  group.mr_alen = 6;
  std::memcpy(group.mr_address, "\x01\x80\xc2\x00\x00\x0e", 6);  // the nearest-bridge address
  setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &group, sizeof(group));  // best effort: most NICs pass it anyway
  return fd;
}

}  // namespace

cabling::LldpNeighbours listen_for_lldp(const std::vector<std::string>& netdevs, double seconds) {
  cabling::LldpNeighbours out;
  out.flavour = "frames";
  std::vector<pollfd> fds;
  std::vector<std::string> names;
  for (const auto& netdev : netdevs) {
    int fd = -1;
    if (const auto failed = failure_of([&] { fd = lldp_socket(netdev); })) out.errors.push_back(*failed);
    else fds.push_back({fd, POLLIN, 0}), names.push_back(netdev);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (size_t heard = 0; heard < fds.size();) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || poll(fds.data(), fds.size(), static_cast<int>(left)) <= 0) break;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & POLLIN)) continue;
      char frame[9216];
      sockaddr_ll from{};
      socklen_t from_size = sizeof(from);
      const ssize_t n = recvfrom(fds[i].fd, frame, sizeof(frame), 0, reinterpret_cast<sockaddr*>(&from), &from_size);
      if (n <= 0 || from.sll_pkttype == PACKET_OUTGOING) continue;  // this host's own frames are not its neighbour
      const auto neighbour = cabling::parse_lldp_frame(std::string_view(frame, static_cast<size_t>(n)), names[i]);
      if (!neighbour) continue;  // not LLDP, or not whole: wait for the next
      out.neighbours.push_back(*neighbour);
      close(fds[i].fd);
      fds[i].fd = -1;  // poll skips it from now on
      ++heard;
    }
  }
  for (const auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  return out;
}

void assign_port_neighbours(NodeFacts& node, const std::string& lldpcli_output, const std::string& unread_why) {
  cabling::LldpNeighbours table;
  if (unread_why.empty()) table = cabling::parse_lldp(lldpcli_output, "lldpcli -f json0 show neighbors");
  const std::string why = !unread_why.empty() ? unread_why : table.errors.empty() ? "" : table.errors.front();
  assign_from(node, table, why, "lldpd", "lldpd sees none: is LLDP on at the switch port?");
}

// lldpd where it runs; else, given `listen_s`, the frames the switches send (their interval is 30 s
// by default); else why not.
void read_port_neighbours(NodeFacts& node, double listen_s) {
  std::string why = "lldpcli not found: install and run lldpd to read each port's switch";
  for (const char* tool : {"/usr/sbin/lldpcli", "/usr/bin/lldpcli"}) {
    if (access(tool, X_OK) != 0) continue;
    const auto out = run_tool(tool, {"-f", "json0", "show", "neighbors"}, 10);
    if (out.ran) return assign_port_neighbours(node, out.output, "");
    why = fmt::format("lldpcli: {} (is lldpd running?)", out.error);
    break;
  }
  if (listen_s <= 0) return assign_port_neighbours(node, "", why + "; or listen for the switches' frames with --lldp-listen SECONDS");
  const auto table = listen_for_lldp(roce_netdevs(node), listen_s);
  const auto silence = fmt::format("no frame within {:.0f} s{}; {}", listen_s, table.errors.empty() ? "" : ": " + table.errors.front(), why);
  assign_from(node, table, "", "lldp frames", silence);
}

}  // namespace fabricproof::probe
