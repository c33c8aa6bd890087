#pragma once
// Hashes for the parser's cache slots (a collision costs a miss, never a wrong answer).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace fabricproof::nccl {

// The first and last 24 bytes and the length (enough to spread headers and messages), each word
// multiplied on its own so the products run in parallel instead of as one dependency chain (it was
// 7% of the parse as a chain).
inline uint64_t message_hash(std::string_view m, uint64_t seed) {
  const size_t n = m.size();
  auto word = [&](size_t at) {
    uint64_t w;
    std::memcpy(&w, m.data() + at, 8);
    return w;
  };
  uint64_t h = seed ^ (n * 0x9E3779B97F4A7C15ull);
  if (n >= 8) {
    h += (word(0) ^ 0x2545F4914F6CDD1Dull) * 0xff51afd7ed558ccdull + (word(n - 8) ^ 0x9FB21C651E98DF25ull) * 0xc4ceb9fe1a85ec53ull;
    if (n > 16) h += (word(8) ^ 0x27D4EB2F165667C5ull) * 0x94D049BB133111EBull + (word(n - 16) ^ 0x165667B19E3779F9ull) * 0xBF58476D1CE4E5B9ull;
    if (n > 32) h += (word(16) ^ 0x85EBCA77C2B2AE63ull) * 0xD6E8FEB86659FD93ull + (word(n - 24) ^ 0xC2B2AE3D27D4EB4Full) * 0xA0761D6478BD642Full;
  } else {
    uint64_t w = 0;
    if (n) std::memcpy(&w, m.data(), n);
    h += (w ^ 0x2545F4914F6CDD1Dull) * 0xff51afd7ed558ccdull;
  }
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

// A hash of every byte, for keys that differ anywhere (whole lines: "Channel 03/0" sits in the
// middle). Four independent lanes, so the multiplications overlap instead of forming one chain.
inline uint64_t full_hash(std::string_view m) {
  const size_t n = m.size();
  auto word = [&](size_t at) {  // 8 bytes (a fixed-size copy is one load)
    uint64_t w;
    std::memcpy(&w, m.data() + at, 8);
    return w;
  };
  auto round = [](uint64_t lane, uint64_t w) { return std::rotl((lane ^ w) * 0x9E3779B97F4A7C15ull, 29); };
  uint64_t a = n, b = 0x2545F4914F6CDD1Dull, c = 0x9FB21C651E98DF25ull, d = 0xc4ceb9fe1a85ec53ull;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a = round(a, word(i));
    b = round(b, word(i + 8));
    c = round(c, word(i + 16));
    d = round(d, word(i + 24));
  }
  for (; i + 8 <= n; i += 8) b = round(b, word(i));
  if (i < n) {  // the last 1..7 bytes: the final word, overlapping the previous one when it can
    uint64_t w = 0;
    if (n >= 8) w = word(n - 8);
    else std::memcpy(&w, m.data(), n);
    c = round(c, w);
  }
  uint64_t h = a ^ std::rotl(b, 16) ^ std::rotl(c, 32) ^ std::rotl(d, 48);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

// a == b for the short texts of the cache slots (headers, messages, host names), inline instead
// of a memcmp call per lookup. Measured: memcmp's share of the parse fell from 7 % to 3 %, but the
// time moved to the slot loads it waits on, with no net gain; kept as it is small and tested.
// Words of 8 bytes; the last word overlaps the one before it, so nothing past either text is read.
inline bool same_bytes(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  if (n < 8) {
    for (size_t i = 0; i < n; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  auto word = [](const char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  uint64_t differ = word(a.data() + n - 8) ^ word(b.data() + n - 8);
  for (size_t i = 0; i + 8 < n; i += 8) differ |= word(a.data() + i) ^ word(b.data() + i);
  return differ == 0;
}

// Bytes kept in a cache slot itself, not behind a std::string's pointer: a lookup then touches one
// place in memory (the second, dependent load was the parse's costliest cache miss). Texts longer
// than N are not kept (their lines are read every time).
template <size_t N>
struct SlotBytes {
  uint16_t size = 0;
  char data[N];
  bool assign(std::string_view s) {
    if (s.size() > N) return false;
    size = static_cast<uint16_t>(s.size());
    std::memcpy(data, s.data(), s.size());
    return true;
  }
  std::string_view view() const { return {data, size}; }
  bool equals(std::string_view s) const { return same_bytes(view(), s); }
};

}  // namespace fabricproof::nccl
