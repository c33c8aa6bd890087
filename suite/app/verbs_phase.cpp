#include "app/verbs_phase.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "app/verbs_locate.hpp"
#include "inventory/inventory_rules.hpp"
#include "verbs/verbs_plan.hpp"
#include "verbs/verbs_rules.hpp"
#include "mpi/exchange.hpp"
#include "mpi/messages.hpp"
#include "verbs/pair.hpp"

namespace fabricproof::app {
namespace {

using nlohmann::json;

// verbs::Channel over MPI point-to-point between the two ranks of a pair, with deadlines. A peer
// that does not answer is the pair's error (PeerTimeout), not the run's: the round's gather then
// finds out whether the rank itself is lost.
class MpiChannel : public verbs::Channel {
 public:
  MpiChannel(mpi::Session& session, int peer, int tag, double timeout_s) : session_(session), peer_(peer), tag_(tag), timeout_s_(timeout_s) {}

  void send(const std::string& message) override {
    if (!mpi::send_to(session_, peer_, tag_, message, mpi::deadline_in(timeout_s_)))
      throw verbs::PeerTimeout(fmt::format("rank {} took no message for {} s", peer_, timeout_s_));
  }

  // Polls from 100 us backing off to 20 ms: the passive side of a one-sided test waits for the
  // whole test and must not take the CPU the kernel (Soft-RoCE) or the peer rank needs. Each look
  // is an MPI progress (a poll() system call), four clock reads (system calls where the
  // clocksource has no vDSO) and a sleep: at a 2 ms cap the target of a lab write stream made
  // ~500 a second, 12 % of its guest's one vCPU, beside the softirq that places the data.
  // A message that came is seen at most 20 ms late, outside every measurement.
  std::string receive(verbs::Clock::time_point deadline) override {
    auto sleep = std::chrono::microseconds(100);
    for (;;) {
      if (auto message = poll()) return *message;
      if (verbs::Clock::now() > deadline) throw verbs::PeerTimeout(fmt::format("no message from rank {} in time", peer_));
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(20000));
    }
  }

  std::optional<std::string> poll() override {
    try {
      return mpi::try_receive(session_, peer_, tag_);
    } catch (const mpi::Lost& e) {  // the peer stopped in the middle of its message
      throw verbs::PeerTimeout(e.what());
    }
  }

 private:
  mpi::Session& session_;
  int peer_;
  int tag_;
  double timeout_s_;
};

std::string figure(const TestResult& t) {
  if (t.status != Status::ok) return t.status == Status::error ? "ERROR " + t.reason : "not measured";
  if (t.latency) return fmt::format("{:.1f} us", t.latency->p50_usec);
  return t.gbps ? fmt::format("{:.3g} Gb/s", *t.gbps) : "-";
}

std::string describe(const VerbsSection& s, const PairResult& p) {
  std::string text = s.endpoints[p.a].label() + " <-> " + s.endpoints[p.b].label() + ":";
  for (const auto& t : p.tests) {
    const char* arrow = verbs_test_type(t.test).both_ways ? "" : (t.from == p.a ? " >" : " <");
    text += fmt::format(" {}{} {};", t.test, arrow, figure(t));
  }
  return text;
}

// What a round allows beyond its measurements: setting up and closing a pair, and the results'
// way to rank 0 (a peer that ends its part of a pair later than this rank does so within it).
double round_closing_budget(const VerbsPlan& plan) { return 4 * plan.options.timeout_s + 60; }

// How long a round may take on the busiest rank: every step of every task it drives at full
// duration, plus the waits a failing pair may use up.
double round_budget(const VerbsPlan& plan, int round) {
  std::map<int, int> per_rank;
  for (const auto& t : plan.tasks)
    if (t.round == round && t.skip_reason.empty()) {
      ++per_rank[plan.endpoints[t.a].rank];
      ++per_rank[plan.endpoints[t.b].rank];
    }
  int busiest = 0;
  for (const auto& [rank, count] : per_rank) busiest = std::max(busiest, count);
  const auto& o = plan.options;
  double pair = 4 * o.timeout_s;
  for (const auto& step : planned_results(o, 0, 1)) pair += step_budget_s(o, step) + o.timeout_s;
  return busiest * pair + 60;
}

// "node1/rxe0 <-> node2/rxe0, node3/rxe0 <-> node4/rxe0": the pairs of a round, for the step in flight.
std::string round_pairs(const VerbsPlan& plan, int round) {
  std::string text;
  for (const auto& t : plan.tasks)
    if (t.round == round && t.skip_reason.empty())
      text += (text.empty() ? "" : ", ") + plan.endpoints[t.a].label() + " <-> " + plan.endpoints[t.b].label();
  return text.empty() ? "no pair to measure" : text;
}

// The result of `task`: as its reporting rank sent it, or error / not-measured cells saying why not.
PairResult result_of(const VerbsPlan& plan, const VerbsTask& task, const std::vector<PairResult>& results) {
  auto found = std::find_if(results.begin(), results.end(), [&](const PairResult& r) { return r.task == task.id; });
  if (found != results.end()) return *found;
  PairResult r;  // skipped by plan, or its reporting rank never answered
  r.task = task.id;
  r.round = task.round;
  r.a = task.a;
  r.b = task.b;
  r.tests = planned_results(plan.options, task.a, task.b);
  const std::string why =
      task.skip_reason.empty() ? fmt::format("rank {} did not report this pair in time", plan.endpoints[task.a].rank) : task.skip_reason;
  for (auto& t : r.tests) {
    t.status = task.skip_reason.empty() ? Status::error : Status::not_measured;
    t.reason = why;
  }
  return r;
}

}  // namespace

namespace {

// Rank 0 plans (in the traffic class NCCL will use, unless told otherwise) and every rank gets the plan.
VerbsPlan share_plan(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster, const Profile& profile, const MatrixRun& run) {
  VerbsPlan planned;
  if (session.is_root()) {
    VerbsOptions chosen = run.verbs;
    if (!chosen.traffic_class)
      if (const char* tc = std::getenv("NCCL_IB_TC"); tc && *tc) {
        char* end = nullptr;
        const long value = std::strtol(tc, &end, 0);
        if (end && *end == '\0' && value >= 0 && value <= 255) {
          chosen.traffic_class = static_cast<int>(value);
          chosen.traffic_class_source = "NCCL_IB_TC";
        }
      }
    planned = plan_verbs(cluster, profile, chosen);
    if (run.adjust) {
      run.adjust(planned);
      one_pair_per_rank(planned);  // the adjustment may have given a rank two pairs of a round
    }
  }
  return mpi::broadcast_message(session, planned, mpi::deadline_in(options.timeout_s), run.name + ": the plan");
}

// Which rank drives each endpoint and why, and whether the memory is registered with relaxed
// ordering. Every endpoint up to 16; beyond, the count on their HCA's NUMA node and the others.
void say_placement(const VerbsPlan& plan, const MatrixRun& run) {
  run.progress(fmt::format("{}: {} endpoint(s); memory registered {} relaxed ordering", run.name, plan.endpoints.size(),
                           plan.options.relaxed_ordering ? "with" : "without"));
  size_t local = 0, said = 0;
  for (const auto& e : plan.endpoints) {
    const bool on_node = e.placement.find(" on NUMA node ") != std::string::npos;
    local += on_node;
    if (plan.endpoints.size() <= 16 || (!on_node && said++ < 16)) run.progress(fmt::format("{}: {} port {} driven by {}", run.name, e.label(), e.port, e.placement));
  }
  if (plan.endpoints.size() > 16)
    run.progress(fmt::format("{}: {} of {} endpoint(s) driven from their HCA's NUMA node", run.name, local, plan.endpoints.size()));
}

// The pairs of a round take each step together: every rank of the world tells rank 0 it is at the
// step, and rank 0 says go once all are (the machinery of the round's end: a rank that stops is
// named; a pair that streams past the budget while its ranks live is waited for). Ranks leave it
// within a relaxed poll's sleep (at most 5 ms) of each other, against up to 20 ms before.
class WorldStepGate : public verbs::StepGate {
 public:
  WorldStepGate(mpi::Session& session, double budget_s, std::string what) : session_(session), budget_s_(budget_s), what_(std::move(what)) {}

  void wait(size_t step, size_t steps) override {
    const auto what = fmt::format("{}: before step {} of {}", what_, step + 1, steps);
    const auto deadline = mpi::deadline_in(budget_s_);
    mpi::gather_to_root(session_, std::to_string(step), deadline, what, mpi::Patience::while_alive).require_all(session_, what);
    mpi::broadcast_from_root(session_, "go", deadline + std::chrono::seconds(30), what, mpi::Patience::while_alive);
  }

 private:
  mpi::Session& session_;
  double budget_s_;
  std::string what_;
};

// This rank's pairs of one round, in task order on every rank (no two ranks wait on each other in a
// cycle); the results of the pairs it reports for. A rank without a pair still passes every step's gate.
std::vector<PairResult> run_my_pairs(const RunOptions& options, mpi::Session& session, const VerbsPlan& plan, int round, int first_tag,
                                     verbs::MemoryProvider& memory, verbs::StepGate& gate) {
  std::vector<PairResult> mine;
  bool in_a_pair = false;
  for (const auto& task : plan.tasks) {
    if (task.round != round || !task.skip_reason.empty()) continue;
    const auto& ea = plan.endpoints[task.a];
    const auto& eb = plan.endpoints[task.b];
    const bool is_a = ea.rank == session.rank(), is_b = eb.rank == session.rank();
    if (!is_a && !is_b) continue;
    in_a_pair = true;
    verbs::PairPlan pair;
    pair.options = plan.options;
    pair.reporter = is_a;
    pair.self_index = is_a ? task.a : task.b;
    pair.peer_index = is_a ? task.b : task.a;
    pair.self = plan.endpoints[pair.self_index];
    pair.peer = plan.endpoints[pair.peer_index];
    pair.sysfs_root = options.root;
    MpiChannel channel(session, pair.peer.rank, first_tag + task.id, plan.options.timeout_s);
    auto result = verbs::run_pair(pair, channel, memory, &gate);
    if (!is_a) continue;
    PairResult r;
    r.task = task.id;
    r.round = task.round;
    r.a = task.a;
    r.b = task.b;
    r.tests = std::move(result.tests);
    r.counter_deltas = std::move(result.counter_deltas);
    mine.push_back(r);
  }
  if (!in_a_pair) {
    const size_t steps = planned_results(plan.options, 0, 1).size();
    for (size_t step = 0; step < steps; ++step) gate.wait(step, steps);
  }
  return mine;
}

// Rank 0: the round's results into `into` (the section's pairs, or its re-measured ones), one per
// task (a pair nobody reported is an error).
void collect_round(const VerbsPlan& plan, int round, const mpi::GatheredOf<std::vector<PairResult>>& gathered, const MatrixRun& run,
                   const std::string& what, const VerbsSection& section, std::vector<PairResult>& into) {
  std::vector<PairResult> results;
  for (const auto& part : gathered.parts)
    if (part) results.insert(results.end(), part->begin(), part->end());
  for (const auto& task : plan.tasks) {
    if (task.round != round) continue;
    auto r = result_of(plan, task, results);
    run.progress(fmt::format("{}: round {} of {}: {}", what, round + 1, plan.rounds, describe(section, r)));
    into.push_back(std::move(r));
  }
}

// Every round of `plan`, one after another; rank 0 collects the results into `into`. `what`
// starts the progress lines ("verbs", "verbs re-measure").
void run_rounds(const RunOptions& options, mpi::Session& session, const VerbsPlan& plan, const MatrixRun& run, const std::string& what,
                VerbsSection& section, std::vector<PairResult>& into) {
  // One tag per task, fresh for these rounds: a late message of an aborted pair never matches another.
  const int first_tag = session.next_tags(static_cast<int>(plan.tasks.size()));
  const auto start = mpi::Clock::now();
  for (int round = 0; round < plan.rounds; ++round) {
    const auto round_start = mpi::Clock::now();
    session.set_step(what, fmt::format("round {} of {}: {}", round + 1, plan.rounds, round_pairs(plan, round)));
    WorldStepGate gate(session, round_budget(plan, round), fmt::format("{}: round {} of {}", what, round + 1, plan.rounds));
    const auto mine = run_my_pairs(options, session, plan, round, first_tag, run.memory, gate);
    // The round's budget, but never less than the closing waits' share of it counted from the end
    // of this rank's own pairs. An iteration-mode stream has no length known in advance, so the
    // waits for the round's end go on past the deadline while the ranks they wait for show signs of
    // life (a streaming rank's progress notes are some): a pair that streams past the budget has
    // not lost a rank, wherever its ranks are; a stopped or dead rank still ends the wait.
    const auto deadline = std::max(round_start + std::chrono::milliseconds(static_cast<long>(round_budget(plan, round) * 1000)),
                                   mpi::Clock::now() + std::chrono::milliseconds(static_cast<long>(round_closing_budget(plan) * 1000)));
    const auto gathered = mpi::gather_message(session, mine, deadline, fmt::format("{}: round {} results", what, round + 1),
                                              mpi::Patience::while_alive);
    if (session.is_root()) collect_round(plan, round, gathered, run, what, section, into);
    // The results so far reach the report before a silent rank ends the run.
    if (session.is_root() && !gathered.raw.silent.empty()) run.after_round(section);
    gathered.require_all(session, fmt::format("{}: round {} of {} ({})", what, round + 1, plan.rounds, round_pairs(plan, round)));
    // The round barrier: nobody starts the next round while a peer may still be in this one.
    mpi::broadcast_from_root(session, "next", deadline + std::chrono::seconds(30), fmt::format("{}: the end of round {}", what, round + 1),
                             mpi::Patience::while_alive);
    if (!session.is_root()) continue;
    run.after_round(section);
    if (round + 1 < plan.rounds) {  // long matrices: how much is left, from the rounds so far
      const double done_s = std::chrono::duration<double>(mpi::Clock::now() - start).count();
      run.progress(fmt::format("{}: {} of {} rounds in {:.0f} s, about {:.0f} s left", what, round + 1, plan.rounds, done_s,
                               done_s / (round + 1) * (plan.rounds - round - 1)));
    }
  }
}

// One plan per round of `again`: its tasks, now round 0 of 1, with the broken tests only.
std::vector<VerbsPlan> remeasure_plans(const VerbsPlan& plan, const std::vector<RoundToRemeasure>& again) {
  std::vector<VerbsPlan> out;
  for (const auto& r : again) {
    VerbsPlan p = plan;
    p.options.tests = r.tests;
    p.options.sizes.clear();  // the curve is read, never judged: nothing of it to measure again
    p.tasks.clear();
    for (auto task : plan.tasks)
      if (task.round == r.round) {
        task.round = 0;
        p.tasks.push_back(task);
      }
    p.rounds = 1;
    out.push_back(std::move(p));
  }
  return out;
}

// --verbs-mode locate: rank 0's locator picks each round from the results so far (suite/locate);
// every rank runs the round's tasks as a matrix round. One test per pair, the one locate compares
// by (locate_figure_test: write_bw both ways, or write_lat when no bandwidth test was asked for);
// a pair measured again is the report's re-measurement of its first task, as --verbs-remeasure's.
void run_locate(const RunOptions& options, mpi::Session& session, const VerbsPlan& plan, const MatrixRun& run, const ClusterFacts& cluster,
                const Profile& profile, VerbsSection& section) {
  VerbsPlan step = plan;
  step.options.tests = {locate_figure_test(plan.options.tests)};
  step.options.sizes.clear();
  step.options.remeasure = false;
  section.options = step.options;
  std::unique_ptr<LocateDriver> driver;
  if (session.is_root()) {
    driver = std::make_unique<LocateDriver>(plan, profile.verbs, locate::leaf_map_of_ports(cabled_ports(cluster.nodes, {})));
    const auto said = driver->outcome();
    run.progress(fmt::format("{}: locate over {} node(s) and {} rail(s), compared by {}; leaves {}", run.name, said.nodes, said.rails, said.figure,
                             said.leaves_known ? "from " + said.leaves_from : said.leaves_from.empty() ? "unknown" : said.leaves_from));
  }
  for (int next_id = 0, round = 1;; ++round) {
    std::vector<VerbsTask> tasks;
    if (driver) tasks = driver->next_tasks(next_id);
    tasks = mpi::broadcast_message(session, tasks, mpi::deadline_in(options.timeout_s), fmt::format("{}: locate round {}", run.name, round));
    if (tasks.empty()) break;
    next_id += static_cast<int>(tasks.size());
    step.tasks = std::move(tasks);
    step.rounds = 1;
    if (step.options.locate_isolated) {  // one pair at a time
      for (size_t i = 0; i < step.tasks.size(); ++i) step.tasks[i].round = static_cast<int>(i);
      step.rounds = static_cast<int>(step.tasks.size());
    }
    one_pair_per_rank(step);  // every rank runs this too: the same split everywhere
    std::vector<PairResult> got;
    run_rounds(options, session, step, run, fmt::format("{} locate {}", run.name, round), section, got);
    if (!driver) continue;
    driver->record(got);
    for (auto& r : got) {
      r.round += section.rounds;
      const int first = driver->first_task_of(r);
      if (first >= 0) r.task = first;  // the report pairs a repeat with its first measurement
      (first >= 0 ? section.remeasured : section.pairs).push_back(r);
    }
    section.rounds += step.rounds;
    run.after_round(section);
  }
  if (!driver) return;
  section.locate = driver->outcome();
  for (const auto& f : section.locate->faults) run.progress(fmt::format("{}: locate named {}", run.name, f.summary));
  for (const auto& u : section.locate->unresolved) run.progress(fmt::format("{}: locate left unsettled: {}", run.name, u));
}

}  // namespace

VerbsPhaseOutcome run_verbs_phase(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster,
                                  const Profile& profile, const std::function<void(const std::string&)>& progress,
                                  const std::function<void(const VerbsSection&)>& after_round) {
  verbs::HostMemoryProvider memory;
  return run_verbs_matrix(options, session, cluster, profile, MatrixRun{options.verbs, memory, nullptr, "verbs", progress, after_round});
}

VerbsPhaseOutcome run_verbs_matrix(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster, const Profile& profile,
                                   const MatrixRun& run) {
  VerbsPhaseOutcome outcome;
  const auto plan = share_plan(options, session, cluster, profile, run);
  run.memory.set_relaxed_ordering(plan.options.relaxed_ordering);
  if (session.is_root()) say_placement(plan, run);
  auto& section = outcome.section;
  section.options = plan.options;
  section.endpoints = plan.endpoints;
  section.rounds = plan.rounds;
  if (plan.options.mode == "locate") {
    run_locate(options, session, plan, run, cluster, profile, section);
    if (session.is_root()) outcome.findings = check_verbs(section, cluster, profile);
    return outcome;
  }
  run_rounds(options, session, plan, run, run.name, section, section.pairs);
  if (plan.options.remeasure) {
    // Rank 0 names the rounds to run again; every rank runs them, in the same order.
    std::vector<RoundToRemeasure> again;
    if (session.is_root()) {
      again = rounds_to_remeasure(section, cluster, profile);
      if (!again.empty())
        run.progress(fmt::format("{}: {} round(s) with a pair that broke a rule: measured again before judging", run.name, again.size()));
    }
    again = mpi::broadcast_message(session, again, mpi::deadline_in(options.timeout_s), run.name + ": the rounds to measure again");
    for (const auto& p : remeasure_plans(plan, again))
      run_rounds(options, session, p, run, run.name + " re-measure", section, section.remeasured);
  }
  if (session.is_root()) outcome.findings = check_verbs(section, cluster, profile);
  return outcome;
}

}  // namespace fabricproof::app
