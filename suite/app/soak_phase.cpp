#include "app/soak_phase.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "app/collectives_phase.hpp"
#include "core/units.hpp"
#include "mpi/exchange.hpp"
#include "mpi/messages.hpp"
#include "report/report.hpp"
#include "soak/port_sampler.hpp"
#include "soak/soak_rules.hpp"
#if FABRICPROOF_HAVE_VERBS
#include "app/verbs_phase.hpp"
#include "verbs/memory.hpp"
#endif
#if FABRICPROOF_HAVE_VERBS && FABRICPROOF_HAVE_CUDA
#include "app/gpudirect_phase.hpp"
#endif
#if FABRICPROOF_HAVE_CUDA
#include "inventory/cuda_probe.hpp"
#endif

namespace fabricproof::app {

FABRICPROOF_JSON(SoakLoadPlan, verbs_not_run, collective_not_run, gpudirect_not_run)

namespace {

using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point zero) { return std::chrono::duration<double>(SteadyClock::now() - zero).count(); }

// The collective of a pass: allreduce at one large size on every node (the sweep's top size, at
// most 1 GiB unless --max-bytes says), out of place only.
RunOptions collective_options(const RunOptions& given, const Profile& profile) {
  RunOptions o = given;
  auto& c = o.collectives;
  const uint64_t top = c.max_bytes_given ? c.max_bytes : std::min<uint64_t>(profile.collectives.max_bytes.value_or(c.max_bytes), 1ull << 30);
  c.min_bytes = c.max_bytes = top;
  c.max_bytes_given = true;
  c.ops = {"allreduce"};
  c.in_place = false;
  c.mode = "scaling";
  c.all_nodes_only = true;
  return o;
}

// The load in words, for the report and the first progress line.
std::string describe_load(const RunOptions& options, const Profile& profile, const SoakLoadPlan& plan) {
  std::string load;
  if (!plan.verbs_not_run)
    load = fmt::format("verbs matrix ({} mode), write_bw both ways on every rail, {} s per direction", options.verbs.mode, options.verbs.duration_s);
  if (!plan.gpudirect_not_run) load += "; the same on GPU memory (GPUDirect)";
  if (!plan.collective_not_run)
    load += fmt::format("{}allreduce of {} on every node", load.empty() ? "" : "; ",
                        format_size(collective_options(options, profile).collectives.max_bytes));
  return load.empty() ? "none: only the counters are sampled" : load;
}

#if FABRICPROOF_HAVE_VERBS
// The verbs part of a pass: write_bw both ways, nothing measured again, no size curve.
VerbsOptions soak_verbs_options(const RunOptions& options) {
  VerbsOptions verbs = options.verbs;
  verbs.tests = {"write_bw"};
  verbs.remeasure = false;
  verbs.sizes.clear();
  return verbs;
}

void add_verbs_figures(const VerbsSection& v, SoakPass& pass, const std::string& memory = "") {
  for (const auto& p : v.pairs)
    for (const auto& t : p.tests) {
      if (t.test != "write_bw") continue;
      const auto& from = v.endpoints[static_cast<size_t>(t.from)];
      const auto& to = v.endpoints[static_cast<size_t>(t.to)];
      SoakFigure f{fmt::format("{} -> {} write_bw{}", from.label(), to.label(), memory), "verbs", from.device == to.device ? "rail " + from.device : "",
                   {from.host, to.host}, t.status, t.reason, t.gbps.value_or(0), "Gb/s"};
      if (f.status == Status::ok && !t.gbps) f = {f.what, f.kind, f.rail, f.hosts, Status::error, "no figure", 0, f.unit};
      pass.figures.push_back(std::move(f));
    }
}
#endif

void add_collective_figures(const CollectivesSection& c, SoakPass& pass) {
  for (const auto& r : c.results) {
    const CollRow* row = r.rows.empty() ? nullptr : &r.rows.back();
    SoakFigure f{fmt::format("{} {} on {} node(s)", r.engine, r.op, r.nodes), "collective", "", r.hosts, r.status, r.reason, 0, "GB/s"};
    if (row) f.value = row->out_of_place.busbw_GBps;
    if (f.status == Status::ok && !row) f.status = Status::error, f.reason = "no row measured";
    if (row && row->out_of_place.wrong > 0) f.status = Status::error, f.reason = fmt::format("{} element(s) wrong", row->out_of_place.wrong);
    pass.figures.push_back(std::move(f));
  }
}

// One pass of the load on every rank; its figures on rank 0. Nothing to run: the pass waits one
// interval (or what is left), so that the counters are still sampled.
SoakPass run_pass(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster, const Profile& profile,
                  const SoakLoadPlan& plan, int index, SteadyClock::time_point zero) {
  SoakPass pass{index, seconds_since(zero), 0, {}};
  // The step in flight (report.json's in_flight): how far the soak is, should it be cut short here.
  const auto where = fmt::format("pass {} at {} of {}", index, format_soak_time(pass.start_s), format_soak_time(options.soak.duration_s));
  const auto quiet = [](const std::string&) {};  // a day of soak prints one line a pass, not every pair
#if FABRICPROOF_HAVE_VERBS
  if (!plan.verbs_not_run) {
    session.set_step("soak", where + ": verbs matrix");
    const VerbsOptions verbs = soak_verbs_options(options);
    verbs::HostMemoryProvider memory;
    const auto got = run_verbs_matrix(options, session, cluster, profile, MatrixRun{verbs, memory, nullptr, "soak", quiet, [](const VerbsSection&) {}});
    if (session.is_root()) add_verbs_figures(got.section, pass);
  }
#endif
#if FABRICPROOF_HAVE_VERBS && FABRICPROOF_HAVE_CUDA
  if (!plan.gpudirect_not_run) {
    session.set_step("soak", where + ": verbs matrix on GPU memory");
    const auto got = run_gpu_memory_matrix(options, session, cluster, profile, soak_verbs_options(options), "soak", quiet);
    if (session.is_root()) add_verbs_figures(got.section, pass, " (GPU memory)");
  }
#endif
  if (!plan.collective_not_run) {
    session.set_step("soak", where + ": allreduce");
    const auto got = run_collectives_phase(collective_options(options, profile), session, cluster, profile, quiet,
                                           [](const CollectivesSection&, bool) {});
    if (session.is_root()) add_collective_figures(got.section, pass);
  }
  if ((plan.verbs_not_run || !FABRICPROOF_HAVE_VERBS) && plan.collective_not_run) {
    session.set_step("soak", where + ": no load, sampling the counters");
    const double left = options.soak.duration_s - seconds_since(zero);
    std::this_thread::sleep_for(std::chrono::duration<double>(std::clamp(std::min(options.soak.interval_s, left), 0.0, 3600.0)));
  }
  pass.end_s = seconds_since(zero);
  return pass;
}



// The ports whose link went down so far, for the progress lines: kept as the samples arrive (the
// rules read the whole time line once, at the end; a day of samples is too many to reread a pass).
struct LinkWatch {
  std::map<std::string, uint64_t> last;  // "host device:port counter" -> value
  std::vector<std::string> downs;        // "node2/rxe0:1 at 0:30", the first time each port was seen down
  std::set<std::string> ports_down;

  void add(const std::vector<NodeSample>& samples) {
    for (const auto& s : samples)
      for (const auto& p : s.ports) {
        bool down = p.state != "ACTIVE";
        for (const auto& [counter, value] : p.counters) {
          if (!is_link_down_counter(counter)) continue;
          const auto [known, fresh] = last.try_emplace(fmt::format("{} {}:{} {}", s.host, p.device, p.port, counter), value);
          down |= !fresh && value > known->second;
          known->second = value;
        }
        const auto port = fmt::format("{}/{}:{}", s.host, p.device, p.port);
        if (down && ports_down.insert(port).second) downs.push_back(port + " at " + format_soak_time(s.t_s));
      }
  }
};

// The samples every node took since the last call reach rank 0 (and its link watch).
void collect_samples(const RunOptions& options, mpi::Session& session, probe::PortSampler* sampler, SoakSection& section, LinkWatch& links) {
  const std::vector<NodeSample> mine = sampler ? sampler->take() : std::vector<NodeSample>{};
  const auto gathered = mpi::gather_message(session, mine, mpi::deadline_in(options.timeout_s), "soak: the counter samples");
  gathered.require_all(session, "soak: the counter samples");
  if (!session.is_root()) return;
  for (const auto& part : gathered.parts)
    if (part) {
      links.add(*part);
      section.samples.insert(section.samples.end(), part->begin(), part->end());
    }
}

// "soak: pass 3 done at 0:42, 0:18 left: 12 figure(s), 1 failed (node2/rxe0 -> node1/rxe0 write_bw: ...); link down: node2/rxe0:1 at 0:30"
std::string pass_line(const SoakSection& section, const SoakPass& pass, const LinkWatch& links) {
  size_t failed = 0;
  std::string first_failure;
  for (const auto& f : pass.figures)
    if (f.status != Status::ok && failed++ == 0) first_failure = fmt::format(" ({}: {})", f.what, f.reason);
  constexpr size_t kShown = 8;
  const std::vector<std::string> shown(links.downs.begin(), links.downs.begin() + static_cast<long>(std::min(kShown, links.downs.size())));
  return fmt::format("soak: pass {} done at {}, {} left: {} figure(s), {} failed{}{}", pass.index, format_soak_time(pass.end_s),
                     format_soak_time(std::max(0.0, section.duration_s - pass.end_s)), pass.figures.size(), failed, first_failure,
                     links.downs.empty() ? "" : fmt::format("; link down: {}{}", fmt::join(shown, ", "), links.downs.size() > kShown ? ", ..." : ""));
}

// The boards whose memory the inventory read, by host (their PCI addresses, in the inventory's
// order): what each node reads again when the soak ends.
using GpuBoards = std::map<std::string, std::vector<std::string>>;

// A CUDA-visible board whose memory the inventory read: the soak compares only those.
bool read_before_the_soak(const GpuFacts& g) { return g.index && memory_health_read(g.memory_health); }

GpuBoards boards_read(const ClusterFacts& cluster) {
  GpuBoards out;
  for (const auto& n : cluster.nodes)
    for (const auto& g : n.gpus)
      if (read_before_the_soak(g)) out[n.host].push_back(g.pci);
  return out;
}

// A node's reading at the end: local rank 0 reads, the other ranks send none.
struct GpuMemoryReading {
  std::string host;
  bool reader = false;
  std::vector<GpuMemoryHealth> health;  // in the order of the node's boards
};
FABRICPROOF_JSON(GpuMemoryReading, host, reader, health)

// Every GPU board's memory read again (NVML) on its node, beside the inventory's read: what the
// load wore (soak_gpu_memory). Rank 0 gets the list; a board whose node sent nothing says so.
std::vector<SoakGpuMemory> read_gpu_memory_again(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster) {
  session.set_step("soak", "reading the GPUs' memory health again");
  const auto boards = mpi::broadcast_message(session, session.is_root() ? boards_read(cluster) : GpuBoards{},
                                             mpi::deadline_in(options.timeout_s), "soak: the GPUs to read again");
  GpuMemoryReading mine{session.host(), session.local_rank() == 0, {}};
#if FABRICPROOF_HAVE_CUDA
  if (const auto it = boards.find(mine.host); mine.reader && it != boards.end()) mine.health = gpu::read_memory_health(it->second);
#endif
  const auto gathered = mpi::gather_message(session, mine, mpi::deadline_in(options.timeout_s), "soak: the GPUs' memory health");
  gathered.require_all(session, "soak: the GPUs' memory health");
  if (!session.is_root()) return {};
  std::map<std::string, std::vector<GpuMemoryHealth>> read;
  for (const auto& part : gathered.parts)
    if (part && part->reader) read[part->host] = part->health;
  std::vector<SoakGpuMemory> out;
  for (const auto& n : cluster.nodes) {
    const auto& got = read[n.host];
    size_t board = 0;  // the position in boards_read's list for this node
    for (const auto& g : n.gpus) {
      if (!read_before_the_soak(g)) continue;
      SoakGpuMemory m{n.host, *g.index, g.pci, g.uuid, g.memory_health, {}};
      if (board < got.size()) m.after = got[board];
      else m.after.unread = "the node sent no reading of its GPUs' memory at the soak's end";
      ++board;
      out.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace

SoakPhaseOutcome run_soak_phase(const RunOptions& options, mpi::Session& session, const ClusterFacts& cluster, const Profile& profile,
                                const SoakLoadPlan& load, const std::function<void(const std::string&)>& progress,
                                const std::function<void(const SoakSection&)>& after_pass) {
  const auto plan = mpi::broadcast_message(session, load, mpi::deadline_in(options.timeout_s), "soak: the load");
  session.set_step("soak", "starting the counter samplers");
  // The collectives' steps are the soak's until this phase ends, by return or exception (a lost
  // rank's step is read before: end_lost names the soak).
  struct OuterPhase {
    mpi::Session& session;
    ~OuterPhase() { session.set_outer_phase(""); }
  } outer{session};
  session.set_outer_phase("soak");
  mpi::broadcast_from_root(session, "start", mpi::deadline_in(options.timeout_s), "soak: the start");
  const auto zero = SteadyClock::now();
  const std::string started_at = utc_timestamp();
  std::unique_ptr<probe::PortSampler> sampler;  // one per node
  if (session.local_rank() == 0) sampler = std::make_unique<probe::PortSampler>(options.root, session.host(), options.soak.interval_s, zero);
  SoakPhaseOutcome outcome;
  auto& section = outcome.section;
  section.duration_s = options.soak.duration_s;
  section.interval_s = options.soak.interval_s;
  section.started_at = started_at;
  section.load = describe_load(options, profile, plan);
  for (const auto& n : cluster.nodes)
    if (!n.gpus.empty()) section.gpu_hosts.push_back(n.host);
  for (const auto& why : {plan.verbs_not_run, plan.collective_not_run, plan.gpudirect_not_run})
    if (why && !why->empty()) section.load_not_run.push_back(*why);
  progress(fmt::format("soak: {} with counters sampled every {}; load: {}", format_soak_time(section.duration_s), format_soak_time(section.interval_s),
                       section.load));
  double last_said_s = 0;
  LinkWatch links;
  for (int index = 1;; ++index) {
    const bool go = mpi::broadcast_message(session, seconds_since(zero) < options.soak.duration_s, mpi::deadline_in(options.timeout_s),
                                           fmt::format("soak: the start of pass {}", index));
    if (!go) break;
    const auto pass = run_pass(options, session, cluster, profile, plan, index, zero);
    collect_samples(options, session, sampler.get(), section, links);
    if (!session.is_root()) continue;
    section.passes.push_back(pass);
    section.ran_s = pass.end_s;
    // The report and a progress line at most once an interval: short passes (a small cluster's
    // collective) would otherwise rewrite the report many times a second.
    if (pass.end_s - last_said_s < options.soak.interval_s && index > 1) continue;
    last_said_s = pass.end_s;
    after_pass(section);
    progress(pass_line(section, pass, links));
  }
  if (sampler) sampler->stop();
  collect_samples(options, session, sampler.get(), section, links);
  section.gpu_memory = read_gpu_memory_again(options, session, cluster);
  if (!session.is_root()) return outcome;
  section.ran_s = seconds_since(zero);
  section.finished = true;
  outcome.findings = check_soak(section, profile);
  outcome.summary = fmt::format("{} pass(es) in {}, {} counter sample(s)", section.passes.size(), format_soak_time(section.ran_s), section.samples.size());
  return outcome;
}

}  // namespace fabricproof::app
