#pragma once
// A GPU's memory health as NVML reports it (inventory/cuda_probe.cpp): no row remap pending or
// failed, no page retirement pending, no uncorrectable ECC error since the driver loaded, and ECC
// on. What acceptance and a re-validation after a GPU swap check before a node ships.
#include <vector>

#include "core/finding.hpp"
#include "inventory/inventory.hpp"

namespace fabricproof {

void check_gpu_memory(const NodeFacts& node, std::vector<Finding>& out);

// The figures read, as a finding shows them (without `unread`).
nlohmann::json memory_health_figures(const GpuMemoryHealth& h);

}  // namespace fabricproof
