#pragma once
// report.json checked against the published contract, schemas/report.schema.json (embedded in
// the binary at build time), before anything reads it: a section of the wrong shape is an error
// naming its JSON pointer and what the schema expects there, never a section quietly left out of
// the rendered report. The validator covers the JSON Schema keywords the schema uses: type, enum,
// const, minimum, pattern, required, properties, additionalProperties, items, oneOf and local $ref.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace fabricproof {

std::string_view report_schema_text();

// The first `limit` violations of `schema` by `document`, as "/json/pointer: what is wrong".
std::vector<std::string> schema_violations(const nlohmann::json& schema, const nlohmann::json& document, size_t limit = 5);

// The same against the embedded report schema.
std::vector<std::string> report_shape_errors(const nlohmann::json& report, size_t limit = 5);

}  // namespace fabricproof
