#pragma once
// nlohmann_json 3.11.2 (Debian 12) has no std::optional support: absent values are JSON null.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& value) {
    if (value) {
      j = *value;
    } else {
      j = nullptr;
    }
  }
  static void from_json(const json& j, std::optional<T>& value) {
    if (j.is_null()) {
      value.reset();
    } else {
      value = j.get<T>();
    }
  }
};
}  // namespace nlohmann

// to_json/from_json for a plain struct; keys are the member names, missing keys keep defaults.
#define FABRICPROOF_JSON(Type, ...) NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Type, __VA_ARGS__)

namespace fabricproof {
// JSON text of data that came from outside (logs, sysfs, firmware strings): invalid UTF-8 is
// replaced rather than thrown, so one odd byte never costs a report.
inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace fabricproof
