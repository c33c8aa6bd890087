#include "inventory/nccl_env_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/hints.hpp"
#include "core/units.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

bool up(const NetInterface& i) { return i.operstate == "up" || i.operstate == "unknown"; }

// NCCL_IB_HCA (NCCL's ^, = and :port syntax) against the node's devices: every name exists and
// the selection holds an ACTIVE port.
Finding check_nccl_ib_hca(const NodeFacts& node, const std::string& value) {
  const auto list = parse_nccl_list(value);
  std::vector<std::string> missing, selected_active;
  if (!list.exclude)
    for (const auto& e : list.entries) {
      const bool exists = std::any_of(node.rdma_devices.begin(), node.rdma_devices.end(), [&](const RdmaDevice& d) {
        NcclList one{false, list.exact, {e}};
        return std::any_of(d.ports.begin(), d.ports.end(), [&](const PortFacts& p) { return nccl_list_selects(one, d.name, p.port); });
      });
      if (!exists) missing.push_back(e.name + (e.port ? ":" + std::to_string(*e.port) : ""));
    }
  std::vector<std::string> devices;
  for (const auto& d : node.rdma_devices) {
    devices.push_back(d.name);
    for (const auto& p : d.ports)
      if (nccl_list_selects(list, d.name, p.port) && p.state == "ACTIVE") selected_active.push_back(d.name + ":" + std::to_string(p.port));
  }
  const bool ok = missing.empty() && !selected_active.empty();
  return Finding(CheckId::nccl_ib_hca, Subject::node(node.host), ok ? Verdict::pass : Verdict::fail,
                 {{"NCCL_IB_HCA", value}, {"not_found", missing}, {"selected_active", selected_active}, {"devices", devices}},
                 "every named device and port exists and is ACTIVE",
                 "NCCL_IB_HCA (^ excludes, = exact, else prefixes; :port) selects existing ACTIVE ports on every node",
                 ok ? "" : fmt::format("NCCL would not use what you named: fix NCCL_IB_HCA for this node's devices ({}).", fmt::join(devices, ", ")));
}

}  // namespace

NcclList parse_nccl_list(std::string_view spec) {
  NcclList list;
  if (!spec.empty() && spec.front() == '^') list.exclude = true, spec.remove_prefix(1);
  if (!spec.empty() && spec.front() == '=') list.exact = true, spec.remove_prefix(1);
  while (!spec.empty()) {
    const auto comma = spec.find(',');
    auto item = spec.substr(0, comma);
    NcclList::Entry entry;
    if (const auto colon = item.find(':'); colon != std::string_view::npos) {
      entry.port = whole_int(item.substr(colon + 1));
      item = item.substr(0, colon);
    }
    entry.name = std::string(item);
    if (!entry.name.empty()) list.entries.push_back(entry);
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
  }
  return list;
}

bool nccl_list_selects(const NcclList& list, std::string_view name, std::optional<int> port) {
  bool matched = false;
  for (const auto& e : list.entries) {
    const bool name_ok = list.exact ? name == e.name : name.substr(0, e.name.size()) == e.name;
    if (name_ok && (!e.port || !port || *e.port == *port)) matched = true;
  }
  return list.exclude ? !matched : matched;
}

std::vector<Finding> check_nccl_environment(const ClusterFacts& cluster) {
  std::vector<Finding> out;
  for (const auto& node : cluster.nodes) {
    if (auto hca = node_env(node, "NCCL_IB_HCA")) out.push_back(check_nccl_ib_hca(node, *hca));
    if (auto ifname = node_env(node, "NCCL_SOCKET_IFNAME")) {
      const auto list = parse_nccl_list(*ifname);
      std::vector<std::string> selected, on_fabric;
      for (const auto& i : node.interfaces)
        if (nccl_list_selects(list, i.name) && up(i) && (i.name != "lo" || list.exact)) {
          selected.push_back(i.name);
          if (i.rdma) on_fabric.push_back(i.name);
        }
      const bool resolves = !selected.empty();
      out.push_back(Finding(CheckId::nccl_socket_ifname, Subject::node(node.host), resolves ? Verdict::pass : Verdict::fail, {{"NCCL_SOCKET_IFNAME", *ifname}, {"selects", selected}},
                            "an up interface", "NCCL_SOCKET_IFNAME (^ excludes, = exact, else prefixes) selects an up interface on every node",
                            resolves ? "" : "NCCL's bootstrap finds no interface here: name this node's management NIC (ip -br link)."));
      if (resolves)
        out.push_back(Finding(CheckId::management_plane, node.host + " NCCL_SOCKET_IFNAME", on_fabric.empty() ? Verdict::pass : Verdict::fail,
                              {{"NCCL_SOCKET_IFNAME", *ifname}, {"selects", selected}, {"data_fabric_netdevs", on_fabric}},
                              "the management network", "NCCL's bootstrap and socket traffic stay off the data fabric (not a RoCE or IPoIB netdev)",
                              on_fabric.empty() ? "" : "Point NCCL_SOCKET_IFNAME at the management NIC: the control path must not depend on the fabric under test."));
    }
    if (auto tc = node_env(node, "NCCL_IB_TC")) {
      const auto value = whole_int(*tc);
      for (const auto& d : node.rdma_devices)
        for (const auto& p : d.ports) {
          if (p.link_layer != "Ethernet") continue;
          const auto device = device_traffic_class(p.qos.traffic_class);
          const auto& cm_tos = p.qos.default_roce_tos;
          const bool ok = value && *value >= 0 && *value < 256 && (!device || *device == *value) && (!cm_tos || *cm_tos == *value);
          out.push_back(Finding(CheckId::nccl_ib_tc, port_subject(node, d, p), ok ? Verdict::pass : Verdict::warn,
                                {{"NCCL_IB_TC", *tc},
                              {"device_default", device ? json(*device) : json(nullptr)},
                              {"rdma_cm_default_tos", cm_tos ? json(*cm_tos) : json(nullptr)}},
                                "a class 0..255 that agrees with the device's and RDMA-CM's defaults",
                                "NCCL_IB_TC, the HCA's default traffic class and RDMA-CM's default ToS agree",
                                ok ? "" : "NCCL and other verbs or RDMA-CM users (and the verbs tests) would run in different classes: set the same value in all."));
        }
    }
  }
  return out;
}
}  // namespace fabricproof
