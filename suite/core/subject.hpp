#pragma once
// What a finding is about, typed: a pair of endpoints with its test, a node, the cluster, or a
// free text. The writers format it (text()); the views mark matrix cells from the pair's ends and
// test, never from the text. JSON: "subject" is text() (the report contract), and a typed subject
// adds "target" ({"kind": "pair", "from", "to", "test", "both_ways"}).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

namespace fabricproof {

struct Subject {
  enum class Kind { text, cluster, node, pair };
  Kind kind = Kind::text;
  std::string name;         // text: as written; node: the host; pair: the first end's label ("node1/mlx5_0")
  std::string peer;         // pair: the other end's label
  std::string test;         // pair: the test ("write_bw"), or empty for the pair as a whole
  bool both_ways = false;   // pair: a <-> b (a round trip, both directions at once, the pair as a whole)

  Subject() = default;
  Subject(std::string text) : name(std::move(text)) {}  // NOLINT: a free text subject, as rules write it
  Subject(const char* text) : name(text) {}             // NOLINT
  static Subject cluster() { return with(Kind::cluster, "cluster"); }
  static Subject node(std::string host) { return with(Kind::node, std::move(host)); }
  static Subject pair(std::string from, std::string to, std::string test, bool both_ways);

  // "node1/mlx5_0 -> node2/mlx5_0 (write_bw)", "node1/mlx5_0 <-> node2/mlx5_0", "cluster", the text.
  std::string text() const;
  operator std::string() const { return text(); }  // NOLINT: writers and tests read it as text
  bool operator==(const std::string& other) const { return text() == other; }
  bool operator==(const char* other) const { return text() == other; }

 private:
  static Subject with(Kind kind, std::string name) {
    Subject s(std::move(name));
    s.kind = kind;
    return s;
  }
};

inline std::ostream& operator<<(std::ostream& out, const Subject& subject) { return out << subject.text(); }

// "target" of a finding: null for a text subject.
nlohmann::json target_json(const Subject& subject);
// From a report: "target" when the report has it; a report written before subjects were typed has
// only the text, and a pair is then read back from it ("a -> b (test)"), once, here.
Subject subject_from_json(const nlohmann::json& subject_text, const nlohmann::json& target);

}  // namespace fabricproof

// A subject formats as its text.
template <>
struct fmt::formatter<fabricproof::Subject> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const fabricproof::Subject& subject, FormatContext& ctx) const {
    const std::string text = subject.text();
    return fmt::formatter<std::string_view>::format(text, ctx);
  }
};
