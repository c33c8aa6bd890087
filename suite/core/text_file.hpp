#pragma once
// Reading a file of any origin without being fooled by it: only a regular file (a FIFO or a device
// would block or never end), opened without waiting, and at most `cap` bytes.
#include <cstddef>
#include <optional>
#include <string>

#include "core/located_error.hpp"

namespace fabricproof {

// The file's content, or nullopt when it is simply not there; a LocatedError says why a file that
// is there cannot be read (not a regular file, larger than `cap`, a read error).
std::optional<std::string> read_regular_file(const std::string& path, size_t cap);

}  // namespace fabricproof
