#pragma once
// The soak judged like the public burn-in references (README "Burn-in"): NVIDIA's InfiniBand
// bring-up (every LinkDown explained; symbol BER judged after 125 minutes of uptime), Azure's
// node health checks (PortRcvErrors above 100, PortXmitDiscards above 1000; any SymbolError or
// LinkErrorRecovery investigated), and the load's own stability (the worst pass against the
// pair's median, the coefficient of variation).
#include <map>
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "core/profile.hpp"
#include "soak/soak_model.hpp"

namespace fabricproof {

// One port between two consecutive samples of its node: the counters that moved (by how much) and
// the state it was in at the later sample. The soak's time line of counters.
struct CounterStep {
  std::string host;
  std::string device;
  int port = 0;
  double from_s = 0;
  double to_s = 0;
  std::string to_time;  // UTC of the later sample
  std::map<std::string, int64_t> deltas;
  std::string state;
};

// Every step of every port, in time order per port; only steps where something moved or the port
// was not ACTIVE.
std::vector<CounterStep> counter_steps(const SoakSection& soak);

// Whether a counter counts the link going down (link_downed, the netdev's carrier_down_count,
// mlx5's link_down_events_phy): what link_down_evidence reads, and the soak's progress lines.
bool is_link_down_counter(const std::string& name);

// Whether a step shows the link going down: the port's link_downed counter, the netdev's carrier
// going down, or the port not ACTIVE at the sample.
std::string link_down_evidence(const CounterStep& step);

// Every soak rule over the section. The section must come from a soak that was asked for; a soak
// without samples or passes fails closed (not proven).
std::vector<Finding> check_soak(const SoakSection& soak, const Profile& profile);

}  // namespace fabricproof
