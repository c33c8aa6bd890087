#include "core/text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fabricproof {

std::optional<std::string> read_regular_file(const std::string& path, size_t cap, std::string& error) {
  error.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // a FIFO must not block the open
  if (fd < 0) {
    error = errno == ENOENT || errno == ENOTDIR ? "" : std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = "not a regular file";
    ::close(fd);
    return std::nullopt;
  }
  std::string content;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::strerror(errno);
      break;
    }
    if (n == 0) break;
    if (content.size() + static_cast<size_t>(n) > cap) {
      error = "larger than " + std::to_string(cap) + " bytes";
      break;
    }
    content.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  if (!error.empty()) return std::nullopt;
  return content;
}

}  // namespace fabricproof
