#include "inventory/lossless_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/hints.hpp"
#include "core/units.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

std::vector<int> priorities(int mask) {
  std::vector<int> out;
  for (int p = 0; p < 8; ++p)
    if (mask & (1 << p)) out.push_back(p);
  return out;
}

// The DSCP the port's RoCE traffic carries, and where that comes from.
std::pair<int, std::string> traffic_dscp(const NodeFacts& node, const PortFacts& p, const Profile& profile) {
  if (auto tc = node_env(node, "NCCL_IB_TC"))
    if (auto v = whole_int(*tc); v && *v >= 0 && *v < 256) return {*v >> 2, fmt::format("NCCL_IB_TC={} >> 2", *v)};
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

void check_port_dcb(const Subject& subject, const NodeFacts& node, const PortFacts& p, const Profile& profile, std::vector<Finding>& out,
                    std::map<std::string, std::vector<std::string>>& signatures) {
  const int prio = profile.roce.pfc_priority;
  const std::string pfc_rule = fmt::format("PFC enabled on priority {} (roce.pfc_priority) and on no other", prio);
  if (!p.qos.dcb || !p.qos.dcb->error.empty()) {
    const std::string why = !p.qos.dcb ? "DCB not read (a saved tree, or no netdev)" : fmt::format("dcbnl on {}: {}", p.netdev, p.qos.dcb->error);
    out.push_back(Finding(CheckId::roce_pfc, subject, Verdict::skip, why, priorities(1 << prio), pfc_rule,
                          "Read the host's PFC, trust and DSCP map by hand (mlnx_qos -i <if>, dcb -j ieee show dev <if>)."));
    return;
  }
  const auto& d = *p.qos.dcb;
  const int mask = d.pfc_enabled.value_or(0);
  const bool pfc_ok = mask == (1 << prio);
  out.push_back(Finding(CheckId::roce_pfc, subject, pfc_ok ? Verdict::pass : Verdict::fail, {{"netdev", p.netdev}, {"pfc_priorities", priorities(mask)}},
                        priorities(1 << prio), pfc_rule, pfc_ok ? "" : hint::kPfc));
  out.push_back(Finding(CheckId::roce_trust, subject, d.trusts_dscp() ? Verdict::pass : Verdict::fail,
                        {{"netdev", p.netdev}, {"trust", d.trusts_dscp() ? "dscp" : "pcp"}}, "dscp",
                        "the port classifies by DSCP (the APP table maps DSCP values: mlx5's trust dscp)",
                        d.trusts_dscp() ? "" : "Set trust dscp (mlnx_qos -i <if> --trust dscp): with trust pcp untagged RoCE traffic lands in priority 0."));
  const auto [dscp, from] = traffic_dscp(node, p, profile);
  const auto mapped = d.dscp_priority.find(dscp);
  const bool map_ok = d.trusts_dscp() && mapped != d.dscp_priority.end() && mapped->second == prio;
  out.push_back(Finding(CheckId::roce_dscp_priority, subject, map_ok ? Verdict::pass : Verdict::fail,
                        {{"dscp", dscp}, {"from", from}, {"priority", mapped == d.dscp_priority.end() ? json(nullptr) : json(mapped->second)}}, prio,
                        "the DSCP the traffic carries maps to the PFC priority",
                        map_ok ? "" : fmt::format("Map DSCP {} to priority {} (mlnx_qos -i <if> --dscp2prio set,{},{}), or set NCCL_IB_TC to the class "
                                               "whose DSCP maps there (106 = DSCP 26).", dscp, prio, dscp, prio)));
  if (d.prio_tc.size() == 8 && d.tc_tsa.size() == 8 && d.tc_tx_bw.size() == 8) {
    const int tc = d.prio_tc[static_cast<size_t>(prio)];
    const bool starved = tc < 8 && d.tc_tsa[static_cast<size_t>(tc)] == 2 && d.tc_tx_bw[static_cast<size_t>(tc)] == 0;
    out.push_back(Finding(CheckId::roce_ets, subject, starved ? Verdict::fail : Verdict::pass,
                          {{"priority", prio}, {"traffic_class", tc}, {"tsa", tc < 8 ? d.tc_tsa[static_cast<size_t>(tc)] : -1},
                        {"bandwidth_percent", tc < 8 ? d.tc_tx_bw[static_cast<size_t>(tc)] : -1}},
                          "an ETS share above 0 (or strict priority)", "ETS gives the RoCE priority's traffic class bandwidth",
                          starved ? "The RoCE class has 0% in ETS: give it a share (mlnx_qos --tcbw) or move the priority to a class that has one." : ""));
  }
  signatures[dcb_signature(d, dscp)].push_back(node.host);
}

void check_port_ecn(const Subject& subject, const PortFacts& p, const Profile& profile, std::vector<Finding>& out) {
  const std::string rule = fmt::format("ECN (DCQCN notification and reaction points) enabled on priority {}", profile.roce.pfc_priority);
  if (!p.qos.ecn_np_enabled_prio3 && !p.qos.ecn_rp_enabled_prio3) {
    out.push_back(Finding(CheckId::roce_ecn, subject, Verdict::skip, "not exposed (MLNX_OFED's /sys/class/net/<if>/ecn only)", true, rule));
    return;
  }
  const bool ok = p.qos.ecn_np_enabled_prio3.value_or(false) && p.qos.ecn_rp_enabled_prio3.value_or(false);
  out.push_back(Finding(CheckId::roce_ecn, subject, ok ? Verdict::pass : Verdict::fail,
                        {{"np", p.qos.ecn_np_enabled_prio3}, {"rp", p.qos.ecn_rp_enabled_prio3}}, true, rule,
                        ok ? "" : "Enable ECN on the RoCE priority: echo 1 > /sys/class/net/<if>/ecn/roce_{np,rp}/enable/3 (DCQCN)."));
}

}  // namespace

std::vector<Finding> check_roce_qos(const ClusterFacts& cluster, const Profile& profile) {
  std::vector<Finding> out;
  std::map<std::string, std::vector<std::string>> signatures;  // DCB line -> hosts
  for (const auto& node : cluster.nodes)
    for (const auto& d : node.rdma_devices) {
      if (!profile.includes_device(d.name)) continue;
      for (const auto& p : d.ports) {
        if (p.link_layer != "Ethernet") continue;
        const Subject subject = port_subject(node, d, p);
        check_port_dcb(subject, node, p, profile, out, signatures);
        check_port_ecn(subject, p, profile, out);
        if (!p.qos.default_roce_mode.empty()) {
          const bool v2 = p.qos.default_roce_mode == "RoCE v2";
          out.push_back(Finding(CheckId::rdma_cm_roce_mode, subject, v2 ? Verdict::pass : Verdict::warn, p.qos.default_roce_mode, "RoCE v2",
                                "RDMA-CM connections (storage, UCX's rdmacm) default to routable RoCE v2",
                                v2 ? "" : "RoCE v1 does not cross an IP router: echo 'RoCE v2' > /sys/kernel/config/rdma_cm/<dev>/ports/<n>/default_roce_mode"));
        }
      }
    }
  if (signatures.size() > 1) {  // the odd node: the one whose configuration fewest nodes share
    auto odd = std::min_element(signatures.begin(), signatures.end(), [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    json measured = json::object();
    for (const auto& [line, hosts] : signatures) measured[line] = hosts;
    out.push_back(Finding(CheckId::consistency_roce_qos, Subject::cluster(), Verdict::fail, measured, "one DCB configuration on every node",
                          "PFC, trust and the DSCP map are the same on every host",
                          fmt::format("{} differ(s) from the others: {}. {}", fmt::join(odd->second, ", "), odd->first, hint::kPfc)));
  } else if (signatures.size() == 1) {
    out.push_back(Finding(CheckId::consistency_roce_qos, Subject::cluster(), Verdict::pass, signatures.begin()->first, "one DCB configuration on every node",
                          "PFC, trust and the DSCP map are the same on every host"));
  }
  return out;
}

}  // namespace fabricproof
