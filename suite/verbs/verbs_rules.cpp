#include "verbs/verbs_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "core/hints.hpp"
#include "core/statistics.hpp"
#include "core/units.hpp"

namespace fabricproof {
namespace {

using nlohmann::json;

struct Located {
  const NodeFacts* node = nullptr;
  const RdmaDevice* device = nullptr;
  const PortFacts* port = nullptr;
};

Located locate(const ClusterFacts& cluster, const VerbsEndpoint& e) {
  Located l;
  for (const auto& n : cluster.nodes) {
    if (n.host != e.host) continue;
    l.node = &n;
    for (const auto& d : n.rdma_devices) {
      if (d.name != e.device) continue;
      l.device = &d;
      for (const auto& p : d.ports)
        if (p.port == e.port) l.port = &p;
    }
  }
  return l;
}

int64_t delta(const PairResult* pair, const std::string& label, const std::vector<const char*>& names, std::string* which) {
  if (!pair) return 0;
  auto it = pair->counter_deltas.find(label);
  if (it == pair->counter_deltas.end()) return 0;
  int64_t total = 0;
  for (const char* name : names) {
    auto c = it->second.find(name);
    if (c != it->second.end() && c->second > 0) {
      total += c->second;
      if (which) *which += fmt::format("{}{} +{}", which->empty() ? "" : ", ", name, c->second);
    }
  }
  return total;
}

// Port counters by what they tell, as the kernel's counters/ and hw_counters/ (mlx5, rxe) name them:
// errors on the link; loss on RoCE (retransmissions, sequence errors, ACK timeouts); congestion
// notifications. Link errors and loss (and retries given up) make a dip evidence, not noise.
const std::vector<const char*> kLinkErrors = {"symbol_error", "link_downed", "port_rcv_errors", "link_error_recovery",
                                              "local_link_integrity_errors", "port_rcv_remote_physical_errors",
                                              "excessive_buffer_overrun_errors"};
const std::vector<const char*> kRoceLoss = {"out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "out_of_seq_request",
                                            "rcvd_seq_err", "completer_retry_err", "duplicate_request"};
const std::vector<const char*> kRoceLossOrCongestion = {"out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "np_cnp_sent",
                                                        "rp_cnp_handled", "out_of_seq_request", "rcvd_seq_err", "completer_retry_err",
                                                        "duplicate_request"};
const std::vector<const char*> kErrorCounters = [] {
  auto names = kLinkErrors;
  names.insert(names.end(), kRoceLoss.begin(), kRoceLoss.end());
  names.push_back("retry_exceeded_err");
  return names;
}();

std::string describe_gen(const PcieLink& l, bool current) {
  const auto gen = current ? l.current_gen : l.max_gen;
  const auto width = current ? l.current_width : l.max_width;
  return fmt::format("Gen{} x{}", gen ? std::to_string(*gen) : "?", width ? std::to_string(*width) : "?");
}

Subject subject_of(const VerbsSection& s, const TestResult& t) {
  return Subject::pair(s.endpoints[t.from].label(), s.endpoints[t.to].label(), t.test, verbs_test_type(t.test).both_ways);
}

std::string numbered(const std::vector<Cause>& causes) {
  std::string out;
  for (size_t i = 0; i < causes.size(); ++i) out += fmt::format("{}({}) {}", i ? " " : "", i + 1, causes[i].text);
  return out;
}

// A finding whose hint is a diagnosis: its triage step is the first cause's.
Finding diagnosed(Finding f, const std::vector<Cause>& causes) {
  if (f.verdict != Verdict::pass && !causes.empty()) {
    f.hint = numbered(causes);
    f.triage = causes.front().step;
  }
  return f;
}

std::string error_hint(const std::string& reason) {
  if (reason.find("retry") != std::string::npos || reason.find("RETRY") != std::string::npos)
    return "The remote side stopped acknowledging: a link or port went down, or the path drops packets (RoCE: PFC and MTU). Check port state and counters on both ends.";
  if (reason.find("timed out") != std::string::npos || reason.find("did not answer") != std::string::npos)
    return "The peer rank did not answer in time: a hung node or a broken management network. Check the node and rerun.";
  return "Check the port state on both ends, then the GID index (RoCE) and the subnet manager (InfiniBand).";
}

std::optional<double> latency_limit(const Profile& p, const std::string& link_layer) {
  if (link_layer == "InfiniBand") return p.verbs.latency_usec_infiniband;
  if (link_layer == "Ethernet") return p.verbs.latency_usec_ethernet;
  return std::nullopt;
}

}  // namespace

namespace {

// (4) PCIe: a link trained below its capability, or one too narrow for its port's rate.
void pcie_causes(std::initializer_list<const Located*> ends, std::vector<Cause>& found) {
  auto add = [&](TriageStep step, std::string text) { found.push_back({step, std::move(text)}); };
  for (const auto* l : ends) {
    if (!l->device) continue;
    const auto& link = l->device->pcie;
    const std::string label = l->node->host + "/" + l->device->name;
    if (link.current_width && link.max_width && link.current_gts && link.max_gts &&
        (*link.current_width < *link.max_width || *link.current_gts < *link.max_gts)) {
      add(TriageStep::pcie, fmt::format("{}'s PCIe link runs {} of {}.", label, describe_gen(link, true), describe_gen(link, false)));
    } else if (link.current_gen && link.current_width && l->port && l->port->rate_gbps) {
      auto usable = pcie_usable_gbps(*link.current_gen, *link.current_width);
      if (usable && *usable < *l->port->rate_gbps)
        add(TriageStep::pcie, fmt::format("{}'s PCIe {} carries about {:.0f} Gb/s, below its port's {} Gb/s.", label, describe_gen(link, true), *usable, *l->port->rate_gbps));
    }
  }
}

// (3b) The path: ends cabled to different leaves (their ports' neighbours, lldpd or ibnetdiscover)
// cross the spine, where a rail-optimised fabric keeps a rail's pairs on one leaf.
void leaf_causes(const VerbsEndpoint& a, const VerbsEndpoint& b, const Located& la, const Located& lb, std::vector<Cause>& found) {
  auto leaf = [](const Located& l) -> std::string {
    if (!l.port || !l.port->neighbour || !l.port->neighbour->unread.empty()) return "";
    return l.port->neighbour->switch_name;
  };
  const auto leaf_a = leaf(la), leaf_b = leaf(lb);
  if (leaf_a.empty() || leaf_b.empty() || leaf_a == leaf_b) return;
  found.push_back({TriageStep::link, fmt::format("{} is cabled to {} and {} to {}: the pair crosses the spine (HCAs of one rail on one leaf "
                                                 "keep it there; check the cabling with --check-cabling).",
                                                 a.label(), leaf_a, b.label(), leaf_b)});
}

// (5) NUMA: the rank driving the HCA should run on the HCA's NUMA node.
void numa_causes(const VerbsEndpoint& a, const VerbsEndpoint& b, const Located& la, const Located& lb, std::vector<Cause>& found) {
  auto add = [&](TriageStep step, std::string text) { found.push_back({step, std::move(text)}); };
  for (const auto* e : {&a, &b}) {
    const Located l = e == &a ? la : lb;
    if (!l.node || !l.device || !l.device->numa_node) continue;
    const RankFacts* rank = nullptr;
    for (const auto& r : l.node->ranks)
      if (r.rank == e->rank) rank = &r;
    const NumaNode* numa = nullptr;
    for (const auto& n : l.node->numa_nodes)
      if (n.id == *l.device->numa_node) numa = &n;
    if (!rank || !numa || rank->cpus_allowed.empty()) continue;
    const auto allowed = parse_cpulist(rank->cpus_allowed), local = parse_cpulist(numa->cpus);
    const std::set<int> local_set(local.begin(), local.end());
    const bool outside = std::any_of(allowed.begin(), allowed.end(), [&](int c) { return !local_set.count(c); });
    if (outside && l.node->numa_nodes.size() > 1)
      add(TriageStep::numa, fmt::format("Rank {} runs on CPUs {} but {} sits on NUMA node {} (CPUs {}): bind the rank to that node.", e->rank,
                                  rank->cpus_allowed, e->label(), numa->id, numa->cpus));
  }
}

}  // namespace

std::vector<Cause> diagnose_pair(const VerbsEndpoint& a, const VerbsEndpoint& b, const ClusterFacts& cluster, const PairResult* pair) {
  std::vector<Cause> found;
  auto add = [&](TriageStep step, std::string text) { found.push_back({step, std::move(text)}); };
  const Located la = locate(cluster, a), lb = locate(cluster, b);
  // (1) MTU
  if (a.active_mtu && b.active_mtu && *a.active_mtu != *b.active_mtu)
    add(TriageStep::mtu, fmt::format("MTU mismatch: {} runs active MTU {}, {} runs {}.", a.label(), *a.active_mtu, b.label(), *b.active_mtu));
  else if (a.link_layer == "Ethernet" && a.active_mtu && *a.active_mtu < 4096)
    add(TriageStep::mtu, fmt::format("RoCE MTU {} on both ends (netdev MTU below 4192): set MTU 9000 end to end.", *a.active_mtu));
  // (2) PFC: retransmissions and drops on a RoCE pair point at the lossless configuration.
  if (a.link_layer == "Ethernet") {
    for (const auto* e : {&a, &b}) {
      std::string which;
      if (delta(pair, e->label(), kRoceLossOrCongestion, &which) > 0)
        add(TriageStep::pfc, fmt::format("RoCE loss or congestion during the pair on {} ({}): check PFC (priority 3 only, DSCP trust) on the hosts and every switch hop.", e->label(), which));
    }
  }
  // (3) cable / rate
  if (a.rate_gbps && b.rate_gbps && *a.rate_gbps != *b.rate_gbps) {
    const auto& slow = *a.rate_gbps < *b.rate_gbps ? a : b;
    add(TriageStep::link, fmt::format("{} trained at {} Gb/s, its peer at {} Gb/s: cable, transceiver or switch port speed.", slow.label(),
                                *slow.rate_gbps, std::max(*a.rate_gbps, *b.rate_gbps)));
  }
  for (const auto* e : {&a, &b}) {
    std::string which;
    if (delta(pair, e->label(), kLinkErrors, &which) > 0)
      add(TriageStep::link, fmt::format("Link errors on {} during the pair ({}): cable or transceiver.", e->label(), which));
  }
  leaf_causes(a, b, la, lb, found);
  pcie_causes({&la, &lb}, found);
  numa_causes(a, b, la, lb, found);
  if (found.empty()) {
    add(a.link_layer == "Ethernet" ? TriageStep::pfc : TriageStep::link,
        std::string("Nothing in the inventory explains it; check in this order: ") +
            (a.link_layer == "Ethernet" ? std::string(hint::kPfc) + " " : "") + hint::kCable + " " + hint::kPcie);
  }
  return found;
}

namespace {

// The reference for a pair's outlier rules: the typical (median) figure of the same test over the
// other pairs, leaving the judged pair out, so that it cannot set its own standard: with one bad
// node in a 4-node matrix, its 3 pairs are judged against the other 5 (3 of them good), the good
// pairs against a median the bad node pulls down. Only in a 2-node matrix is the reference the
// other direction of the same pair. Unlike the best pair, one lucky measurement cannot raise it.
std::optional<double> typical(const VerbsSection& s, const PairResult& judged, const TestResult& mine, bool latency) {
  std::vector<double> other_pairs, same_pair;
  for (const auto& pair : s.pairs)
    for (const auto& t : pair.tests) {
      if (t.status != Status::ok || t.test != mine.test || &t == &mine) continue;
      const std::optional<double> value = latency ? (t.latency && t.latency->samples ? std::optional<double>(t.latency->p50_usec) : std::nullopt) : t.gbps;
      if (value) (&pair == &judged ? same_pair : other_pairs).push_back(*value);
    }
  if (!other_pairs.empty()) return median(other_pairs);
  if (!same_pair.empty()) return median(same_pair);
  return std::nullopt;
}

std::optional<double> gbps_of(const TestResult& t) { return t.gbps; }
std::optional<double> avg_usec_of(const TestResult& t) {
  return t.latency && t.latency->samples ? std::optional<double>(t.latency->avg_usec) : std::nullopt;
}
std::optional<double> p50_usec_of(const TestResult& t) {
  return t.latency && t.latency->samples ? std::optional<double>(t.latency->p50_usec) : std::nullopt;
}

// The findings of one pair's tests. `bad`: a test failed; `slow_latency`: a latency outlier (a
// warning, but a node in most of them is the suspect); `broken`: the tests that broke a figure
// rule at their first measurement. The diagnosis is drawn once, when needed.
struct PairJudge {
  const VerbsSection& s;
  const ClusterFacts& cluster;
  const Profile& profile;
  const PairResult& pair;
  std::vector<Finding>& out;
  bool bad = false;
  bool slow_latency = false;
  std::set<std::string> broken;
  std::vector<Cause> causes;

  const VerbsEndpoint& a() const { return s.endpoints[static_cast<size_t>(pair.a)]; }
  const VerbsEndpoint& b() const { return s.endpoints[static_cast<size_t>(pair.b)]; }
  void add(Finding f) {
    if (f.verdict != Verdict::pass && causes.empty()) causes = diagnose_pair(a(), b(), cluster, &pair);
    out.push_back(diagnosed(std::move(f), causes));
  }

  // The same test measured again: its round was run once more before judging (rounds_to_remeasure).
  const TestResult* again(const TestResult& t) const {
    for (const auto& r : s.remeasured)
      if (r.task == pair.task)
        for (const auto& u : r.tests)
          if (u.test == t.test && u.from == t.from && u.to == t.to) return &u;
    return nullptr;
  }

  // A figure rule that `t` broke at its first measurement: `broken_verdict`, unless the
  // re-measurement keeps the rule. Then a warning flagged intermittent: one of two measurements
  // broke the rule, and nothing can tell a fabric that dips now and then from a busy host.
  Verdict settle(const TestResult& t, Verdict broken_verdict, std::optional<double> (*figure)(const TestResult&),
                 const std::function<bool(double)>& keeps, json& measured) {
    broken.insert(t.test);
    const TestResult* u = again(t);
    if (!u) return broken_verdict;
    const auto second = u->status == Status::ok ? figure(*u) : std::nullopt;
    measured["remeasured"] = second ? json(*second) : json(u->status == Status::ok ? std::string("no figure") : u->reason);
    const bool intermittent = second && keeps(*second);
    measured["intermittent"] = intermittent;
    if (!intermittent) return broken_verdict;
    // Passing once more clears a dip only when the ports' error counters stayed clean while it
    // happened (the first measurement's pair run): a counter that moved is the fault showing itself.
    std::string moved;
    for (const auto& label : {a().label(), b().label()}) {
      std::string which;
      if (delta(&pair, label, kErrorCounters, &which) > 0) moved += (moved.empty() ? "" : "; ") + label + ": " + which;
    }
    if (moved.empty()) return Verdict::warn;
    measured["counters_moved"] = moved;
    return broken_verdict;
  }

  void judge(const TestResult& t) {
    const Subject subject = subject_of(s, t);
    if (t.status == Status::not_measured) return;
    if (t.status == Status::error) {
      bad = true;
      out.push_back(Finding(CheckId::verbs_pair_error, subject, Verdict::fail, t.reason, "the test completes", "every scheduled pair completes its RDMA test",
                            error_hint(t.reason)));
      return;
    }
    if (t.test == kVerbsSizesTest) return;  // the curve's figures are read, not judged (verbs_model.hpp)
    if (t.mismatches) {
      const bool ok = *t.mismatches == 0;
      bad |= !ok;
      out.push_back(Finding(CheckId::verbs_payload, subject, ok ? Verdict::pass : Verdict::fail,
                            {{"verified_messages", t.verified.value_or(0)}, {"mismatched_words", *t.mismatches}}, 0,
                            "received SEND payloads match the sender's pattern",
                            ok ? "" : "Data arrived corrupted: check the link's error counters, firmware, and PCIe (AER) on both nodes."));
    }
    if (t.gbps) judge_bandwidth(t, subject, *t.gbps);
    if (t.latency && t.latency->samples) judge_latency(t, subject, *t.latency);
  }

  void judge_bandwidth(const TestResult& t, const Subject& subject, double gbps) {
    const auto& v = profile.verbs;
    // Absolute: against the slower port's rate (both directions for bidirectional).
    if (v.absolute_bw && a().rate_gbps && b().rate_gbps) {
      const double rate = std::min(*a().rate_gbps, *b().rate_gbps) * (t.test == "write_bw_bidir" ? 2 : 1);
      const double ratio = gbps / rate;
      json measured = {{"gbps", gbps}, {"ratio", ratio}};
      Verdict verdict = ratio >= v.bw_pass_ratio ? Verdict::pass : ratio < v.bw_fail_ratio ? Verdict::fail : Verdict::warn;
      if (verdict == Verdict::fail) verdict = settle(t, verdict, gbps_of, [&](double g) { return g / rate >= v.bw_fail_ratio; }, measured);
      bad |= verdict == Verdict::fail;
      add(Finding(CheckId::verbs_pair_bw, subject, verdict, measured, fmt::format(">= {} x {} Gb/s", v.bw_pass_ratio, rate),
                  fmt::format("bandwidth >= verbs.bw_pass_ratio ({}) x the slower port's rate passes, below verbs.bw_fail_ratio ({}) fails",
                           v.bw_pass_ratio, v.bw_fail_ratio)));
    }
    // Relative: far below the typical pair of the matrix.
    if (const auto reference = typical(s, pair, t, false); reference && *reference > 0) {
      const double ratio = gbps / *reference;
      json measured = {{"gbps", gbps}, {"of_typical", ratio}};
      auto keeps = [&](double g) { return g / *reference >= v.outlier_ratio; };
      const Verdict verdict = keeps(gbps) ? Verdict::pass : settle(t, Verdict::fail, gbps_of, keeps, measured);
      bad |= verdict == Verdict::fail;
      add(Finding(CheckId::verbs_pair_outlier, subject, verdict, measured, fmt::format(">= {} x the typical pair ({:.4g} Gb/s)", v.outlier_ratio, *reference),
                  "bandwidth >= verbs.outlier_ratio x the median of the same test over the other pairs"));
    }
  }

  void judge_latency(const TestResult& t, const Subject& subject, const LatencyStats& lat) {
    if (auto limit = latency_limit(profile, a().link_layer)) {
      json measured = {{"avg_usec", lat.avg_usec}, {"p50_usec", lat.p50_usec}, {"p99_usec", lat.p99_usec}};
      auto keeps = [&](double avg) { return avg <= *limit; };
      const Verdict verdict = keeps(lat.avg_usec) ? Verdict::pass : settle(t, Verdict::fail, avg_usec_of, keeps, measured);
      bad |= verdict == Verdict::fail;
      add(Finding(CheckId::verbs_pair_latency, subject, verdict, measured, fmt::format("average <= {} us", *limit),
                  fmt::format("RDMA write latency average <= verbs.latency_usec.{}", a().link_layer)));
    }
    if (const auto reference = typical(s, pair, t, true)) {
      json measured = {{"p50_usec", lat.p50_usec}};
      auto keeps = [&](double p50) { return p50 <= profile.verbs.latency_outlier_factor * *reference; };
      const Verdict verdict = keeps(lat.p50_usec) ? Verdict::pass : settle(t, Verdict::warn, p50_usec_of, keeps, measured);
      slow_latency |= verdict != Verdict::pass && !measured.value("intermittent", false);
      add(Finding(CheckId::verbs_latency_outlier, subject, verdict, measured,
                  fmt::format("<= {} x the typical pair ({:.4g} us)", profile.verbs.latency_outlier_factor, *reference),
                  "p50 latency <= verbs.latency_outlier_factor x the median p50 over the other pairs"));
    }
  }
};

struct Trouble {
  int bad = 0;  // pairs with a failing (or, for latency, warning) finding
  int pairs = 0;
  Verdict worst = Verdict::pass;
};

// An endpoint in most of its pairs' trouble is the likely culprit: name it.
void name_suspects(const VerbsSection& s, const ClusterFacts& cluster, const std::map<int, Trouble>& troubles, std::vector<Finding>& out) {
  for (const auto& [e, trouble] : troubles) {
    const int bad = trouble.bad, total = trouble.pairs;
    if (bad < 2 || bad * 2 <= total) continue;
    const auto& endpoint = s.endpoints[static_cast<size_t>(e)];
    const VerbsEndpoint* peer = nullptr;
    for (const auto& pair : s.pairs)
      if (pair.a == e || pair.b == e) peer = &s.endpoints[static_cast<size_t>(pair.a == e ? pair.b : pair.a)];
    const auto causes = peer ? diagnose_pair(endpoint, *peer, cluster, nullptr) : std::vector<Cause>{};
    // As severe as its pairs' trouble: a node whose pairs only warn of latency is a warning.
    auto f = Finding(CheckId::verbs_suspect_endpoint, endpoint.label(), trouble.worst, {{"bad_pairs", bad}, {"pairs", total}},
                     "no endpoint in most of its pairs' failures", "an endpoint involved in most failing or slow pairs is named as the likely cause",
                     fmt::format("{} is in {} of its {} pairs' failures. {}", endpoint.label(), bad, total, numbered(causes)));
    if (!causes.empty()) f.triage = causes.front().step;
    out.push_back(std::move(f));
  }
}

}  // namespace

// A pair planned and not measured (a port not ACTIVE on one side) proves nothing about its link:
// not proven, with the reason, never silence. A matrix without a pair proves nothing at all.
void not_measured(const VerbsSection& s, std::vector<Finding>& out) {
  if (s.pairs.empty())
    out.push_back(Finding(CheckId::verbs_pairs, "matrix", Verdict::not_proven, 0, ">= 1 pair", "the verbs phase measures at least one pair",
                          "No pair was planned: the nodes have no RDMA port the profile includes in common (profile devices, rails)."));
  for (const auto& pair : s.pairs) {
    if (pair.tests.empty() || !std::all_of(pair.tests.begin(), pair.tests.end(), [](const TestResult& t) { return t.status == Status::not_measured; }))
      continue;
    const auto subject = Subject::pair(s.endpoints[static_cast<size_t>(pair.a)].label(), s.endpoints[static_cast<size_t>(pair.b)].label(), "", true);
    out.push_back(Finding(CheckId::verbs_pair_not_measured, subject, Verdict::not_proven, pair.tests.front().reason, "measured",
                          "every planned pair is measured",
                          "Not measured: " + pair.tests.front().reason + ". Bring the port up (ibstat, the cable, the switch port) and rerun."));
  }
}

namespace {

// --verbs-mode locate: each named fault a failure with its answer line; a suspect it could not
// settle not proven; a leaf map it could not use a failure of the map; nothing named and nothing
// unsettled a pass that says how much it tested.
void check_located(const VerbsSection& s, std::vector<Finding>& out) {
  if (!s.locate) return;
  const auto& l = *s.locate;
  const json tested = {{"rounds", l.rounds}, {"pairs_tested", l.pairs_tested}, {"pairs_total", l.pairs_total}, {"leaf_paths_tested", l.leaf_paths_tested},
                       {"leaf_paths_total", l.leaf_paths_total}, {"nodes_tested", l.nodes_tested}, {"nodes", l.nodes}};
  const std::string rule = (l.slow_below > 0 ? fmt::format("a test under {:g} of its rail's healthy rate is slow; ", l.slow_below) : "") +
                           "named only when repeated tests implicate it and others clear its partners (suite/locate)";
  for (const auto& f : l.faults) {
    std::string subject = f.kind == "leaf" ? fmt::format("leaf {}", f.leaf) : fmt::format("{}", fmt::join(f.hosts, " <-> "));
    if (!f.device.empty()) subject += "/" + f.device;
    out.push_back(Finding(CheckId::verbs_locate_fault, subject, Verdict::fail,
                          {{"kind", f.kind}, {"ratio", f.ratio}, {"tests", f.implicating.size()}, {"cleared_by", f.clearing.size()}},
                          "fine with every cleared partner", rule, f.summary));
  }
  for (const auto& u : l.unresolved)
    out.push_back(Finding(CheckId::verbs_locate_unresolved, "verbs", Verdict::not_proven, u, "named or cleared", rule,
                          "A suspect the tests could not settle: rerun on more nodes, or with --verbs-mode rounds."));
  for (const auto& p : l.leaf_map_problems)
    out.push_back(Finding(CheckId::verbs_locate_leaf_map, "leaf map", Verdict::fail, p, "one leaf for every HCA", "--leaf-map: '<host> <leaf>' or '<host> <device> <leaf>' lines",
                          "Fix the map: without it locate cannot tell a leaf's uplinks from its nodes, nor cross every leaf-to-leaf path."));
  if (l.faults.empty() && l.unresolved.empty())
    out.push_back(Finding(CheckId::verbs_locate_fault, "cluster", Verdict::pass, tested, "no node, port, link or leaf named", rule));
}

}  // namespace

std::vector<Finding> check_verbs(const VerbsSection& s, const ClusterFacts& cluster, const Profile& profile) {
  std::vector<Finding> out;
  check_located(s, out);
  std::map<int, Trouble> troubles;
  not_measured(s, out);
  for (const auto& pair : s.pairs) {
    PairJudge judge{s, cluster, profile, pair, out, false, false, {}, {}};
    for (const auto& t : pair.tests) judge.judge(t);
    for (int e : {pair.a, pair.b}) {
      auto& trouble = troubles[e];
      trouble.pairs += 1;
      trouble.bad += judge.bad || judge.slow_latency ? 1 : 0;
      trouble.worst = worst(trouble.worst, judge.bad ? Verdict::fail : judge.slow_latency ? Verdict::warn : Verdict::pass);
    }
  }
  name_suspects(s, cluster, troubles, out);
  if (!profile.verbs.absolute_bw) {
    out.push_back(Finding(CheckId::verbs_pair_bw, "matrix", Verdict::skip, nullptr, nullptr, "bandwidth against the port rate",
                          "Absolute bandwidth limits are off in profile " + profile.name + " (verbs.absolute_bw): only the relative rules judge pairs."));
  }
  return out;
}

std::vector<RoundToRemeasure> rounds_to_remeasure(const VerbsSection& s, const ClusterFacts& cluster, const Profile& profile) {
  std::map<int, std::set<std::string>> broken;  // round -> tests
  std::vector<Finding> ignored;
  for (const auto& pair : s.pairs) {
    PairJudge judge{s, cluster, profile, pair, ignored, false, false, {}, {}};
    for (const auto& t : pair.tests) judge.judge(t);
    if (!judge.broken.empty()) broken[pair.round].insert(judge.broken.begin(), judge.broken.end());
  }
  std::vector<RoundToRemeasure> out;
  for (const auto& [round, tests] : broken) {
    RoundToRemeasure r{round, {}};
    for (const auto& test : s.options.tests)  // in run order
      if (tests.count(test)) r.tests.push_back(test);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace fabricproof
