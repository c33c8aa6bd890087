#pragma once
// Where NCCL writes its debug log: NCCL_DEBUG_FILE with NCCL's own expansion (src/debug.cc), so
// that the file a rank reads is the one NCCL wrote, also on hosts with FQDN names.
#include <string>
#include <string_view>

namespace fabricproof::nccl {

// NCCL_DEBUG_FILE's name for this process: %h is the host name cut at the first '.', with '%' and
// '/' in it replaced by '-' (getHostNameForLog); %p the pid; %% a '%'; any other %x stays as it is.
std::string expand_debug_file_name(std::string_view pattern, std::string_view hostname, long pid);

}  // namespace fabricproof::nccl
