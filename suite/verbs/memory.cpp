#include "verbs/memory.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/payload_pattern.hpp"

namespace fabricproof::verbs {

Buffer HostMemoryProvider::allocate(ibv_pd* pd, size_t bytes) {
  void* raw = nullptr;
  const size_t page = 4096;
  const size_t rounded = (bytes + page - 1) / page * page;
  if (posix_memalign(&raw, page, rounded) != 0) throw VerbsError("posix_memalign", ENOMEM, std::to_string(rounded) + " bytes");
  std::memset(raw, 0, rounded);
  Buffer b;
  b.memory = std::shared_ptr<void>(raw, [](void* p) { std::free(p); });
  b.bytes = rounded;
  b.mr.reset(ibv_reg_mr(pd, raw, rounded, access_flags()));
  if (!b.mr) throw VerbsError("ibv_reg_mr", errno, "host memory, " + std::to_string(rounded) + " bytes");
  return b;
}

void HostMemoryProvider::fill(Buffer& buffer, size_t offset, size_t bytes, uint64_t seed) {
  auto* words = reinterpret_cast<uint32_t*>(static_cast<char*>(buffer.addr()) + offset);
  for (size_t i = 0; i < bytes / 4; ++i) words[i] = pattern_word(seed, i);
}

uint64_t HostMemoryProvider::mismatches(const Buffer& buffer, size_t offset, size_t bytes, uint64_t seed) {
  const auto* words = reinterpret_cast<const volatile uint32_t*>(static_cast<const char*>(buffer.addr()) + offset);
  uint64_t wrong = 0;
  for (size_t i = 0; i < bytes / 4; ++i) wrong += words[i] != pattern_word(seed, i);
  return wrong;
}

}  // namespace fabricproof::verbs
