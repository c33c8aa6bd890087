#pragma once
// The command line (CLI11), parsed into plain option structs. No I/O beyond the help text.
#include <optional>
#include <string>
#include <vector>

#include "collectives/collective_model.hpp"
#include "soak/soak_model.hpp"
#include "uplink/uplink_model.hpp"
#include "uplink/uplink_plan.hpp"
#include "verbs/verbs_model.hpp"

namespace fabricproof {

// The phases a run has by default; "uplink" runs only when asked (it needs a target host).
inline const std::vector<std::string> kAllPhases = {"inventory", "verbs", "gpudirect", "collectives", "nccl_audit"};
inline const std::vector<std::string> kKnownPhases = {"inventory", "verbs", "gpudirect", "collectives", "nccl_audit", "uplink", "soak"};

struct RunOptions {
  std::string out_dir;
  std::string profile = "default";
  std::optional<int> expect_nodes;
  std::string spec;  // the cluster spec (what was ordered), judged fail-closed; "" none
  std::vector<std::string> phases = kAllPhases;
  double timeout_s = 120;      // deadline for each gather/broadcast of a phase
  std::string root = "/";      // filesystem root the probe reads (fixture trees in tests)
  bool quiet = false;
  bool json_lines = false;     // one JSON event per line on stdout, for log shippers
  bool check_cabling = false;  // --check-cabling: judge each port's neighbour switch rail by rail (suite/cabling)
  // --lldp-listen S: without lldpd, listen S seconds for the switches' LLDP frames (default: 31
  // with --check-cabling, a switch's 30 s interval and one more; else 0, not at all)
  std::optional<double> lldp_listen_s;
  double lldp_listen() const { return lldp_listen_s.value_or(check_cabling ? 31 : 0); }
  std::string ibnetdiscover;   // --ibnetdiscover FILE: InfiniBand ports' switches, read by rank 0
  VerbsOptions verbs;
  SweepOptions collectives;
  UplinkOptions uplink;
  SoakOptions soak;  // --soak DURATION: the soak phase after the others
  std::vector<std::string> nccl_logs;  // NCCL_DEBUG=INFO logs to audit (the nccl_audit phase)
  std::vector<std::string> formats = {"json", "md", "html"};  // report.json is written whatever this says
};

struct AuditOptionsCli {
  std::vector<std::string> files;  // empty: standard input
  bool json = false;
  std::optional<bool> multi_node;  // --multi-node / --single-node: what the caller knows
  bool expect_gdr = false;
};

struct ReportOptionsCli {
  std::string input;                                 // a saved report.json (or its directory with --finalize)
  // Of json, md, html, junit, prom; empty: md, html, junit (with --finalize: what the run wrote, and md).
  std::vector<std::string> formats;
  std::string out_dir;                               // default: the input's directory
  bool finalize = false;        // mark an unfinished run's report as ended in error
  std::string launcher_log;     // what mpirun/srun printed (lost ranks and nodes)
  std::string launcher_status;  // how the launcher ended, e.g. "mpirun exited 137"
  std::vector<std::string> lost_nodes;  // nodes the caller saw stop answering (the launch node itself)
};

struct CompareOptionsCli {
  std::string baseline;  // the factory report.json
  std::string next;      // the report after the change
  std::string profile = "default";  // compare.regression
  bool json = false;
  std::string out_dir;   // compare.md, compare.json, compare-junit.xml when given
};

// `fabricproof spec draft --from report.json [--out FILE] [--name NAME]`, and `spec check FILE`.
struct SpecOptionsCli {
  std::string action;  // "draft" or "check"
  std::string from;    // draft: the report.json of a known-good run
  std::string file;    // check: the spec to validate
  std::string out;     // draft: where to write the spec ("" standard output)
  std::string name;    // draft: the spec's name
  std::string profile = "default";  // draft: which RDMA devices count (the profile's device filter)
};

enum class Command { none, run, nccl_audit, report, compare, hostfile, plan_uplink, spec, checks };

// `fabricproof checks`: the check registry as a text list, JSON, or the Markdown tables of the docs.
enum class ChecksFormat { text, json, markdown_summary, markdown_table };

struct CommandLine {
  Command command = Command::none;
  RunOptions run;
  AuditOptionsCli audit;
  ReportOptionsCli report;
  CompareOptionsCli compare;
  SpecOptionsCli spec;
  std::string hostfile;  // `fabricproof hostfile FILE`
  ChecksFormat checks_format = ChecksFormat::text;
  UplinkPlanInput uplink;   // `fabricproof plan-uplink`
  bool uplink_json = false;
  // Set when parsing ended the program: help (exit 0) or an error (exit 2, message names it).
  std::optional<int> exit_code;
  std::string message;
  // The --out directory if one could be found even in a command line that failed to parse, so
  // that a report can still be written (bad input gets a report too).
  std::string out_dir_hint;
};

CommandLine parse_command_line(int argc, const char* const* argv);

}  // namespace fabricproof
