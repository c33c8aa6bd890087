#pragma once
// A saved report.json read back as the model, checked against the published schema first.
#include <optional>
#include <string>

#include "report/report.hpp"

namespace fabricproof {

// nullopt with `error` naming the file and the problem when it is unreadable or not a fabricproof report.
std::optional<Report> load_report(const std::string& path, std::string& error);

}  // namespace fabricproof
