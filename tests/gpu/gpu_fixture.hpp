#pragma once
// A GPU test's fixture: skipped with the reason where CUDA reports no device (CI, this project's
// build machines); else 64 MiB of device memory from cudaMalloc.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

namespace fabricproof {

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) GTEST_SKIP() << "no CUDA device: " << cudaGetErrorString(e);
    ASSERT_EQ(cudaMalloc(&buffer_, kBytes), cudaSuccess);
  }
  void TearDown() override {
    if (buffer_) cudaFree(buffer_);
  }
  static constexpr size_t kBytes = 64u << 20;
  void* buffer_ = nullptr;
};

}  // namespace fabricproof
