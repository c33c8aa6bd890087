#pragma once
// The node's network as the RoCE and management-plane checks need it: each netdev (state, MTU,
// IPv4 addresses, whether an RDMA device sits on it), the default route's interface
// (/proc/net/route), and each RoCE netdev's DCB configuration read over rtnetlink (dcbnl), which
// any user may read (host-config.md). Netlink and addresses come from the live kernel only.
#include <string>
#include <vector>

#include "inventory/inventory.hpp"
#include "uplink/uplink_model.hpp"
#include "inventory/file_reader.hpp"

namespace fabricproof::probe {

// Interfaces under /sys/class/net and the default route; addresses when `live`.
void read_network(FileReader& files, NodeFacts& node, bool live);

// The DCB configuration of `ifname` (RTM_GETDCB, DCB_CMD_IEEE_GET); never throws: a driver
// without DCB (virtio, rxe's netdev) gives a config whose error says so, with the errno.
DcbConfig read_dcb(const std::string& ifname);

// "00000000" destination rows of /proc/net/route: the interface of the default route, "" if none.
std::string default_route_interface(const std::string& proc_net_route);

// The interface this node's kernel routes `host` through (a connected UDP socket's local address,
// matched to its interface; nothing is sent), with its link rate and, for a bond, its links.
// `rdma` is left for the caller, who knows the node's RDMA netdevs.
UplinkPath route_to(FileReader& files, const std::string& host, int port);

}  // namespace fabricproof::probe
