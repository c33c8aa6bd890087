#pragma once
// Open MPI hostfiles as the launcher wrapper reads them: "host [slots=N] [max_slots=N]" per line,
// '#' comments, blank lines. Every problem names the file and line. Pure: `fabricproof hostfile`
// and scripts/fabricproof-mpirun use it, the fuzz target feeds it.
#include <string>
#include <string_view>
#include <vector>

namespace fabricproof {

struct HostfileEntry {
  std::string host;
  int slots = 1;
  int line = 0;
};

struct Hostfile {
  std::vector<HostfileEntry> hosts;
  std::vector<std::string> errors;  // "NAME:LINE: problem"; the hosts are valid only without errors
  int total_slots() const;
};

inline constexpr int kMaxSlots = 4096;  // per host: more ranks than any node has cores

Hostfile parse_hostfile(std::string_view text, const std::string& name);

}  // namespace fabricproof
