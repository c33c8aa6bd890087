#include "core/subject.hpp"

namespace fabricproof {
namespace {

// A report without "target": "a -> b (test)" or "a <-> b (test)" was a pair.
Subject legacy_pair(const std::string& text) {
  std::string rest = text, test;
  if (const auto open = rest.rfind(" ("); open != std::string::npos && rest.back() == ')') {
    test = rest.substr(open + 2, rest.size() - open - 3);
    rest.resize(open);
  }
  for (const auto& [arrow, both] : {std::pair<const char*, bool>{" <-> ", true}, {" -> ", false}})
    if (const auto at = rest.find(arrow); at != std::string::npos)
      return Subject::pair(rest.substr(0, at), rest.substr(at + std::string(arrow).size()), test, both);
  return Subject(text);
}

}  // namespace

Subject Subject::pair(std::string from, std::string to, std::string test, bool both_ways) {
  Subject s = with(Kind::pair, std::move(from));
  s.peer = std::move(to);
  s.test = std::move(test);
  s.both_ways = both_ways;
  return s;
}

std::string Subject::text() const {
  if (kind != Kind::pair) return name;
  return name + (both_ways ? " <-> " : " -> ") + peer + (test.empty() ? "" : " (" + test + ")");
}

nlohmann::json target_json(const Subject& s) {
  switch (s.kind) {
    case Subject::Kind::text: return nullptr;
    case Subject::Kind::cluster: return {{"kind", "cluster"}};
    case Subject::Kind::node: return {{"kind", "node"}, {"host", s.name}};
    case Subject::Kind::pair: return {{"kind", "pair"}, {"from", s.name}, {"to", s.peer}, {"test", s.test}, {"both_ways", s.both_ways}};
  }
  return nullptr;
}

Subject subject_from_json(const nlohmann::json& subject_text, const nlohmann::json& target) {
  const std::string text = subject_text.get<std::string>();
  if (!target.is_object()) return legacy_pair(text);
  const std::string kind = target.at("kind").get<std::string>();
  if (kind == "cluster") return Subject::cluster();
  if (kind == "node") return Subject::node(target.at("host").get<std::string>());
  if (kind == "pair")
    return Subject::pair(target.at("from").get<std::string>(), target.at("to").get<std::string>(), target.value("test", ""),
                         target.value("both_ways", false));
  return Subject(text);
}

}  // namespace fabricproof
