#pragma once
// report.html: one self-contained page (inline CSS, SVG and a few lines of script; nothing is
// fetched, so it opens on a factory floor without network). Rendered from the same views as the
// Markdown (report/views.hpp).
#include <string>
#include <vector>

#include "report/report.hpp"

namespace fabricproof {

std::string render_html(const Report& report);

// A page with a verdict banner, an introduction and a sortable findings table: `compare` uses it.
std::string render_findings_html(const std::string& title, Verdict verdict, const std::string& intro,
                                 const std::vector<Finding>& findings);

}  // namespace fabricproof
