#include "inventory/network.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "core/located_error.hpp"

namespace fabricproof::probe {
namespace fs = std::filesystem;

std::string default_route_interface(const std::string& proc_net_route) {
  std::istringstream in(proc_net_route);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string iface, destination, gateway, flags, refcnt, use, metric, mask;
    if (!(fields >> iface >> destination >> gateway >> flags >> refcnt >> use >> metric >> mask)) continue;
    if (destination == "00000000" && mask == "00000000") return iface;
  }
  return "";
}

DcbConfig read_dcb(const std::string& ifname) {
  DcbConfig failed;
  failed.source = "dcbnl (RTM_GETDCB, DCB_CMD_IEEE_GET)";
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) {
    failed.error = std::string("netlink socket: ") + std::strerror(errno);
    return failed;
  }
  timeval timeout{2, 0};  // the kernel answers at once; a bounded wait all the same
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  const std::string request = dcb_request(ifname, 1);
  if (::sendto(fd, request.data(), request.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) < 0) {
    failed.error = std::string("netlink send: ") + std::strerror(errno);
    ::close(fd);
    return failed;
  }
  std::string reply(65536, '\0');
  const ssize_t n = ::recv(fd, reply.data(), reply.size(), 0);
  const int error = errno;
  ::close(fd);
  if (n <= 0) {
    failed.error = std::string("netlink receive: ") + (n < 0 ? std::strerror(error) : "no answer");
    return failed;
  }
  reply.resize(static_cast<size_t>(n));
  return decode_dcb_reply(reply);
}

void read_network(FileReader& files, NodeFacts& node, bool live) {
  const fs::path net = files.path("sys/class/net");
  std::vector<std::string> rdma_netdevs;
  // The data fabric's netdevs: each RoCE port's, a software device's parent (rxe), and every
  // netdev of an HCA's PCI function (IPoIB on InfiniBand).
  for (const auto& d : node.rdma_devices) {
    for (const auto& p : d.ports)
      if (!p.netdev.empty()) rdma_netdevs.push_back(p.netdev);
    if (!d.parent.empty()) rdma_netdevs.push_back(d.parent);
    if (!d.pci.empty())
      for (const auto& n : files.list(files.path("sys/bus/pci/devices") / d.pci / "net")) rdma_netdevs.push_back(n);
  }
  for (const auto& name : files.list(net)) {
    NetInterface i;
    i.name = name;
    i.operstate = files.line_quiet(net / name / "operstate").value_or("");
    if (auto mtu = files.integer(net / name / "mtu", 0, 1 << 20)) i.mtu = static_cast<int>(*mtu);
    i.rdma = std::find(rdma_netdevs.begin(), rdma_netdevs.end(), name) != rdma_netdevs.end();
    node.interfaces.push_back(i);
  }
  if (auto route = files.text(files.path("proc/net/route"))) node.default_route_interface = default_route_interface(*route);
  if (!live) {
    node.absent.push_back({"addresses", "--root reads a saved tree: interface addresses and DCB (netlink) come from the live kernel only"});
    return;
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* a = list; a; a = a->ifa_next) {
      if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !a->ifa_netmask) continue;
      char text[INET_ADDRSTRLEN] = {};
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof(text));
      const uint32_t mask = ntohl(reinterpret_cast<sockaddr_in*>(a->ifa_netmask)->sin_addr.s_addr);
      const int prefix = __builtin_popcount(mask);
      for (auto& i : node.interfaces)
        if (i.name == a->ifa_name) i.ipv4.push_back(std::string(text) + "/" + std::to_string(prefix));
    }
    freeifaddrs(list);
  }
  // DCB of every RoCE netdev (the port's QoS).
  for (auto& d : node.rdma_devices)
    for (auto& p : d.ports)
      if (p.link_layer == "Ethernet" && !p.netdev.empty()) p.qos.dcb = read_dcb(p.netdev);
}

namespace {

std::string address_text(const sockaddr* a) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a->sa_family == AF_INET) inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a)->sin_addr, text, sizeof(text));
  if (a->sa_family == AF_INET6) inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, text, sizeof(text));
  return text;
}

// The local address the kernel picks to reach `host`; a LocatedError says why there is none.
std::string local_address_to(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    throw LocatedError("", "'" + host + "' does not resolve: " + gai_strerror(rc));
  std::string local, error;
  for (addrinfo* a = found; a && local.empty(); a = a->ai_next) {
    const int fd = ::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage mine{};
    socklen_t size = sizeof(mine);
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &size) == 0)
      local = address_text(reinterpret_cast<sockaddr*>(&mine));
    else
      error = "no route to '" + host + "': " + std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(found);
  if (local.empty()) throw LocatedError("", error.empty() ? "no address of '" + host + "' to route to" : error);
  return local;
}

}  // namespace

UplinkPath route_to(FileReader& files, const std::string& host, int port) {
  UplinkPath path;
  if (auto failed = failure_of([&] { path.local_address = local_address_to(host, port); })) {
    path.error = *failed;  // the uplink rules report it
    return path;
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* a = list; a && path.interface.empty(); a = a->ifa_next)
      if (a->ifa_addr && (a->ifa_addr->sa_family == AF_INET || a->ifa_addr->sa_family == AF_INET6) &&
          address_text(a->ifa_addr) == path.local_address)
        path.interface = a->ifa_name;
    freeifaddrs(list);
  }
  if (path.interface.empty()) {
    path.error = "no interface holds " + path.local_address + ", the address the kernel routes '" + host + "' from";
    return path;
  }
  const fs::path dir = files.path("sys/class/net") / path.interface;
  if (auto slaves = files.line_quiet(dir / "bonding/slaves")) {
    std::istringstream names(*slaves);
    for (std::string n; names >> n;) path.links.push_back(n);
  }
  // Mb/s; -1 or unreadable when the driver does not know (virtio, loopback): no rate then.
  auto speed_of = [&](const fs::path& d) -> std::optional<double> {
    const auto text = files.line_quiet(d / "speed");
    if (!text) return std::nullopt;
    long long mbps = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), mbps);
    if (ec != std::errc() || end != text->data() + text->size() || mbps <= 0) return std::nullopt;
    return static_cast<double>(mbps) / 1000;
  };
  path.link_gbps = speed_of(dir);
  return path;
}

}  // namespace fabricproof::probe
