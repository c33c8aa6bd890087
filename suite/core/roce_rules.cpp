#include "core/roce_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "core/hints.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

std::optional<int> to_int(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() ? std::optional<int>(value) : std::nullopt;
}

// The value of an NCCL_* variable on a node (any of its ranks; the wrapper exports it to all).
std::optional<std::string> env_of(const NodeFacts& node, const std::string& key) {
  for (const auto& r : node.ranks)
    if (auto it = r.env.find(key); it != r.env.end()) return it->second;
  return std::nullopt;
}

std::vector<int> priorities(int mask) {
  std::vector<int> out;
  for (int p = 0; p < 8; ++p)
    if (mask & (1 << p)) out.push_back(p);
  return out;
}

// "Global tclass=106" (OFED's tc/<port>/traffic_class) -> 106.
std::optional<int> device_traffic_class(const std::string& text) {
  const auto eq = text.find('=');
  return eq == std::string::npos ? std::nullopt : to_int(text.substr(eq + 1));
}

// The DSCP the port's RoCE traffic carries, and where that comes from.
std::pair<int, std::string> traffic_dscp(const NodeFacts& node, const PortFacts& p, const Profile& profile) {
  if (auto tc = env_of(node, "NCCL_IB_TC"))
    if (auto v = to_int(*tc); v && *v >= 0 && *v < 256) return {*v >> 2, fmt::format("NCCL_IB_TC={} >> 2", *v)};
  if (auto v = device_traffic_class(p.qos.traffic_class); v && *v >= 0 && *v < 256)
    return {*v >> 2, fmt::format("the device default class {} >> 2", *v)};
  return {profile.roce.dscp, "the profile's roce.dscp"};
}

// What the port's DCB says, in one line: the same on every node, or the odd node is named.
std::string dcb_signature(const DcbConfig& d, int dscp) {
  const auto prio = d.dscp_priority.find(dscp);
  return fmt::format("pfc [{}], trust {}, dscp {} -> {}", fmt::join(priorities(d.pfc_enabled.value_or(0)), ","),
                     d.trusts_dscp() ? "dscp" : "pcp", dscp, prio == d.dscp_priority.end() ? std::string("none") : std::to_string(prio->second));
}

void check_port_dcb(const std::string& subject, const NodeFacts& node, const PortFacts& p, const Profile& profile, std::vector<Finding>& out,
                    std::map<std::string, std::vector<std::string>>& signatures) {
  const int prio = profile.roce.pfc_priority;
  const std::string pfc_rule = fmt::format("PFC enabled on priority {} (roce.pfc_priority) and on no other", prio);
  if (!p.qos.dcb || !p.qos.dcb->error.empty()) {
    const std::string why = !p.qos.dcb ? "DCB not read (a saved tree, or no netdev)" : fmt::format("dcbnl on {}: {}", p.netdev, p.qos.dcb->error);
    out.push_back(Finding("roce_pfc", subject, Verdict::skip, why, priorities(1 << prio), pfc_rule,
                          "Read the host's PFC, trust and DSCP map by hand (mlnx_qos -i <if>, dcb -j ieee show dev <if>)."));
    return;
  }
  const auto& d = *p.qos.dcb;
  const int mask = d.pfc_enabled.value_or(0);
  const bool pfc_ok = mask == (1 << prio);
  out.push_back(Finding("roce_pfc", subject, pfc_ok ? Verdict::pass : Verdict::fail, {{"netdev", p.netdev}, {"pfc_priorities", priorities(mask)}},
                        priorities(1 << prio), pfc_rule, pfc_ok ? "" : hint::kPfc));
  out.push_back(Finding("roce_trust", subject, d.trusts_dscp() ? Verdict::pass : Verdict::fail,
                        {{"netdev", p.netdev}, {"trust", d.trusts_dscp() ? "dscp" : "pcp"}}, "dscp",
                        "the port classifies by DSCP (the APP table maps DSCP values: mlx5's trust dscp)",
                        d.trusts_dscp() ? "" : "Set trust dscp (mlnx_qos -i <if> --trust dscp): with trust pcp untagged RoCE traffic lands in priority 0."));
  const auto [dscp, from] = traffic_dscp(node, p, profile);
  const auto mapped = d.dscp_priority.find(dscp);
  const bool map_ok = d.trusts_dscp() && mapped != d.dscp_priority.end() && mapped->second == prio;
  out.push_back(Finding("roce_dscp_priority", subject, map_ok ? Verdict::pass : Verdict::fail,
                        {{"dscp", dscp}, {"from", from}, {"priority", mapped == d.dscp_priority.end() ? json(nullptr) : json(mapped->second)}}, prio,
                        "the DSCP the traffic carries maps to the PFC priority",
                        map_ok ? "" : fmt::format("Map DSCP {} to priority {} (mlnx_qos -i <if> --dscp2prio set,{},{}), or set NCCL_IB_TC to the class "
                                               "whose DSCP maps there (106 = DSCP 26).", dscp, prio, dscp, prio)));
  if (d.prio_tc.size() == 8 && d.tc_tsa.size() == 8 && d.tc_tx_bw.size() == 8) {
    const int tc = d.prio_tc[static_cast<size_t>(prio)];
    const bool starved = tc < 8 && d.tc_tsa[static_cast<size_t>(tc)] == 2 && d.tc_tx_bw[static_cast<size_t>(tc)] == 0;
    out.push_back(Finding("roce_ets", subject, starved ? Verdict::fail : Verdict::pass,
                          {{"priority", prio}, {"traffic_class", tc}, {"tsa", tc < 8 ? d.tc_tsa[static_cast<size_t>(tc)] : -1},
                        {"bandwidth_percent", tc < 8 ? d.tc_tx_bw[static_cast<size_t>(tc)] : -1}},
                          "an ETS share above 0 (or strict priority)", "ETS gives the RoCE priority's traffic class bandwidth",
                          starved ? "The RoCE class has 0% in ETS: give it a share (mlnx_qos --tcbw) or move the priority to a class that has one." : ""));
  }
  signatures[dcb_signature(d, dscp)].push_back(node.host);
}

void check_port_ecn(const std::string& subject, const PortFacts& p, const Profile& profile, std::vector<Finding>& out) {
  const std::string rule = fmt::format("ECN (DCQCN notification and reaction points) enabled on priority {}", profile.roce.pfc_priority);
  if (!p.qos.ecn_np_enabled_prio3 && !p.qos.ecn_rp_enabled_prio3) {
    out.push_back(Finding("roce_ecn", subject, Verdict::skip, "not exposed (MLNX_OFED's /sys/class/net/<if>/ecn only)", true, rule));
    return;
  }
  const bool ok = p.qos.ecn_np_enabled_prio3.value_or(false) && p.qos.ecn_rp_enabled_prio3.value_or(false);
  out.push_back(Finding("roce_ecn", subject, ok ? Verdict::pass : Verdict::fail,
                        {{"np", p.qos.ecn_np_enabled_prio3}, {"rp", p.qos.ecn_rp_enabled_prio3}}, true, rule,
                        ok ? "" : "Enable ECN on the RoCE priority: echo 1 > /sys/class/net/<if>/ecn/roce_{np,rp}/enable/3 (DCQCN)."));
}

bool up(const NetInterface& i) { return i.operstate == "up" || i.operstate == "unknown"; }

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
      entry.port = to_int(item.substr(colon + 1));
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

std::vector<Finding> check_roce_qos(const ClusterFacts& cluster, const Profile& profile) {
  std::vector<Finding> out;
  std::map<std::string, std::vector<std::string>> signatures;  // DCB line -> hosts
  for (const auto& node : cluster.nodes)
    for (const auto& d : node.rdma_devices) {
      if (!profile.includes_device(d.name)) continue;
      for (const auto& p : d.ports) {
        if (p.link_layer != "Ethernet") continue;
        const std::string subject = port_subject(node, d, p);
        check_port_dcb(subject, node, p, profile, out, signatures);
        check_port_ecn(subject, p, profile, out);
        if (!p.qos.default_roce_mode.empty()) {
          const bool v2 = p.qos.default_roce_mode == "RoCE v2";
          out.push_back(Finding("rdma_cm_roce_mode", subject, v2 ? Verdict::pass : Verdict::warn, p.qos.default_roce_mode, "RoCE v2",
                                "RDMA-CM connections (storage, UCX's rdmacm) default to routable RoCE v2",
                                v2 ? "" : "RoCE v1 does not cross an IP router: echo 'RoCE v2' > /sys/kernel/config/rdma_cm/<dev>/ports/<n>/default_roce_mode"));
        }
      }
    }
  if (signatures.size() > 1) {  // the odd node: the one whose configuration fewest nodes share
    auto odd = std::min_element(signatures.begin(), signatures.end(), [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    json measured = json::object();
    for (const auto& [line, hosts] : signatures) measured[line] = hosts;
    out.push_back(Finding("consistency_roce_qos", "cluster", Verdict::fail, measured, "one DCB configuration on every node",
                          "PFC, trust and the DSCP map are the same on every host",
                          fmt::format("{} differ(s) from the others: {}. {}", fmt::join(odd->second, ", "), odd->first, hint::kPfc)));
  } else if (signatures.size() == 1) {
    out.push_back(Finding("consistency_roce_qos", "cluster", Verdict::pass, signatures.begin()->first, "one DCB configuration on every node",
                          "PFC, trust and the DSCP map are the same on every host"));
  }
  return out;
}

namespace {

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
  return Finding("nccl_ib_hca", node.host, ok ? Verdict::pass : Verdict::fail,
                 {{"NCCL_IB_HCA", value}, {"not_found", missing}, {"selected_active", selected_active}, {"devices", devices}},
                 "every named device and port exists and is ACTIVE",
                 "NCCL_IB_HCA (^ excludes, = exact, else prefixes; :port) selects existing ACTIVE ports on every node",
                 ok ? "" : fmt::format("NCCL would not use what you named: fix NCCL_IB_HCA for this node's devices ({}).", fmt::join(devices, ", ")));
}

}  // namespace

std::vector<Finding> check_nccl_environment(const ClusterFacts& cluster) {
  std::vector<Finding> out;
  for (const auto& node : cluster.nodes) {
    if (auto hca = env_of(node, "NCCL_IB_HCA")) out.push_back(check_nccl_ib_hca(node, *hca));
    if (auto ifname = env_of(node, "NCCL_SOCKET_IFNAME")) {
      const auto list = parse_nccl_list(*ifname);
      std::vector<std::string> selected, on_fabric;
      for (const auto& i : node.interfaces)
        if (nccl_list_selects(list, i.name) && up(i) && (i.name != "lo" || list.exact)) {
          selected.push_back(i.name);
          if (i.rdma) on_fabric.push_back(i.name);
        }
      const bool resolves = !selected.empty();
      out.push_back(Finding("nccl_socket_ifname", node.host, resolves ? Verdict::pass : Verdict::fail, {{"NCCL_SOCKET_IFNAME", *ifname}, {"selects", selected}},
                            "an up interface", "NCCL_SOCKET_IFNAME (^ excludes, = exact, else prefixes) selects an up interface on every node",
                            resolves ? "" : "NCCL's bootstrap finds no interface here: name this node's management NIC (ip -br link)."));
      if (resolves)
        out.push_back(Finding("management_plane", node.host + " NCCL_SOCKET_IFNAME", on_fabric.empty() ? Verdict::pass : Verdict::fail,
                              {{"NCCL_SOCKET_IFNAME", *ifname}, {"selects", selected}, {"data_fabric_netdevs", on_fabric}},
                              "the management network", "NCCL's bootstrap and socket traffic stay off the data fabric (not a RoCE or IPoIB netdev)",
                              on_fabric.empty() ? "" : "Point NCCL_SOCKET_IFNAME at the management NIC: the control path must not depend on the fabric under test."));
    }
    if (auto tc = env_of(node, "NCCL_IB_TC")) {
      const auto value = to_int(*tc);
      for (const auto& d : node.rdma_devices)
        for (const auto& p : d.ports) {
          if (p.link_layer != "Ethernet") continue;
          const auto device = device_traffic_class(p.qos.traffic_class);
          const auto& cm_tos = p.qos.default_roce_tos;
          const bool ok = value && *value >= 0 && *value < 256 && (!device || *device == *value) && (!cm_tos || *cm_tos == *value);
          out.push_back(Finding("nccl_ib_tc", port_subject(node, d, p), ok ? Verdict::pass : Verdict::warn,
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

namespace {

// Master SMs counted from every node's SMInfo answers: one master per subnet. Two that both say
// master fight over the subnet ("two software SMs fighting cost an afternoon"): each is named with
// the ports that reached it.
void check_sm_masters(const ClusterFacts& cluster, bool infiniband, std::vector<Finding>& out) {
  std::map<std::string, std::set<std::string>> masters;  // GUID -> who asked, at which LID
  std::vector<std::string> unread;
  json answers = json::array();
  bool answered = false;
  for (const auto& node : cluster.nodes) {
    if (!node.subnet_managers_unread.empty()) unread.push_back(node.host + ": " + node.subnet_managers_unread);
    for (const auto& a : node.subnet_managers) {
      const std::string who = fmt::format("{}/{}:{} at LID {}", node.host, a.device, a.port, a.lid);
      answers.push_back(who + ": " + (a.error.empty() ? a.state + " " + a.guid : a.error));
      answered |= a.error.empty();
      if (a.error.empty() && a.state == "master") masters[a.guid].insert(who);
    }
  }
  const std::string rule = "ib_sm_masters: one master subnet manager answers SMInfo on the subnet (asked at each port's SM LID and own LID)";
  if (masters.size() > 1) {
    json measured = json::object();
    for (const auto& [guid, seen] : masters) measured[guid] = seen;
    out.push_back(Finding("ib_sm_masters", "cluster", Verdict::fail, measured, "one master SM", rule,
                          "Two subnet managers both claim master: stop the extra one (systemctl stop opensm on hosts that should not run it; "
                          "one SM per subnet, the others standby with a lower priority)."));
  } else if (masters.size() == 1) {
    out.push_back(Finding("ib_sm_masters", "cluster", Verdict::pass, masters.begin()->first, "one master SM", rule));
  } else if (answered) {
    out.push_back(Finding("ib_sm_masters", "cluster", Verdict::warn, answers, "one master SM", rule,
                          "No subnet manager answered as master at the ports' SM LIDs: check that an SM runs (sminfo, systemctl status opensm) "
                          "and that the SM LID the ports report is current."));
  } else if (infiniband) {
    out.push_back(Finding("ib_sm_masters", "cluster", Verdict::skip, unread, "one master SM", rule,
                          "SMInfo was not read: run as root to count the master SMs (as sminfo does)."));
  }
}

}  // namespace

std::vector<Finding> check_control_path(const ClusterFacts& cluster) {
  std::vector<Finding> out;
  std::map<int, std::vector<std::string>> sm_lids;  // sm_lid -> ports that see it
  for (const auto& node : cluster.nodes) {
    std::map<std::string, std::set<std::string>> firmware;  // model -> versions
    for (const auto& d : node.rdma_devices) {
      if (!d.hca_type.empty() && !d.fw_ver.empty()) firmware[d.hca_type + (d.board_id.empty() ? "" : " " + d.board_id)].insert(d.name + "=" + d.fw_ver);
      for (const auto& p : d.ports)
        if (p.link_layer == "InfiniBand" && p.state == "ACTIVE" && p.sm_lid) sm_lids[*p.sm_lid].push_back(port_subject(node, d, p));
    }
    for (const auto& [model, entries] : firmware) {
      std::set<std::string> versions;
      for (const auto& e : entries) versions.insert(e.substr(e.find('=') + 1));
      if (entries.size() < 2) continue;
      const bool ok = versions.size() == 1;
      out.push_back(Finding("hca_firmware_in_node", node.host + " " + model, ok ? Verdict::pass : Verdict::fail, entries, "one firmware version",
                            "HCAs of one model within a node run the same firmware",
                            ok ? "" : "Flash every HCA of this model to the same firmware (mlxfwmanager --query, then -u)."));
    }
    if (!node.launch_route_interface.empty()) {
      const auto it = std::find_if(node.interfaces.begin(), node.interfaces.end(), [&](const NetInterface& i) { return i.name == node.launch_route_interface; });
      const bool fabric = it != node.interfaces.end() && it->rdma;
      out.push_back(Finding("management_plane", node.host + " route to the launch node", fabric ? Verdict::warn : Verdict::pass,
                            {{"launch_node", node.launch_node_address}, {"interface", node.launch_route_interface}, {"data_fabric", fabric}},
                            "a management interface", "the route to the launch node (mpirun or srun) does not leave through a data-fabric netdev",
                            fabric ? "The launch node is reached over the RDMA fabric: a fabric fault then takes the job's control "
                                  "path with it. Resolve the hostfile's names (or Slurm's NodeAddr) to management addresses." : ""));
    }
    if (!node.default_route_interface.empty()) {
      const auto it = std::find_if(node.interfaces.begin(), node.interfaces.end(), [&](const NetInterface& i) { return i.name == node.default_route_interface; });
      const bool fabric = it != node.interfaces.end() && it->rdma;
      out.push_back(Finding("management_plane", node.host + " default route", fabric ? Verdict::warn : Verdict::pass,
                            {{"default_route_interface", node.default_route_interface}, {"data_fabric", fabric}}, "a management interface",
                            "the default route (ssh, NTP, registries) does not leave through a data-fabric netdev",
                            fabric ? "Route management traffic over the management NIC: always two fabrics, the control path independent of the data path." : ""));
    }
  }
  check_sm_masters(cluster, !sm_lids.empty(), out);
  if (sm_lids.size() > 1) {
    json measured = json::object();
    for (const auto& [lid, ports] : sm_lids) measured[std::to_string(lid)] = ports;
    out.push_back(Finding("ib_subnet_manager_consistency", "cluster", Verdict::fail, measured, "one SM LID", "every ACTIVE InfiniBand port sees the same subnet manager",
                          "Two subnet managers (or two subnets) answer: find them with sminfo/ibstat and keep one master (two software SMs fighting cost an afternoon)."));
  } else if (sm_lids.size() == 1) {
    out.push_back(Finding("ib_subnet_manager_consistency", "cluster", Verdict::pass, sm_lids.begin()->first, "one SM LID",
                          "every ACTIVE InfiniBand port sees the same subnet manager"));
  }
  return out;
}

}  // namespace fabricproof
