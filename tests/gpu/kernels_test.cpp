// The CUDA kernels and the GPU probes on a real GPU; skipped with the reason where CUDA reports no
// device (CI, this project's build machines). Run on a GPU machine: ctest -L gpu.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "collectives/collective_data.hpp"
#include "core/located_error.hpp"
#include "core/payload_pattern.hpp"
#include "inventory/cuda_probe.hpp"
#include "gpu_fixture.hpp"
#include "kernels/collective.hpp"
#include "kernels/payload_kernels.hpp"

namespace fabricproof {
namespace {

TEST_F(Gpu, PatternFillThenVerifyFindsNoMismatchAndCountsACorruptedWord) {
  kernels::fill_pattern(buffer_, kBytes, 42);
  EXPECT_EQ(kernels::count_mismatches(buffer_, kBytes, 42), 0u);
  // The host computes the same words as the kernel.
  uint32_t first[4];
  ASSERT_EQ(cudaMemcpy(first, buffer_, sizeof(first), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(first[i], pattern_word(42, static_cast<uint64_t>(i)));
  const uint32_t junk = first[1] ^ 1u;
  ASSERT_EQ(cudaMemcpy(static_cast<char*>(buffer_) + 4 * 1000, &junk, 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(kernels::count_mismatches(buffer_, kBytes, 42), 1u);
  EXPECT_THROW(kernels::fill_pattern(buffer_, 3, 1), LocatedError) << "a size that is not whole words is refused";
}

TEST_F(Gpu, CollectiveCheckAcceptsTheTrueResultAndCountsWrongElements) {
  // Allgather over 3 "ranks" built on the host: the kernel must agree with the host checker.
  const uint64_t chunk = 1000;
  const int ranks = 3;
  std::vector<float> out(chunk * ranks);
  for (uint64_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(coll_expected_value(CollOp::allgather, ReduceOp::sum, 1, ranks, chunk, i));
  ASSERT_EQ(cudaMemcpy(buffer_, out.data(), out.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(kernels::count_collective_wrong(buffer_, out.size(), CollOp::allgather, ReduceOp::sum, DataType::float32, 1, ranks, chunk), 0u);
  kernels::fill_collective(buffer_, 10, buffer_, out.size(), DataType::float32, 2, nullptr);  // zeroes, then rank 2's input
  EXPECT_EQ(kernels::count_collective_wrong(buffer_, out.size(), CollOp::allgather, ReduceOp::sum, DataType::float32, 1, ranks, chunk), out.size())
      << "zeroed output and another rank's input match nothing";
}

TEST_F(Gpu, DmabufAttributeIsReadable) {
  const auto supported = gpu::dmabuf_supported(0);
  ASSERT_TRUE(supported.has_value()) << "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED could not be read";
  RecordProperty("dmabuf_supported", *supported ? "yes" : "no");
}

// What the soak does at its end: the board's memory read again from NVML by its PCI address (the
// inventory's first read is checked by gpu-check's run); an address with no GPU says why.
TEST_F(Gpu, MemoryHealthIsReadAgainByPciAddress) {
  char pci[32] = {};
  ASSERT_EQ(cudaDeviceGetPCIBusId(pci, sizeof pci, 0), cudaSuccess);
  const auto read = gpu::read_memory_health({pci, "0000:ff:1f.7"});
  ASSERT_EQ(read.size(), 2u);
  EXPECT_TRUE(memory_health_read(read[0])) << pci << ": " << read[0].unread;
  EXPECT_FALSE(memory_health_read(read[1]));
  EXPECT_NE(read[1].unread.find("0000:ff:1f.7"), std::string::npos) << read[1].unread;
}

}  // namespace
}  // namespace fabricproof
