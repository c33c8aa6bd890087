#include "report/formats.hpp"

#include "report/html.hpp"
#include "report/junit.hpp"
#include "report/markdown.hpp"
#include "report/prometheus.hpp"

namespace fabricproof {

std::string report_file_name(const std::string& format) {
  if (format == "md") return "report.md";
  if (format == "html") return "report.html";
  if (format == "junit") return "junit.xml";
  if (format == "prom") return "report.prom";
  return "report.json";
}

std::string render_report_format(const Report& report, const std::string& format) {
  if (format == "md") return render_markdown(report);
  if (format == "html") return render_html(report);
  if (format == "junit") return render_junit(report);
  if (format == "prom") return render_prometheus(report);
  return json_text(nlohmann::json(report), 2) + "\n";
}

}  // namespace fabricproof
