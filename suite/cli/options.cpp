#include "cli/options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#include "core/units.hpp"
#include "report/formats.hpp"

namespace fabricproof {
namespace {

// CLI11's Range lets NaN through (every comparison with it is false): each real-valued option is
// checked to be finite first, so `--collective-timeout nan` is an error, not a run without a deadline.
const CLI::Validator kFinite(
    [](std::string& text) {
      double value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return "'" + text + "' is not a finite number";
      return std::string();
    },
    "FINITE");

constexpr double kDay = 86400;  // the longest any timeout may be: beyond it a deadline means nothing
constexpr uint64_t kMaxVerbsBytes = 1ull << 30;    // one RDMA message (ibv_sge.length is 32 bits; ports allow <= 2^31)
constexpr uint64_t kMaxLatencyBytes = 2048;        // the latency test's buffer half (verbs/pair.cpp)
constexpr uint64_t kMaxVerbsBuffer = 64ull << 30;  // what one endpoint registers: 5 x tx depth x size
constexpr uint64_t kMaxSweepBytes = 1ull << 40;    // the sweep's top size before the memory clip
// The project's version, from CMake's project(): one place for --version and the man page.
constexpr const char* kVersionText = "fabricproof " FABRICPROOF_VERSION;

std::string find_out_dir(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--out" || arg == "-o") && i + 1 < argc) return argv[i + 1];
    if (arg.rfind("--out=", 0) == 0) return arg.substr(6);
  }
  return "";
}

std::vector<std::string> split_phases(const std::vector<std::string>& items) {
  std::vector<std::string> phases;
  for (const auto& item : items) {
    std::stringstream in(item);
    for (std::string p; std::getline(in, p, ',');)
      if (!p.empty()) phases.push_back(p == "nccl-audit" ? "nccl_audit" : p);
  }
  return phases;
}

// A bad value found after parsing: the message the user sees (exit 2).
struct Invalid {
  std::string message;
};
Invalid invalid(const std::string& what) { return {"command line: " + what}; }

std::string known(const std::vector<std::string>& names) { return fmt::format("known: {}", fmt::join(names, ", ")); }

// "64K" into `into`; nothing given keeps the default.
std::optional<Invalid> parse_size_option(const std::string& text, const char* option, uint64_t& into) {
  if (text.empty()) return std::nullopt;
  auto bytes = parse_size(text);
  if (!bytes || *bytes == 0) return invalid(std::string(option) + ": '" + text + "' is not a size (e.g. 64K, 1M)");
  into = *bytes;
  return std::nullopt;
}

// Every numeric option has a documented bound: a value beyond it is an error, never clamped.
std::optional<Invalid> beyond(const char* option, uint64_t value, uint64_t limit, const std::string& why) {
  if (value <= limit) return std::nullopt;
  return invalid(std::string(option) + ": " + std::to_string(value) + " is more than " + std::to_string(limit) + " (" + why + ")");
}

// --verbs-sizes: "all" (2 B to 8 MiB by powers of 2, as ib_write_bw -a), "MIN:MAX" (MIN, 2 MIN,
// ... up to MAX) or a list ("4K,64K,1M"); ascending, each at most `largest`.
std::optional<Invalid> parse_verbs_sizes(const std::string& text, uint64_t largest, std::vector<uint64_t>& into) {
  if (text.empty()) return std::nullopt;
  const std::string spec = text == "all" ? "2:8M" : text;
  const auto colon = spec.find(':');
  std::vector<std::string> parts;
  if (colon != std::string::npos) parts = {spec.substr(0, colon), spec.substr(colon + 1)};
  else
    for (size_t at = 0; at <= spec.size();) {
      const size_t comma = std::min(spec.find(',', at), spec.size());
      parts.push_back(spec.substr(at, comma - at));
      at = comma + 1;
    }
  std::vector<uint64_t> sizes;
  for (const auto& part : parts) {
    uint64_t bytes = 0;
    if (part.empty() || parse_size_option(part, "--verbs-sizes", bytes))
      return invalid("--verbs-sizes: '" + text + "' is not all, MIN:MAX or a list of sizes (e.g. all, 2:8M, 4K,64K,1M)");
    if (auto e = beyond("--verbs-sizes", bytes, largest, "one RDMA message of at most 1 GiB")) return e;
    sizes.push_back(bytes);
  }
  if (colon != std::string::npos) {
    const uint64_t lowest = sizes[0], highest = sizes[1];
    if (lowest > highest) return invalid("--verbs-sizes: MIN is larger than MAX in '" + text + "'");
    sizes.clear();
    for (uint64_t b = lowest; b <= highest; b *= 2) sizes.push_back(b);
  }
  if (!std::is_sorted(sizes.begin(), sizes.end())) return invalid("--verbs-sizes: the sizes of '" + text + "' are not ascending");
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  into = sizes;
  return std::nullopt;
}

bool has_phase(const RunOptions& run, const char* phase) { return std::find(run.phases.begin(), run.phases.end(), phase) != run.phases.end(); }

// `run`'s own options: output, profile, phases, timeouts.
struct RunCli {
  std::vector<std::string> phases;
  int expect_nodes = 0;

  void add(CLI::App& app, RunOptions& run) {
    app.add_option("-o,--out", run.out_dir, "Directory for the report files (created)")->required();
    app.add_option("--format", run.formats, "Report formats, comma-separated: json, md, html, junit, prom (json,md,html; report.json is always written)")
        ->delimiter(',')->check(CLI::IsMember(kReportFormats));
    app.add_option("-p,--profile", run.profile, "Threshold profile: a built-in name (default, ib-hdr200-4x4, roce-200) or a JSON file");
    app.add_option("--spec", run.spec,
                   "The cluster spec (fabricproof.spec/1: what was ordered); whatever it declares and the run did not measure fails")
        ->check(CLI::ExistingFile);
    app.add_option("--expect-nodes", expect_nodes, "Number of nodes the run must find (judged whatever --phases says)")->check(kFinite & CLI::Range(1, 1000000));
    app.add_option("--phases", phases, "Phases to run, comma-separated: inventory,verbs,gpudirect,collectives,nccl_audit (the default), uplink and soak (on request)")
        ->delimiter(',');
    app.add_option("--timeout", run.timeout_s, "Seconds a gather or broadcast may wait for the slowest rank (120; at most a day)")
        ->check(kFinite & CLI::Range(0.001, kDay));
    app.add_option("--root", run.root, "Filesystem root the inventory reads (a saved sysfs tree; default /)");
    app.add_flag("-q,--quiet", run.quiet, "Print only the final summary");
    app.add_flag("--json-lines", run.json_lines, "Print progress and the summary as one JSON object per line (for log shippers)");
    app.add_flag("--check-cabling", run.check_cabling,
                 "Judge the cabling rail by rail: each port's switch from lldpd (RoCE), HCA i of every node on one leaf, the HCAs "
                 "on a leaf at one PCIe address; a port whose neighbour was not read is not proven");
    app.add_option("--lldp-listen", run.lldp_listen_s,
                   "Where lldpd does not run: seconds to listen for the switches' LLDP frames on each RoCE port's netdev (root; "
                   "31 with --check-cabling, else 0: not at all)")
        ->check(kFinite & CLI::Range(0.0, 600.0));
    // Not checked here: like --nccl-logs, the file may exist only where rank 0 runs.
    app.add_option("--ibnetdiscover", run.ibnetdiscover,
                   "ibnetdiscover's output (its topology file), read by rank 0: each InfiniBand port's switch and switch port, "
                   "found by the HCA's node GUID");
    // Not checked here: the logs may exist only on the launch node; rank 0 reads them (nccl_audit phase).
    app.add_option("--nccl-logs", run.nccl_logs, "NCCL_DEBUG=INFO logs (one per rank or combined) for the nccl_audit phase, read by rank 0");
  }

  std::optional<Invalid> finish(RunOptions& run) const {
    if (expect_nodes > 0) run.expect_nodes = expect_nodes;
    if (!phases.empty()) run.phases = split_phases(phases);
    for (const auto& p : run.phases)
      if (std::find(kKnownPhases.begin(), kKnownPhases.end(), p) == kKnownPhases.end())
        return invalid("--phases: unknown phase '" + p + "' (" + known(kKnownPhases) + ")");
    return std::nullopt;
  }
};

struct VerbsCli {
  std::string bw_size, lat_size, sizes;
  std::vector<std::string> tests;
  int gid_index = -1;
  int tclass = -1;

  void add(CLI::App& run, VerbsOptions& v) {
    const char* group = "RDMA verbs matrix";
    run.add_option("--verbs-size", bw_size, "Message size of the bandwidth tests (64K)")->group(group);
    run.add_option("--verbs-duration", v.duration_s, "Seconds per bandwidth test and direction (2; at most an hour)")->check(kFinite & CLI::Range(0.0, 3600.0))->group(group);
    run.add_option("--verbs-margin", v.margin_s,
                   "Seconds left out at each end of a duration-mode test (default: a quarter of the duration, as perftest's -D)")
        ->check(kFinite & CLI::NonNegativeNumber)->group(group);
    run.add_option("--verbs-tclass", tclass, "Traffic class (IP ToS on RoCE) of the tests' QPs (default: NCCL_IB_TC when set)")
        ->check(kFinite & CLI::Range(0, 255))->group(group);
    run.add_option("--verbs-iterations", v.iterations, "Messages per bandwidth test instead of a duration (at most 10^12)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{1000000000000}))->group(group);
    run.add_option("--verbs-qps", v.qps, "Queue pairs per endpoint (1)")->check(kFinite & CLI::Range(1, 64))->group(group);
    run.add_option("--verbs-tx-depth", v.tx_depth, "Work requests in flight per QP (128)")->check(kFinite & CLI::Range(2, 8192))->group(group);
    run.add_option("--verbs-gid-index", gid_index, "GID index on every port (default: the port's RoCE v2 IPv4 GID)")->check(kFinite & CLI::Range(0, 1023))->group(group);
    run.add_option("--verbs-sizes", sizes,
                   "Also measure RDMA WRITE bandwidth a -> b at these sizes, the curve: all (2 B .. 8 MiB, as ib_write_bw -a), "
                   "MIN:MAX (doubling) or a list")
        ->group(group);
    run.add_option("--verbs-lat-size", lat_size, "Message size of the latency test (2)")->group(group);
    run.add_option("--verbs-lat-iterations", v.lat_iterations, "Round trips of the latency test (1000; at most 10^8)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}))->group(group);
    run.add_option("--verbs-tests", tests, "Tests: " + fmt::format("{}", fmt::join(kVerbsTests, ",")))->delimiter(',')->group(group);
    v.mode = "auto";
    run.add_option("--verbs-mode", v.mode,
                   "rounds (the full matrix, disjoint pairs at once), isolated (one pair at a time), locate (a few rounds that name the "
                   "bad node, port, link or leaf) or auto (locate above 16 nodes, else rounds)")
        ->check(CLI::IsMember({"auto", "rounds", "isolated", "locate"}))->group(group);
    run.add_option("--leaf-map", v.leaf_map,
                   "File of '<host> <leaf>' or '<host> <device> <leaf>' lines, or an ibnetdiscover topology file: the leaf switch "
                   "each HCA hangs from, so that locate tells a leaf's uplinks from its nodes and crosses every leaf-to-leaf path")
        ->check(CLI::ExistingFile)->group(group);
    run.add_flag("--verbs-locate-isolated", v.locate_isolated,
                 "Run each locate round's pairs one at a time (as --verbs-mode isolated), where the hosts cannot run pairs side by side")
        ->group(group);
    run.add_option("--verbs-rails", v.rails, "matched (mlx5_0 <-> mlx5_0) or all (every HCA with every remote HCA)")->check(CLI::IsMember({"matched", "all"}))->group(group);
    v.remeasure = true;
    run.add_flag("--verbs-remeasure,!--no-verbs-remeasure", v.remeasure,
                 "Run a round whose pair broke a rule once more before judging; a dip it does not repeat is a warning (on)")->group(group);
    v.relaxed_ordering = true;
    run.add_flag("--verbs-relaxed-ordering,!--no-verbs-relaxed-ordering", v.relaxed_ordering,
                 "Register the test memory with PCIe relaxed ordering, as perftest does by default (on)")->group(group);
    run.add_option("--verbs-timeout", v.timeout_s, "Seconds any wait inside a pair may take (30; at most a day)")->check(kFinite & CLI::Range(0.001, kDay))->group(group);
  }

  std::optional<Invalid> finish(VerbsOptions& v, bool gpudirect) const {
    if (auto e = parse_size_option(bw_size, "--verbs-size", v.bw_bytes)) return e;
    if (auto e = parse_size_option(lat_size, "--verbs-lat-size", v.lat_bytes)) return e;
    if (auto e = beyond("--verbs-size", v.bw_bytes, kMaxVerbsBytes, "one RDMA message of at most 1 GiB")) return e;
    if (auto e = beyond("--verbs-lat-size", v.lat_bytes, kMaxLatencyBytes, "the latency test's buffer")) return e;
    if (auto e = beyond("--verbs-size x 5 x --verbs-tx-depth", v.bw_bytes * 5 * static_cast<uint64_t>(v.tx_depth), kMaxVerbsBuffer,
                        "the send and receive rings each endpoint registers"))
      return e;
    if (auto e = parse_verbs_sizes(sizes, kMaxVerbsBytes, v.sizes)) return e;
    if (gid_index >= 0) v.gid_index = gid_index;
    if (tclass >= 0) {
      v.traffic_class = tclass;
      v.traffic_class_source = "--verbs-tclass";
    }
    if (v.margin_s && v.duration_s > 0 && *v.margin_s * 2 >= v.duration_s)
      return invalid("--verbs-margin: twice the margin must be less than --verbs-duration (the window between them is measured)");
    if (gpudirect && v.bw_bytes % 4 != 0)
      return invalid("--verbs-size: " + std::to_string(v.bw_bytes) +
                     " is not a multiple of 4; the GPUDirect phase checks GPU payloads in 4-byte words (leave gpudirect out of --phases to use it)");
    for (const auto& t : tests)
      if (std::find(kVerbsTests.begin(), kVerbsTests.end(), t) == kVerbsTests.end())
        return invalid("--verbs-tests: unknown test '" + t + "' (" + known(kVerbsTests) + ")");
    if (!tests.empty()) v.tests = tests;
    return std::nullopt;
  }
};

struct CollectivesCli {
  std::string min_bytes, max_bytes;
  std::vector<std::string> ops;
  bool no_in_place = false;

  void add(CLI::App& run, SweepOptions& c) {
    const char* group = "Collective sweeps";
    run.add_option("--collective-engine", c.engine, "nccl, mpi (MPI on host memory) or auto (NCCL when every node has a GPU)")
        ->check(CLI::IsMember({"nccl", "mpi", "auto"}))->group(group);
    run.add_option("--collective-ops", ops, "Collectives: " + fmt::format("{}", fmt::join(collective_names(), ",")) + " (allreduce)")->delimiter(',')->group(group);
    run.add_option("--min-bytes", min_bytes, "Smallest size of the sweep (8)")->group(group);
    run.add_option("--max-bytes", max_bytes, "Largest size (8G; clipped to the memory each rank can use)")->group(group);
    run.add_option("--factor", c.factor, "Size step factor (2)")->check(kFinite & CLI::Range(1.01, 1024.0))->group(group);
    run.add_option("--iters", c.iters, "Timed calls per size (20)")->check(kFinite & CLI::Range(1, 100000))->group(group);
    run.add_option("--warmup", c.warmup, "Untimed calls per size and form before the barrier (1, as nccl-tests)")->check(kFinite & CLI::Range(0, 100000))->group(group);
    run.add_option("--dtype", c.dtype, "float, double or int32 (float)")->check(CLI::IsMember({"float", "double", "int32"}))->group(group);
    run.add_option("--redop", c.redop, "sum, max or min (sum)")->check(CLI::IsMember({"sum", "max", "min"}))->group(group);
    run.add_flag("--no-in-place", no_in_place, "Time the out-of-place form only")->group(group);
    run.add_flag("--nccl-ring", c.ring, "NCCL_ALGO=Ring for the sweeps (at 2 nodes Tree can report busbw above the NIC)")->group(group);
    run.add_option("--collective-timeout", c.timeout_s, "Seconds any wait on a collective may take (120; at most a day)")->check(kFinite & CLI::Range(0.001, kDay))->group(group);
    run.add_option("--time-stat", c.time_stat, "A row's time over the ranks: avg (nccl-tests' default) or max (the slowest rank)")
        ->check(CLI::IsMember({"avg", "max"}))->group(group);
    run.add_option("--nccl-comm", c.nccl_comm,
                   "The NCCL communicator: blocking (as nccl-tests), split (a blocking child of a non-blocking one) or nonblocking")
        ->check(CLI::IsMember({"blocking", "split", "nonblocking"}))->group(group);
    run.add_option("--gpu-buffers", c.gpu_buffers, "The NCCL engine's buffers: cudaMalloc or ncclMemAlloc (cudaMalloc)")
        ->check(CLI::IsMember({"cudaMalloc", "ncclMemAlloc"}))->group(group);
    run.add_option("--collective-mode", c.mode,
                   "scaling (the sweep on 1, 2, 4 ... nodes), locate (allreduce on groups side by side, halved until the slow node is "
                   "named; one size, the sweep's largest) or auto (locate above 16 nodes, else scaling)")
        ->check(CLI::IsMember({"auto", "scaling", "locate"}))->group(group);
    run.add_flag("--locate-ranks-as-nodes", c.ranks_as_nodes,
                 "Testing aid: in --collective-mode locate each rank stands for a node, so that many ranks on one machine exercise "
                 "the localisation")->group(group);
  }

  std::optional<Invalid> finish(SweepOptions& c) const {
    if (auto e = parse_size_option(min_bytes, "--min-bytes", c.min_bytes)) return e;
    if (auto e = parse_size_option(max_bytes, "--max-bytes", c.max_bytes)) return e;
    if (auto e = beyond("--max-bytes", c.max_bytes, kMaxSweepBytes, "1 TiB")) return e;
    c.max_bytes_given = !max_bytes.empty();
    if (c.min_bytes > c.max_bytes) return invalid("--min-bytes is larger than --max-bytes");
    c.in_place = !no_in_place;
    if (ops.empty()) return std::nullopt;
    c.ops.clear();
    for (const auto& name : ops) {
      auto op = coll_op_from(name);
      if (!op) return invalid("--collective-ops: unknown collective '" + name + "' (" + known(collective_names()) + ")");
      c.ops.emplace_back(to_string(*op));
    }
    return std::nullopt;
  }
};

struct UplinkCli {
  std::vector<std::string> targets;
  double seconds = 5;
  int flows = 0;
  double need_gbps = 0;

  void add(CLI::App& run) {
    const char* group = "Uplink (--phases ...,uplink)";
    run.add_option("--uplink-target", targets,
                   "HOST[:PORT] of a stock `iperf3 -s` on the storage or gateway host (5201); repeat or comma-separate, one port per node "
                   "for the all-nodes-together test")
        ->delimiter(',')->group(group);
    run.add_option("--uplink-seconds", seconds, "Seconds per measurement (5; at most an hour)")->check(kFinite & CLI::Range(1.0, 3600.0))->group(group);
    run.add_option("--uplink-flows", flows, "Flows of the parallel test (default: 2 per link of the node's uplink, at least 2)")
        ->check(kFinite & CLI::Range(1, 128))->group(group);
    run.add_option("--uplink-need", need_gbps, "The cluster's ingest need in Gb/s (default: the profile's uplink.ingest_gbps; see plan-uplink)")
        ->check(kFinite & CLI::Range(0.001, 1e6))->group(group);
  }

  // Targets parsed, the phase and its targets given together.
  std::optional<Invalid> finish(RunOptions& run) const {
    for (const auto& text : targets)
      if (auto failed = failure_of([&] { run.uplink.targets.push_back(parse_uplink_target(text)); })) return invalid("--uplink-target: " + *failed);
    run.uplink.seconds = seconds;
    if (flows > 0) run.uplink.flows = flows;
    if (need_gbps > 0) run.uplink.need_gbps = need_gbps;
    if (has_phase(run, "uplink") && run.uplink.targets.empty())
      return invalid("--phases uplink needs --uplink-target HOST[:PORT] (a stock `iperf3 -s` on the storage or gateway host)");
    return std::nullopt;
  }
};

struct SoakCli {
  std::string duration, interval = "60s";

  void add(CLI::App& run) {
    const char* group = "Soak (burn-in)";
    run.add_option("--soak", duration,
                   "After the other phases, repeat the load (the verbs matrix both ways on every rail, the collective at the sweep's top "
                   "size) for DURATION (90s, 10m, 2h, 1d) with every port counter sampled; adds the soak phase")
        ->group(group);
    run.add_option("--soak-interval", interval, "Between two samples of every node's port counters (60s)")->group(group);
  }

  std::optional<Invalid> finish(RunOptions& run) const {
    const auto every = parse_duration(interval);
    if (!every) return invalid("--soak-interval: '" + interval + "' is not a duration such as 10s, 1m or 1h");
    run.soak.interval_s = *every;
    if (!duration.empty()) {
      const auto length = parse_duration(duration);
      if (!length || *length > 366 * 86400.0) return invalid("--soak: '" + duration + "' is not a duration such as 10m, 2h or 1d (at most a year)");
      run.soak.duration_s = *length;
      if (!has_phase(run, "soak")) run.phases.push_back("soak");
    }
    if (has_phase(run, "soak") && run.soak.duration_s <= 0) return invalid("--phases soak needs --soak DURATION (e.g. --soak 2h)");
    return std::nullopt;
  }
};

struct AuditCli {
  bool multi = false, single = false;

  void add(CLI::App& audit, AuditOptionsCli& a) {
    audit.add_option("files", a.files, "Log files (one per rank's NCCL_DEBUG_FILE, or one combined log); none: standard input");
    audit.add_flag("--json", a.json, "Print JSON instead of a table");
    audit.add_flag("--multi-node", multi, "The job spans several nodes (when the log alone cannot tell)");
    audit.add_flag("--single-node", single, "The job ran on one node");
    audit.add_flag("--expect-gdr", a.expect_gdr, "Warn when RDMA connections do not use GPUDirect (GDRDMA)");
  }

  std::optional<Invalid> finish(AuditOptionsCli& a) const {
    if (multi && single) return invalid("--multi-node and --single-node exclude each other");
    if (multi) a.multi_node = true;
    if (single) a.multi_node = false;
    return std::nullopt;
  }
};

void add_report_options(CLI::App& report, ReportOptionsCli& r) {
  report.add_option("report", r.input, "The report.json to render (with --finalize also its directory)")->required();
  report.add_option("--format", r.formats, "Formats, comma-separated: json, md, html, junit, prom (md,html,junit)")
      ->delimiter(',')->check(CLI::IsMember(kReportFormats));
  report.add_option("-o,--out", r.out_dir, "Directory for report.md / report.html / junit.xml / report.json (default: beside the input)");
  report.add_flag("--finalize", r.finalize,
                  "The run ended without its last write (killed, a node lost): mark its report as the error it is, in place; exit 2");
  report.add_option("--launcher-log", r.launcher_log, "With --finalize: what mpirun or srun printed (names the lost ranks and nodes)");
  report.add_option("--launcher-status", r.launcher_status, "With --finalize: how the launcher ended (e.g. 'mpirun exited 137')");
  report.add_option("--lost-node", r.lost_nodes,
                    "With --finalize: a node that stopped answering, seen from outside the job (the launch node itself, where mpirun "
                    "and rank 0 ran, cannot name itself); repeatable");
}

void add_compare_options(CLI::App& compare, CompareOptionsCli& c) {
  compare.add_option("baseline", c.baseline, "The baseline report.json (e.g. the factory run)")->required()->check(CLI::ExistingFile);
  compare.add_option("new", c.next, "The report.json after the change")->required()->check(CLI::ExistingFile);
  compare.add_option("-p,--profile", c.profile, "Profile whose compare.regression limit applies (default 5%)");
  compare.add_flag("--json", c.json, "Print JSON instead of a table");
  compare.add_option("-o,--out", c.out_dir, "Also write compare.md, compare.html, compare.json and compare-junit.xml here");
}

void add_spec_options(CLI::App& spec, SpecOptionsCli& s) {
  spec.require_subcommand(1);
  auto* draft = spec.add_subcommand("draft", "Write a spec from a known-good run's report.json, for the integrator to edit");
  draft->add_option("--from", s.from, "The report.json of a known-good run (the factory's)")->required()->check(CLI::ExistingFile);
  draft->add_option("-o,--out", s.out, "Where to write the spec (default: standard output)");
  draft->add_option("--name", s.name, "The spec's name (default: the report's hosts)");
  draft->add_option("-p,--profile", s.profile, "Profile whose device filter decides which RDMA devices count (default)");
  draft->callback([&s] { s.action = "draft"; });
  auto* check = spec.add_subcommand("check", "Validate a spec; print what it requires (exit 2 naming each problem)");
  check->add_option("file", s.file, "The spec")->required();
  check->callback([&s] { s.action = "check"; });
}

struct PlanCli {
  std::string model_size;

  void add(CLI::App& plan, UplinkPlanInput& u, bool& json) {
    plan.add_option("--nodes", u.nodes, "Nodes (4)")->check(kFinite & CLI::Range(1, 100000));
    plan.add_option("--gpus-per-node", u.gpus_per_node, "GPUs per node (4)")->check(kFinite & CLI::Range(0, 1024));
    plan.add_option("--workload", u.workload, "vision (~1 GB/s per GPU), llm (1-4 Gb/s for the cluster), finetune (~40 Gb/s bursts) or custom:GB/s-per-GPU");
    plan.add_option("--model-size", model_size, "Parameters, e.g. 70B or 1.5T (70B): weights at 2 bytes each");
    plan.add_option("--checkpoint-factor", u.checkpoint_factor, "Checkpoint size / weights (2)")->check(kFinite & CLI::Range(1.0, 100.0));
    plan.add_option("--uplinks", u.uplinks_gbps, "Uplink rates on offer, GbE, comma-separated (25,100,400)")->delimiter(',')->check(kFinite & CLI::Range(0.001, 1e6));
    plan.add_option("--links-per-node", u.links_per_node, "Uplink links per node (1)")->check(kFinite & CLI::Range(1, 64));
    plan.add_option("--fabric-busbw", u.fabric_busbw_GBps, "The fabric's allreduce busbw per node, GB/s, for the east-west figure (22)")->check(kFinite & CLI::Range(0.0, 1e6));
    plan.add_flag("--json", json, "Print JSON instead of a table");
  }

  // "70B", "1.5T", or billions.
  std::optional<Invalid> finish(UplinkPlanInput& u) const {
    if (model_size.empty()) return std::nullopt;
    double value = 0;
    const char unit = model_size.back();
    const std::string number = (unit == 'B' || unit == 'T') ? model_size.substr(0, model_size.size() - 1) : model_size;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || end != number.data() + number.size() || !(value > 0 && value < 1e6))
      return invalid("--model-size: '" + model_size + "' is not a parameter count such as 70B or 1.5T");
    u.model_params_billion = unit == 'T' ? value * 1000 : value;
    return std::nullopt;
  }
};

// Every option of `run`, then the checks that need several of them.
struct RunGroups {
  RunCli run;
  VerbsCli verbs;
  CollectivesCli collectives;
  UplinkCli uplink;
  SoakCli soak;

  void add(CLI::App& app, RunOptions& o) {
    run.add(app, o);
    verbs.add(app, o.verbs);
    collectives.add(app, o.collectives);
    uplink.add(app);
    soak.add(app);
  }

  std::optional<Invalid> finish(RunOptions& o) const {
    if (auto e = run.finish(o)) return e;
    if (auto e = verbs.finish(o.verbs, has_phase(o, "gpudirect"))) return e;
    if (auto e = collectives.finish(o.collectives)) return e;
    if (auto e = soak.finish(o)) return e;
    return uplink.finish(o);
  }
};

}  // namespace

namespace {

void add_checks_options(CLI::App& checks, ChecksFormat& format) {
  const std::map<std::string, ChecksFormat> formats = {{"text", ChecksFormat::text},
                                                       {"json", ChecksFormat::json},
                                                       {"markdown-summary", ChecksFormat::markdown_summary},
                                                       {"markdown-table", ChecksFormat::markdown_table}};
  checks.add_flag_callback("--json", [&format] { format = ChecksFormat::json; }, "The registry as JSON (fabricproof.checks/1)");
  checks.add_option("--format", format, "text, json, markdown-summary (the README's table) or markdown-table (docs/checks.md's)")
      ->transform(CLI::CheckedTransformer(formats));
}

// Every subcommand and its option groups, registered on one CLI11 app.
struct Subcommands {
  CLI::App app{"fabricproof: acceptance tests for GPU clusters (inventory, RDMA verbs matrix, GPUDirect, NCCL sweeps)", "fabricproof"};
  RunGroups run_cli;
  AuditCli audit_cli;
  PlanCli plan_cli;
  CLI::App *run = nullptr, *audit = nullptr, *report = nullptr, *compare = nullptr, *plan = nullptr, *spec = nullptr, *hostfile = nullptr, *checks = nullptr;

  explicit Subcommands(CommandLine& cl) {
    app.require_subcommand(1);
    app.set_version_flag("--version", kVersionText);
    run = app.add_subcommand("run", "Run the acceptance phases under mpirun or srun (one rank per GPU) and write the report");
    run_cli.add(*run, cl.run);
    audit = app.add_subcommand("nccl-audit", "Parse NCCL_DEBUG=INFO logs and check which transport every rank and channel used");
    audit_cli.add(*audit, cl.audit);
    report = app.add_subcommand("report", "Re-render a saved report.json (no MPI needed)");
    add_report_options(*report, cl.report);
    compare = app.add_subcommand("compare", "Compare a report with a baseline (re-validation after a hardware swap)");
    add_compare_options(*compare, cl.compare);
    plan = app.add_subcommand("plan-uplink", "Size the uplink to the outside world (no cluster needed): ingest need, one flow vs many, transfer times");
    plan_cli.add(*plan, cl.uplink, cl.uplink_json);
    spec = app.add_subcommand("spec", "The cluster spec (what was ordered): draft one from a report, or check one");
    add_spec_options(*spec, cl.spec);
    hostfile = app.add_subcommand("hostfile", "Check an Open MPI hostfile; print one 'HOST SLOTS' line per host (exit 2 on a problem)");
    hostfile->add_option("file", cl.hostfile, "The hostfile")->required();
    checks = app.add_subcommand("checks", "List every check the suite can emit: id, domain, triage step, severity, what it compares, keys, hint");
    add_checks_options(*checks, cl.checks_format);
  }

  // The command parsed, and the checks that need several of its options.
  std::optional<Invalid> finish(CommandLine& cl) {
    if (report->parsed()) cl.command = Command::report;
    if (hostfile->parsed()) cl.command = Command::hostfile;
    if (compare->parsed()) cl.command = Command::compare;
    if (spec->parsed()) cl.command = Command::spec;
    if (checks->parsed()) cl.command = Command::checks;
    if (plan->parsed()) {
      cl.command = Command::plan_uplink;
      return plan_cli.finish(cl.uplink);
    }
    if (audit->parsed()) {
      cl.command = Command::nccl_audit;
      return audit_cli.finish(cl.audit);
    }
    if (run->parsed()) {
      cl.command = Command::run;
      return run_cli.finish(cl.run);
    }
    return std::nullopt;
  }
};

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  CommandLine cl;
  cl.out_dir_hint = find_out_dir(argc, argv);
  Subcommands subs(cl);
  try {
    subs.app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    cl.exit_code = 0;
    cl.message = subs.app.help();
    for (const auto* sub : {subs.run, subs.audit, subs.report, subs.compare, subs.spec})
      if (sub->parsed()) cl.message = sub->help();
    return cl;
  } catch (const CLI::CallForVersion&) {
    cl.exit_code = 0;
    cl.message = kVersionText;
    return cl;
  } catch (const CLI::ParseError& e) {
    cl.exit_code = 2;
    cl.message = std::string("command line: ") + e.what() + "\nRun 'fabricproof --help' or 'fabricproof run --help'.";
    return cl;
  }
  if (const auto problem = subs.finish(cl)) {
    cl.exit_code = 2;
    cl.message = problem->message;
  }
  return cl;
}

}  // namespace fabricproof
