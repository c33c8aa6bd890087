#pragma once
#include <string>

#include "report/report.hpp"

namespace fabricproof {

// report.md: the same content as report.json, as tables a person reads in a terminal or ticket.
std::string render_markdown(const Report& report);
// The few lines rank 0 prints at the end: verdict, counts, the worst findings first.
std::string render_console_summary(const Report& report, size_t max_findings = 12);
// A JSON value as short text for a table cell: strings bare, objects as "k=v, k=v".
std::string compact(const nlohmann::json& value);
// A Markdown table of findings (verdict, check, subject, measured, expected, rule, hint).
std::string render_findings_markdown(const std::vector<const Finding*>& findings);
// Findings ordered worst first, stable within a verdict.
std::vector<const Finding*> worst_first(const std::vector<Finding>& findings);

}  // namespace fabricproof
