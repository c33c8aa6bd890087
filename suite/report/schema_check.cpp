#include "report/schema_check.hpp"

#include <cmath>

#include <fmt/format.h>

#include <algorithm>
#include <regex>

namespace fabricproof {
namespace {

using json = nlohmann::json;

std::string type_of(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    default: return "other";
  }
}

bool has_type(const json& v, const std::string& type) {
  if (type == "number") return v.is_number();
  if (type == "integer") {  // 3.0 is one too; a cast to an integer type would be undefined beyond its range (the fuzzer's 7.8e83)
    if (v.is_number_integer()) return true;
    const double d = v.is_number_float() ? v.get<double>() : 0.5;
    return std::isfinite(d) && std::trunc(d) == d;
  }
  return type_of(v) == type;
}

// "~" and "/" in a key are escaped in a JSON pointer (RFC 6901): "node1/rxe0" -> "node1~1rxe0".
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

class Checker {
 public:
  Checker(const json& root, size_t limit) : root_(root), limit_(limit) {}

  void check(const json& schema, const json& v, const std::string& at) {
    if (full() || !schema.is_object()) return;
    if (const auto ref = schema.find("$ref"); ref != schema.end()) return check(resolve(ref->get<std::string>()), v, at);
    if (const auto t = schema.find("type"); t != schema.end()) {
      const auto types = t->is_array() ? t->get<std::vector<std::string>>() : std::vector<std::string>{t->get<std::string>()};
      bool ok = false;
      for (const auto& type : types) ok = ok || has_type(v, type);
      if (!ok) return add(at, fmt::format("expected {}, got {}", fmt::join(types, " or "), type_of(v)));
    }
    if (const auto c = schema.find("const"); c != schema.end() && *c != v) return add(at, fmt::format("expected {}, got {}", c->dump(), v.dump()));
    if (const auto e = schema.find("enum"); e != schema.end() && std::find(e->begin(), e->end(), v) == e->end())
      return add(at, fmt::format("{} is not one of {}", v.dump(), e->dump()));
    if (const auto m = schema.find("minimum"); m != schema.end() && v.is_number() && v.get<double>() < m->get<double>())
      add(at, fmt::format("{} is below the minimum {}", v.dump(), m->dump()));
    if (const auto p = schema.find("pattern"); p != schema.end() && v.is_string() && !std::regex_search(v.get<std::string>(), std::regex(p->get<std::string>())))
      add(at, fmt::format("{} does not match {}", v.dump(), p->get<std::string>()));
    if (const auto one = schema.find("oneOf"); one != schema.end()) {
      int matching = 0;
      std::vector<std::string> types;  // of the alternatives, when each names one
      for (const auto& alternative : *one) {
        matching += Checker(root_, 1).passes(alternative, v);
        const json& resolved = alternative.contains("$ref") ? resolve(alternative["$ref"].get<std::string>()) : alternative;
        if (resolved.contains("type") && resolved["type"].is_string()) types.push_back(resolved["type"].get<std::string>());
      }
      if (matching == 0 && types.size() == one->size() && std::none_of(types.begin(), types.end(), [&](const auto& t) { return has_type(v, t); }))
        add(at, fmt::format("expected {}, got {}", fmt::join(types, " or "), type_of(v)));
      else if (matching != 1)
        add(at, fmt::format("matches {} of the {} alternatives, not exactly one", matching, one->size()));
    }
    // if/then: a comparison entry measured "ok" must carry its figures (a saved report whose entries
    // lack them would otherwise be rendered and compared without a word).
    if (const auto when = schema.find("if"); when != schema.end() && Checker(root_, 1).passes(*when, v))
      if (const auto then = schema.find("then"); then != schema.end()) check(*then, v, at);
    if (v.is_object()) check_object(schema, v, at);
    if (v.is_array())
      if (const auto items = schema.find("items"); items != schema.end())
        for (size_t i = 0; i < v.size(); ++i) check(*items, v[i], fmt::format("{}/{}", at, i));
  }

  bool passes(const json& schema, const json& v) {
    check(schema, v, "");
    return errors.empty();
  }

  std::vector<std::string> errors;

 private:
  void check_object(const json& schema, const json& v, const std::string& at) {
    if (const auto required = schema.find("required"); required != schema.end())
      for (const auto& key : *required)
        if (!v.contains(key.get<std::string>())) add(at, fmt::format("missing \"{}\"", key.get<std::string>()));
    const auto properties = schema.find("properties");
    const auto additional = schema.find("additionalProperties");
    for (const auto& [key, value] : v.items()) {
      const std::string where = at + "/" + pointer_token(key);
      if (properties != schema.end() && properties->contains(key))
        check(properties->at(key), value, where);
      else if (additional != schema.end() && additional->is_object())
        check(*additional, value, where);
      else if (additional != schema.end() && *additional == false)
        add(where, "is not allowed here");
    }
  }

  const json& resolve(const std::string& ref) {
    if (ref.rfind("#/", 0) != 0) throw std::invalid_argument("report schema: only local $ref is supported: " + ref);
    return root_.at(json::json_pointer(ref.substr(1)));
  }

  void add(const std::string& at, const std::string& what) {
    if (!full()) errors.push_back(fmt::format("{}: {}", at.empty() ? "/" : at, what));
  }
  bool full() const { return errors.size() >= limit_; }

  const json& root_;
  size_t limit_;
};

}  // namespace

std::vector<std::string> schema_violations(const json& schema, const json& document, size_t limit) {
  Checker checker(schema, limit);
  checker.check(schema, document, "");
  return checker.errors;
}

std::vector<std::string> report_shape_errors(const json& report, size_t limit) {
  static const json schema = json::parse(report_schema_text());
  return schema_violations(schema, report, limit);
}

}  // namespace fabricproof
