#include "inventory/subnet_manager_probe.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include "core/located_error.hpp"
#include "inventory/subnet_manager.hpp"

#if FABRICPROOF_HAVE_UMAD
#include <infiniband/umad.h>
#endif

namespace fabricproof::verbs {
namespace {

// Every port's reason is kept: one port of the node may fail where another answered.
void unread(NodeFacts& node, const std::string& why) {
  node.subnet_managers_unread += (node.subnet_managers_unread.empty() ? "" : "; ") + why;
}

constexpr int kSmiClass = 0x01;     // LID-routed subnet management
constexpr int kTimeoutMs = 1000;    // per try, as sminfo's default
constexpr int kRetries = 2;

bool asks(const PortFacts& p) {
  auto valid = [](const std::optional<int>& lid) { return lid && *lid > 0 && *lid < 0xc000; };  // unicast LIDs
  return p.link_layer == "InfiniBand" && p.state == "ACTIVE" && valid(p.lid) && valid(p.sm_lid);
}

#if FABRICPROOF_HAVE_UMAD
// One SMInfo question from an open port to `lid`.
SmAnswer ask(int fd, int agent, const std::string& device, int port, int lid, uint64_t tid) {
  SmAnswer a;
  a.device = device;
  a.port = port;
  a.lid = lid;
  std::vector<uint8_t> buffer(static_cast<size_t>(umad_size()) + kMadBytes);
  const auto request = sm_info_request(tid);
  std::memcpy(umad_get_mad(buffer.data()), request.data(), kMadBytes);
  umad_set_addr(buffer.data(), lid, 0, 0, 0);  // QP0, SL 0, no Q_Key: an SMP
  if (umad_send(fd, agent, buffer.data(), static_cast<int>(kMadBytes), kTimeoutMs, kRetries) < 0) {
    a.error = fmt::format("umad_send: {}", std::strerror(errno));
    return a;
  }
  int length = static_cast<int>(kMadBytes);
  if (umad_recv(fd, buffer.data(), &length, kTimeoutMs * (kRetries + 2)) < 0) {
    a.error = fmt::format("umad_recv: {}", std::strerror(errno));
    return a;
  }
  if (const int status = umad_status(buffer.data()); status != 0) {
    a.error = status == ETIMEDOUT ? "no answer (timed out)" : fmt::format("umad status {}", std::strerror(status));
    return a;
  }
  decode_sm_info(static_cast<const uint8_t*>(umad_get_mad(buffer.data())), static_cast<size_t>(length), a);
  return a;
}
#endif

}  // namespace

void augment_with_subnet_managers(NodeFacts& node) {
  std::vector<std::pair<const RdmaDevice*, const PortFacts*>> ports;
  for (const auto& d : node.rdma_devices)
    for (const auto& p : d.ports)
      if (asks(p)) ports.emplace_back(&d, &p);
  if (ports.empty()) return;
#if FABRICPROOF_HAVE_UMAD
  if (geteuid() != 0) {
    node.subnet_managers_unread = "needs root (/dev/infiniband/umad* are root's)";
    return;
  }
  if (umad_init() < 0) {
    node.subnet_managers_unread = "umad_init failed (ib_umad module not loaded?)";
    return;
  }
  uint64_t tid = static_cast<uint64_t>(getpid()) << 32;
  for (const auto& [d, p] : ports) {
    const int fd = umad_open_port(d->name.c_str(), p->port);
    if (fd < 0) {
      unread(node, fmt::format("umad_open_port {} {}: {}", d->name, p->port, std::strerror(-fd)));
      continue;
    }
    const int agent = umad_register(fd, kSmiClass, 1, 0, nullptr);
    if (agent < 0) {
      unread(node, fmt::format("umad_register on {} {}: {}", d->name, p->port, std::strerror(-agent)));
      umad_close_port(fd);
      continue;
    }
    for (const int lid : std::set<int>{*p->sm_lid, *p->lid}) node.subnet_managers.push_back(ask(fd, agent, d->name, p->port, lid, ++tid));
    umad_unregister(fd, agent);
    umad_close_port(fd);
  }
  umad_done();
#else
  node.subnet_managers_unread = "built without libibumad (install libibumad-dev and rebuild)";
#endif
}

}  // namespace fabricproof::verbs

namespace fabricproof::verbs {
namespace {

constexpr int kSmiDirectedClass = 0x81;
constexpr int kPermissiveLid = 0xffff;

bool link_up(const PortFacts& p) { return p.link_layer == "InfiniBand" && (p.state == "ACTIVE" || p.state == "ARMED" || p.state == "INIT"); }

#if FABRICPROOF_HAVE_UMAD
// One directed-route Get one hop out of `port`; the answer's MAD, or throws why none came.
std::vector<uint8_t> ask_hop_one(int fd, int agent, int port, uint16_t attribute, uint64_t tid) {
  std::vector<uint8_t> buffer(static_cast<size_t>(umad_size()) + kMadBytes);
  const auto request = hop_one_request(tid, attribute, port);
  std::memcpy(umad_get_mad(buffer.data()), request.data(), kMadBytes);
  umad_set_addr(buffer.data(), kPermissiveLid, 0, 0, 0);
  if (umad_send(fd, agent, buffer.data(), static_cast<int>(kMadBytes), kTimeoutMs, kRetries) < 0)
    throw LocatedError("", fmt::format("umad_send: {}", std::strerror(errno)));
  int length = static_cast<int>(kMadBytes);
  if (umad_recv(fd, buffer.data(), &length, kTimeoutMs * (kRetries + 2)) < 0) throw LocatedError("", fmt::format("umad_recv: {}", std::strerror(errno)));
  if (const int status = umad_status(buffer.data()); status != 0)
    throw LocatedError("", status == ETIMEDOUT ? "no answer one hop out (timed out)" : fmt::format("umad status {}", std::strerror(status)));
  const auto* mad = static_cast<const uint8_t*>(umad_get_mad(buffer.data()));
  return std::vector<uint8_t>(mad, mad + std::min<size_t>(static_cast<size_t>(length), kMadBytes));
}

// The far end of one port's cable, through an open umad port.
PortNeighbour hop_one_neighbour(const std::string& device, int port, uint64_t& tid) {
  const int fd = umad_open_port(device.c_str(), port);
  if (fd < 0) throw LocatedError(device, fmt::format("umad_open_port {} {}: {}", device, port, std::strerror(-fd)));
  const int agent = umad_register(fd, kSmiDirectedClass, 1, 0, nullptr);
  std::optional<std::string> failed;
  PortNeighbour n{"smp", "", "", "", "", ""};
  if (agent < 0) failed = fmt::format("umad_register (directed route) on {} {}: {}", device, port, std::strerror(-agent));
  else failed = failure_of([&] {
    const auto info = ask_hop_one(fd, agent, port, kAttrNodeInfo, ++tid);
    const auto node = decode_hop_one_node_info(info.data(), info.size());
    const auto desc = ask_hop_one(fd, agent, port, kAttrNodeDescription, ++tid);
    n.switch_name = decode_hop_one_description(desc.data(), desc.size());
    n.switch_id = "guid " + node.guid;
    n.switch_port = std::to_string(node.local_port);
    if (node.node_type != 2) n.switch_port_descr = node.node_type == 1 ? "a channel adapter, not a switch" : "a router, not a switch";
  });
  if (agent >= 0) umad_unregister(fd, agent);
  umad_close_port(fd);
  if (failed) throw LocatedError(device, *failed);
  return n;
}
#endif

}  // namespace

void augment_with_hop_one_neighbours(NodeFacts& node) {
  for (auto& d : node.rdma_devices)
    for (auto& p : d.ports) {
      if (!link_up(p)) continue;
#if FABRICPROOF_HAVE_UMAD
      static uint64_t tid = static_cast<uint64_t>(getpid()) << 32 | 0x80000000u;
      if (geteuid() != 0) {
        p.neighbour = PortNeighbour{"smp", "", "", "", "", "needs root for a directed-route SMP (/dev/infiniband/umad*), or pass --ibnetdiscover FILE"};
        continue;
      }
      if (umad_init() < 0) {
        p.neighbour = PortNeighbour{"smp", "", "", "", "", "umad_init failed (ib_umad module not loaded?); or pass --ibnetdiscover FILE"};
        continue;
      }
      if (const auto failed = failure_of([&] { p.neighbour = hop_one_neighbour(d.name, p.port, tid); }))
        p.neighbour = PortNeighbour{"smp", "", "", "", "", *failed + "; or pass --ibnetdiscover FILE"};
      umad_done();
#else
      p.neighbour = PortNeighbour{"smp", "", "", "", "", "built without libibumad; pass --ibnetdiscover FILE"};
#endif
    }
}

}  // namespace fabricproof::verbs
