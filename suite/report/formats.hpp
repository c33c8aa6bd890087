#pragma once
// The report's file formats, by name: json -> report.json, md -> report.md, html -> report.html,
// junit -> junit.xml, prom -> report.prom (a node_exporter textfile). `run` and `report` write
// through here, so both name files the same way.
#include <string>
#include <vector>

#include "report/report.hpp"

namespace fabricproof {

inline const std::vector<std::string> kReportFormats = {"json", "md", "html", "junit", "prom"};

std::string report_file_name(const std::string& format);
std::string render_report_format(const Report& report, const std::string& format);

}  // namespace fabricproof
