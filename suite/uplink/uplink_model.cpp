#include "uplink/uplink_model.hpp"

#include <algorithm>
#include <charconv>

#include "core/located_error.hpp"

namespace fabricproof {

using nlohmann::json;

UplinkTarget parse_uplink_target(const std::string& text) {
  const auto bad = [&](const std::string& why) { return LocatedError("", "'" + text + "': " + why); };
  UplinkTarget t;
  std::string port;
  if (!text.empty() && text.front() == '[') {  // [v6]:port
    const auto close = text.find(']');
    if (close == std::string::npos) throw bad("no ']' after an IPv6 address");
    t.host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') throw bad("expected ':PORT' after ']'");
      port = text.substr(close + 2);
      if (port.empty()) throw bad("empty port");
    }
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    if (text.find(':') != colon) throw bad("an IPv6 address goes in brackets, [addr]:port");
    t.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (port.empty()) throw bad("empty port");
  } else {
    t.host = text;
  }
  if (t.host.empty()) throw bad("no host");
  if (!port.empty()) {
    int value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value < 1 || value > 65535)
      throw bad("port '" + port + "' is not 1-65535");
    t.port = value;
  }
  return t;
}

std::string to_string(const UplinkTarget& target) {
  return (target.host.find(':') != std::string::npos ? "[" + target.host + "]" : target.host) + ":" + std::to_string(target.port);
}

int uplink_flows_for(const std::optional<int>& requested, const UplinkPath& path) {
  if (requested) return *requested;
  return std::max(2, 2 * static_cast<int>(path.links.size()));
}

std::string busy_retries_note(const UplinkFlows& f) {
  return f.server_busy_retries > 0 ? "; server busy, started again " + std::to_string(f.server_busy_retries) + " time(s)" : "";
}

UplinkFlows uplink_error(int flows, std::string reason) {
  UplinkFlows f;
  f.flows = flows;
  f.status = Status::error;
  f.reason = std::move(reason);
  return f;
}

namespace {

UplinkFlows failed(std::string reason) { return uplink_error(0, std::move(reason)); }

const json* number_at(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? &*it : nullptr;
}

}  // namespace

// iperf3 3.x --json: "error" when the test failed; otherwise end.sum_received (what this side
// received: with -R, the ingest) and end.streams[].receiver per stream; the sender's
// retransmissions in end.sum_sent when the sender is Linux.
UplinkFlows parse_iperf3_json(const std::string& text) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    const auto shown = text.substr(0, 120);
    return failed(text.empty() ? "iperf3 printed nothing" : "not iperf3 JSON output: '" + shown + "'");
  }
  if (const auto e = doc.find("error"); e != doc.end() && e->is_string()) return failed("iperf3: " + e->get<std::string>());
  const json& end = doc.contains("end") ? doc["end"] : json();
  const json& sum = end.is_object() && end.contains("sum_received") ? end["sum_received"] : json();
  const json* bps = number_at(sum, "bits_per_second");
  if (!bps) return failed("iperf3 JSON without end.sum_received.bits_per_second");
  UplinkFlows f;
  f.status = Status::ok;
  f.gbps = bps->get<double>() / 1e9;
  if (const json* s = number_at(sum, "seconds")) f.seconds = s->get<double>();
  if (end.contains("streams") && end["streams"].is_array())
    for (const auto& stream : end["streams"])
      if (stream.is_object() && stream.contains("receiver"))
        if (const json* b = number_at(stream["receiver"], "bits_per_second")) f.per_flow_gbps.push_back(b->get<double>() / 1e9);
  f.flows = static_cast<int>(f.per_flow_gbps.size());
  if (end.contains("sum_sent"))
    if (const json* r = number_at(end["sum_sent"], "retransmits")) f.retransmits = r->get<int64_t>();
  // The measured intervals (not the omitted ones), for lining up the nodes' windows. Each starts
  // where the one before ended, the first at 0 (the measurement's own start): iperf3 3.12's own
  // start of the first interval after --omit is not to be trusted (once 1.00001 with its end at
  // 1.000003, which made a 2 s window look like 1 s).
  if (doc.contains("intervals") && doc["intervals"].is_array())
    for (const auto& interval : doc["intervals"]) {
      const json& sum_of = interval.is_object() && interval.contains("sum") ? interval["sum"] : json();
      const json* stop = number_at(sum_of, "end");
      const json* bytes = number_at(sum_of, "bytes");
      if (!stop || !bytes || sum_of.value("omitted", false)) continue;
      const double start = f.intervals.empty() ? 0.0 : f.intervals.back().end;
      if (stop->get<double>() <= start) continue;  // not later than the one before: nothing to place
      f.intervals.push_back({start, stop->get<double>(), bytes->get<double>()});
    }
  return f;
}

}  // namespace fabricproof
