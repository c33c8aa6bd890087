#pragma once
// Where tests find their data: the repository's fixtures only (each folder's README says where its
// data was published), so that every test runs from a plain clone.
#include <cstdlib>
#include <filesystem>
#include <string>

namespace fabricproof::test {

inline std::filesystem::path source_dir() { return FABRICPROOF_SOURCE_DIR; }
inline std::filesystem::path fixture(const std::string& name) { return source_dir() / "tests" / "fixtures" / name; }

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
