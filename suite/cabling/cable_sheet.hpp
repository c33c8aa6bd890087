#pragma once
// The cabling plan as a point-to-point sheet, the CSV an integrator keeps (UFM's cable validation
// takes one of the same shape): one cable per row, node and HCA port -> switch and switch port.
// The first row that is not blank or a '#' comment is the header; its columns are found by name,
// case-insensitively, in any order: host (node, hostname), hca (device, ca), port (hca_port),
// switch (leaf, switch_name), switch_port (leaf_port, remote_port). host, hca and switch are
// required; other columns (a cable's length, its part number) are ignored. Fields may be quoted
// ("a, b", "say ""x"""). Every problem names the file and the line.
#include <string>
#include <string_view>
#include <vector>

namespace fabricproof::cabling {

struct SheetCable {
  std::string host;
  std::string hca;
  int port = 1;
  std::string leaf;
  std::string switch_port;
  int line = 0;  // where it was read
};

struct CableSheet {
  std::vector<SheetCable> cables;
  std::vector<std::string> errors;  // "NAME:LINE: problem"
};

CableSheet parse_cable_sheet(std::string_view text, const std::string& name);

}  // namespace fabricproof::cabling
