// fabricproof: launched with mpirun or srun, one rank per GPU. See README.md.
#include <iostream>
#include <string>
#include <vector>

#include "app/nccl_audit_command.hpp"
#include "app/report_command.hpp"
#include "app/run.hpp"
#include "app/spec_command.hpp"
#include "cli/options.hpp"
#include "core/checks.hpp"
#include "launch/launch.hpp"
#include "uplink/uplink_plan.hpp"
#include "mpi/session.hpp"

namespace {

std::string checks_output(fabricproof::ChecksFormat format) {
  using fabricproof::ChecksFormat;
  switch (format) {
    case ChecksFormat::json: return fabricproof::json_text(fabricproof::checks_json(), 2) + "\n";
    case ChecksFormat::markdown_summary: return fabricproof::checks_markdown_summary();
    case ChecksFormat::markdown_table: return fabricproof::checks_markdown_table();
    case ChecksFormat::text: break;
  }
  return fabricproof::checks_text();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fabricproof;
  const std::vector<std::string> command(argv, argv + argc);
  const CommandLine cl = parse_command_line(argc, argv);
  if (cl.exit_code) {
    // Bad input still leaves a report when we know where to put it; under mpirun or srun only
    // rank 0 writes (the launcher's rank variable; absent when run by hand).
    const bool root = launch_from_environment().rank.value_or(0) == 0;
    if (root) (*cl.exit_code == 0 ? std::cout : std::cerr) << cl.message << std::endl;
    if (*cl.exit_code != 0 && root && !cl.out_dir_hint.empty())
      app::write_error_report(cl.out_dir_hint, command, CheckId::command_line, cl.message);
    return *cl.exit_code;
  }
  switch (cl.command) {
    case Command::run: {
      mpi::Session session(&argc, &argv);
      return app::run(cl.run, command, session);
    }
    case Command::nccl_audit:
      return app::nccl_audit(cl.audit);
    case Command::report:
      return app::render_report(cl.report);
    case Command::compare:
      return app::compare_reports_command(cl.compare);
    case Command::spec:
      return app::spec_command(cl.spec);
    case Command::hostfile:
      return app::hostfile_command(cl.hostfile);
    case Command::plan_uplink: {
      const auto plan = plan_uplink(cl.uplink);
      if (cl.uplink_json) std::cout << json_text(nlohmann::json(plan), 2) << "\n";
      else std::cout << render_uplink_plan(plan);
      return plan.error.empty() ? 0 : 2;
    }
    case Command::checks:
      std::cout << checks_output(cl.checks_format);
      return 0;
    case Command::none:
      break;
  }
  return 2;
}
