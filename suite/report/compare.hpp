#pragma once
// Re-validation after a hardware swap: a new report against the baseline (the factory report).
// Matches nodes by host, components by PCI slot, verbs pairs by endpoint labels, test and
// direction, collective sweeps by engine, op, node count and size; says what changed and judges
// the figures against the profile's regression limit.
#include <vector>

#include "core/finding.hpp"
#include "report/report.hpp"

namespace fabricproof {

// Findings: compare_node (a baseline node missing fails; an added one warns), compare_component
// (a slot whose HCA or GPU identity changed warns, naming old and new; a missing one fails),
// compare_verbs (bandwidth down, or p50 latency up, by more than `regression` fails),
// compare_gpu_memory (a GPU board's remapped rows or lifetime uncorrectable ECC errors grown since
// the baseline warns; the same board in the same slot, read in both reports),
// compare_busbw (busbw at sizes >= 1 MiB down by more than `regression` fails).
std::vector<Finding> compare_reports(const Report& baseline, const Report& next, double regression);

}  // namespace fabricproof
