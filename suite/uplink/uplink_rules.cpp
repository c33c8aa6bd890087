#include "uplink/uplink_rules.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fabricproof {
namespace {

using nlohmann::json;

const char* kServerHint =
    "Is `iperf3 -s -p PORT` running on the target and reachable from the node (firewall, route)? A stock iperf3 "
    "server serves one client at a time: give one --uplink-target port per node.";

json flows_json(const UplinkFlows& f) {
  json j = {{"flows", f.flows}, {"gbps", f.gbps}};
  if (!f.per_flow_gbps.empty()) {
    j["slowest_flow_gbps"] = *std::min_element(f.per_flow_gbps.begin(), f.per_flow_gbps.end());
    j["fastest_flow_gbps"] = *std::max_element(f.per_flow_gbps.begin(), f.per_flow_gbps.end());
  }
  if (f.retransmits) j["retransmits"] = *f.retransmits;
  if (f.server_busy_retries > 0) j["server_busy_retries"] = f.server_busy_retries;
  return j;
}

// Measurements: an error is the verdict of that measurement, never a zero that passes.
void check_measured(const UplinkNode& n, bool together_ran, std::vector<Finding>& out) {
  for (const auto* f : {&n.single, &n.parallel, together_ran ? &n.together : nullptr}) {
    if (!f || f->status == Status::ok) continue;
    const std::string which = f == &n.single ? "1 flow" : f == &n.parallel ? fmt::format("{} flows", f->flows) : "all nodes together";
    out.push_back(Finding(CheckId::uplink_measured, fmt::format("{} ({}, to {})", n.host, which, n.target), Verdict::error,
                          {{"status", f->status}, {"reason", f->reason}, {"server_busy_retries", f->server_busy_retries}}, "a measurement", "TCP ingest from the target measured", kServerHint));
  }
}

// The path: storage traffic over the data fabric competes with the collectives.
void check_path(const UplinkNode& n, std::vector<Finding>& out) {
  if (!n.path.error.empty()) {
    out.push_back(Finding(CheckId::uplink_path, Subject::node(n.host), Verdict::error, {{"error", n.path.error}}, "a route to " + n.target,
                          "the node routes to the uplink target", "Does the target's name resolve on the node, and is there a route to it?"));
    return;
  }
  out.push_back(Finding(CheckId::uplink_path, Subject::node(n.host), n.path.rdma ? Verdict::warn : Verdict::pass,
                        {{"interface", n.path.interface}, {"data_fabric", n.path.rdma}, {"local_address", n.path.local_address}},
                        "an interface that is not the RDMA fabric", "the route to the uplink target leaves through an interface without an RDMA port",
                        n.path.rdma ? "The route to the storage target goes over the RDMA fabric: dataset reads would compete with "
                                   "the collectives. Route storage through the uplink/front-end network (the seed: separate fabrics)."
                                 : ""));
}

// Alone, with K flows, the node reaches its share of the need; with one flow it may not.
void check_node_rates(const UplinkNode& n, double share, std::vector<Finding>& out) {
  const std::string subject = fmt::format("{} via {}", n.host, n.path.interface.empty() ? "?" : n.path.interface);
  out.push_back(Finding(CheckId::uplink_node_share, subject, n.parallel.gbps >= share ? Verdict::pass : Verdict::fail, flows_json(n.parallel),
                        fmt::format(">= {:.4g} Gb/s (ingest need / nodes)", share),
                        "a node alone with parallel flows reaches its share of uplink.ingest_gbps",
                        n.parallel.gbps >= share ? ""
                                              : "Even parallel flows do not reach the node's share: check the uplink's link rate and "
                                                "state (bond slaves up?), the target's own link, and the TCP buffers (net.core.rmem_max)."));
  const bool single_enough = n.single.gbps >= share;
  std::string hint;
  if (!single_enough && n.parallel.gbps >= 1.2 * n.single.gbps) {
    hint = fmt::format("One TCP flow carries {:.3g} Gb/s, {} flows {:.3g} Gb/s: capacity is allocated per flow (bond/ECMP hashing",
                       n.single.gbps, n.parallel.flows, n.parallel.gbps);
    if (n.path.link_gbps && !n.path.links.empty())
      hint += fmt::format(", one of {} links of {:.3g} Gb/s in all", n.path.links.size(), *n.path.link_gbps);
    hint += "): the dataloader must open parallel streams (several workers or connections per node).";
  } else if (!single_enough) {
    hint = fmt::format("One TCP flow carries {:.3g} Gb/s and {} flows no more ({:.3g} Gb/s): the limit is not per flow; see "
                       "uplink_node_share.", n.single.gbps, n.parallel.flows, n.parallel.gbps);
  }
  out.push_back(Finding(CheckId::uplink_single_flow, subject, single_enough ? Verdict::pass : Verdict::warn, flows_json(n.single),
                        fmt::format(">= {:.4g} Gb/s (the node's share) with one flow", share),
                        "one TCP flow carries the node's share of uplink.ingest_gbps; otherwise the loader needs parallel streams", hint));
}

// All nodes at once share the target's link and the uplink: the cluster's need is judged here.
Finding check_aggregate(const UplinkSection& s) {
  if (!s.need_gbps)
    return Finding(CheckId::uplink_aggregate, Subject::cluster(), Verdict::skip, nullptr, nullptr, "all nodes together carry uplink.ingest_gbps",
                   "no ingest need given: set uplink.ingest_gbps in the profile or --uplink-need GBPS "
                   "(`fabricproof plan-uplink` computes it from the workload)");
  const double need = *s.need_gbps;
  if (!s.together_skipped.empty())
    return Finding(CheckId::uplink_aggregate, Subject::cluster(), Verdict::skip, nullptr, fmt::format(">= {:.4g} Gb/s", need),
                   "all nodes together carry uplink.ingest_gbps", s.together_skipped);
  double sum = 0, shortest = 0;
  bool complete = true;
  json per_node = json::object();
  for (const auto& n : s.nodes) {
    const bool ok = n.together.status == Status::ok;
    complete &= ok;
    sum += ok ? n.together.gbps : 0;
    per_node[n.host] = ok ? json(n.together.gbps) : json(nullptr);
  }
  json measured = {{"gbps", sum}, {"per_node_gbps", per_node}};
  // Counted over the common window where the nodes' windows are known; a window shorter than half
  // of a node's own (the span of its intervals, as placed) is not "together" and fails closed.
  bool apart = false;
  if (const auto common = complete ? together_in_common_window(s.nodes) : std::nullopt) {
    sum = common->gbps;
    for (size_t i = 0; i < s.nodes.size(); ++i) per_node[s.nodes[i].host] = common->per_node_gbps[i];
    measured = {{"gbps", sum},
                {"per_node_gbps", per_node},
                {"common_window_s", common->window_s},
                {"sum_of_node_averages_gbps", common->sum_of_averages_gbps}};
    shortest = common->shortest_own_s;
    apart = common->window_s < 0.5 * shortest;
  }
  const Verdict v = !complete || apart ? Verdict::error : sum >= need ? Verdict::pass : Verdict::fail;
  return Finding(CheckId::uplink_aggregate, Subject::cluster(), v, measured, fmt::format(">= {:.4g} Gb/s ({})", need, s.need_source),
                 "all nodes together carry uplink.ingest_gbps",
                 v == Verdict::pass ? ""
                 : !complete        ? "Not every node measured: the aggregate is unknown, not passed. " + std::string(kServerHint)
                 : apart ? fmt::format("The nodes measured together for only {:.2g} s of their {:.2g} s windows (a node's iperf3 started "
                                       "late: a loaded node, a slow connect to the target): not measured together, not passed. Run again.",
                                       measured["common_window_s"].get<double>(), shortest)
                         : "The uplink (or the target's link) is smaller than the dataset read rate: size it to the "
                           "read rate (fabricproof plan-uplink), and check each node's figure for the odd one.");
}

}  // namespace

std::optional<TogetherAggregate> together_in_common_window(const std::vector<UplinkNode>& nodes) {
  // From a node's iperf3 clock to rank 0's: its last interval ended as its client exited.
  const auto shift = [](const UplinkFlows& f) { return *f.ended_at - f.intervals.back().end; };
  TogetherAggregate out;
  double from = 0, to = 0;
  bool any = false;
  for (const auto& n : nodes) {
    const UplinkFlows& f = n.together;
    if (f.status != Status::ok) continue;
    if (f.intervals.empty() || !f.ended_at) return std::nullopt;
    const double first = shift(f) + f.intervals.front().start, last = *f.ended_at;
    out.shortest_own_s = any ? std::min(out.shortest_own_s, last - first) : last - first;
    from = any ? std::max(from, first) : first;
    to = any ? std::min(to, last) : last;
    any = true;
    out.sum_of_averages_gbps += f.gbps;
  }
  if (!any) return std::nullopt;
  out.window_s = std::max(0.0, to - from);
  for (const auto& n : nodes) {
    double bytes = 0;  // each interval's bytes taken as spread evenly over it
    if (n.together.status == Status::ok && out.window_s > 0)
      for (const auto& i : n.together.intervals) {
        const double a = shift(n.together) + i.start, b = shift(n.together) + i.end;
        const double inside = std::min(b, to) - std::max(a, from);
        if (inside > 0 && b > a) bytes += i.bytes * inside / (b - a);
      }
    out.per_node_gbps.push_back(out.window_s > 0 ? bytes * 8 / out.window_s / 1e9 : 0);
    out.gbps += out.per_node_gbps.back();
  }
  return out;
}

std::vector<Finding> check_uplink(const UplinkSection& s) {
  std::vector<Finding> out;
  if (s.nodes.empty()) {
    out.push_back(Finding(CheckId::uplink_measured, Subject::cluster(), Verdict::error, nullptr, "one result per node", "every node measures its uplink",
                          "no node reported an uplink result"));
    return out;
  }
  const bool together_ran = s.together_skipped.empty();
  for (const auto& n : s.nodes) {
    check_measured(n, together_ran, out);
    check_path(n, out);
    if (n.single.status == Status::ok && n.parallel.status == Status::ok && s.need_gbps)
      check_node_rates(n, *s.need_gbps / static_cast<double>(s.nodes.size()), out);
  }
  out.push_back(check_aggregate(s));
  return out;
}

}  // namespace fabricproof
