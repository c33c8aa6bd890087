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

Subject Subject::port(std::string host, std::string device, int port) {
  Subject s = with(Kind::port, std::move(host));
  s.device = std::move(device);
  s.number = port;
  return s;
}

Subject Subject::rank(int rank, std::string label) {
  Subject s = with(Kind::rank, std::move(label));
  s.number = rank;
  return s;
}

Subject Subject::connection(int rank, std::string label, int peer, std::string peer_label, bool receiving) {
  Subject s = with(Kind::connection, std::move(label));
  s.number = rank;
  s.peer = std::move(peer_label);
  s.peer_number = peer;
  s.receiving = receiving;
  return s;
}

Subject Subject::pair(std::string from, std::string to, std::string test, bool both_ways) {
  Subject s = with(Kind::pair, std::move(from));
  s.peer = std::move(to);
  s.test = std::move(test);
  s.both_ways = both_ways;
  return s;
}

std::string Subject::text() const {
  switch (kind) {
    case Kind::port: return name + "/" + device + ":" + std::to_string(number);
    case Kind::pair: return name + (both_ways ? " <-> " : " -> ") + peer + (test.empty() ? "" : " (" + test + ")");
    case Kind::connection: return name + (receiving ? " <- " : " -> ") + peer;
    case Kind::text:
    case Kind::cluster:
    case Kind::node:
    case Kind::rank: break;
  }
  return name;
}

nlohmann::json target_json(const Subject& s) {
  switch (s.kind) {
    case Subject::Kind::text: return nullptr;
    case Subject::Kind::cluster: return {{"kind", "cluster"}};
    case Subject::Kind::node: return {{"kind", "node"}, {"host", s.name}};
    case Subject::Kind::port: return {{"kind", "port"}, {"host", s.name}, {"device", s.device}, {"port", s.number}};
    case Subject::Kind::pair: return {{"kind", "pair"}, {"from", s.name}, {"to", s.peer}, {"test", s.test}, {"both_ways", s.both_ways}};
    case Subject::Kind::rank: return {{"kind", "rank"}, {"rank", s.number}};
    case Subject::Kind::connection:
      return {{"kind", "connection"}, {"rank", s.number}, {"peer", s.peer_number}, {"direction", s.receiving ? "receive" : "send"}};
  }
  return nullptr;
}

Subject subject_from_json(const nlohmann::json& subject_text, const nlohmann::json& target, bool pair_check) {
  const std::string text = subject_text.get<std::string>();
  if (!target.is_object()) return pair_check ? legacy_pair(text) : Subject(text);
  const std::string kind = target.at("kind").get<std::string>();
  if (kind == "cluster") return Subject::cluster();
  if (kind == "node") return Subject::node(target.at("host").get<std::string>());
  if (kind == "pair")
    return Subject::pair(target.at("from").get<std::string>(), target.at("to").get<std::string>(), target.value("test", ""),
                         target.value("both_ways", false));
  if (kind == "port") return Subject::port(target.at("host").get<std::string>(), target.at("device").get<std::string>(), target.at("port").get<int>());
  if (kind == "rank") return Subject::rank(target.at("rank").get<int>(), text);
  if (kind == "connection") {  // the labels are the text's two ends
    const bool receiving = target.value("direction", "send") == "receive";
    const auto arrow = text.find(receiving ? " <- " : " -> ");
    if (arrow != std::string::npos)
      return Subject::connection(target.at("rank").get<int>(), text.substr(0, arrow), target.at("peer").get<int>(), text.substr(arrow + 4), receiving);
  }
  return Subject(text);
}

}  // namespace fabricproof
