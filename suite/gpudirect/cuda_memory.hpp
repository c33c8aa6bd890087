#pragma once
// GPU memory for the verbs engine (GPUDirect RDMA): cudaMalloc'ed buffers registered with the HCA
// by DMA-BUF (cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr) where the GPU reports support,
// else by ibv_reg_mr on the device pointer (needs nvidia-peermem). The payload pattern is filled
// and checked on the GPU by kernels/payload_kernels.cu. Needs CUDA and libibverbs.
#include "gpudirect/gpudirect_rules.hpp"
#include "core/located_error.hpp"
#include "verbs/memory.hpp"

namespace fabricproof::gpu {

// A failed CUDA call (or a pattern kernel): which call, on which GPU, and CUDA's error text.
class CudaError : public LocatedError {
 public:
  CudaError(const std::string& api, int gpu, const std::string& detail)
      : LocatedError("GPU " + std::to_string(gpu), api + ": " + detail), api_(api) {}
  const std::string& api() const { return api_; }

 private:
  std::string api_;
};

// A dma-buf of the GPU memory [ptr, ptr + bytes): cuMemGetHandleForAddressRange wants a range on
// host pages, so the export starts at the page below ptr, and `offset` is where ptr lies in it
// (the MR's offset, perftest's cuda_memory.c). A CudaError says why when the GPU or the driver
// cannot export. The caller closes fd.
struct DmabufExport {
  int fd = -1;
  uint64_t offset = 0;  // ptr - the exported range's start
  uint64_t span = 0;    // the exported range's length, whole pages
};
DmabufExport export_dmabuf(void* ptr, size_t bytes, int device);

class CudaMemoryProvider : public verbs::MemoryProvider {
 public:
  explicit CudaMemoryProvider(int device);
  std::string name() const override { return registration_.path.empty() ? "cuda" : "cuda-" + registration_.path; }
  // Throws CudaError on a failed CUDA call, VerbsError "GPUDirect registration" with both paths'
  // reasons when neither registration works.
  verbs::Buffer allocate(ibv_pd* pd, size_t bytes) override;
  void fill(verbs::Buffer& buffer, size_t offset, size_t bytes, uint64_t seed) override;
  uint64_t mismatches(const verbs::Buffer& buffer, size_t offset, size_t bytes, uint64_t seed) override;
  // Which path the last allocation took and why the other did not (rank and host set by the caller).
  const GpuRegistration& registration() const { return registration_; }

 private:
  int device_;
  bool flush_ = false;  // flush GPUDirect RDMA writes before a check kernel reads them
  GpuRegistration registration_;
};

}  // namespace fabricproof::gpu
