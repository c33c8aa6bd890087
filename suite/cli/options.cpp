#include "cli/options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <sstream>

#include "core/units.hpp"
#include "report/formats.hpp"

namespace fabricproof {
namespace {

constexpr double kDay = 86400;  // the longest any timeout may be: beyond it a deadline means nothing
constexpr uint64_t kMaxVerbsBytes = 1ull << 30;    // one RDMA message (ibv_sge.length is 32 bits; ports allow <= 2^31)
constexpr uint64_t kMaxLatencyBytes = 2048;        // the latency test's buffer half (verbs/pair.cpp)
constexpr uint64_t kMaxVerbsBuffer = 64ull << 30;  // what one endpoint registers: 5 x tx depth x size
constexpr uint64_t kMaxSweepBytes = 1ull << 40;    // the sweep's top size before the memory clip

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

struct UplinkCli {
  std::vector<std::string> targets;
  double seconds = 5;
  int flows = 0;
  double need_gbps = 0;
};

void add_uplink_options(CLI::App& run, UplinkCli& u) {
  const char* group = "Uplink (--phases ...,uplink)";
  run.add_option("--uplink-target", u.targets,
                 "HOST[:PORT] of a stock `iperf3 -s` on the storage or gateway host (5201); repeat or comma-separate, one port per node "
                 "for the all-nodes-together test")
      ->delimiter(',')->group(group);
  run.add_option("--uplink-seconds", u.seconds, "Seconds per measurement (5; at most an hour)")->check(CLI::Range(1.0, 3600.0))->group(group);
  run.add_option("--uplink-flows", u.flows, "Flows of the parallel test (default: 2 per link of the node's uplink, at least 2)")
      ->check(CLI::Range(1, 128))->group(group);
  run.add_option("--uplink-need", u.need_gbps, "The cluster's ingest need in Gb/s (default: the profile's uplink.ingest_gbps; see plan-uplink)")
      ->check(CLI::Range(0.001, 1e6))->group(group);
}

// Targets parsed, the phase and its targets given together; "" or what is wrong.
std::string finish_uplink_options(const UplinkCli& u, RunOptions& run) {
  for (const auto& text : u.targets) {
    std::string error;
    auto target = parse_uplink_target(text, error);
    if (!target) return "--uplink-target: " + error;
    run.uplink.targets.push_back(*target);
  }
  run.uplink.seconds = u.seconds;
  if (u.flows > 0) run.uplink.flows = u.flows;
  if (u.need_gbps > 0) run.uplink.need_gbps = u.need_gbps;
  const bool wanted = std::find(run.phases.begin(), run.phases.end(), "uplink") != run.phases.end();
  if (wanted && run.uplink.targets.empty())
    return "--phases uplink needs --uplink-target HOST[:PORT] (a stock `iperf3 -s` on the storage or gateway host)";
  return "";
}

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  CommandLine cl;
  cl.out_dir_hint = find_out_dir(argc, argv);
  CLI::App app{"fabricproof: acceptance tests for GPU clusters (inventory, RDMA verbs matrix, GPUDirect, NCCL sweeps)", "fabricproof"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fabricproof 0.1.0");

  auto* run = app.add_subcommand("run", "Run the acceptance phases under mpirun or srun (one rank per GPU) and write the report");
  std::vector<std::string> phases;
  int expect_nodes = 0;
  run->add_option("-o,--out", cl.run.out_dir, "Directory for the report files (created)")->required();
  run->add_option("--format", cl.run.formats, "Report formats, comma-separated: json, md, html, junit, prom (json,md,html; report.json is always written)")
      ->delimiter(',')->check(CLI::IsMember(kReportFormats));
  run->add_option("-p,--profile", cl.run.profile, "Threshold profile: a built-in name (default, ib-hdr200-4x4, roce-200) or a JSON file");
  run->add_option("--expect-nodes", expect_nodes, "Number of nodes the run must find")->check(CLI::Range(1, 1000000));
  run->add_option("--phases", phases, "Phases to run, comma-separated: inventory,verbs,gpudirect,collectives,nccl_audit (the default), uplink (on request)")
      ->delimiter(',');
  run->add_option("--timeout", cl.run.timeout_s, "Seconds a gather or broadcast may wait for the slowest rank (120; at most a day)")
      ->check(CLI::Range(0.001, kDay));
  run->add_option("--root", cl.run.root, "Filesystem root the inventory reads (a saved sysfs tree; default /)");
  run->add_flag("-q,--quiet", cl.run.quiet, "Print only the final summary");
  run->add_flag("--json-lines", cl.run.json_lines, "Print progress and the summary as one JSON object per line (for log shippers)");
  // Not checked here: the logs may exist only on the launch node; rank 0 reads them (nccl_audit phase).
  run->add_option("--nccl-logs", cl.run.nccl_logs, "NCCL_DEBUG=INFO logs (one per rank or combined) for the nccl_audit phase, read by rank 0");
  auto& v = cl.run.verbs;
  std::string bw_size, lat_size;
  std::vector<std::string> verbs_tests;
  int gid_index = -1;
  const char* group = "RDMA verbs matrix";
  run->add_option("--verbs-size", bw_size, "Message size of the bandwidth tests (64K)")->group(group);
  run->add_option("--verbs-duration", v.duration_s, "Seconds per bandwidth test and direction (2; at most an hour)")->check(CLI::Range(0.0, 3600.0))->group(group);
  run->add_option("--verbs-margin", v.margin_s,
                  "Seconds left out at each end of a duration-mode test (default: a quarter of the duration, as perftest's -D)")
      ->check(CLI::NonNegativeNumber)->group(group);
  int tclass = -1;
  run->add_option("--verbs-tclass", tclass, "Traffic class (IP ToS on RoCE) of the tests' QPs (default: NCCL_IB_TC when set)")
      ->check(CLI::Range(0, 255))->group(group);
  run->add_option("--verbs-iterations", v.iterations, "Messages per bandwidth test instead of a duration (at most 10^12)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1000000000000}))->group(group);
  run->add_option("--verbs-qps", v.qps, "Queue pairs per endpoint (1)")->check(CLI::Range(1, 64))->group(group);
  run->add_option("--verbs-tx-depth", v.tx_depth, "Work requests in flight per QP (128)")->check(CLI::Range(2, 8192))->group(group);
  run->add_option("--verbs-gid-index", gid_index, "GID index on every port (default: the port's RoCE v2 IPv4 GID)")->check(CLI::Range(0, 1023))->group(group);
  run->add_option("--verbs-lat-size", lat_size, "Message size of the latency test (2)")->group(group);
  run->add_option("--verbs-lat-iterations", v.lat_iterations, "Round trips of the latency test (1000; at most 10^8)")->check(CLI::Range(uint64_t{1}, uint64_t{100000000}))->group(group);
  run->add_option("--verbs-tests", verbs_tests, "Tests: write_bw,write_bw_bidir,send_bw,write_lat")->delimiter(',')->group(group);
  run->add_option("--verbs-mode", v.mode, "rounds (disjoint pairs at once) or isolated (one pair at a time)")->check(CLI::IsMember({"rounds", "isolated"}))->group(group);
  run->add_option("--verbs-rails", v.rails, "matched (mlx5_0 <-> mlx5_0) or all (every HCA with every remote HCA)")->check(CLI::IsMember({"matched", "all"}))->group(group);
  run->add_option("--verbs-timeout", v.timeout_s, "Seconds any wait inside a pair may take (30; at most a day)")->check(CLI::Range(0.001, kDay))->group(group);

  auto& c = cl.run.collectives;
  std::string min_bytes, max_bytes;
  std::vector<std::string> coll_ops;
  bool no_in_place = false;
  const char* coll = "Collective sweeps";
  run->add_option("--collective-engine", c.engine, "nccl, mpi (MPI on host memory) or auto (NCCL when every node has a GPU)")
      ->check(CLI::IsMember({"nccl", "mpi", "auto"}))->group(coll);
  run->add_option("--collective-ops", coll_ops, "Collectives: allreduce,allgather,reduce_scatter,broadcast,alltoall (allreduce)")
      ->delimiter(',')->group(coll);
  run->add_option("--min-bytes", min_bytes, "Smallest size of the sweep (8)")->group(coll);
  run->add_option("--max-bytes", max_bytes, "Largest size (8G; clipped to the memory each rank can use)")->group(coll);
  run->add_option("--factor", c.factor, "Size step factor (2)")->check(CLI::Range(1.01, 1024.0))->group(coll);
  run->add_option("--iters", c.iters, "Timed calls per size (20)")->check(CLI::Range(1, 100000))->group(coll);
  run->add_option("--warmup", c.warmup, "Warm-up calls per size (5)")->check(CLI::Range(0, 100000))->group(coll);
  run->add_option("--dtype", c.dtype, "float, double or int32 (float)")->check(CLI::IsMember({"float", "double", "int32"}))->group(coll);
  run->add_option("--redop", c.redop, "sum, max or min (sum)")->check(CLI::IsMember({"sum", "max", "min"}))->group(coll);
  run->add_flag("--no-in-place", no_in_place, "Time the out-of-place form only")->group(coll);
  run->add_flag("--nccl-ring", c.ring, "NCCL_ALGO=Ring for the sweeps (at 2 nodes Tree can report busbw above the NIC)")->group(coll);
  run->add_option("--collective-timeout", c.timeout_s, "Seconds any wait on a collective may take (120; at most a day)")->check(CLI::Range(0.001, kDay))->group(coll);
  run->add_option("--time-stat", c.time_stat, "A row's time over the ranks: avg (nccl-tests' default) or max (the slowest rank)")
      ->check(CLI::IsMember({"avg", "max"}))->group(coll);

  UplinkCli uplink_cli;
  add_uplink_options(*run, uplink_cli);

  auto* audit = app.add_subcommand("nccl-audit", "Parse NCCL_DEBUG=INFO logs and check which transport every rank and channel used");
  bool multi = false, single = false;
  audit->add_option("files", cl.audit.files, "Log files (one per rank's NCCL_DEBUG_FILE, or one combined log); none: standard input");
  audit->add_flag("--json", cl.audit.json, "Print JSON instead of a table");
  audit->add_flag("--multi-node", multi, "The job spans several nodes (when the log alone cannot tell)");
  audit->add_flag("--single-node", single, "The job ran on one node");
  audit->add_flag("--expect-gdr", cl.audit.expect_gdr, "Warn when RDMA connections do not use GPUDirect (GDRDMA)");

  auto* report = app.add_subcommand("report", "Re-render a saved report.json (no MPI needed)");
  report->add_option("report", cl.report.input, "The report.json to render (with --finalize also its directory)")->required();
  report->add_option("--format", cl.report.formats, "Formats, comma-separated: json, md, html, junit, prom (md,html,junit)")
      ->delimiter(',')->check(CLI::IsMember(kReportFormats));
  report->add_option("-o,--out", cl.report.out_dir, "Directory for report.md / report.html / junit.xml / report.json (default: beside the input)");
  report->add_flag("--finalize", cl.report.finalize,
                   "The run ended without its last write (killed, a node lost): mark its report as the error it is, in place; exit 2");
  report->add_option("--launcher-log", cl.report.launcher_log, "With --finalize: what mpirun or srun printed (names the lost ranks and nodes)");
  report->add_option("--launcher-status", cl.report.launcher_status, "With --finalize: how the launcher ended (e.g. 'mpirun exited 137')");

  auto* compare = app.add_subcommand("compare", "Compare a report with a baseline (re-validation after a hardware swap)");
  compare->add_option("baseline", cl.compare.baseline, "The baseline report.json (e.g. the factory run)")->required()->check(CLI::ExistingFile);
  compare->add_option("new", cl.compare.next, "The report.json after the change")->required()->check(CLI::ExistingFile);
  compare->add_option("-p,--profile", cl.compare.profile, "Profile whose compare.regression limit applies (default 5%)");
  compare->add_flag("--json", cl.compare.json, "Print JSON instead of a table");
  compare->add_option("-o,--out", cl.compare.out_dir, "Also write compare.md, compare.html, compare.json and compare-junit.xml here");

  auto* plan = app.add_subcommand("plan-uplink", "Size the uplink to the outside world (no cluster needed): ingest need, one flow vs many, transfer times");
  auto& u = cl.uplink;
  std::string model_size;
  plan->add_option("--nodes", u.nodes, "Nodes (4)")->check(CLI::Range(1, 100000));
  plan->add_option("--gpus-per-node", u.gpus_per_node, "GPUs per node (4)")->check(CLI::Range(0, 1024));
  plan->add_option("--workload", u.workload, "vision (~1 GB/s per GPU), llm (1-4 Gb/s for the cluster), finetune (~40 Gb/s bursts) or custom:GB/s-per-GPU");
  plan->add_option("--model-size", model_size, "Parameters, e.g. 70B or 1.5T (70B): weights at 2 bytes each");
  plan->add_option("--checkpoint-factor", u.checkpoint_factor, "Checkpoint size / weights (2)")->check(CLI::Range(1.0, 100.0));
  plan->add_option("--uplinks", u.uplinks_gbps, "Uplink rates on offer, GbE, comma-separated (25,100,400)")->delimiter(',')->check(CLI::Range(0.001, 1e6));
  plan->add_option("--links-per-node", u.links_per_node, "Uplink links per node (1)")->check(CLI::Range(1, 64));
  plan->add_option("--fabric-busbw", u.fabric_busbw_GBps, "The fabric's allreduce busbw per node, GB/s, for the east-west figure (22)")->check(CLI::Range(0.0, 1e6));
  plan->add_flag("--json", cl.uplink_json, "Print JSON instead of a table");

  auto* hostfile = app.add_subcommand("hostfile", "Check an Open MPI hostfile; print one 'HOST SLOTS' line per host (exit 2 on a problem)");
  hostfile->add_option("file", cl.hostfile, "The hostfile")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    cl.exit_code = 0;
    cl.message = app.help();
    if (run->parsed()) cl.message = run->help();
    if (audit->parsed()) cl.message = audit->help();
    if (report->parsed()) cl.message = report->help();
    if (compare->parsed()) cl.message = compare->help();
    return cl;
  } catch (const CLI::CallForVersion& e) {
    cl.exit_code = 0;
    cl.message = "fabricproof 0.1.0";
    return cl;
  } catch (const CLI::ParseError& e) {
    cl.exit_code = 2;
    cl.message = std::string("command line: ") + e.what() + "\nRun 'fabricproof --help' or 'fabricproof run --help'.";
    return cl;
  }
  if (report->parsed()) {
    cl.command = Command::report;
    return cl;
  }
  if (hostfile->parsed()) {
    cl.command = Command::hostfile;
    return cl;
  }
  if (plan->parsed()) {
    cl.command = Command::plan_uplink;
    if (!model_size.empty()) {  // "70B", "1.5T", or billions
      double value = 0;
      const char unit = model_size.back();
      const std::string number = (unit == 'B' || unit == 'T') ? model_size.substr(0, model_size.size() - 1) : model_size;
      const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
      if (ec != std::errc() || end != number.data() + number.size() || !(value > 0 && value < 1e6)) {
        cl.exit_code = 2;
        cl.message = "command line: --model-size: '" + model_size + "' is not a parameter count such as 70B or 1.5T";
        return cl;
      }
      u.model_params_billion = unit == 'T' ? value * 1000 : value;
    }
    return cl;
  }
  if (compare->parsed()) {
    cl.command = Command::compare;
    return cl;
  }
  if (audit->parsed()) {
    cl.command = Command::nccl_audit;
    if (multi && single) {
      cl.exit_code = 2;
      cl.message = "command line: --multi-node and --single-node exclude each other";
      return cl;
    }
    if (multi) cl.audit.multi_node = true;
    if (single) cl.audit.multi_node = false;
    return cl;
  }
  if (run->parsed()) {
    cl.command = Command::run;
    if (expect_nodes > 0) cl.run.expect_nodes = expect_nodes;
    if (!phases.empty()) cl.run.phases = split_phases(phases);
    auto size_or_error = [&](const std::string& text, const char* option, uint64_t& into) {
      if (text.empty()) return true;
      auto bytes = parse_size(text);
      if (!bytes || *bytes == 0) {
        cl.exit_code = 2;
        cl.message = std::string("command line: ") + option + ": '" + text + "' is not a size (e.g. 64K, 1M)";
        return false;
      }
      into = *bytes;
      return true;
    };
    if (!size_or_error(bw_size, "--verbs-size", v.bw_bytes) || !size_or_error(lat_size, "--verbs-lat-size", v.lat_bytes)) return cl;
    // Every numeric option has a documented bound: a value beyond it is an error, never clamped.
    auto beyond = [&](const char* option, uint64_t value, uint64_t limit, const std::string& why) {
      if (value <= limit) return false;
      cl.exit_code = 2;
      cl.message = std::string("command line: ") + option + ": " + std::to_string(value) + " is more than " + std::to_string(limit) + " (" + why + ")";
      return true;
    };
    if (beyond("--verbs-size", v.bw_bytes, kMaxVerbsBytes, "one RDMA message of at most 1 GiB") ||
        beyond("--verbs-lat-size", v.lat_bytes, kMaxLatencyBytes, "the latency test's buffer") ||
        beyond("--verbs-size x 5 x --verbs-tx-depth", v.bw_bytes * 5 * static_cast<uint64_t>(v.tx_depth), kMaxVerbsBuffer,
               "the send and receive rings each endpoint registers"))
      return cl;
    if (gid_index >= 0) v.gid_index = gid_index;
    if (tclass >= 0) {
      v.traffic_class = tclass;
      v.traffic_class_source = "--verbs-tclass";
    }
    if (v.margin_s && v.duration_s > 0 && *v.margin_s * 2 >= v.duration_s) {
      cl.exit_code = 2;
      cl.message = "command line: --verbs-margin: twice the margin must be less than --verbs-duration (the window between them is measured)";
      return cl;
    }
    const bool gpudirect = std::find(cl.run.phases.begin(), cl.run.phases.end(), "gpudirect") != cl.run.phases.end();
    if (gpudirect && v.bw_bytes % 4 != 0) {
      cl.exit_code = 2;
      cl.message = "command line: --verbs-size: " + std::to_string(v.bw_bytes) +
                   " is not a multiple of 4; the GPUDirect phase checks GPU payloads in 4-byte words (leave gpudirect out of --phases to use it)";
      return cl;
    }
    if (!size_or_error(min_bytes, "--min-bytes", c.min_bytes) || !size_or_error(max_bytes, "--max-bytes", c.max_bytes)) return cl;
    if (beyond("--max-bytes", c.max_bytes, kMaxSweepBytes, "1 TiB")) return cl;
    c.max_bytes_given = !max_bytes.empty();
    if (c.min_bytes > c.max_bytes) {
      cl.exit_code = 2;
      cl.message = "command line: --min-bytes is larger than --max-bytes";
      return cl;
    }
    c.in_place = !no_in_place;
    if (!coll_ops.empty()) {
      c.ops.clear();
      for (const auto& name : coll_ops) {
        auto op = coll_op_from(name);
        if (!op) {
          cl.exit_code = 2;
          cl.message = "command line: --collective-ops: unknown collective '" + name + "' (known: allreduce, allgather, reduce_scatter, broadcast, alltoall)";
          return cl;
        }
        c.ops.emplace_back(to_string(*op));
      }
    }
    if (!verbs_tests.empty()) {
      for (const auto& t : verbs_tests) {
        if (std::find(kVerbsTests.begin(), kVerbsTests.end(), t) == kVerbsTests.end()) {
          cl.exit_code = 2;
          cl.message = "command line: --verbs-tests: unknown test '" + t + "' (known: write_bw, write_bw_bidir, send_bw, write_lat)";
          return cl;
        }
      }
      v.tests = verbs_tests;
    }
    for (const auto& p : cl.run.phases) {
      if (std::find(kKnownPhases.begin(), kKnownPhases.end(), p) == kKnownPhases.end()) {
        cl.exit_code = 2;
        cl.message = "command line: --phases: unknown phase '" + p + "' (known: inventory, verbs, gpudirect, collectives, nccl_audit, uplink)";
        return cl;
      }
    }
    if (const auto error = finish_uplink_options(uplink_cli, cl.run); !error.empty()) {
      cl.exit_code = 2;
      cl.message = "command line: " + error;
      return cl;
    }
  }
  return cl;
}

}  // namespace fabricproof
