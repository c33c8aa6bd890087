#pragma once
// Where tests find their data: the repository's fixtures, and the team's shared samples
// (../shared next to the repository, or FABRICPROOF_SHARED_DIR), read in place.
#include <cstdlib>
#include <filesystem>
#include <string>

namespace fabricproof::test {

inline std::filesystem::path source_dir() { return FABRICPROOF_SOURCE_DIR; }
inline std::filesystem::path fixture(const std::string& name) { return source_dir() / "tests" / "fixtures" / name; }
inline std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("FABRICPROOF_SHARED_DIR")) return env;
  return source_dir().parent_path() / "shared";
}

// A fresh, empty directory below the system temp dir, removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::string pattern = (std::filesystem::temp_directory_path() / ("fabricproof-" + tag + "-XXXXXX")).string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace fabricproof::test
