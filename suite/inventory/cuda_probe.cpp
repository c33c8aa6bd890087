#include "inventory/cuda_probe.hpp"

#include <dlfcn.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>

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

// GPU board serials from NVML (the CUDA runtime has UUIDs but no serials). NVML is opened at run
// time, as NCCL does, so the binary needs no NVML at build or run time; the ABI used here is the
// stable C one (nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2, nvmlDeviceGetSerial, nvmlShutdown).
static void add_gpu_serials(NodeFacts& node) {
  void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml) {
    node.absent.push_back({"gpu_serials", std::string("libnvidia-ml.so.1 not loadable: ") + dlerror()});
    return;
  }
  using Init = int (*)();
  using ByPci = int (*)(const char*, void**);
  using Serial = int (*)(void*, char*, unsigned);
  auto init = reinterpret_cast<Init>(dlsym(nvml, "nvmlInit_v2"));
  auto by_pci = reinterpret_cast<ByPci>(dlsym(nvml, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto serial = reinterpret_cast<Serial>(dlsym(nvml, "nvmlDeviceGetSerial"));
  auto shutdown = reinterpret_cast<Init>(dlsym(nvml, "nvmlShutdown"));
  if (!init || !by_pci || !serial || !shutdown || init() != 0) {
    node.absent.push_back({"gpu_serials", "NVML did not initialise (nvmlInit_v2)"});
    dlclose(nvml);
    return;
  }
  for (auto& g : node.gpus) {
    void* device = nullptr;
    char text[64] = {};  // NVML_DEVICE_SERIAL_BUFFER_SIZE is 30
    if (by_pci(g.pci.c_str(), &device) == 0 && serial(device, text, sizeof text) == 0) g.serial = text;
    else node.absent.push_back({"gpu_serial " + g.pci, "nvmlDeviceGetSerial failed (GeForce boards have no serial)"});
  }
  shutdown();
  dlclose(nvml);
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
  if (rank.local_rank == 0) add_gpu_serials(node);  // once per node, like the HCA VPD
  rank.gpu = rank.local_rank % count;
  for (const auto& g : node.gpus)
    if (g.index == rank.gpu) rank.gpu_uuid = g.uuid;
}

}  // namespace fabricproof::gpu
