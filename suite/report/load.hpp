#pragma once
// A saved report.json read back as the model, checked against the published schema first.
#include <optional>
#include <string>

#include "report/report.hpp"

namespace fabricproof {

// A LocatedError names the file and the problem when it is unreadable or not a fabricproof report.
Report load_report(const std::string& path);

}  // namespace fabricproof
