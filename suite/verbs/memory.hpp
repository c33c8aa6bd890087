#pragma once
// Where the RDMA buffers live. The verbs engine asks a provider for registered memory and for the
// payload fill/check, so the same tests run on host memory now and on GPU memory (GPUDirect) later.
#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "verbs/handles.hpp"

namespace fabricproof::verbs {

// Registered memory. Members in creation order: the MR is released before the memory.
struct Buffer {
  std::shared_ptr<void> memory;  // owns the allocation (the provider's deleter)
  size_t bytes = 0;
  MemoryRegion mr;
  void* addr() const { return memory.get(); }
};

class MemoryProvider {
 public:
  virtual ~MemoryProvider() = default;
  virtual std::string name() const = 0;  // "host", "cuda-dmabuf", "cuda-peermem"
  // Allocates and registers `bytes` for local write and remote write (access_flags()); throws VerbsError.
  virtual Buffer allocate(ibv_pd* pd, size_t bytes) = 0;
  // PCIe relaxed ordering on the registrations, as perftest registers by default (its
  // --disable_pcie_relaxed turns it off): the HCA may then reorder its PCIe writes into this
  // memory, which a root complex or a GPU that honours it completes faster. An optional access
  // flag: a device or kernel without it registers the memory without it, not an error.
  void set_relaxed_ordering(bool on) { relaxed_ordering_ = on; }
  int access_flags() const {
    return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | (relaxed_ordering_ ? IBV_ACCESS_RELAXED_ORDERING : 0);
  }
  // Writes the pattern (core/payload_pattern.hpp) for `seed` into [offset, offset + bytes).
  virtual void fill(Buffer& buffer, size_t offset, size_t bytes, uint64_t seed) = 0;
  // Counts 32-bit words in [offset, offset + bytes) that differ from the pattern for `seed`.
  virtual uint64_t mismatches(const Buffer& buffer, size_t offset, size_t bytes, uint64_t seed) = 0;

 private:
  bool relaxed_ordering_ = false;
};

class HostMemoryProvider : public MemoryProvider {
 public:
  std::string name() const override { return "host"; }
  Buffer allocate(ibv_pd* pd, size_t bytes) override;
  void fill(Buffer& buffer, size_t offset, size_t bytes, uint64_t seed) override;
  uint64_t mismatches(const Buffer& buffer, size_t offset, size_t bytes, uint64_t seed) override;
};

}  // namespace fabricproof::verbs
