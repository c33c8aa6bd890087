#include "app/collectives_locate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "collectives/sweep.hpp"
#include "core/located_error.hpp"
#include "locate/group_locator.hpp"
#include "mpi/exchange.hpp"
#include "mpi/messages.hpp"

namespace fabricproof::app {
namespace {

// A round's groups share what a fabric shares (spine links; on one machine, its cores): a group
// that finished would lighten the load on the others and flatter their figures, and one that
// started late would be flattered in turn. So every group starts its timed calls after a world
// barrier, and keeps calling its collective, untimed, until every rank of the round has entered
// the closing barrier. Two small allreduces per extra call keep the group agreed on stopping.
void hold_the_load(mpi::Session& session, collectives::Engine& engine, MPI_Comm comm, const collectives::CollCall& call, mpi::OpenBarrier& end,
                   mpi::Clock::time_point deadline, const std::string& what) {
  for (bool failed = false;;) {
    const bool done = end.entered_by_all();
    if (mpi::allreduce(session, comm, static_cast<uint64_t>(failed), MPI_MAX, deadline, what) != 0) return;
    if (mpi::allreduce(session, comm, static_cast<uint64_t>(done), MPI_MIN, deadline, what) != 0) return;
    failed = failure_of([&] { engine.run(call, 1); }).has_value();
  }
}

// The group's allreduce at the locate size: its bus bandwidth, or why there is none.
mpi::LocateGroupMessage measure(mpi::Session& session, const CollLocateRun& run, collectives::Engine& engine, MPI_Comm comm, int colour,
                                const std::string& what) {
  const auto& o = run.options;
  collectives::SweepPlan plan{CollOp::allreduce, *data_type_from(o.dtype), *reduce_op_from(o.redop), {run.bytes}, o.iters, o.warmup,
                              false, o.timeout_s, o.time_stat, fmt::format("allreduce of group {} in {}", colour, what)};
  CollResult result;
  collectives::run_sweep(session, engine, comm, plan, result, [](const CollRow&) {});
  mpi::LocateGroupMessage mine{colour, mpi::rank_in(comm) == 0, std::nullopt, ""};
  if (result.status == Status::ok && !result.rows.empty())
    mine.busbw_GBps = result.rows.back().out_of_place.busbw_GBps;
  else
    mine.reason = result.reason.empty() ? "the allreduce gave no figure" : result.reason;
  return mine;
}

// The longest a round may take: its slowest group at every deadline of its one size and form.
double round_budget_s(const SweepOptions& o) { return 6 * o.timeout_s + 60; }

// This rank's part of a round: its group's allreduce at the locate size, if it is in one.
mpi::LocateGroupMessage run_group(mpi::Session& session, const CollLocateRun& run, int colour, int round) {
  const auto& o = run.options;
  const auto what = fmt::format("locate round {}", round);
  session.set_step("collectives", "forming the groups of " + what);
  MPI_Comm comm = mpi::split_by_colour(session, session.world(), colour, mpi::deadline_in(o.timeout_s), "the groups of " + what);
  std::unique_ptr<collectives::Engine> engine;
  if (comm != MPI_COMM_NULL) engine = run.make_engine(comm);
  mpi::barrier(session, session.world(), mpi::deadline_in(o.timeout_s), "the start of " + what);
  if (!engine) {
    mpi::OpenBarrier(session, session.world()).wait(mpi::deadline_in(round_budget_s(o)), "the end of " + what);
    return {colour, false, std::nullopt, ""};
  }
  mpi::LocateGroupMessage mine;
  try {
    mine = measure(session, run, *engine, comm, colour, what);
    mpi::OpenBarrier end(session, session.world());
    session.set_step("collectives", "holding the load until every group of " + what + " is done");
    const collectives::CollCall call{CollOp::allreduce, *data_type_from(o.dtype), *reduce_op_from(o.redop),
                                     chunk_elements(CollOp::allreduce, run.bytes, *data_type_from(o.dtype), mpi::size_of(comm)), false};
    hold_the_load(session, *engine, comm, call, end, mpi::deadline_in(round_budget_s(o)), "the load of " + what);
    end.wait(mpi::deadline_in(o.timeout_s), "the end of " + what);
  } catch (const mpi::Lost&) {
    engine->abandon();  // no finalize on a communicator whose peer is gone
    throw;
  }
  engine.reset();  // the NCCL communicator ends before the group's MPI communicator
  mpi::free_group(comm);
  return mine;
}

// Rank 0: the round's tests as a colour per world rank (the index of the rank's node's group).
mpi::LocateRoundMessage colours_of(const std::vector<locate::GroupTest>& tests, const CollLocateRun& run) {
  mpi::LocateRoundMessage msg{tests.empty(), std::vector<int>(run.node_of_rank.size(), -1)};
  std::vector<int> group_of_node(run.node_names.size(), -1);
  for (size_t g = 0; g < tests.size(); ++g)
    for (int n : tests[g].nodes) group_of_node[static_cast<size_t>(n)] = static_cast<int>(g);
  for (size_t rank = 0; rank < run.node_of_rank.size(); ++rank)
    if (const int node = run.node_of_rank[rank]; node >= 0) msg.colour[rank] = group_of_node[static_cast<size_t>(node)];
  return msg;
}

// Rank 0: each test's figure from its group's leader; a group whose leader did not say has none.
std::vector<locate::GroupResult> results_of(const std::vector<locate::GroupTest>& tests, const mpi::GatheredOf<mpi::LocateGroupMessage>& got,
                                            std::vector<CollLocateTest>& kept, const CollLocateRun& run, int round) {
  std::vector<locate::GroupResult> results;
  for (size_t g = 0; g < tests.size(); ++g) {
    CollLocateTest t{round, {}, std::nullopt, "its leader did not report"};
    for (int n : tests[g].nodes) t.hosts.push_back(run.node_names[static_cast<size_t>(n)]);
    for (const auto& part : got.parts)
      if (part && part->leader && part->colour == static_cast<int>(g)) {
        t.busbw_GBps = part->busbw_GBps;
        t.reason = part->reason;
      }
    results.push_back({tests[g], round, t.busbw_GBps});
    kept.push_back(std::move(t));
  }
  return results;
}

std::string round_line(int round, const std::vector<CollLocateTest>& tests, size_t first) {
  std::vector<double> values;
  size_t failed = 0;
  for (size_t i = first; i < tests.size(); ++i) {
    if (tests[i].busbw_GBps) values.push_back(*tests[i].busbw_GBps);
    else ++failed;
  }
  std::sort(values.begin(), values.end());
  if (values.empty()) return fmt::format("collectives: locate round {}: {} group(s), none completed", round, tests.size() - first);
  return fmt::format("collectives: locate round {}: {} group(s), busbw {:.3g} to {:.3g} GB/s{}", round, tests.size() - first, values.front(),
                     values.back(), failed ? fmt::format(", {} without a figure", failed) : "");
}

}  // namespace

namespace {

CollLocate outcome_of(const locate::GroupLocator& locator, const CollLocateRun& run, const std::vector<CollLocateTest>& tests) {
  CollLocate out;
  out.bytes = run.bytes;
  out.rounds = locator.rounds();
  out.nodes = static_cast<int>(run.node_names.size());
  out.ranks_as_nodes = run.options.ranks_as_nodes;
  out.transient_dips = locator.transient_dips();
  out.unresolved = locator.unresolved();
  out.tests = tests;
  std::set<std::string> tested;
  for (const auto& t : tests)
    if (t.busbw_GBps) tested.insert(t.hosts.begin(), t.hosts.end());
  out.nodes_tested = static_cast<int>(tested.size());
  for (const auto& f : locator.faults()) {
    LocatedFault o;
    o.kind = locate::to_string(f.kind);
    o.summary = f.summary;
    o.hosts = {run.node_names[static_cast<size_t>(f.node)]};
    o.ratio = f.ratio;
    for (size_t i : f.implicating) o.implicating.push_back(static_cast<int>(i));
    for (size_t i : f.clearing) o.clearing.push_back(static_cast<int>(i));
    out.faults.push_back(std::move(o));
  }
  return out;
}

}  // namespace

CollLocate run_collective_locate(mpi::Session& session, const CollLocateRun& run) {
  const auto& o = run.options;
  std::unique_ptr<locate::GroupLocator> locator;
  if (session.is_root()) {
    locator = std::make_unique<locate::GroupLocator>(locate::Fabric{run.node_names, 1, {}});
    run.progress(fmt::format("collectives: locate over {} node(s){}, allreduce of {} bytes per group", run.node_names.size(),
                             o.ranks_as_nodes ? " (each rank stands for a node: --locate-ranks-as-nodes)" : "", run.bytes));
  }
  std::vector<CollLocateTest> tests;
  for (int round = 1;; ++round) {
    std::vector<locate::GroupTest> planned;
    if (locator) planned = locator->next_round();
    const auto msg = mpi::broadcast_message(session, colours_of(planned, run), mpi::deadline_in(o.timeout_s), fmt::format("locate round {}", round));
    if (msg.done) break;
    const auto mine = run_group(session, run, msg.colour.at(static_cast<size_t>(session.rank())), round);
    const auto what = fmt::format("the groups' figures of locate round {}", round);
    session.set_step("collectives", what);
    const auto got = mpi::gather_message(session, mine, mpi::deadline_in(round_budget_s(o)), what);
    got.require_all(session, what);
    if (!locator) continue;
    const size_t first = tests.size();
    locator->record(results_of(planned, got, tests, run, round - 1));
    run.progress(round_line(round, tests, first));
    run.after_round(outcome_of(*locator, run, tests));
  }
  if (!locator) return {};
  auto out = outcome_of(*locator, run, tests);
  for (const auto& f : out.faults) run.progress("collectives: locate named " + f.summary);
  for (const auto& u : out.unresolved) run.progress("collectives: locate left unsettled: " + u);
  return out;
}

}  // namespace fabricproof::app
