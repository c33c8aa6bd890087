#pragma once
#include <string>

namespace fabricproof::collectives {
// The NCCL library's own version (ncclGetVersion), e.g. "2.28.3".
std::string nccl_version();
}  // namespace fabricproof::collectives
