#pragma once
#include <string>

namespace fabricproof {

// Now, in UTC, to the second: "2026-11-29T17:42:46Z" (the report's timestamps).
std::string utc_timestamp();

}  // namespace fabricproof
