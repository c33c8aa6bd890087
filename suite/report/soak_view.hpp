#pragma once
// What the human formats show of a soak: each load series pass by pass, the counter events on the
// time line (traffic counters left out: they move all the time), and one time line per port.
#include <string>
#include <vector>

#include "soak/soak_model.hpp"

namespace fabricproof::view {

struct SoakSeriesRow {
  std::string what;
  std::string unit;
  size_t passes_ok = 0;
  size_t failed = 0;
  double median = 0;
  double worst = 0;
};
std::vector<SoakSeriesRow> soak_series(const SoakSection& soak);

// A port's counters that moved between two samples (not traffic), or its link going down.
struct SoakEvent {
  std::string host;
  std::string device;
  int port = 0;
  double from_s = 0;
  double to_s = 0;
  std::string time;  // UTC of the later sample
  std::string what;  // "link_downed +1, netdev.carrier_down_count +1" or "symbol_error +3"
  bool link_down = false;
};
std::vector<SoakEvent> soak_events(const SoakSection& soak);

// One port over the soak: the load through it pass by pass (the verbs figures of its node on its
// rail, summed; a failed figure counts 0), and its events.
struct PortTimeline {
  std::string host;
  std::string device;
  int port = 0;
  std::vector<std::pair<double, double>> throughput;  // (pass midpoint s, Gb/s)
  std::vector<SoakEvent> events;
};
// `events`: soak_events(soak), which the caller shows too (the time line is read once).
std::vector<PortTimeline> soak_port_timelines(const SoakSection& soak, const std::vector<SoakEvent>& events);

// Counters that move in the background: traffic (data, packets, bytes, pause frames) and the carrier
// coming back up (with the link-down event it follows). The events leave them out.
bool is_background_counter(const std::string& name);

}  // namespace fabricproof::view
