#pragma once
// JUnit XML of a report, so CI systems and factory dashboards show each finding natively: one
// testsuite per check id, one testcase per finding (fail -> <failure>, error -> <error>, skip ->
// <skipped>; warn passes with the warning in <system-out>), and a "phases" suite whose errored or
// skipped phases say why.
#include <string>

#include "report/report.hpp"

namespace fabricproof {

std::string render_junit(const Report& report);

// Text safe inside XML attributes and elements: & < > " ' escaped, control characters other than
// tab and newline dropped (XML 1.0 cannot carry them).
std::string xml_escape(const std::string& text);

}  // namespace fabricproof
