#pragma once
#include "cli/options.hpp"

namespace fabricproof::app {

// `fabricproof report REPORT.json [--format md,junit,json] [--out DIR]`: re-renders a saved report
// without MPI. Exit 0 when written, 2 when the input is unreadable or not a fabricproof report.
int render_report(const ReportOptionsCli& options);

}  // namespace fabricproof::app
