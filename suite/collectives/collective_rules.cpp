#include "collectives/collective_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "core/units.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

std::string subject_of(const CollResult& r) { return fmt::format("{} {} {} node(s) {} rank(s)", r.engine, r.op, r.nodes, r.ranks); }

// Busbw of the out-of-place form at `bytes`, or nullopt when that size did not run.
std::optional<double> busbw_at(const CollResult& r, uint64_t bytes) {
  for (const auto& row : r.rows)
    if (row.bytes == bytes) return row.out_of_place.busbw_GBps;
  return std::nullopt;
}

uint64_t largest_common_size(const std::vector<const CollResult*>& group) {
  uint64_t best = 0;
  if (group.empty()) return 0;
  for (const auto& row : group.front()->rows) {
    const bool everywhere = std::all_of(group.begin(), group.end(), [&](const CollResult* r) { return busbw_at(*r, row.bytes).has_value(); });
    if (everywhere) best = std::max(best, row.bytes);
  }
  return best;
}

std::map<std::pair<std::string, std::string>, std::vector<const CollResult*>> by_engine_and_op(const std::vector<CollResult>& results) {
  std::map<std::pair<std::string, std::string>, std::vector<const CollResult*>> groups;
  for (const auto& r : results) groups[{r.engine, r.op}].push_back(&r);
  for (auto& [_, list] : groups)
    std::sort(list.begin(), list.end(), [](const CollResult* a, const CollResult* b) { return a->nodes < b->nodes; });
  return groups;
}

void check_data(const CollResult& r, std::vector<Finding>& out) {
  if (r.status != Status::ok)
    out.push_back({CheckId::collective_error, subject_of(r), Verdict::fail, json{{"error", r.reason}, {"sizes_completed", r.rows.size()}},
                   "the sweep completes", "collective_error: the engine reported an error or a wait passed its deadline",
                   "Read the error; for NCCL, the captured NCCL_DEBUG logs in the report directory name the failing transport."});
  uint64_t wrong = 0;
  std::vector<std::string> sizes;
  for (const auto& row : r.rows) {
    const uint64_t w = row.out_of_place.wrong + (row.in_place ? row.in_place->wrong : 0);
    if (w) sizes.push_back(format_size(row.bytes));
    wrong += w;
  }
  out.push_back({CheckId::collective_data, subject_of(r), wrong ? Verdict::fail : Verdict::pass,
                 json{{"wrong_elements", wrong}, {"sizes_with_errors", sizes}, {"sizes", r.rows.size()}}, json{{"wrong_elements", 0}},
                 "collective_data: every result element equals the reduction of the known inputs",
                 wrong ? "Corrupted data on a collective: check the port error counters (symbol errors, link downed), GPU ECC "
                         "errors (nvidia-smi -q -d ECC), and rerun the failing size."
                       : ""});
}

// 1 -> 2 nodes: a drop of `scaling_drop_factor` or more means the inter-node traffic did not use RDMA.
void check_scaling(const std::vector<const CollResult*>& group, const Profile& profile, std::vector<Finding>& out) {
  const CollResult* one = nullptr;
  const CollResult* two = nullptr;
  for (const auto* r : group) {
    if (r->nodes == 1) one = r;
    if (r->nodes == 2) two = r;
  }
  if (!one || !two) return;
  const std::string subject = fmt::format("{} {} 1 -> 2 nodes", one->engine, one->op);
  const uint64_t bytes = largest_common_size({one, two});
  if (bytes == 0) return;
  const double b1 = *busbw_at(*one, bytes), b2 = *busbw_at(*two, bytes);
  const double factor = profile.collectives.scaling_drop_factor;
  if (one->engine != "nccl") {
    out.push_back({CheckId::collective_scaling, subject, Verdict::skip, json{{"bytes", bytes}, {"busbw_1_node_GBps", b1}, {"busbw_2_nodes_GBps", b2}},
                   json{{"engine", "nccl"}}, "collective_scaling judges NCCL: the MPI engine is a host-network (TCP) baseline",
                   ""});
    return;
  }
  if (b1 <= 0) {  // one rank on the node: nothing moves between ranks, busbw is 0 by definition
    out.push_back({CheckId::collective_scaling, subject, Verdict::skip, json{{"bytes", bytes}, {"ranks_1_node", one->ranks}},
                   json{{"ranks_1_node", ">= 2"}}, "collective_scaling needs two or more ranks on the first node (busbw of one rank is 0)",
                   ""});
    return;
  }
  const bool dropped = b2 <= 0 || b1 / b2 >= factor;
  out.push_back({CheckId::collective_scaling, subject, dropped ? Verdict::fail : Verdict::pass,
                 json{{"bytes", bytes}, {"busbw_1_node_GBps", b1}, {"busbw_2_nodes_GBps", b2}, {"drop", b2 > 0 ? b1 / b2 : 0.0}},
                 json{{"drop_below", factor}},
                 fmt::format("collective_scaling: busbw at the largest size must not fall {}x or more from 1 to 2 nodes "
                             "(collectives.scaling_drop_factor)", factor),
                 dropped ? "RDMA not used between nodes: NCCL most likely fell back to NET/Socket. Read the nccl_audit findings; "
                           "check NCCL_IB_HCA, NCCL_SOCKET_IFNAME, nvidia-peermem, and that the HCA ports are ACTIVE."
                         : ""});
}

void check_ceiling(const CollResult& r, const ClusterFacts& cluster, const Profile& profile, std::vector<Finding>& out) {
  if (r.engine != "nccl" || r.nodes < 2 || r.rows.empty()) return;
  const std::string subject = subject_of(r);
  const auto ceiling = nic_ceiling_GBps(r.hosts, cluster, profile);
  const auto& top = *std::max_element(r.rows.begin(), r.rows.end(), [](const CollRow& a, const CollRow& b) { return a.bytes < b.bytes; });
  const double busbw = top.out_of_place.busbw_GBps;
  json measured{{"bytes", top.bytes}, {"busbw_GBps", busbw}};
  if (!profile.collectives.absolute_bw || !ceiling) {
    out.push_back({CheckId::collective_busbw, subject, Verdict::skip, measured, json{{"ceiling_GBps", ceiling ? json(*ceiling) : json()}},
                   !ceiling ? "collective_busbw: no ACTIVE port with a known rate on the group's nodes"
                            : "collective_busbw: absolute figures are not judged in this profile (collectives.absolute_bw)",
                   ""});
    return;
  }
  const auto& c = profile.collectives;
  const double ratio = busbw / *ceiling;
  measured["of_ceiling"] = ratio;
  Verdict v = ratio >= c.busbw_efficiency ? Verdict::pass : ratio < c.busbw_efficiency_fail ? Verdict::fail : Verdict::warn;
  std::string hint;
  if (ratio > 1.0) {
    v = Verdict::warn;
    hint = "busbw above the NIC ceiling: at 2 nodes NCCL's Tree counts intra-node traffic; rerun with --nccl-ring (NCCL_ALGO=Ring).";
  } else if (v != Verdict::pass) {
    hint = "Below the NIC ceiling: compare with the verbs matrix of the same nodes; then GPUDirect (nvidia-peermem, GPU-HCA "
           "topology), NCCL_IB_HCA covering every rail, and PFC on RoCE.";
  }
  out.push_back({CheckId::collective_busbw, subject, v, measured,
                 json{{"ceiling_GBps", *ceiling}, {"pass_at", c.busbw_efficiency}, {"fail_below", c.busbw_efficiency_fail}},
                 fmt::format("collective_busbw: busbw at the top size >= {} x NICs x rate / 8 passes, < {} fails "
                             "(collectives.busbw_efficiency, busbw_efficiency_fail)",
                             c.busbw_efficiency, c.busbw_efficiency_fail),
                 hint});
}

}  // namespace

std::optional<double> nic_ceiling_GBps(const std::vector<std::string>& hosts, const ClusterFacts& cluster, const Profile& profile) {
  std::optional<double> ceiling;
  for (const auto& host : hosts) {
    auto node = std::find_if(cluster.nodes.begin(), cluster.nodes.end(), [&](const NodeFacts& n) { return n.host == host; });
    if (node == cluster.nodes.end()) return std::nullopt;
    int nics = 0;
    double rate = std::numeric_limits<double>::max();
    for (const auto& d : node->rdma_devices)
      if (profile.includes_device(d.name))
        for (const auto& p : d.ports)
          if (p.state == "ACTIVE" && p.rate_gbps) {
            ++nics;
            rate = std::min(rate, *p.rate_gbps);
          }
    if (nics == 0) return std::nullopt;
    const double node_ceiling = nics * rate / 8;
    ceiling = ceiling ? std::min(*ceiling, node_ceiling) : node_ceiling;
  }
  return ceiling;
}

std::vector<Finding> check_collectives(const std::vector<CollResult>& results, const ClusterFacts& cluster, const Profile& profile) {
  std::vector<Finding> out;
  for (const auto& r : results) check_data(r, out);
  for (const auto& [key, group] : by_engine_and_op(results)) check_scaling(group, profile, out);
  for (const auto& r : results) check_ceiling(r, cluster, profile, out);
  return out;
}

std::vector<ScalingRow> scaling_table(const std::vector<CollResult>& results, const ClusterFacts& cluster, const Profile& profile) {
  std::vector<ScalingRow> table;
  for (const auto& [key, group] : by_engine_and_op(results)) {
    ScalingRow row{key.first, key.second, largest_common_size(group), {}};
    std::optional<double> one_node;
    for (const auto* r : group) {
      ScalingGroup g{r->nodes, r->ranks, busbw_at(*r, row.bytes), r->peak_busbw_GBps, std::nullopt, std::nullopt};
      if (r->nodes == 1 && g.busbw_GBps) one_node = g.busbw_GBps;
      if (g.busbw_GBps && one_node && *one_node > 0) g.vs_one_node = *g.busbw_GBps / *one_node;
      if (r->nodes > 1) g.nic_ceiling_GBps = nic_ceiling_GBps(r->hosts, cluster, profile);
      row.groups.push_back(g);
    }
    table.push_back(row);
  }
  return table;
}

std::vector<Finding> check_collective_locate(const CollLocate& l) {
  std::vector<Finding> out;
  const std::string rule = "named only when it is slow with cleared partners in repeated tests (suite/locate)";
  const json tested = {{"rounds", l.rounds}, {"tests", l.tests.size()}, {"nodes_tested", l.nodes_tested}, {"nodes", l.nodes},
                       {"bytes", l.bytes}, {"transient_dips", l.transient_dips}};
  for (const auto& f : l.faults)
    out.push_back(Finding(CheckId::collective_locate_fault, fmt::format("{}", fmt::join(f.hosts, ", ")), Verdict::fail,
                          {{"kind", f.kind}, {"ratio", f.ratio}, {"tests", f.implicating.size()}}, "fine with every cleared partner", rule, f.summary));
  for (const auto& u : l.unresolved)
    out.push_back(Finding(CheckId::collective_locate_unresolved, "collectives", Verdict::not_proven, u, "named or cleared", rule,
                          "A suspect the tests could not settle: rerun on more nodes, or with --collective-mode scaling."));
  if (l.rounds == 0)
    out.push_back(Finding(CheckId::collective_locate_unresolved, "collectives", Verdict::not_proven, tested, "at least one round of groups", rule,
                          fmt::format("Locate needs two nodes or more to compare (it had {}).", l.nodes)));
  else if (l.faults.empty() && l.unresolved.empty())
    out.push_back(Finding(CheckId::collective_locate_fault, "cluster", Verdict::pass, tested, "no node named", rule));
  return out;
}

}  // namespace fabricproof
