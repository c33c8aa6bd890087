#include "probe/file_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
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
  try {
    size_t used = 0;
    const int code = std::stoi(text, &used);
    return used ? std::optional<int>(code) : std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

void FileReader::record(const fs::path& file, const std::string& message) {
  auto shown = file.lexically_relative(root_);
  errors_.push_back({"/" + shown.string(), message});
}

std::optional<std::string> FileReader::text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    if (errno != ENOENT && errno != ENOTDIR) record(file, std::strerror(errno));
    return std::nullopt;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    record(file, "read failed");
    return std::nullopt;
  }
  return buffer.str();
}

std::optional<std::string> FileReader::line(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    if (errno != ENOENT && errno != ENOTDIR) record(file, std::strerror(errno));
    return std::nullopt;
  }
  std::string first;
  if (!std::getline(in, first) && in.bad()) {
    record(file, std::strerror(errno));
    return std::nullopt;
  }
  return trim(first);
}

std::optional<std::string> FileReader::line_quiet(const fs::path& file) const {
  std::ifstream in(file, std::ios::binary);
  std::string first;
  if (!in || (!std::getline(in, first) && !in.eof())) return std::nullopt;
  if (in.bad()) return std::nullopt;
  return trim(first);
}

std::optional<long long> FileReader::integer(const fs::path& file) {
  auto value = line(file);
  if (!value || value->empty()) return std::nullopt;
  try {
    return std::stoll(*value, nullptr, 0);
  } catch (...) {
    record(file, "not a number: '" + *value + "'");
    return std::nullopt;
  }
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
