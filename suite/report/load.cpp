#include "report/load.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text_file.hpp"
#include "report/schema_check.hpp"

namespace fabricproof {

Report load_report(const std::string& path) {
  std::optional<std::string> text;  // a report of a big cluster is tens of MB
  const auto unreadable = failure_of([&] { text = read_regular_file(path, 1u << 30); });
  if (!text) throw LocatedError("", path + ": cannot be read" + (unreadable ? " (" + *unreadable + ")" : ""));
  try {
    const auto j = nlohmann::json::parse(*text);
    if (!j.is_object() || j.value("schema", std::string()) != kReportSchema)
      throw LocatedError("", path + ": not a fabricproof report (no \"schema\": \"" + kReportSchema + "\")");
    // The shape against the published schema first: a wrong section is named by its pointer,
    // instead of being left out of what the writers render.
    if (const auto wrong = report_shape_errors(j); !wrong.empty())
      throw LocatedError("", fmt::format("{}: not a valid {} report: {}", path, kReportSchema, fmt::join(wrong, "; ")));
    return j.get<Report>();
  } catch (const LocatedError&) {
    throw;
  } catch (const std::exception& e) {
    throw LocatedError("", path + ": not a readable report: " + e.what());
  }
}

}  // namespace fabricproof
