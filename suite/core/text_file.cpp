#include "core/text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/located_error.hpp"

namespace fabricproof {

std::optional<std::string> read_regular_file(const std::string& path, size_t cap) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // a FIFO must not block the open
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw LocatedError("", std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw LocatedError("", "not a regular file");
  }
  std::string error;
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
  if (!error.empty()) throw LocatedError("", error);
  return content;
}

}  // namespace fabricproof
