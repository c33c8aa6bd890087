#pragma once
#include "cli/options.hpp"

namespace fabricproof::app {

// `fabricproof spec draft --from report.json [--out FILE]`: a spec from a known-good run (exit 0;
// 2 when the report cannot be read or the draft does not validate). `fabricproof spec check FILE`:
// the spec's errors, each naming its JSON pointer (exit 2), or what it requires (exit 0).
int spec_command(const SpecOptionsCli& options);

}  // namespace fabricproof::app
