#include "collectives/nccl_info.hpp"

#include <fmt/format.h>

#include "collectives/nccl_library.hpp"
#include "core/located_error.hpp"

namespace fabricproof::collectives {

std::optional<std::string> nccl_version() {
  const NcclLibrary* nccl = nullptr;
  if (failure_of([&] { nccl = &nccl_library(); })) return std::nullopt;  // no loadable NCCL: no version, not an error here
  int code = 0;
  if (nccl->GetVersion(&code) != ncclSuccess) return std::nullopt;
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch; older releases major*1000 + minor*100.
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
}

}  // namespace fabricproof::collectives
