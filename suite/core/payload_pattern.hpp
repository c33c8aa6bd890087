#pragma once
// The payload pattern: word i of a buffer seeded with `seed`. Shared by host code (the verbs SEND
// check) and the CUDA kernels (kernels/payload_kernels.cu), so both sides agree on every bit.
#include <cstdint>

#ifdef __CUDACC__
#define FABRICPROOF_HOST_DEVICE __host__ __device__
#else
#define FABRICPROOF_HOST_DEVICE
#endif

namespace fabricproof {

// splitmix64's finaliser: neighbouring indices give unrelated words, so a shifted, duplicated or
// stale block is caught as well as a corrupted one.
FABRICPROOF_HOST_DEVICE inline uint32_t pattern_word(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<uint32_t>(z ^ (z >> 31));
}

}  // namespace fabricproof
