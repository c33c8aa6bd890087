#include "inventory/subnet_manager_probe.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

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
