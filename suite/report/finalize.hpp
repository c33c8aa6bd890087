#pragma once
// Finishing the report of a run that ended without its last write: the job was killed from
// outside, mpirun lost a node, or rank 0 itself was lost. The launcher side (scripts/fabricproof-mpirun,
// or `fabricproof report --finalize` after a launch line of the user's own) reads what the
// launcher printed and marks the report as the error it is, so that no report of an unfinished
// run can ever be read as a pass.
#include <string>
#include <string_view>
#include <vector>

#include "report/report.hpp"

namespace fabricproof {

// A rank or a node that the launcher (or a fabricproof rank) reported lost.
struct LauncherLoss {
  int rank = -1;      // -1: a whole node (a daemon), or a rank the launcher did not name
  std::string host;   // "" when not named
  std::string what;   // the launcher's words, one line
  // The launcher could not start the job there (the host does not resolve, refuses ssh, has no
  // binary): the run never began on it. `what` then says why in plain words, with ssh's line.
  bool not_started = false;
  // Not a loss but a witness: this rank's watchdog ended a blocking call that did not return
  // ("fabricproof: watchdog: {json}"). When some ranks report so, the ranks of the world that did
  // not are the ones the others waited for (stopped, dead, their node gone): finalize_report names
  // them, by elimination.
  bool watchdog = false;
  // The world ranks of the communicator the watchdog's call was on (empty: the whole world).
  std::vector<int> group = {};
  // Not a loss either: this rank stopped waiting (mpi::Lost) and said it lives ("fabricproof:
  // alive: {json}"); it is never named by elimination.
  bool alive = false;
  // A rank's own "fabricproof: lost-rank:" claim about another: the rank that saw it (-1: none).
  // A claim about a rank whose watchdog reported is dropped: that rank was blocked, not lost.
  int seen_by = -1;
};

// The losses named in launcher output: Open MPI's mpirun ("noticed that process rank N ... on node
// H exited on signal S", "lost communication with a remote daemon ... on node H", "processes
// exited with non-zero status ... Process name: [[J,1],N]"), Slurm's srun ("srun: error: H: task
// N: Killed"), the ranks' own "fabricproof: lost-rank: {json}", "fabricproof: watchdog: {json}" and
// "fabricproof: alive: {json}" lines (the latter two as witnesses), and the reasons a launch
// failed on a host (ssh's "Could not resolve hostname", "Connection refused", "Permission denied",
// Open MPI's "could not access or execute an executable ... Node: H"). Launcher prefixes
// (--tag-output, timestamps) may precede any line. Duplicates are merged.
std::vector<LauncherLoss> parse_launcher_log(std::string_view text);

// Marks an unfinished report as ended in error: one `rank_lost` (or `node_lost`) finding per loss
// (and, where watchdogs reported, per rank of their calls' groups that said neither watchdog nor
// alive),
// a `run_incomplete` finding naming the step in flight and how the launcher ended
// (`launcher_status`, e.g. "mpirun exited 137 (killed by signal 9)"), the phase in flight as an
// error, verdict error, finished at `now`. Returns false and changes nothing when the report is
// already final.
bool finalize_report(Report& report, const std::string& launcher_status, const std::vector<LauncherLoss>& losses, const std::string& now);

}  // namespace fabricproof
