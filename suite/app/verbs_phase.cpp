#include "app/verbs_phase.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "core/verbs_plan.hpp"
#include "core/verbs_rules.hpp"
#include "verbs/pair.hpp"

namespace fabricproof::app {
namespace {

using nlohmann::json;
constexpr int kTagVerbsBase = 1000;  // + task id: a stale message of an aborted pair never matches another

// verbs::Channel over MPI point-to-point between the two ranks of a pair, with deadlines.
class MpiChannel : public verbs::Channel {
 public:
  MpiChannel(MPI_Comm comm, int peer, int tag, double timeout_s) : comm_(comm), peer_(peer), tag_(tag), timeout_s_(timeout_s) {}

  void send(const std::string& message) override {
    MPI_Request request;
    MPI_Isend(message.data(), static_cast<int>(message.size()), MPI_CHAR, peer_, tag_, comm_, &request);
    if (!mpi::wait_until(request, mpi::Clock::now() + std::chrono::milliseconds(static_cast<long>(timeout_s_ * 1000)))) {
      MPI_Cancel(&request);
      MPI_Request_free(&request);
      throw verbs::PeerTimeout(fmt::format("rank {} took no message for {} s", peer_, timeout_s_));
    }
  }

  std::string receive(verbs::Clock::time_point deadline) override {
    for (;;) {
      if (auto message = poll()) return *message;
      if (verbs::Clock::now() > deadline) throw verbs::PeerTimeout(fmt::format("no message from rank {} in time", peer_));
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  std::optional<std::string> poll() override {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(peer_, tag_, comm_, &flag, &status);
    if (!flag) return std::nullopt;
    int count = 0;
    MPI_Get_count(&status, MPI_CHAR, &count);
    std::string message(static_cast<size_t>(count), '\0');
    MPI_Recv(message.data(), count, MPI_CHAR, peer_, tag_, comm_, MPI_STATUS_IGNORE);
    return message;
  }

 private:
  MPI_Comm comm_;
  int peer_;
  int tag_;
  double timeout_s_;
};

std::string figure(const TestResult& t) {
  if (t.status != "ok") return t.status == "error" ? "ERROR " + t.reason : "not measured";
  if (t.latency) return fmt::format("{:.1f} us", t.latency->p50_usec);
  return t.gbps ? fmt::format("{:.3g} Gb/s", *t.gbps) : "-";
}

std::string describe(const VerbsSection& s, const PairResult& p) {
  std::string text = s.endpoints[p.a].label() + " <-> " + s.endpoints[p.b].label() + ":";
  for (const auto& t : p.tests) {
    const char* arrow = t.test == "write_lat" || t.test == "write_bw_bidir" ? "" : (t.from == p.a ? " >" : " <");
    text += fmt::format(" {}{} {};", t.test, arrow, figure(t));
  }
  return text;
}

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
  const double steps = static_cast<double>(planned_results(o, 0, 1).size());
  const double per_step = (o.iterations ? o.timeout_s : o.duration_s) + o.timeout_s;
  return busiest * (steps * per_step + 4 * o.timeout_s) + 60;
}

}  // namespace

VerbsPhaseOutcome run_verbs_phase(const RunOptions& options, const mpi::Session& session, const ClusterFacts& cluster,
                                  const Profile& profile, const std::function<void(const std::string&)>& progress,
                                  const std::function<void(const VerbsSection&)>& after_round) {
  verbs::HostMemoryProvider memory;
  return run_verbs_matrix(options, options.verbs, session, cluster, profile, memory, nullptr, "verbs", progress, after_round);
}

VerbsPhaseOutcome run_verbs_matrix(const RunOptions& options, const VerbsOptions& verbs_options, const mpi::Session& session,
                                   const ClusterFacts& cluster, const Profile& profile, verbs::MemoryProvider& memory,
                                   const std::function<void(VerbsPlan&)>& adjust, const std::string& name,
                                   const std::function<void(const std::string&)>& progress,
                                   const std::function<void(const VerbsSection&)>& after_round) {
  VerbsPhaseOutcome outcome;
  std::string plan_text;
  if (session.is_root()) {
    auto planned = plan_verbs(cluster, profile, verbs_options);
    if (adjust) adjust(planned);
    plan_text = json_text(json(planned));
  }
  auto shared = mpi::broadcast_from_root(session, plan_text, mpi::Clock::now() + std::chrono::seconds(static_cast<long>(options.timeout_s)));
  if (!shared) throw std::runtime_error("the verbs plan did not reach every rank in time");
  const auto plan = json::parse(*shared).get<VerbsPlan>();
  auto& section = outcome.section;
  section.options = plan.options;
  section.endpoints = plan.endpoints;
  section.rounds = plan.rounds;

  const auto phase_start = mpi::Clock::now();
  for (int round = 0; round < plan.rounds; ++round) {
    const auto round_start = mpi::Clock::now();
    json mine = json::array();
    for (const auto& task : plan.tasks) {  // in task order on every rank: no two ranks wait on each other in a cycle
      if (task.round != round || !task.skip_reason.empty()) continue;
      const auto& ea = plan.endpoints[task.a];
      const auto& eb = plan.endpoints[task.b];
      const bool is_a = ea.rank == session.rank(), is_b = eb.rank == session.rank();
      if (!is_a && !is_b) continue;
      verbs::PairPlan pair;
      pair.options = plan.options;
      pair.reporter = is_a;
      pair.self_index = is_a ? task.a : task.b;
      pair.peer_index = is_a ? task.b : task.a;
      pair.self = plan.endpoints[pair.self_index];
      pair.peer = plan.endpoints[pair.peer_index];
      pair.sysfs_root = options.root;
      MpiChannel channel(session.world(), pair.peer.rank, kTagVerbsBase + task.id, plan.options.timeout_s);
      auto result = verbs::run_pair(pair, channel, memory);
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
    const auto deadline = round_start + std::chrono::milliseconds(static_cast<long>(round_budget(plan, round) * 1000));
    const auto gathered = mpi::gather_to_root(session, json_text(mine), deadline);
    // The round barrier: nobody starts the next round while a peer may still be in this one.
    if (!mpi::broadcast_from_root(session, "next", deadline + std::chrono::seconds(30)))
      throw std::runtime_error(fmt::format("rank 0 did not release round {} in time", round + 2));
    if (!session.is_root()) continue;
    std::vector<PairResult> results;
    for (const auto& part : gathered)
      if (part)
        for (const auto& r : json::parse(*part)) results.push_back(r.get<PairResult>());
    for (const auto& task : plan.tasks) {
      if (task.round != round) continue;
      auto found = std::find_if(results.begin(), results.end(), [&](const PairResult& r) { return r.task == task.id; });
      PairResult r;
      if (found != results.end()) {
        r = *found;
      } else {  // skipped by plan, or its reporting rank never answered
        r.task = task.id;
        r.round = task.round;
        r.a = task.a;
        r.b = task.b;
        r.tests = planned_results(plan.options, task.a, task.b);
        const std::string why = task.skip_reason.empty()
                                    ? fmt::format("rank {} did not report this pair in time", plan.endpoints[task.a].rank)
                                    : task.skip_reason;
        for (auto& t : r.tests) {
          t.status = task.skip_reason.empty() ? "error" : "not_measured";
          t.reason = why;
        }
      }
      progress(fmt::format("{}: round {} of {}: {}", name, round + 1, plan.rounds, describe(section, r)));
      section.pairs.push_back(std::move(r));
    }
    after_round(section);
    if (round + 1 < plan.rounds) {  // long matrices: how much is left, from the rounds so far
      const double done_s = std::chrono::duration<double>(mpi::Clock::now() - phase_start).count();
      progress(fmt::format("{}: {} of {} rounds in {:.0f} s, about {:.0f} s left", name, round + 1, plan.rounds, done_s,
                           done_s / (round + 1) * (plan.rounds - round - 1)));
    }
  }
  if (session.is_root()) outcome.findings = check_verbs(section, cluster, profile);
  return outcome;
}

}  // namespace fabricproof::app
