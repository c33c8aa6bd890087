#include "app/report_command.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "report/junit.hpp"
#include "report/markdown.hpp"
#include "report/report.hpp"

namespace fabricproof::app {

int render_report(const ReportOptionsCli& options) {
  namespace fs = std::filesystem;
  const auto fail = [&](const std::string& why) {
    std::cerr << "fabricproof report: " << options.input << ": " << why << "\n";
    return 2;
  };
  std::ifstream in(options.input, std::ios::binary);
  if (!in) return fail("cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  Report report;
  try {
    const auto j = nlohmann::json::parse(text.str());
    if (!j.is_object() || j.value("schema", std::string()) != kReportSchema)
      return fail(std::string("not a fabricproof report (no \"schema\": \"") + kReportSchema + "\")");
    report = j.get<Report>();
  } catch (const std::exception& e) {
    return fail(std::string("not a readable report: ") + e.what());
  }
  const fs::path out = options.out_dir.empty() ? fs::path(options.input).parent_path() : fs::path(options.out_dir);
  std::error_code ec;
  if (!out.empty()) fs::create_directories(out, ec);
  for (const auto& format : options.formats) {
    const std::string name = format == "md" ? "report.md" : format == "junit" ? "junit.xml" : "report.json";
    const std::string content = format == "md"      ? render_markdown(report)
                                : format == "junit" ? render_junit(report)
                                                    : json_text(nlohmann::json(report), 2) + "\n";
    const auto path = (out / name).string();
    if (auto error = write_file_atomic(path, content); !error.empty()) return fail("cannot write " + path + ": " + error);
    std::cout << path << "\n";
  }
  return 0;
}

}  // namespace fabricproof::app
