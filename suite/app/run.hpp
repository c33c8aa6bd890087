#pragma once
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "core/checks.hpp"
#include "mpi/session.hpp"

namespace fabricproof::app {

// `fabricproof run`: inventory, then the fabric phases, in lockstep on every rank; rank 0 judges
// and rewrites the report after every phase. Returns the exit code (same on every rank).
int run(const RunOptions& options, const std::vector<std::string>& command, mpi::Session& session);

// A report for a run that could not start (bad command line, unusable output directory):
// written by rank 0 only, so that even bad input leaves a report behind.
int write_error_report(const std::string& out_dir, const std::vector<std::string>& command, CheckId id,
                       const std::string& message);

}  // namespace fabricproof::app
