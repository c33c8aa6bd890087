#pragma once
#include <optional>
#include <string>

#include "cli/options.hpp"
#include "report/report.hpp"

namespace fabricproof::app {

// `fabricproof report REPORT.json [--format md,junit,json] [--out DIR]`: re-renders a saved report
// without MPI. Exit 0 when written, 2 when the input is unreadable or not a fabricproof report.
int render_report(const ReportOptionsCli& options);

// `fabricproof hostfile FILE`: the hosts and slots of an Open MPI hostfile, one "HOST SLOTS" line
// each (what scripts/fabricproof-mpirun builds its line from); exit 2 naming file and line on a problem.
int hostfile_command(const std::string& path);

// `fabricproof compare BASELINE NEW`: what changed and which figures regressed. Exit 1 on a
// regression (or a missing node or component), 0 otherwise, 2 on unreadable input.
int compare_reports_command(const CompareOptionsCli& options);

}  // namespace fabricproof::app
