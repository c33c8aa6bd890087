#pragma once
// The report as a node_exporter textfile (report.prom): the run's verdict and time, the findings by
// verdict, per-pair verbs bandwidth and latency, busbw per engine/op/node count/size, and the NCCL
// transport counts with a socket-fallback flag. Names and help in Prometheus conventions: base
// units (bytes per second, seconds), one TYPE and HELP per family, escaped label values.
#include <string>

#include "report/report.hpp"

namespace fabricproof {

std::string render_prometheus(const Report& report);

}  // namespace fabricproof
