#include "inventory/control_path_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/hints.hpp"
#include "core/units.hpp"

namespace fabricproof {
using nlohmann::json;

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
    out.push_back(Finding(CheckId::ib_sm_masters, Subject::cluster(), Verdict::fail, measured, "one master SM", rule,
                          "Two subnet managers both claim master: stop the extra one (systemctl stop opensm on hosts that should not run it; "
                          "one SM per subnet, the others standby with a lower priority)."));
  } else if (masters.size() == 1) {
    out.push_back(Finding(CheckId::ib_sm_masters, Subject::cluster(), Verdict::pass, masters.begin()->first, "one master SM", rule));
  } else if (answered) {
    out.push_back(Finding(CheckId::ib_sm_masters, Subject::cluster(), Verdict::warn, answers, "one master SM", rule,
                          "No subnet manager answered as master at the ports' SM LIDs: check that an SM runs (sminfo, systemctl status opensm) "
                          "and that the SM LID the ports report is current."));
  } else if (infiniband) {
    out.push_back(Finding(CheckId::ib_sm_masters, Subject::cluster(), Verdict::skip, unread, "one master SM", rule,
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
        if (p.link_layer == "InfiniBand" && p.state == "ACTIVE" && p.sm_lid) sm_lids[*p.sm_lid].push_back(port_subject(node, d, p).text());
    }
    for (const auto& [model, entries] : firmware) {
      std::set<std::string> versions;
      for (const auto& e : entries) versions.insert(e.substr(e.find('=') + 1));
      if (entries.size() < 2) continue;
      const bool ok = versions.size() == 1;
      out.push_back(Finding(CheckId::hca_firmware_in_node, node.host + " " + model, ok ? Verdict::pass : Verdict::fail, entries, "one firmware version",
                            "HCAs of one model within a node run the same firmware",
                            ok ? "" : "Flash every HCA of this model to the same firmware (mlxfwmanager --query, then -u)."));
    }
    if (!node.launch_route_interface.empty()) {
      const auto it = std::find_if(node.interfaces.begin(), node.interfaces.end(), [&](const NetInterface& i) { return i.name == node.launch_route_interface; });
      const bool fabric = it != node.interfaces.end() && it->rdma;
      out.push_back(Finding(CheckId::management_plane, node.host + " route to the launch node", fabric ? Verdict::warn : Verdict::pass,
                            {{"launch_node", node.launch_node_address}, {"interface", node.launch_route_interface}, {"data_fabric", fabric}},
                            "a management interface", "the route to the launch node (mpirun or srun) does not leave through a data-fabric netdev",
                            fabric ? "The launch node is reached over the RDMA fabric: a fabric fault then takes the job's control "
                                  "path with it. Resolve the hostfile's names (or Slurm's NodeAddr) to management addresses." : ""));
    }
    if (!node.default_route_interface.empty()) {
      const auto it = std::find_if(node.interfaces.begin(), node.interfaces.end(), [&](const NetInterface& i) { return i.name == node.default_route_interface; });
      const bool fabric = it != node.interfaces.end() && it->rdma;
      out.push_back(Finding(CheckId::management_plane, node.host + " default route", fabric ? Verdict::warn : Verdict::pass,
                            {{"default_route_interface", node.default_route_interface}, {"data_fabric", fabric}}, "a management interface",
                            "the default route (ssh, NTP, registries) does not leave through a data-fabric netdev",
                            fabric ? "Route management traffic over the management NIC: always two fabrics, the control path independent of the data path." : ""));
    }
  }
  check_sm_masters(cluster, !sm_lids.empty(), out);
  if (sm_lids.size() > 1) {
    json measured = json::object();
    for (const auto& [lid, ports] : sm_lids) measured[std::to_string(lid)] = ports;
    out.push_back(Finding(CheckId::ib_subnet_manager_consistency, Subject::cluster(), Verdict::fail, measured, "one SM LID", "every ACTIVE InfiniBand port sees the same subnet manager",
                          "Two subnet managers (or two subnets) answer: find them with sminfo/ibstat and keep one master (two software SMs fighting cost an afternoon)."));
  } else if (sm_lids.size() == 1) {
    out.push_back(Finding(CheckId::ib_subnet_manager_consistency, Subject::cluster(), Verdict::pass, sm_lids.begin()->first, "one SM LID",
                          "every ACTIVE InfiniBand port sees the same subnet manager"));
  }
  return out;
}

}  // namespace fabricproof

