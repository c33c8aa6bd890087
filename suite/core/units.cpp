#include "core/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <regex>

namespace fabricproof {
namespace {

struct WidthEntry {
  int code;
  int lanes;
};
constexpr std::array<WidthEntry, 5> kWidths = {{{1, 1}, {2, 4}, {4, 8}, {8, 12}, {16, 2}}};

struct SpeedEntry {
  int code;
  int tenths_gbps;  // per lane, as the kernel's rate_show computes it
  std::string_view name;
};
constexpr std::array<SpeedEntry, 9> kSpeeds = {{{1, 25, "SDR"},
                                                {2, 50, "DDR"},
                                                {4, 100, "QDR"},
                                                {8, 100, "FDR10"},
                                                {16, 140, "FDR"},
                                                {32, 250, "EDR"},
                                                {64, 500, "HDR"},
                                                {128, 1000, "NDR"},
                                                {256, 2000, "XDR"}}};

const SpeedEntry* find_speed(int code) {
  for (const auto& s : kSpeeds)
    if (s.code == code) return &s;
  return nullptr;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<int> lanes_for_width_code(int width_code) {
  for (const auto& w : kWidths)
    if (w.code == width_code) return w.lanes;
  return std::nullopt;
}

std::optional<int> width_code_for_lanes(int lanes) {
  for (const auto& w : kWidths)
    if (w.lanes == lanes) return w.code;
  return std::nullopt;
}

std::optional<double> lane_gbps_for_speed_code(int speed_code) {
  const auto* s = find_speed(speed_code);
  if (!s) return std::nullopt;
  return s->tenths_gbps / 10.0;
}

std::optional<std::string_view> speed_name_for_code(int speed_code) {
  const auto* s = find_speed(speed_code);
  if (!s) return std::nullopt;
  return s->name;
}

std::optional<int> speed_code_for_name(std::string_view name) {
  for (const auto& s : kSpeeds)
    if (s.name == name) return s.code;
  return std::nullopt;
}

std::optional<LinkRate> link_rate_from_codes(int width_code, int speed_code) {
  auto lanes = lanes_for_width_code(width_code);
  const auto* speed = find_speed(speed_code);
  if (!lanes || !speed) return std::nullopt;
  LinkRate rate;
  rate.width_code = width_code;
  rate.speed_code = speed_code;
  rate.lanes = *lanes;
  rate.width = std::to_string(*lanes) + "X";
  rate.speed_name = std::string(speed->name);
  rate.gbps = speed->tenths_gbps * *lanes / 10.0;
  return rate;
}

std::optional<LinkRate> parse_sysfs_rate(std::string_view text) {
  static const std::regex kRate(R"(^\s*([0-9]+(?:\.[0-9]+)?) Gb/sec \(([0-9]+)X ?([A-Z0-9]*)\)\s*$)");
  std::cmatch m;
  if (!std::regex_match(text.begin(), text.end(), m, kRate)) return std::nullopt;
  int lanes = 0;
  const auto lanes_text = m[2].str();
  if (std::from_chars(lanes_text.data(), lanes_text.data() + lanes_text.size(), lanes).ec != std::errc()) return std::nullopt;
  auto width_code = width_code_for_lanes(lanes);
  if (!width_code) return std::nullopt;
  // The kernel prints SDR for unknown speed codes, so a name is always present on real systems.
  auto speed_code = speed_code_for_name(m[3].length() ? m[3].str() : "SDR");
  if (!speed_code) return std::nullopt;
  auto rate = link_rate_from_codes(*width_code, *speed_code);
  double gbps = 0;  // the kernel's own figure wins
  const auto gbps_text = m[1].str();
  if (rate && std::from_chars(gbps_text.data(), gbps_text.data() + gbps_text.size(), gbps).ec == std::errc() && gbps > 0 && gbps < 1e7)
    rate->gbps = gbps;
  else
    return std::nullopt;
  return rate;
}

std::optional<int> mtu_bytes_for_code(int mtu_code) {
  if (mtu_code < 1 || mtu_code > 5) return std::nullopt;
  return 128 << mtu_code;
}

std::optional<int> mtu_code_for_bytes(int bytes) {
  for (int code = 1; code <= 5; ++code)
    if ((128 << code) == bytes) return code;
  return std::nullopt;
}

std::optional<int> roce_mtu_for_netdev_mtu(int netdev_mtu) {
  const int room = netdev_mtu - (40 + 8 + 12 + 4 + 28 + 4);
  for (int code = 5; code >= 1; --code) {
    if ((128 << code) <= room) return 128 << code;
  }
  return std::nullopt;
}

std::optional<double> parse_pcie_speed_gts(std::string_view text) {
  text = trim(text);
  const auto space = text.find(' ');
  if (space == std::string_view::npos || text.substr(space + 1, 4) != "GT/s") return std::nullopt;
  double gts = 0;
  const auto number = text.substr(0, space);
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), gts);
  if (ec != std::errc() || end != number.data() + number.size() || !(gts > 0 && gts < 1e6)) return std::nullopt;
  return gts;
}

std::optional<int> pcie_generation_for_gts(double gts) {
  constexpr std::array<double, 6> kGts = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  for (size_t i = 0; i < kGts.size(); ++i)
    if (std::fabs(kGts[i] - gts) < 0.05) return static_cast<int>(i) + 1;
  return std::nullopt;
}

std::optional<uint64_t> parse_size(std::string_view text) {
  text = trim(text);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  std::string suffix(end, text.data() + text.size());
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() >= 2 && suffix.substr(suffix.size() - 2) == "IB") suffix.resize(suffix.size() - 2);
  else if (suffix.size() >= 2 && suffix.back() == 'B') suffix.pop_back();
  else if (suffix == "B") suffix.clear();
  int shift = 0;
  if (suffix == "K") shift = 10;
  else if (suffix == "M") shift = 20;
  else if (suffix == "G") shift = 30;
  else if (suffix == "T") shift = 40;
  else if (!suffix.empty()) return std::nullopt;
  if (shift && value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

std::string format_size(uint64_t bytes) {
  constexpr std::array<std::pair<int, char>, 4> kUnits = {{{40, 'T'}, {30, 'G'}, {20, 'M'}, {10, 'K'}}};
  for (auto [shift, unit] : kUnits) {
    const uint64_t scale = uint64_t{1} << shift;
    if (bytes >= scale && bytes % scale == 0) return std::to_string(bytes / scale) + unit;
  }
  return std::to_string(bytes);
}

}  // namespace fabricproof

namespace fabricproof {

std::optional<std::string_view> port_state_name(int code) {
  constexpr std::array<std::string_view, 6> kNames = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  if (code < 0 || code >= static_cast<int>(kNames.size())) return std::nullopt;
  return kNames[code];
}

std::optional<std::string_view> phys_state_name(int code) {
  constexpr std::array<std::string_view, 8> kNames = {
      "NOP", "SLEEP", "POLLING", "DISABLED", "PORT_CONFIGURATION_TRAINING", "LINK_UP", "LINK_ERROR_RECOVERY", "PHY_TEST"};
  if (code < 0 || code >= static_cast<int>(kNames.size())) return std::nullopt;
  return kNames[code];
}

}  // namespace fabricproof

namespace fabricproof {

std::vector<int> parse_cpulist(std::string_view text, int cpu_limit) {
  std::vector<int> cpus;
  text = trim(text);
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    const auto dash = part.find('-');
    int first = 0, last = 0;
    auto parse = [](std::string_view s, int& out) {
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
      return ec == std::errc() && end == s.data() + s.size();
    };
    if (dash == std::string_view::npos) {
      if (!parse(part, first)) return {};
      last = first;
    } else if (!parse(part.substr(0, dash), first) || !parse(part.substr(dash + 1), last) || last < first) {
      return {};
    }
    if (first < 0 || last >= cpu_limit || cpus.size() + static_cast<size_t>(last - first) >= static_cast<size_t>(cpu_limit)) return {};
    for (int c = first; c <= last; ++c) cpus.push_back(c);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return cpus;
}

std::optional<double> pcie_usable_gbps(int generation, int lanes) {
  constexpr std::array<double, 6> kUsableGBpsPerLane = {0.2125, 0.425, 0.84, 1.69, 3.375, 6.75};
  if (generation < 1 || generation > 6 || lanes <= 0) return std::nullopt;
  return kUsableGBpsPerLane[generation - 1] * lanes * 8;
}

std::optional<int> whole_int(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() ? std::optional<int>(value) : std::nullopt;
}

}  // namespace fabricproof
