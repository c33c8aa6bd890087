#include "app/uplink_phase.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "uplink/uplink_rules.hpp"
#include "mpi/exchange.hpp"
#include "mpi/messages.hpp"
#include "inventory/file_reader.hpp"
#include "inventory/network.hpp"
#include "uplink/iperf3.hpp"

namespace fabricproof::app {
namespace {

using nlohmann::json;

// Who measures: the first rank of each node, against which target.
struct Assignment {
  int rank = 0;
  std::string host;
  UplinkTarget target;
  double clock_offset_s = 0;  // the node's clock minus rank 0's (the inventory's measurement)
};

struct UplinkAssignments {
  std::vector<Assignment> nodes;
  std::string together_skipped;  // "" when the all-nodes-together test runs
};

FABRICPROOF_JSON(Assignment, rank, host, target, clock_offset_s)
FABRICPROOF_JSON(UplinkAssignments, nodes, together_skipped)

UplinkAssignments make_uplink_assignments(const UplinkOptions& o, const ClusterFacts& cluster) {
  UplinkAssignments plan;
  for (const auto& n : cluster.nodes) {
    if (n.ranks.empty()) continue;
    const auto first = std::min_element(n.ranks.begin(), n.ranks.end(), [](const RankFacts& a, const RankFacts& b) { return a.rank < b.rank; });
    plan.nodes.push_back({first->rank, n.host, o.targets[plan.nodes.size() % o.targets.size()], n.clock_offset_s});
  }
  std::vector<std::string> distinct;
  for (const auto& t : o.targets)
    if (std::find(distinct.begin(), distinct.end(), to_string(t)) == distinct.end()) distinct.push_back(to_string(t));
  if (distinct.size() < plan.nodes.size())
    plan.together_skipped = fmt::format(
        "all nodes together needs one target port per node ({} nodes, {} target port(s)): a stock iperf3 server serves one client "
        "at a time; start `iperf3 -s -p PORT` once per node and give each with --uplink-target",
        plan.nodes.size(), distinct.size());
  return plan;
}

// The interface the node's kernel routes to the target through is on the data fabric when it, or
// a link of its bond, carries an RDMA port.
bool on_data_fabric(const UplinkPath& path, const NodeFacts& node) {
  for (const auto& i : node.interfaces)
    if (i.rdma && (i.name == path.interface || std::find(path.links.begin(), path.links.end(), i.name) != path.links.end())) return true;
  return false;
}

constexpr int kOmitAlone = 1;     // TCP slow start
constexpr int kOmitTogether = 2;  // slow start and what is left of the start skew
constexpr double kStartLead = 2;  // seconds from the broadcast to the common start

double epoch_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

void sleep_until_epoch(double t) {
  const double wait = std::min(t - epoch_now(), 2 * kStartLead);  // a clock far off never stalls the test
  if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
}

std::string figure(const UplinkFlows& f) {
  if (f.status == Status::ok) return fmt::format("{:.3g} Gb/s", f.gbps) + busy_retries_note(f);
  return to_string(f.status) + (f.reason.empty() ? "" : " (" + f.reason + ")") + busy_retries_note(f);
}

// Rank 0: the section from every node's results, its findings and the summary line.
UplinkOutcome judge_on_root(const RunOptions& options, const ClusterFacts& cluster, const Profile& profile, const UplinkAssignments& plan,
                            const mpi::GatheredOf<std::optional<UplinkNode>>& gathered,
                            const std::function<void(const std::string&)>& progress) {
  const UplinkOptions& o = options.uplink;
  UplinkOutcome outcome;
  auto& s = outcome.section;
  for (const auto& t : o.targets) s.targets.push_back(to_string(t));
  s.seconds = o.seconds;
  s.flows = o.flows;
  s.need_gbps = o.need_gbps ? o.need_gbps : profile.uplink.ingest_gbps;
  s.need_source = o.need_gbps ? "--uplink-need" : profile.uplink.ingest_gbps ? "profile uplink.ingest_gbps" : "";
  s.together_skipped = plan.together_skipped;
  for (const auto& part : gathered.parts) {
    if (!part || !*part) continue;  // silent, or a rank that measured nothing (not its node's first)
    UplinkNode node = **part;
    for (const auto& n : cluster.nodes)
      if (n.host == node.host) node.path.rdma = on_data_fabric(node.path, n);
    progress(fmt::format("uplink: {} via {}: 1 flow {}; {} flows {}{}", node.host,
                         node.path.error.empty() ? node.path.interface : "? (" + node.path.error + ")",
                         figure(node.single), node.parallel.flows, figure(node.parallel),
                         s.together_skipped.empty() ? "; together " + figure(node.together) : ""));
    s.nodes.push_back(std::move(node));
  }
  outcome.findings = check_uplink(s);
  double together = 0;  // over the window every node measured, as uplink_aggregate counts it
  for (const auto& n : s.nodes) together += n.together.status == Status::ok ? n.together.gbps : 0;
  if (const auto common = together_in_common_window(s.nodes)) together = common->gbps;
  outcome.summary = s.together_skipped.empty() ? fmt::format("{} node(s), {:.3g} Gb/s all together", s.nodes.size(), together)
                                               : fmt::format("{} node(s), one at a time", s.nodes.size());
  return outcome;
}

}  // namespace

UplinkOutcome run_uplink_phase(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster, const Profile& profile,
                               const std::function<void(const std::string&)>& progress) {
  const UplinkOptions& o = options.uplink;
  // Each step: two iperf3 runs, each bounded at omit + seconds + 20 s by the engine, and its waits
  // for a busy server.
  const double step_s = 2 * (kOmitTogether + 2 * o.seconds + 20 + uplink::kIperf3BusyWaitS) + o.timeout_s;
  const UplinkAssignments plan = mpi::broadcast_message(session, session.is_root() ? make_uplink_assignments(o, cluster) : UplinkAssignments{},
                                                         mpi::deadline_in(options.timeout_s), "the uplink plan");

  const auto me = std::find_if(plan.nodes.begin(), plan.nodes.end(), [&](const Assignment& a) { return a.rank == session.rank(); });
  UplinkNode mine;
  int flows = 2;
  if (me != plan.nodes.end()) {
    probe::FileReader files(options.root);
    mine.host = me->host;
    mine.rank = me->rank;
    mine.target = to_string(me->target);
    mine.path = probe::route_to(files, me->target.host, me->target.port);
    flows = uplink_flows_for(o.flows, mine.path);
    // The planned flows, shown should a test not run (no route): "2 flows not_measured", not "0 flows".
    mine.single.flows = 1, mine.parallel.flows = mine.together.flows = flows;
  }
  auto measure = [&](int count, int omit_s, double seconds) {
    return uplink::run_iperf3({me->target, count, seconds, omit_s, mine.path.local_address});
  };
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const auto& a = plan.nodes[i];
    session.set_step("uplink", fmt::format("node {} of {}: {} alone, 1 flow and parallel flows to {}", i + 1, plan.nodes.size(), a.host,
                                           to_string(a.target)));
    if (session.is_root()) progress(fmt::format("uplink: {} alone: 1 flow, then parallel flows from {}", a.host, to_string(a.target)));
    if (me != plan.nodes.end() && me->rank == a.rank && mine.path.error.empty()) {
      mine.single = measure(1, kOmitAlone, o.seconds);
      mine.parallel = measure(flows, kOmitAlone, o.seconds);
    }
    mpi::barrier(session, session.world(), mpi::deadline_in(step_s), "the uplink test of " + a.host);
  }
  if (plan.together_skipped.empty()) {
    session.set_step("uplink", fmt::format("all {} nodes together", plan.nodes.size()));
    if (session.is_root()) progress(fmt::format("uplink: all {} nodes together, parallel flows", plan.nodes.size()));
    // One start for all, on each node's own clock: the barrier alone releases the nodes a network
    // round trip apart, and starting iperf3 takes a loaded node a second or more. The measured
    // window begins after kOmitTogether, when every node's flows are running, and lasts twice as
    // long as alone, so that what is left of the skew (measured ~0.1 s in the lab: the sum of 4 s
    // windows came to 103% of the shared link) is a smaller part of it.
    const auto start = mpi::broadcast_from_root(session, session.is_root() ? std::to_string(epoch_now() + kStartLead) : "",
                                                mpi::deadline_in(options.timeout_s), "the start of the all-nodes-together test");
    if (me != plan.nodes.end() && mine.path.error.empty()) {
      sleep_until_epoch(std::stod(start) + me->clock_offset_s);
      mine.together = measure(flows, kOmitTogether, 2 * o.seconds);
      mine.together.ended_at = epoch_now() - me->clock_offset_s;  // on rank 0's clock, to line the windows up
    }
    mpi::barrier(session, session.world(), mpi::deadline_in(step_s + kStartLead), "the uplink test of all nodes together");
  }
  const auto gathered = mpi::gather_message(session, me != plan.nodes.end() ? std::optional<UplinkNode>(mine) : std::nullopt,
                                            mpi::deadline_in(options.timeout_s), "gathering the uplink results");
  if (!session.is_root()) return {};
  gathered.require_all(session, "gathering the uplink results");
  return judge_on_root(options, cluster, profile, plan, gathered, progress);
}

}  // namespace fabricproof::app
