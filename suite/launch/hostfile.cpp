#include "launch/hostfile.hpp"

#include <algorithm>
#include <charconv>
#include <map>

namespace fabricproof {
namespace {

bool host_name(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  auto ok = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'; };
  auto alnum = [&](char c) { return ok(c) && c != '.' && c != '_' && c != '-'; };
  return alnum(s.front()) && alnum(s.back()) && std::all_of(s.begin(), s.end(), ok);
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

int Hostfile::total_slots() const {
  int total = 0;
  for (const auto& h : hosts) total += h.slots;
  return total;
}

Hostfile parse_hostfile(std::string_view text, const std::string& name) {
  Hostfile out;
  std::map<std::string, int, std::less<>> seen;
  int line_no = 0;
  auto error = [&](const std::string& problem) { out.errors.push_back(name + ":" + std::to_string(line_no) + ": " + problem); };
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    line = line.substr(0, line.find('#'));
    const auto w = words(line);
    if (w.empty()) {
      if (end == text.size()) break;
      continue;
    }
    HostfileEntry entry{std::string(w[0]), 1, line_no};
    bool ok = host_name(w[0]);
    if (!ok) error("'" + std::string(w[0].substr(0, 64)) + "' is not a host name");
    for (size_t i = 1; i < w.size(); ++i) {
      const auto eq = w[i].find('=');
      const auto key = w[i].substr(0, eq);
      if (eq == std::string_view::npos || (key != "slots" && key != "max_slots" && key != "max-slots")) {
        error("unknown field '" + std::string(w[i].substr(0, 64)) + "' (expected slots=N)");
        ok = false;
        continue;
      }
      const auto value = w[i].substr(eq + 1);
      int slots = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), slots);
      if (ec != std::errc() || p != value.data() + value.size() || slots < 1 || slots > kMaxSlots) {
        error("'" + std::string(w[i].substr(0, 64)) + "': slots must be a positive integer of at most " + std::to_string(kMaxSlots));
        ok = false;
        continue;
      }
      if (key == "slots") entry.slots = slots;
    }
    if (ok) {
      if (auto it = seen.find(entry.host); it != seen.end()) {
        error("host '" + entry.host + "' is listed twice (line " + std::to_string(it->second) + ")");
      } else {
        seen.emplace(entry.host, line_no);
        out.hosts.push_back(entry);
      }
    }
    if (end == text.size()) break;
  }
  if (out.hosts.empty() && out.errors.empty()) out.errors.push_back(name + ": no hosts");
  return out;
}

}  // namespace fabricproof
