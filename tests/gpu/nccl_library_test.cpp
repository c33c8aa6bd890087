// NCCL opened at run time (collectives/nccl_library.cpp): no GPU needed, only the NCCL the build found.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

#include "collectives/nccl_info.hpp"
#include "collectives/nccl_library.hpp"
#include "core/located_error.hpp"

namespace fabricproof::collectives {

// The build's NCCL, or the one FABRICPROOF_NCCL_LIBRARY chooses (scripts/gpu-check: the GPU
// machine's own) and nothing else.
TEST(NcclLibrary, OpensTheBuildsOrTheChosenNcclAndResolvesEveryFunction) {
  const auto failed = failure_of([] { nccl_library(); });
  ASSERT_FALSE(failed) << *failed;
  const NcclLibrary* nccl = &nccl_library();
  EXPECT_FALSE(nccl->path.empty());
  if (const char* chosen = std::getenv("FABRICPROOF_NCCL_LIBRARY"); chosen && *chosen) {
    EXPECT_EQ(nccl->path, chosen);
  }
  int code = 0;
  ASSERT_EQ(nccl->GetVersion(&code), ncclSuccess);
  EXPECT_GE(code, 21400) << "the suite needs NCCL >= 2.14";
  // Optional, but present from 2.18: the NCCL engine times its calls on a blocking child split off
  // its non-blocking communicator, and without it reports the per-call thread NCCL then starts.
  if (code >= 21800) {
    EXPECT_NE(nccl->CommSplit, nullptr) << "NCCL " << code << " has ncclCommSplit";
  }
  // Optional, present from 2.19: the engine's buffers come from it, as nccl-tests' do.
  if (code >= 21900) {
    EXPECT_NE(nccl->MemAlloc, nullptr) << "NCCL " << code << " has ncclMemAlloc";
    EXPECT_NE(nccl->MemFree, nullptr) << "NCCL " << code << " has ncclMemFree";
  }
  EXPECT_STREQ(nccl->GetErrorString(ncclInvalidArgument), "invalid argument (run with NCCL_DEBUG=WARN for details)");
  ASSERT_TRUE(nccl_version());
  EXPECT_TRUE(std::regex_match(*nccl_version(), std::regex(R"(2\.\d+\.\d+)"))) << *nccl_version();
}

// A library that does not open: null, and the reason names the file. In a child process, as the
// library is loaded once per process.
TEST(NcclLibrary, ALibraryThatDoesNotOpenIsNamedAndTheVersionIsEmpty) {
  // "threadsafe": the child re-runs the binary, so the library another test of this process has
  // loaded is not loaded there (run as one binary, as scripts/gpu-check does, not only by ctest).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("FABRICPROOF_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
        const std::string why = failure_of([] { nccl_library(); }).value_or("");
        const bool missing = !why.empty() && !nccl_version();
        const bool named = why.find("NCCL not found") != std::string::npos && why.find("/nonexistent/libnccl.so.2") != std::string::npos;
        std::exit(missing && named ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace fabricproof::collectives
