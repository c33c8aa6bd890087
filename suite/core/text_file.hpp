#pragma once
// Reading a file of any origin without being fooled by it: only a regular file (a FIFO or a device
// would block or never end), opened without waiting, and at most `cap` bytes.
#include <cstddef>
#include <optional>
#include <string>

namespace fabricproof {

// The file's content, or nullopt with `error` saying why ("" when the file is simply not there).
std::optional<std::string> read_regular_file(const std::string& path, size_t cap, std::string& error);

}  // namespace fabricproof
