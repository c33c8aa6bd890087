#include "inventory/gpu_memory_rules.hpp"

#include <fmt/format.h>

#include <string>

namespace fabricproof {

nlohmann::json memory_health_figures(const GpuMemoryHealth& h) {
  nlohmann::json j = h;
  j.erase("unread");
  return j;
}

namespace {

using nlohmann::json;

// The problems found, worst first, with the hint for the worst: what to do before the node ships.
struct MemoryProblems {
  std::vector<std::string> found;
  std::string hint;
  void add(bool present, std::string what, const char* what_to_do) {
    if (!present) return;
    if (found.empty()) hint = what_to_do;
    found.push_back(std::move(what));
  }
};

MemoryProblems memory_problems(const GpuMemoryHealth& h) {
  MemoryProblems p;
  p.add(h.row_remap_failed.value_or(false), "row remapping failed",
        "A bank ran out of spare rows: the GPU cannot retire more bad memory. Return it to the vendor (RMA).");
  p.add(h.row_remap_pending.value_or(false), "a row remap is pending",
        "The remap takes effect at the next GPU reset: reset the GPU (nvidia-smi -r, nothing running on it) or reboot, "
        "then run again; a remap that comes back means failing memory.");
  p.add(h.page_retirement_pending.value_or(false), "a page retirement is pending",
        "Retired pages take effect at the next driver load: reboot, then run again.");
  const uint64_t errors = h.uncorrected_since_driver_load.value_or(0);
  p.add(errors > 0, fmt::format("{} uncorrectable ECC error(s) since the driver loaded", errors),
        "Look for Xid 48, 63, 64, 94 or 95 in the kernel log; reset the GPU, run again, and return it to the vendor "
        "if the errors come back.");
  return p;
}

void check_one_gpu(const std::string& subject, const GpuFacts& g, std::vector<Finding>& out) {
  const GpuMemoryHealth& h = g.memory_health;
  const std::string rule = "no row remap pending or failed, no page retirement pending, no uncorrectable ECC error since the driver loaded";
  if (!memory_health_read(h)) {  // not read is not healthy
    out.push_back(Finding(CheckId::gpu_memory_health, subject, Verdict::not_proven, h.unread.empty() ? "not read" : h.unread,
                          "read from NVML", rule,
                          "Install the NVIDIA driver's NVML (libnvidia-ml.so.1) where the ranks run; nvidia-smi -q -d ROW_REMAPPER,ECC."));
  } else {
    const MemoryProblems p = memory_problems(h);
    std::string found;
    for (const auto& what : p.found) found += (found.empty() ? "" : "; ") + what;
    out.push_back(Finding(CheckId::gpu_memory_health, subject, p.found.empty() ? Verdict::pass : Verdict::fail,
                          p.found.empty() ? memory_health_figures(h) : json(found), "healthy", rule, p.hint));
  }
  if (!h.ecc_enabled) return;
  const bool on = *h.ecc_enabled && h.ecc_enabled_after_reboot.value_or(true);
  out.push_back(Finding(CheckId::gpu_ecc, subject, on ? Verdict::pass : Verdict::warn,
                        {{"ecc_enabled", *h.ecc_enabled}, {"after_reboot", h.ecc_enabled_after_reboot}}, "enabled, and after a reboot",
                        "ECC on the GPU's memory is on and stays on", on ? "" : "ECC off: memory errors go unseen. nvidia-smi -e 1, then reboot."));
}

}  // namespace

void check_gpu_memory(const NodeFacts& node, std::vector<Finding>& out) {
  for (const auto& g : node.gpus) {
    if (!g.index) continue;  // not visible to CUDA: gpu_visible names it
    check_one_gpu(node.host + "/gpu" + std::to_string(*g.index), g, out);
  }
}

}  // namespace fabricproof
