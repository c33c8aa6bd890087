#pragma once
// What a finding is about, typed: the cluster, a node, a port, a pair of endpoints with its test, a
// rank, a connection between two ranks, or a free text (a device, a group of ranks, an input
// file). The writers format it (text()); the views mark matrix cells from a pair's ends and test,
// never from the text. JSON: "subject" is text() (the report contract), and a typed subject adds
// "target" ({"kind": "pair", "from", "to", "test", "both_ways"}, {"kind": "port", "host", "device",
// "port"}, ...).
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

namespace fabricproof {

struct Subject {
  enum class Kind { text, cluster, node, port, pair, rank, connection };
  Kind kind = Kind::text;
  std::string name;        // text: as written; node, port: the host; pair, connection: the first end's label; rank: its label
  std::string peer;        // pair, connection: the other end's label
  std::string device;      // port: the RDMA device
  int number = 0;          // port: the port number; rank, connection: the rank
  int peer_number = 0;     // connection: the peer's rank
  std::string test;        // pair: the test ("write_bw"), or empty for the pair as a whole
  bool both_ways = false;  // pair: a <-> b (a round trip, both directions at once, the pair as a whole)
  bool receiving = false;  // connection: name receives from peer ("a <- b"), else sends ("a -> b")

  Subject() = default;
  Subject(std::string text) : name(std::move(text)) {}  // NOLINT: a free text subject, as rules write it
  Subject(const char* text) : name(text) {}             // NOLINT
  static Subject cluster() { return with(Kind::cluster, "cluster"); }
  static Subject node(std::string host) { return with(Kind::node, std::move(host)); }
  static Subject port(std::string host, std::string device, int port);
  static Subject pair(std::string from, std::string to, std::string test, bool both_ways);
  static Subject rank(int rank, std::string label);  // label: "rank 3 (node2)"
  static Subject connection(int rank, std::string label, int peer, std::string peer_label, bool receiving);

  // "node1/mlx5_0 -> node2/mlx5_0 (write_bw)", "node1/mlx5_0:1", "rank 0 (node1) <- rank 3 (node2)", "cluster", the text.
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
// only the text, and the subject of a pair check (`pair_check`) is then read back from it
// ("a -> b (test)"), once, here.
Subject subject_from_json(const nlohmann::json& subject_text, const nlohmann::json& target, bool pair_check);

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
