#include "inventory/cuda_probe.hpp"

#include <dlfcn.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace fabricproof::gpu {
namespace {

std::string cuda_version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::string format_uuid(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}", b[0], b[1],
                     b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

}  // namespace

void* driver_function(const char* name) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion(name, &function, 12000, cudaEnableDefault, &status) != cudaSuccess ||
      status != cudaDriverEntryPointSuccess)
    return nullptr;
  return function;
}

std::optional<bool> dmabuf_supported(int ordinal) {
  using GetAttribute = CUresult (*)(int*, CUdevice_attribute, CUdevice);
  using GetDevice = CUresult (*)(CUdevice*, int);
  auto get_attribute = reinterpret_cast<GetAttribute>(driver_function("cuDeviceGetAttribute"));
  auto get_device = reinterpret_cast<GetDevice>(driver_function("cuDeviceGet"));
  CUdevice device = 0;
  int value = 0;
  if (!get_attribute || !get_device || get_device(&device, ordinal) != CUDA_SUCCESS ||
      get_attribute(&value, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device) != CUDA_SUCCESS)
    return std::nullopt;
  return value != 0;
}

namespace {

// NVML, opened at run time as NCCL does, so the binary needs no NVML at build or run time. The ABI
// used is NVML's stable C one, its enums as nvml.h numbers them; a symbol an old driver lacks
// stays null and its facts unread.
struct Nvml {
  void* library = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_pci)(const char*, void**) = nullptr;
  int (*serial)(void*, char*, unsigned) = nullptr;
  int (*ecc_mode)(void*, int*, int*) = nullptr;                               // nvmlEnableState_t current, pending
  int (*ecc_errors)(void*, int, int, unsigned long long*) = nullptr;          // error type, counter type
  int (*remapped_rows)(void*, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;  // corr, unc, pending, failed
  int (*pages_pending)(void*, int*) = nullptr;                                // nvmlEnableState_t
};
constexpr int kNvmlSuccess = 0;
constexpr int kUncorrected = 1;                  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kVolatile = 0, kAggregate = 1;     // NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC

template <typename F>
void bind(void* library, F& function, const char* name) {
  function = reinterpret_cast<F>(dlsym(library, name));
}

// Loaded and initialised, or the reason it is not.
std::optional<std::string> open_nvml(Nvml& nvml) {
  nvml.library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml.library) return std::string("libnvidia-ml.so.1 not loadable: ") + dlerror();
  bind(nvml.library, nvml.init, "nvmlInit_v2");
  bind(nvml.library, nvml.shutdown, "nvmlShutdown");
  bind(nvml.library, nvml.by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
  bind(nvml.library, nvml.serial, "nvmlDeviceGetSerial");
  bind(nvml.library, nvml.ecc_mode, "nvmlDeviceGetEccMode");
  bind(nvml.library, nvml.ecc_errors, "nvmlDeviceGetTotalEccErrors");
  bind(nvml.library, nvml.remapped_rows, "nvmlDeviceGetRemappedRows");
  bind(nvml.library, nvml.pages_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
  if (!nvml.init || !nvml.by_pci || !nvml.shutdown || nvml.init() != kNvmlSuccess) {
    dlclose(nvml.library);
    return std::string("NVML did not initialise (nvmlInit_v2)");
  }
  return std::nullopt;
}

// What the board reports of its memory; each call answers NOT_SUPPORTED where the board lacks it.
void read_board_memory(const Nvml& nvml, void* device, GpuMemoryHealth& h) {
  int current = 0, pending = 0;
  if (nvml.ecc_mode && nvml.ecc_mode(device, &current, &pending) == kNvmlSuccess) {
    h.ecc_enabled = current != 0;
    h.ecc_enabled_after_reboot = pending != 0;
  }
  unsigned long long count = 0;
  if (nvml.ecc_errors && nvml.ecc_errors(device, kUncorrected, kVolatile, &count) == kNvmlSuccess) h.uncorrected_since_driver_load = count;
  if (nvml.ecc_errors && nvml.ecc_errors(device, kUncorrected, kAggregate, &count) == kNvmlSuccess) h.uncorrected_lifetime = count;
  unsigned correctable = 0, uncorrectable = 0, remap_pending = 0, remap_failed = 0;
  if (nvml.remapped_rows && nvml.remapped_rows(device, &correctable, &uncorrectable, &remap_pending, &remap_failed) == kNvmlSuccess) {
    h.rows_remapped_correctable = correctable;
    h.rows_remapped_uncorrectable = uncorrectable;
    h.row_remap_pending = remap_pending != 0;
    h.row_remap_failed = remap_failed != 0;
  }
  int pages = 0;
  if (nvml.pages_pending && nvml.pages_pending(device, &pages) == kNvmlSuccess) h.page_retirement_pending = pages != 0;
  if (!memory_health_read(h)) h.unread = "NVML reports no ECC error count, row remapping or page retirement for this GPU";
}

void close_nvml(Nvml& nvml) {
  nvml.shutdown();
  dlclose(nvml.library);
}

// Board serials (the CUDA runtime has UUIDs but no serials) and memory health, from NVML.
void add_nvml_facts(NodeFacts& node) {
  Nvml nvml;
  if (auto why = open_nvml(nvml)) {
    node.absent.push_back({"gpu_serials", *why});
    for (auto& g : node.gpus) g.memory_health.unread = *why;
    return;
  }
  for (auto& g : node.gpus) {
    void* device = nullptr;
    if (nvml.by_pci(g.pci.c_str(), &device) != kNvmlSuccess) {
      g.memory_health.unread = "nvmlDeviceGetHandleByPciBusId_v2(" + g.pci + ") failed";
      node.absent.push_back({"gpu_serial " + g.pci, g.memory_health.unread});
      continue;
    }
    char text[64] = {};  // NVML_DEVICE_SERIAL_BUFFER_SIZE is 30
    if (nvml.serial && nvml.serial(device, text, sizeof text) == kNvmlSuccess) g.serial = text;
    else node.absent.push_back({"gpu_serial " + g.pci, "nvmlDeviceGetSerial failed (GeForce boards have no serial)"});
    read_board_memory(nvml, device, g.memory_health);
  }
  close_nvml(nvml);
}

}  // namespace

std::vector<GpuMemoryHealth> read_memory_health(const std::vector<std::string>& pci_addresses) {
  std::vector<GpuMemoryHealth> out(pci_addresses.size());
  Nvml nvml;
  if (auto why = open_nvml(nvml)) {
    for (auto& h : out) h.unread = *why;
    return out;
  }
  for (size_t i = 0; i < pci_addresses.size(); ++i) {
    void* device = nullptr;
    if (nvml.by_pci(pci_addresses[i].c_str(), &device) == kNvmlSuccess) read_board_memory(nvml, device, out[i]);
    else out[i].unread = "nvmlDeviceGetHandleByPciBusId_v2(" + pci_addresses[i] + ") failed";
  }
  close_nvml(nvml);
  return out;
}

void augment_with_cuda(NodeFacts& node, RankFacts& rank) {
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) node.software.cuda_runtime = cuda_version_text(runtime);
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) node.software.cuda_driver = cuda_version_text(driver);
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    node.absent.push_back({"cuda_devices", fmt::format("cudaGetDeviceCount: {} ({})", cudaGetErrorString(error), cudaGetErrorName(error))});
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
      node.probe_errors.push_back({fmt::format("cudaGetDeviceProperties({})", i), cudaGetErrorString(cudaGetLastError())});
      continue;
    }
    const std::string pci = fmt::format("{:04x}:{:02x}:{:02x}.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    auto it = std::find_if(node.gpus.begin(), node.gpus.end(), [&](const GpuFacts& g) { return g.pci == pci; });
    if (it == node.gpus.end()) {
      node.gpus.push_back(GpuFacts{});
      it = std::prev(node.gpus.end());
      it->pci = pci;
    }
    it->index = i;
    it->name = prop.name;
    it->uuid = format_uuid(prop.uuid);
    it->memory_bytes = prop.totalGlobalMem;
    it->compute_capability = fmt::format("{}.{}", prop.major, prop.minor);
    it->dmabuf_supported = dmabuf_supported(i);
  }
  std::erase_if(node.absent, [](const Absence& a) { return a.what == "gpus"; });
  std::sort(node.gpus.begin(), node.gpus.end(), [](const GpuFacts& a, const GpuFacts& b) { return a.index.value_or(1 << 20) < b.index.value_or(1 << 20); });
  if (rank.local_rank == 0) add_nvml_facts(node);  // once per node, like the HCA VPD
  rank.gpu = rank.local_rank % count;
  for (const auto& g : node.gpus)
    if (g.index == rank.gpu) rank.gpu_uuid = g.uuid;
}

}  // namespace fabricproof::gpu
