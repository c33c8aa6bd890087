#include "gpudirect/cuda_memory.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "inventory/cuda_probe.hpp"
#include "kernels/payload_kernels.hpp"

namespace fabricproof::gpu {
namespace {

constexpr size_t kAlign = 2u << 20;  // whole 2 MiB GPU pages: what peer-memory pins and DMA-BUF exports

std::string cuda_text(cudaError_t e) { return fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e)); }

// DMA-BUF: the GPU exports the range as a dma-buf fd, the HCA imports it (kernel >= 5.12, rdma-core
// >= 34, open GPU kernel modules). The MR; a LocatedError says why not.
ibv_mr* register_dmabuf(ibv_pd* pd, void* ptr, size_t bytes, int device, int access) {
  const DmabufExport exported = export_dmabuf(ptr, bytes, device);
  ibv_mr* mr = ibv_reg_dmabuf_mr(pd, exported.offset, bytes, reinterpret_cast<uint64_t>(ptr), exported.fd, access);
  const int error = errno;
  close(exported.fd);  // the MR holds its own reference to the dma-buf
  if (!mr) throw verbs::VerbsError("ibv_reg_dmabuf_mr", error, "", fmt::format("GPU {}", device));
  return mr;
}

// Peer memory: the HCA driver asks nvidia-peermem (MLNX_OFED's peer-memory API) to pin the range.
ibv_mr* register_peermem(ibv_pd* pd, void* ptr, size_t bytes, int device, int access) {
  ibv_mr* mr = ibv_reg_mr(pd, ptr, bytes, access);
  if (!mr) {
    const int error = errno;
    const bool loaded = std::filesystem::exists("/sys/module/nvidia_peermem");
    throw verbs::VerbsError("ibv_reg_mr on GPU memory", error, loaded ? "nvidia_peermem loaded" : "nvidia_peermem not loaded",
                            fmt::format("GPU {}", device));
  }
  return mr;
}

}  // namespace

DmabufExport export_dmabuf(void* ptr, size_t bytes, int device) {
  DmabufExport out;
  const auto supported = dmabuf_supported(device);
  if (!supported || !*supported)
    throw CudaError("DMA-BUF export", device, supported ? "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0" : "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED unreadable");
  using GetHandle = CUresult (*)(void*, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long);
  auto get_handle = reinterpret_cast<GetHandle>(driver_function("cuMemGetHandleForAddressRange"));
  if (!get_handle) throw CudaError("DMA-BUF export", device, "the CUDA driver has no cuMemGetHandleForAddressRange");
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const auto address = reinterpret_cast<uint64_t>(ptr);
  const uint64_t start = address & ~(page - 1);
  out.offset = address - start;
  out.span = (out.offset + bytes + page - 1) / page * page;
  if (const CUresult r = get_handle(&out.fd, static_cast<CUdeviceptr>(start), out.span, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0); r != CUDA_SUCCESS)
    throw CudaError("cuMemGetHandleForAddressRange", device, fmt::format("CUresult {}", static_cast<int>(r)));
  return out;
}

// Whether GPUDirect RDMA writes must be flushed before a kernel on this GPU reads them: devices
// that do not order them for their own context (cudaDevAttrGPUDirectRDMAWritesOrdering below
// Owner; NCCL flushes below compute capability 9.0) need cudaDeviceFlushGPUDirectRDMAWrites.
CudaMemoryProvider::CudaMemoryProvider(int device) : device_(device) {
  registration_.gpu = device;
  int ordering = 0, options = 0;
  const bool known = cudaDeviceGetAttribute(&ordering, cudaDevAttrGPUDirectRDMAWritesOrdering, device) == cudaSuccess &&
                     cudaDeviceGetAttribute(&options, cudaDevAttrGPUDirectRDMAFlushWritesOptions, device) == cudaSuccess;
  flush_ = known && ordering < cudaGPUDirectRDMAWritesOrderingOwner && (options & cudaFlushGPUDirectRDMAWritesOptionHost);
  registration_.flush = !known ? "unknown (attributes unreadable)"
                        : ordering >= cudaGPUDirectRDMAWritesOrderingOwner ? "not needed (the GPU orders RDMA writes for its own context)"
                        : flush_ ? "cudaDeviceFlushGPUDirectRDMAWrites before each check"
                                 : "needed but unsupported (no flush option on this GPU): payload checks may see stale data";
}

verbs::Buffer CudaMemoryProvider::allocate(ibv_pd* pd, size_t bytes) {
  const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (const auto e = cudaSetDevice(device_); e != cudaSuccess) throw CudaError("cudaSetDevice", device_, cuda_text(e));
  void* ptr = nullptr;
  if (const auto e = cudaMalloc(&ptr, rounded); e != cudaSuccess) throw CudaError("cudaMalloc", device_, cuda_text(e));
  verbs::Buffer b;
  b.memory = std::shared_ptr<void>(ptr, [](void* p) { cudaFree(p); });
  b.bytes = rounded;
  cudaMemset(ptr, 0, rounded);
  registration_.path.clear();
  registration_.dmabuf.clear();
  registration_.peermem.clear();
  // DMA-BUF first (no out-of-tree module needed), then peer memory.
  // Each path's failure is kept (the report says why a path was not taken).
  registration_.dmabuf = failure_of([&] { b.mr.reset(register_dmabuf(pd, ptr, rounded, device_, access_flags())); }).value_or("");
  if (b.mr) {
    registration_.path = "dmabuf";
  } else {
    registration_.peermem = failure_of([&] { b.mr.reset(register_peermem(pd, ptr, rounded, device_, access_flags())); }).value_or("");
    if (b.mr) registration_.path = "peermem";
  }
  ++registration_.allocations[registration_.path.empty() ? "failed" : registration_.path];
  if (!b.mr)
    throw verbs::VerbsError("GPUDirect registration", EFAULT,
                            fmt::format("GPU {}: dmabuf: {}; peermem: {}", device_, registration_.dmabuf, registration_.peermem),
                            fmt::format("GPU {}", device_));
  return b;
}

void CudaMemoryProvider::fill(verbs::Buffer& buffer, size_t offset, size_t bytes, uint64_t seed) {
  kernels::fill_pattern(static_cast<char*>(buffer.addr()) + offset, bytes, seed);
}

uint64_t CudaMemoryProvider::mismatches(const verbs::Buffer& buffer, size_t offset, size_t bytes, uint64_t seed) {
  if (flush_)
    if (const auto e = cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice, cudaFlushGPUDirectRDMAWritesToOwner);
        e != cudaSuccess)
      throw CudaError("cudaDeviceFlushGPUDirectRDMAWrites", device_, cuda_text(e));
  return kernels::count_mismatches(static_cast<const char*>(buffer.addr()) + offset, bytes, seed);
}

}  // namespace fabricproof::gpu
