#include "app/collectives_phase.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "app/build_info.hpp"
#include "app/collectives_locate.hpp"
#include "collectives/sweep.hpp"
#include "collectives/collective_rules.hpp"
#include "core/text_file.hpp"
#include "nccl_log/debug_file.hpp"
#include "mpi/exchange.hpp"
#include "mpi/messages.hpp"
#include "report/report.hpp"
#if FABRICPROOF_HAVE_NCCL
#include "collectives/nccl_engine.hpp"
#endif

namespace fabricproof::app {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// What rank 0 decides and every rank needs: the engine, the groups, each rank's GPU.
struct CollectivesPlan {
  std::string engine;
  std::string mode;                  // scaling | locate (SweepOptions::mode, resolved)
  std::vector<CollGroup> groups;     // scaling: 1, 2, 4 ... nodes
  std::vector<std::string> locate_nodes;  // locate: the nodes (or ranks standing for them)
  std::vector<int> node_of_rank;     // locate: per world rank, its index in locate_nodes
  std::vector<int> devices;          // CUDA ordinal per world rank (-1: none)
  std::vector<int> device_sharers;   // ranks of the node on the same device, per world rank
  std::vector<int> node_ranks;       // ranks on the same node, per world rank
};
FABRICPROOF_JSON(CollectivesPlan, engine, mode, groups, locate_nodes, node_of_rank, devices, device_sharers, node_ranks)

// --collective-mode locate's nodes: the hosts in the order of their lowest rank, or each rank its
// own node (--locate-ranks-as-nodes, a testing aid). Decides "auto" by their count.
void plan_locate(CollectivesPlan& plan, const SweepOptions& o, const std::vector<const NodeFacts*>& nodes, int world_size) {
  plan.node_of_rank.assign(static_cast<size_t>(world_size), -1);
  if (o.ranks_as_nodes) {
    for (int r = 0; r < world_size; ++r) {
      plan.locate_nodes.push_back(fmt::format("rank{}", r));
      plan.node_of_rank[static_cast<size_t>(r)] = r;
    }
  } else {
    for (const auto* n : nodes) {
      for (const auto& r : n->ranks)
        if (r.rank >= 0 && r.rank < world_size) plan.node_of_rank[static_cast<size_t>(r.rank)] = static_cast<int>(plan.locate_nodes.size());
      plan.locate_nodes.push_back(n->host);
    }
  }
  plan.mode = o.mode != "auto" ? o.mode : static_cast<int>(plan.locate_nodes.size()) > kCollectiveLocateAbove ? "locate" : "scaling";
  if (plan.mode != "locate") {
    plan.locate_nodes.clear();
    plan.node_of_rank.clear();
  }
}

CollectivesPlan make_collectives_plan(const std::string& engine, const SweepOptions& o, const ClusterFacts& cluster, int world_size) {
  CollectivesPlan plan;
  plan.engine = engine;
  plan.devices.assign(static_cast<size_t>(world_size), -1);
  plan.device_sharers.assign(static_cast<size_t>(world_size), 1);
  plan.node_ranks.assign(static_cast<size_t>(world_size), 1);
  std::vector<std::pair<int, const NodeFacts*>> order;  // nodes in the order of their lowest rank
  for (const auto& n : cluster.nodes) {
    int lowest = INT_MAX;
    for (const auto& r : n.ranks) {
      lowest = std::min(lowest, r.rank);
      if (r.rank < 0 || r.rank >= world_size) continue;
      plan.devices[static_cast<size_t>(r.rank)] = r.gpu.value_or(-1);
      plan.node_ranks[static_cast<size_t>(r.rank)] = static_cast<int>(n.ranks.size());
      plan.device_sharers[static_cast<size_t>(r.rank)] = static_cast<int>(
          std::count_if(n.ranks.begin(), n.ranks.end(), [&](const RankFacts& o) { return o.gpu == r.gpu; }));
    }
    if (!n.ranks.empty()) order.emplace_back(lowest, &n);
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<const NodeFacts*> nodes;
  for (const auto& [lowest, node] : order) nodes.push_back(node);
  plan_locate(plan, o, nodes, world_size);
  if (plan.mode == "locate") return plan;
  for (int count : scaling_node_counts(static_cast<int>(order.size()))) {
    CollGroup g;
    g.nodes = count;
    for (int i = 0; i < count; ++i) {
      g.hosts.push_back(order[static_cast<size_t>(i)].second->host);
      for (const auto& r : order[static_cast<size_t>(i)].second->ranks) g.ranks.push_back(r.rank);
    }
    std::sort(g.ranks.begin(), g.ranks.end());
    plan.groups.push_back(g);
  }
  if (o.all_nodes_only && plan.groups.size() > 1) plan.groups.erase(plan.groups.begin(), plan.groups.end() - 1);
  return plan;
}

// NCCL_DEBUG output goes to one file per rank, unless the user chose otherwise: what NCCL prints
// about transports is what the nccl_audit phase judges. Without NCCL_DEBUG_FILE the file goes to
// a private directory of this rank (mkdtemp, mode 0700: never a fixed name in a shared temp
// directory) that is removed once rank 0 has the logs; they are kept in the report directory.
struct NcclLog {
  std::string path;         // the file NCCL writes, as NCCL expands the name
  std::string private_dir;  // "" when the user set NCCL_DEBUG_FILE
};

NcclLog prepare_nccl_environment(const SweepOptions& o) {
  setenv("NCCL_DEBUG", "INFO", 0);
  setenv("NCCL_DEBUG_SUBSYS", "INIT,NET,GRAPH", 0);
  if (o.ring) setenv("NCCL_ALGO", "Ring", 0);
  NcclLog log;
  if (!std::getenv("NCCL_DEBUG_FILE")) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = fmt::format("{}/fabricproof-nccl-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(pattern.data())) {
      log.private_dir = pattern;
      setenv("NCCL_DEBUG_FILE", (pattern + "/%h.%p.log").c_str(), 1);
    }
  }
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  if (const char* file = std::getenv("NCCL_DEBUG_FILE")) log.path = nccl::expand_debug_file_name(file, host, getpid());
  return log;
}


std::unique_ptr<collectives::Engine> make_engine(const CollectivesPlan& plan, const SweepOptions& o, mpi::Session& session, MPI_Comm group,
                                                 uint64_t max_bytes) {
#if FABRICPROOF_HAVE_NCCL
  if (plan.engine == "nccl")
    return collectives::make_nccl_engine(session, group, plan.devices[static_cast<size_t>(session.rank())], max_bytes, o.timeout_s,
                                         {o.nccl_comm, o.gpu_buffers});
#endif
  return collectives::make_mpi_engine(session, group, max_bytes, o.timeout_s);
}

collectives::Usable usable_memory(const CollectivesPlan& plan, int rank) {
#if FABRICPROOF_HAVE_NCCL
  if (plan.engine == "nccl")
    return collectives::usable_gpu_memory(plan.devices[static_cast<size_t>(rank)], plan.device_sharers[static_cast<size_t>(rank)]);
#endif
  return collectives::usable_host_memory(plan.node_ranks[static_cast<size_t>(rank)]);
}

// The longest a group may take before the waiting ranks give up on it: every wait of every size
// and form at its deadline (the MPI engine's blocking calls have none of their own).
double group_budget_s(const SweepOptions& o, size_t sizes) {
  return static_cast<double>(o.ops.size() * sizes * 2 * 3) * o.timeout_s + 60;
}

}  // namespace

EngineChoice choose_collective_engine(const SweepOptions& options, const ClusterFacts& cluster) {
  if (!cluster.missing_ranks.empty()) return {"", fmt::format("{} rank(s) did not answer the inventory", cluster.missing_ranks.size())};
  std::optional<std::string> why_not_nccl;
  for (const auto& n : cluster.nodes) {
    for (const auto& r : n.ranks)
      if (!r.gpu && !why_not_nccl) why_not_nccl = fmt::format("rank {} on {} has no GPU", r.rank, n.host);
    // NCCL is opened at run time: a node where it did not open (inventory: no NCCL version) has none.
    if (n.software.nccl.empty() && !why_not_nccl) why_not_nccl = fmt::format("{} has no loadable NCCL (libnccl.so.2)", n.host);
  }
  if (!FABRICPROOF_HAVE_NCCL && !why_not_nccl) why_not_nccl = "built without NCCL (FABRICPROOF_WITH_NCCL)";
  if (options.engine == "mpi") return {"mpi", std::nullopt};
  if (options.engine == "nccl") return why_not_nccl ? EngineChoice{"", "--collective-engine nccl: " + *why_not_nccl} : EngineChoice{"nccl", std::nullopt};
  if (!why_not_nccl) return {"nccl", std::nullopt};
  // auto, NCCL unable to run: MPI in its place would measure the host network and pass a GPU
  // cluster whose NCCL is broken. Only a cluster without GPUs, or a spec that waives NCCL, gets it.
  const bool gpus = std::any_of(cluster.nodes.begin(), cluster.nodes.end(), [](const NodeFacts& n) { return cuda_gpu_count(n) > 0; });
  const bool must_be_nccl = options.nccl_required.value_or(gpus);
  if (!must_be_nccl) return {"mpi", std::nullopt};
  return {"", fmt::format("NCCL cannot run: {}; {}, so MPI would not measure them in its place (--collective-engine mpi measures "
                          "the host network only{})",
                          *why_not_nccl, options.nccl_required.value_or(false) ? "the cluster spec requires NCCL" : "the nodes have GPUs",
                          options.nccl_required.value_or(false) ? ", and the spec still fails" : "")};
}

namespace {

// The sizes of the sweep: the top size is what the tightest rank can hold in two buffers (send
// and receive), what one call can take, and what the profile allows.
struct SweepSizes {
  uint64_t requested = 0;
  SizeClip clip;
  std::vector<uint64_t> sizes;
};

SweepSizes size_the_sweep(const RunOptions& options, mpi::Session& session, const Profile& profile, const CollectivesPlan& plan) {
  const auto& o = options.collectives;
  const auto usable = usable_memory(plan, session.rank());
  const uint64_t least =
      mpi::allreduce(session, session.world(), usable.bytes, MPI_MIN, mpi::deadline_in(options.timeout_s), "the memory each rank can use");
  // MPI counts are int (the engine splits whole-buffer calls; per-rank counts bound the others);
  // NCCL counts are size_t.
  uint64_t call_limit = UINT64_MAX;
  if (plan.engine == "mpi")
    for (const auto& name : o.ops)
      for (const auto& g : plan.groups)
        call_limit = std::min(call_limit, max_call_bytes(*coll_op_from(name), *data_type_from(o.dtype), static_cast<int>(g.ranks.size()), INT_MAX));
  // Without --max-bytes the profile may bound the sweep (the lab's does: TCP between TCG VMs).
  const bool profile_bound = !o.max_bytes_given && profile.collectives.max_bytes && *profile.collectives.max_bytes < o.max_bytes;
  SweepSizes out;
  out.requested = profile_bound ? std::max(*profile.collectives.max_bytes, o.min_bytes) : o.max_bytes;
  out.clip = clip_max_bytes(o.min_bytes, out.requested, o.factor, least, 2, call_limit, usable.why);
  if (profile_bound && out.clip.reason.empty())
    out.clip.reason = fmt::format("the profile's collectives.max_bytes ({} bytes) bounds the sweep; --max-bytes overrides it", out.requested);
  out.sizes = sweep_sizes(o.min_bytes, out.clip.max_bytes, o.factor);
  if (out.sizes.empty()) throw std::runtime_error(fmt::format("no size of the sweep fits: {}", out.clip.reason));
  return out;
}

// Every rank's NCCL_DEBUG log, kept next to the report (rank 0); a missing one is named.
void gather_nccl_logs(const RunOptions& options, mpi::Session& session, const NcclLog& nccl_log, CollectivesOutcome& outcome) {
  session.set_step("collectives", "gathering the NCCL logs");
  // A log beyond 256 MiB is not shipped to rank 0: named as unread rather than filling its memory.
  std::optional<std::string> text;
  const auto failed = failure_of([&] { text = read_regular_file(nccl_log.path, 256u << 20); });
  const mpi::NcclLogMessage mine{nccl_log.path, text.has_value(), failed.value_or(""), text.value_or("")};
  const auto logs = mpi::gather_message(session, mine, mpi::deadline_in(options.timeout_s), "gathering the NCCL logs");
  logs.require_all(session, "gathering the NCCL logs");
  if (!nccl_log.private_dir.empty()) fs::remove_all(nccl_log.private_dir);
  if (!session.is_root()) return;
  const auto dir = fs::path(options.out_dir) / "nccl-logs";
  fs::create_directories(dir);
  for (size_t rank = 0; rank < logs.parts.size(); ++rank) {
    if (!logs.parts[rank]) {
      outcome.nccl_logs_missing.push_back(fmt::format("rank {}: its NCCL log did not read back", rank));
      continue;
    }
    const auto& part = *logs.parts[rank];
    if (!part.found) {
      outcome.nccl_logs_missing.push_back(part.error.empty() ? fmt::format("rank {}: NCCL log file {} not found (NCCL_DEBUG_FILE)", rank, part.path)
                                                             : fmt::format("rank {}: NCCL log file {}: {}", rank, part.path, part.error));
      continue;
    }
    const auto path = (dir / fmt::format("rank-{}.log", rank)).string();
    if (const auto failed = failure_of([&] { write_file_atomic(path, part.text); }))
      outcome.nccl_logs_missing.push_back(fmt::format("rank {}: its NCCL log could not be kept: {}", rank, *failed));
    else
      outcome.nccl_logs.push_back(path);
  }
}

// The phase as it goes: the sweeps done (rank 0 keeps them: every group starts at its node), the
// one running, and the section the report shows at each write.
struct PhaseState {
  const CollectivesPlan& plan;
  const SweepOptions& o;
  const SweepSizes& sizes;
  const ClusterFacts& cluster;
  const Profile& profile;
  const std::function<void(const std::string&)>& progress;
  const std::function<void(const CollectivesSection&, bool group_done)>& after_group;
  CollectivesOutcome outcome;
  std::vector<CollResult> results;
  std::optional<CollLocate> locate;
  const CollResult* running = nullptr;
  size_t sweeps_done = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  CollectivesSection section() const {
    CollectivesSection c{plan.engine, o, {sizes.requested, sizes.clip.max_bytes, sizes.clip.reason}, plan.groups, results,
                         scaling_table(results, cluster, profile), outcome.nccl_logs, outcome.nccl_logs_missing, locate};
    c.options.mode = plan.mode;
    if (running) c.results.push_back(*running);
    return c;
  }

  // --collective-mode locate: the rounds of group tests that name the slow node(s).
  void run_locate(mpi::Session& session) {
    const CollLocateRun run{o, plan.locate_nodes, plan.node_of_rank, sizes.sizes.back(),
                            [&](MPI_Comm comm) { return make_engine(plan, o, session, comm, sizes.clip.max_bytes); }, progress,
                            [&](const CollLocate& so_far) {
                              locate = so_far;
                              after_group(section(), true);
                            }};
    locate = run_collective_locate(session, run);
  }

  // The sweeps, group by group (1, 2, 4 ... nodes); ranks outside a group wait for the next.
  void run_groups(mpi::Session& session) {
    for (const auto& group : plan.groups) {
      const bool member = std::binary_search(group.ranks.begin(), group.ranks.end(), session.rank());
      const auto group_name = fmt::format("{} node(s), {} rank(s)", group.nodes, group.ranks.size());
      session.set_step("collectives", "forming the group of " + group_name);
      MPI_Comm comm = mpi::split(session, session.world(), member, mpi::deadline_in(o.timeout_s), "the group of " + group_name);
      if (member) {
        auto engine = make_engine(plan, o, session, comm, sizes.clip.max_bytes);
        for (const auto& name : o.ops) sweep(session, *engine, comm, group, name, group_name);
        engine.reset();  // the NCCL communicator ends before the group's MPI communicator
        mpi::free_group(comm);
      }
      // Ranks outside the group wait here (yielding the CPU) until rank 0 releases the next group.
      session.set_step("collectives", "waiting for the group of " + group_name);
      mpi::broadcast_from_root(session, "next", mpi::deadline_in(group_budget_s(o, sizes.sizes.size())), "the end of the group of " + group_name);
      if (session.is_root()) after_group(section(), true);
    }
  }

  // Time left after each sweep, from the mean sweep so far (rank 0 is in every group). Larger
  // groups run a little longer per sweep, so the estimate is low early on; it says "about".
  void say_time_left() {
    const size_t total = plan.groups.size() * o.ops.size();
    if (++sweeps_done >= total) return;
    const double done_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    progress(fmt::format("collectives: {} of {} sweeps in {:.0f} s, about {:.0f} s left", sweeps_done, total, done_s,
                         done_s / static_cast<double>(sweeps_done) * static_cast<double>(total - sweeps_done)));
  }

  // One op on one group. A lost rank abandons the engine (no finalize on a communicator whose peer
  // is gone); the rows before it stay in the report.
  void sweep(mpi::Session& session, collectives::Engine& engine, MPI_Comm comm, const CollGroup& group, const std::string& name,
             const std::string& group_name) {
    collectives::SweepPlan plan_of_op{*coll_op_from(name), *data_type_from(o.dtype), *reduce_op_from(o.redop), sizes.sizes, o.iters, o.warmup,
                                      o.in_place, o.timeout_s, o.time_stat, fmt::format("{} on {}", name, group_name)};
    session.set_step("collectives", plan_of_op.label);
    progress(fmt::format("collectives: {} ({}) on {}, {} {}", name, plan.engine, group_name, o.dtype, reduces(plan_of_op.op) ? o.redop : ""));
    progress(coll_header_line());
    CollResult result;
    result.nodes = group.nodes;
    result.hosts = group.hosts;
    running = &result;
    auto row_done = [&](const CollRow& row) {
      progress(coll_row_line(row));
      after_group(section(), false);
    };
    try {
      collectives::run_sweep(session, engine, comm, plan_of_op, result, row_done);
    } catch (const mpi::Lost&) {
      engine.abandon();
      running = nullptr;
      if (session.is_root()) {
        result.status = Status::error;
        result.reason = "a rank of the group stopped answering";
        results.push_back(std::move(result));
        after_group(section(), true);
      }
      throw;
    }
    running = nullptr;
    if (result.status != Status::ok) progress(fmt::format("collectives: {} stopped: {}", name, result.reason));
    results.push_back(std::move(result));
    say_time_left();
  }
};

}  // namespace

CollectivesOutcome run_collectives_phase(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster,
                                         const Profile& profile, const std::function<void(const std::string&)>& progress,
                                         const std::function<void(const CollectivesSection&, bool group_done)>& after_group) {
  const auto& o = options.collectives;
  CollectivesPlan mine;
  if (session.is_root()) mine = make_collectives_plan(choose_collective_engine(o, cluster).engine, o, cluster, session.size());
  const auto plan = mpi::broadcast_message(session, mine, mpi::deadline_in(options.timeout_s), "the collectives plan");
  const SweepSizes sizes = size_the_sweep(options, session, profile, plan);
  const NcclLog nccl_log = plan.engine == "nccl" ? prepare_nccl_environment(o) : NcclLog{};
  PhaseState state{plan, o, sizes, cluster, profile, progress, after_group, {}, {}, {}, nullptr, 0, std::chrono::steady_clock::now()};
  if (!sizes.clip.reason.empty()) progress("collectives: " + sizes.clip.reason);
  // Both engines' calls block (under the watchdog) from here to the phase's end: a rank silent to
  // the roll call may be blocked in one, not lost (app/run.cpp, end_lost).
  mpi::with_blocking_calls(session, std::chrono::duration_cast<mpi::Clock::duration>(std::chrono::duration<double>(o.timeout_s)), [&] {
    if (plan.mode == "locate") state.run_locate(session);
    state.run_groups(session);
  });
  if (plan.engine == "nccl") gather_nccl_logs(options, session, nccl_log, state.outcome);
  if (!session.is_root()) return state.outcome;
  auto& outcome = state.outcome;
  outcome.findings = check_collectives(state.results, cluster, profile);
  if (state.locate) {
    const auto located = check_collective_locate(*state.locate);
    outcome.findings.insert(outcome.findings.end(), located.begin(), located.end());
  }
  outcome.section = state.section();
  outcome.summary = state.locate ? fmt::format("{} engine, locate: {} round(s), {} group test(s) of {} bytes, {} node(s) named", plan.engine,
                                               state.locate->rounds, state.locate->tests.size(), state.locate->bytes, state.locate->faults.size())
                                 : fmt::format("{} engine, {} sweep(s) over {} group(s), sizes {}..{} bytes", plan.engine, state.results.size(),
                                               plan.groups.size(), sizes.sizes.front(), sizes.sizes.back());
  return outcome;
}

}  // namespace fabricproof::app
