#include "cabling/cable_sheet.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <optional>

#include "core/located_error.hpp"

namespace fabricproof::cabling {
namespace {

std::string trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// One CSV row: fields split at commas outside double quotes, "" inside quotes one quote. Nothing
// when a quote is left open.
std::optional<std::vector<std::string>> fields_of(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  if (quoted) return std::nullopt;
  for (auto& f : out) f = trimmed(f);
  return out;
}

enum SheetColumn { kSheetHost, kSheetHca, kSheetPort, kSheetSwitch, kSheetSwitchPort, kSheetColumns };
const std::array<std::vector<std::string_view>, kSheetColumns> kSheetNames = {{{"host", "node", "hostname"},
                                                                     {"hca", "device", "ca"},
                                                                     {"port", "hca_port"},
                                                                     {"switch", "leaf", "switch_name"},
                                                                     {"switch_port", "leaf_port", "remote_port"}}};

// Each column's place in the header, or -1.
std::array<int, kSheetColumns> columns_of(const std::vector<std::string>& header) {
  std::array<int, kSheetColumns> at;
  at.fill(-1);
  for (size_t i = 0; i < header.size(); ++i) {
    std::string name = header[i];
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (int c = 0; c < kSheetColumns; ++c)
      if (at[static_cast<size_t>(c)] < 0 && std::find(kSheetNames[static_cast<size_t>(c)].begin(), kSheetNames[static_cast<size_t>(c)].end(), name) !=
                                               kSheetNames[static_cast<size_t>(c)].end())
        at[static_cast<size_t>(c)] = static_cast<int>(i);
  }
  return at;
}

// One data row as a cable; a row that is not one throws, in words (LocatedError).
SheetCable read_row(const std::vector<std::string>& f, const std::array<int, kSheetColumns>& at) {
  auto field = [&](SheetColumn c) { return at[c] >= 0 && static_cast<size_t>(at[c]) < f.size() ? f[static_cast<size_t>(at[c])] : std::string(); };
  SheetCable cable{field(kSheetHost), field(kSheetHca), 1, field(kSheetSwitch), field(kSheetSwitchPort), 0};
  if (cable.host.empty() || cable.hca.empty() || cable.leaf.empty()) throw LocatedError("", "needs host, hca and switch");
  const auto port = field(kSheetPort);  // optional: port 1
  if (!port.empty()) {
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), cable.port);
    if (ec != std::errc() || end != port.data() + port.size() || cable.port < 1 || cable.port > 255)
      throw LocatedError("", fmt::format("port '{}' is not a port number (1..255)", port));
  }
  return cable;
}

}  // namespace

CableSheet parse_cable_sheet(std::string_view text, const std::string& name) {
  CableSheet out;
  std::optional<std::array<int, kSheetColumns>> at;
  int number = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = trimmed(text.substr(start, end - start));
    start = end + 1;
    ++number;
    if (line.empty() || line.front() == '#') continue;
    const auto fields = fields_of(line);
    const auto where = fmt::format("{}:{}", name, number);
    if (!fields) {
      out.errors.push_back(where + ": a quote is not closed");
      continue;
    }
    if (!at) {
      at = columns_of(*fields);
      if ((*at)[kSheetHost] < 0 || (*at)[kSheetHca] < 0 || (*at)[kSheetSwitch] < 0) {
        out.errors.push_back(where + ": the header needs the columns host, hca and switch (port and switch_port are optional)");
        return out;
      }
      continue;
    }
    SheetCable cable;
    if (const auto problem = failure_of([&] { cable = read_row(*fields, *at); })) {
      out.errors.push_back(fmt::format("{}: {}", where, *problem));
      continue;
    }
    cable.line = number;
    out.cables.push_back(cable);
  }
  if (!at) out.errors.push_back(name + ": no header row (host, hca, port, switch, switch_port)");
  return out;
}

}  // namespace fabricproof::cabling
