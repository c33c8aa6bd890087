#include "nccl_log/debug_file.hpp"

namespace fabricproof::nccl {

std::string expand_debug_file_name(std::string_view pattern, std::string_view hostname, long pid) {
  std::string host(hostname.substr(0, hostname.find('.')));
  for (char& c : host)
    if (c == '%' || c == '/') c = '-';
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    switch (pattern[++i]) {
      case '%': out += '%'; break;
      case 'h': out += host; break;
      case 'p': out += std::to_string(pid); break;
      default:  // NCCL echoes what it does not understand
        out += '%';
        out += pattern[i];
    }
  }
  return out;
}

}  // namespace fabricproof::nccl
