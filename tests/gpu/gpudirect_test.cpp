// The GPUDirect memory provider's CUDA side on a real GPU, without an HCA (the lent GPU machine has
// none): the dma-buf export and the flush decision. Skipped with the reason where there is no GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include "gpudirect/cuda_memory.hpp"
#include "inventory/cuda_probe.hpp"
#include "gpu_fixture.hpp"

namespace fabricproof {
namespace {

// Item 13 of issue 14 without an HCA: the dma-buf export of a pointer that is not on a host page
// starts at the page below it, and the MR offset is where the pointer lies in it.
TEST_F(Gpu, DmabufExportOfAPointerInsideAPageStartsOnThePageBelow) {
  const auto supported = gpu::dmabuf_supported(0);
  ASSERT_TRUE(supported.has_value());
  if (!*supported) GTEST_SKIP() << "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0 on this GPU: nothing to export";
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  char* inside = static_cast<char*>(buffer_) + page + 200;  // cudaMalloc's 64 MiB is page-aligned
  const size_t bytes = 1u << 20;
  const gpu::DmabufExport exported = gpu::export_dmabuf(inside, bytes, 0);
  ASSERT_GE(exported.fd, 0);
  close(exported.fd);
  EXPECT_EQ(exported.offset, 200u);
  EXPECT_EQ(exported.span % page, 0u);
  EXPECT_GE(exported.span, exported.offset + bytes);
  EXPECT_LT(exported.span, exported.offset + bytes + page);
}

// Item 14: whether payload checks flush GPUDirect RDMA writes follows the GPU's own attributes
// (NCCL: below compute capability 9.0), and a flush, where needed, works.
TEST_F(Gpu, GpuDirectFlushFollowsTheWriteOrderingAttribute) {
  int ordering = -1, options = -1, major = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&ordering, cudaDevAttrGPUDirectRDMAWritesOrdering, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&options, cudaDevAttrGPUDirectRDMAFlushWritesOptions, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  RecordProperty("rdma_writes_ordering", ordering);
  RecordProperty("rdma_flush_options", options);
  const gpu::CudaMemoryProvider provider(0);
  const std::string& flush = provider.registration().flush;
  if (ordering >= cudaGPUDirectRDMAWritesOrderingOwner) {
    EXPECT_EQ(flush.rfind("not needed", 0), 0u) << flush;
  } else if (options & cudaFlushGPUDirectRDMAWritesOptionHost) {
    EXPECT_EQ(flush.rfind("cudaDeviceFlushGPUDirectRDMAWrites", 0), 0u) << flush;
    EXPECT_EQ(cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice, cudaFlushGPUDirectRDMAWritesToOwner), cudaSuccess);
  } else {
    EXPECT_EQ(flush.rfind("needed but unsupported", 0), 0u) << flush;
  }
  std::cout << "compute capability major " << major << ", RDMA writes ordering " << ordering << ", flush options " << options << ": " << flush << "\n";
}

}  // namespace
}  // namespace fabricproof
