#pragma once
#include <optional>
#include <string>

namespace fabricproof::collectives {
// The NCCL library's own version (ncclGetVersion), e.g. "2.28.3"; nothing when no NCCL loads.
std::optional<std::string> nccl_version();
}  // namespace fabricproof::collectives
