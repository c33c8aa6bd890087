#pragma once
// Reads sysfs/procfs/etc files below a root ("/" on a live system, a fixture tree in tests).
// A missing file is an absence; any other failure is recorded as a ProbeError so the report can
// say the inventory is incomplete instead of guessing. Only regular files are read (a FIFO or a
// device in a --root tree would block or never end), and at most kMaxFileBytes of each.
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "inventory/inventory.hpp"

namespace fabricproof::probe {

inline constexpr size_t kMaxFileBytes = 4u << 20;  // /proc/cpuinfo of a large host is < 1 MiB

class FileReader {
 public:
  // Absolute, so that paths resolved through symlinks (canonical) still show relative to it.
  explicit FileReader(const std::filesystem::path& root) : root_(std::filesystem::absolute(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path path(const std::string& relative) const { return root_ / relative; }

  // First line, trimmed. nullopt when missing (silent) or unreadable (recorded).
  std::optional<std::string> line(const std::filesystem::path& file);
  // Same, but every failure is silent: for files the kernel refuses to read by design (the GID
  // type of an empty GID slot answers EINVAL).
  std::optional<std::string> line_quiet(const std::filesystem::path& file) const;
  std::optional<std::string> text(const std::filesystem::path& file);
  // Decimal or 0x hex, within [min, max]; anything else is recorded and nullopt.
  std::optional<long long> integer(const std::filesystem::path& file, long long min = std::numeric_limits<long long>::min(),
                                   long long max = std::numeric_limits<long long>::max());
  // Entry names of a directory, sorted; empty when missing (silent) or unreadable (recorded).
  std::vector<std::string> list(const std::filesystem::path& dir);
  // Where a symlink leads, resolved inside the tree; nullopt when it is not there.
  std::optional<std::filesystem::path> resolve(const std::filesystem::path& link) const;
  bool exists(const std::filesystem::path& p) const;

  std::vector<ProbeError>& errors() { return errors_; }
  // A value read from `file` that is not what it should be: a probe error naming the file.
  void record(const std::filesystem::path& file, const std::string& message);

 private:
  std::filesystem::path root_;
  std::vector<ProbeError> errors_;
};

std::string trim(std::string s);
// "4: ACTIVE" -> 4; "5: LinkUp" -> 5.
std::optional<int> leading_code(const std::string& text);

}  // namespace fabricproof::probe
