#include "soak/soak_model.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <regex>

namespace fabricproof {

std::optional<double> parse_duration(const std::string& text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !std::isfinite(value) || value <= 0) return std::nullopt;
  const std::string unit(end, text.data() + text.size());
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  else if (unit == "m" || unit == "min") scale = 60;
  else if (unit == "h") scale = 3600;
  else if (unit == "d") scale = 86400;
  else return std::nullopt;
  return value * scale;
}

std::optional<XidEvent> parse_xid_line(const std::string& line) {
  static const std::regex xid(R"(NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): (\d{1,5})\b)");
  std::smatch m;
  if (!std::regex_search(line, m, xid)) return std::nullopt;
  return XidEvent{m[1].str(), std::stoi(m[2].str()), line};
}

std::string format_soak_time(double seconds) {
  const long total = std::lround(std::max(0.0, seconds));
  if (total >= 3600) return fmt::format("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60);
  return fmt::format("{}:{:02}", total / 60, total % 60);
}

}  // namespace fabricproof
