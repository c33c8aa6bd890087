#include "cli/options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <sstream>

namespace fabricproof {
namespace {

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

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  CommandLine cl;
  cl.out_dir_hint = find_out_dir(argc, argv);
  CLI::App app{"fabricproof: acceptance tests for GPU clusters (inventory, RDMA verbs matrix, GPUDirect, NCCL sweeps)", "fabricproof"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fabricproof 0.1.0");

  auto* run = app.add_subcommand("run", "Run the acceptance phases under mpirun (one rank per GPU) and write the report");
  std::vector<std::string> phases;
  int expect_nodes = 0;
  run->add_option("-o,--out", cl.run.out_dir, "Directory for report.json and report.md (created)")->required();
  run->add_option("-p,--profile", cl.run.profile, "Threshold profile: a built-in name (default, ib-hdr200-4x4, roce-200) or a JSON file");
  run->add_option("--expect-nodes", expect_nodes, "Number of nodes the run must find")->check(CLI::PositiveNumber);
  run->add_option("--phases", phases, "Phases to run, comma-separated: inventory,verbs,gpudirect,collectives,nccl_audit")->delimiter(',');
  run->add_option("--timeout", cl.run.timeout_s, "Seconds a gather or broadcast may wait for the slowest rank")->check(CLI::PositiveNumber);
  run->add_option("--root", cl.run.root, "Filesystem root the inventory reads (a saved sysfs tree; default /)");
  run->add_flag("-q,--quiet", cl.run.quiet, "Print only the final summary");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    cl.exit_code = 0;
    cl.message = app.help();
    if (run->parsed()) cl.message = run->help();
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
  if (run->parsed()) {
    cl.command = Command::run;
    if (expect_nodes > 0) cl.run.expect_nodes = expect_nodes;
    if (!phases.empty()) cl.run.phases = split_phases(phases);
    for (const auto& p : cl.run.phases) {
      if (std::find(kAllPhases.begin(), kAllPhases.end(), p) == kAllPhases.end()) {
        cl.exit_code = 2;
        cl.message = "command line: --phases: unknown phase '" + p + "' (known: inventory, verbs, gpudirect, collectives, nccl_audit)";
        return cl;
      }
    }
  }
  return cl;
}

}  // namespace fabricproof
