#include "probe/network.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

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

}  // namespace fabricproof::probe
