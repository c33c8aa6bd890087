#include "inventory/file_reader.hpp"

#include "core/located_error.hpp"
#include "core/text_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <charconv>
#include <system_error>

namespace fabricproof::probe {
namespace fs = std::filesystem;

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::optional<int> leading_code(const std::string& text) {
  int code = 0;
  const char* begin = text.data();
  while (begin < text.data() + text.size() && (*begin == ' ' || *begin == '\t')) ++begin;
  const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), code);
  return ec == std::errc() && end != begin ? std::optional<int>(code) : std::nullopt;
}

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

void FileReader::record(const fs::path& file, const std::string& message) {
  ProbeError error{"/" + file.lexically_relative(root_).string(), message};
  // Two probes may read the same file (the netdev MTU for the port and for the interface list):
  // one error per file and message.
  for (const auto& e : errors_)
    if (e.source == error.source && e.message == error.message) return;
  errors_.push_back(std::move(error));
}

std::optional<std::string> FileReader::text(const fs::path& file) {
  std::optional<std::string> content;
  if (auto failed = failure_of([&] { content = read_regular_file(file.string(), kMaxFileBytes); })) record(file, *failed);
  return content;
}

std::optional<std::string> FileReader::line(const fs::path& file) {
  auto content = text(file);
  if (!content) return std::nullopt;
  return trim(first_line(*content));
}

std::optional<std::string> FileReader::line_quiet(const fs::path& file) const {
  std::optional<std::string> content;
  (void)failure_of([&] { content = read_regular_file(file.string(), kMaxFileBytes); });  // quiet: unreadable reads as absent
  if (!content) return std::nullopt;
  return trim(first_line(*content));
}

std::optional<long long> FileReader::integer(const fs::path& file, long long min, long long max) {
  auto value = line(file);
  if (!value || value->empty()) return std::nullopt;
  long long number = 0;
  const bool hex = value->rfind("0x", 0) == 0 || value->rfind("0X", 0) == 0;
  const char* begin = value->data() + (hex ? 2 : 0);
  const auto [end, ec] = std::from_chars(begin, value->data() + value->size(), number, hex ? 16 : 10);
  if (ec != std::errc() || end != value->data() + value->size() || end == begin) {
    record(file, "not a number in range: '" + value->substr(0, 64) + "'");
    return std::nullopt;
  }
  if (number < min || number > max) {
    record(file, "out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]: " + std::to_string(number));
    return std::nullopt;
  }
  return number;
}

std::vector<std::string> FileReader::list(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    if (ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
      record(dir, ec.message());
    return names;
  }
  for (const auto& entry : it) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<fs::path> FileReader::resolve(const fs::path& link) const {
  std::error_code ec;
  auto target = fs::canonical(link, ec);
  if (ec) return std::nullopt;
  return target;
}

bool FileReader::exists(const fs::path& p) const {
  std::error_code ec;
  return fs::exists(p, ec);
}

}  // namespace fabricproof::probe
