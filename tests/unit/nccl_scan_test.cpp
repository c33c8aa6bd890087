// The one-pass line scan behind the block reader, and the slot comparison of the parser's caches.
// scan_line picks AVX2 or SSE2 at run time, so only one of them runs in the parser on a given
// machine: both are held here to a byte-by-byte reading of the same lines.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "nccl_log/hashes.hpp"
#include "nccl_log/scan.hpp"

namespace fabricproof {
namespace {

// What scan_line must say about the line at the start of `text`, read one byte at a time.
nccl::LineScan reference_scan(std::string_view text) {
  nccl::LineScan out;
  const size_t end = std::min(text.find('\n'), text.size());
  out.length = end;
  out.newline = end < text.size();
  for (size_t i = 0; i < end; ++i) {
    out.escape |= text[i] == '\x1b';
    if (i + 3 < text.size() && text[i] == 'C' && text[i + 1] == 'C' && text[i + 2] == 'L' && text[i + 3] == ' ' && i + 2 < end) {
      if (out.candidates == nccl::LineScan::kMaxCandidates) {
        out.overflow = true;
        continue;
      }
      out.at[out.candidates++] = static_cast<uint32_t>(i);
    }
  }
  return out;
}

void expect_same(const nccl::LineScan& want, const nccl::LineScan& got, const std::string& what) {
  EXPECT_EQ(want.length, got.length) << what;
  EXPECT_EQ(want.newline, got.newline) << what;
  EXPECT_EQ(want.escape, got.escape) << what;
  EXPECT_EQ(want.overflow, got.overflow) << what;
  if (want.overflow || got.overflow) return;  // the candidates are not used then
  ASSERT_EQ(want.candidates, got.candidates) << what;
  for (size_t k = 0; k < want.candidates; ++k) EXPECT_EQ(want.at[k], got.at[k]) << what << " candidate " << k;
}

// Lines built from the pieces that matter to the scan ("CCL ", lone 'L's, ESC, newlines) at every
// offset across the 16- and 32-byte steps, each followed by the padding the block reader provides.
TEST(NcclScan, Sse2AndAvx2ReadEveryLineAsAByteLoopDoes) {
  const std::vector<std::string> pieces = {"NCCL INFO ", "CCL INFO ", "NCCL WARN ", "L", "CCL", "CL ", "LL ", "\x1b[31m", "\n", " ", "x", "ab", "CCL\n",
                                           "0123456789abcdef"};
  std::mt19937 random(20261202);  // fixed: a failure is reproducible
  std::vector<std::string> lines = {"", "\n", "L", "CCL ", "CC", "gpu-b07:901:915 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"};
  for (int i = 0; i < 4000; ++i) {
    std::string line;
    const size_t count = random() % 24;
    for (size_t k = 0; k < count; ++k) line += pieces[random() % pieces.size()];
    lines.push_back(line);
  }
  const bool avx2 = nccl::detail::has_avx2();
  ASSERT_FALSE(lines.empty());
  for (const auto& line : lines) {
    std::string block = line + std::string(nccl::kScanPadding, 'L');  // padding that would look like 'L's
    const auto want = reference_scan(line);
    nccl::LineScan got;
    nccl::detail::scan_line_sse2(block.data(), line.size(), got);
    expect_same(want, got, "sse2: " + line);
    if (avx2) {
      ASSERT_TRUE(nccl::detail::scan_line_avx2(block.data(), line.size(), got));
      expect_same(want, got, "avx2: " + line);
    }
    nccl::scan_line(block.data(), line.size(), got);
    expect_same(want, got, "scan_line: " + line);
  }
  if (!avx2) GTEST_SKIP() << "this CPU has no AVX2: only the SSE2 scan was compared (the AVX2 one is chosen only where it runs)";
}

TEST(NcclScan, SlotBytesCompareEveryByte) {
  for (size_t n = 0; n <= 40; ++n) {
    const std::string a(n, 'a');
    EXPECT_TRUE(nccl::same_bytes(a, a)) << n;
    EXPECT_FALSE(nccl::same_bytes(a, a + "a")) << n;
    for (size_t i = 0; i < n; ++i) {
      std::string b = a;
      b[i] = 'b';
      EXPECT_FALSE(nccl::same_bytes(a, b)) << n << " differs at " << i;
    }
  }
  nccl::SlotBytes<16> slot;
  EXPECT_TRUE(slot.assign("gpu-b07:901:915"));
  EXPECT_TRUE(slot.equals("gpu-b07:901:915"));
  EXPECT_FALSE(slot.equals("gpu-b07:901:916"));
  EXPECT_FALSE(slot.assign("a text longer than the slot"));
}

}  // namespace
}  // namespace fabricproof
