#include "report/load.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text_file.hpp"
#include "report/schema_check.hpp"

namespace fabricproof {

std::optional<Report> load_report(const std::string& path, std::string& error) {
  std::string why;
  const auto text = read_regular_file(path, 1u << 30, why);  // a report of a big cluster is tens of MB
  if (!text) {
    error = path + ": cannot be read" + (why.empty() ? "" : " (" + why + ")");
    return std::nullopt;
  }
  try {
    const auto j = nlohmann::json::parse(*text);
    if (!j.is_object() || j.value("schema", std::string()) != kReportSchema) {
      error = path + ": not a fabricproof report (no \"schema\": \"" + kReportSchema + "\")";
      return std::nullopt;
    }
    // The shape against the published schema first: a wrong section is named by its pointer,
    // instead of being left out of what the writers render.
    if (const auto wrong = report_shape_errors(j); !wrong.empty()) {
      error = fmt::format("{}: not a valid {} report: {}", path, kReportSchema, fmt::join(wrong, "; "));
      return std::nullopt;
    }
    return j.get<Report>();
  } catch (const std::exception& e) {
    error = path + ": not a readable report: " + e.what();
    return std::nullopt;
  }
}

}  // namespace fabricproof
