#pragma once
#include "cli/options.hpp"

namespace fabricproof::app {
// `fabricproof nccl-audit`: exit 0 when nothing failed, 1 on a failing finding, 2 when the logs
// could not be read or held no transport lines.
int nccl_audit(const AuditOptionsCli& options);
}  // namespace fabricproof::app
