// A failure names where it happened: this process's node and rank (set by the MPI session) and
// the thrower's device; the phase boundary puts that in the report.
#include <gtest/gtest.h>

#include "core/located_error.hpp"

namespace fabricproof {
namespace {

TEST(LocatedError, CarriesTheNodeTheRankAndTheDevice) {
  set_process_location("node3", 2);
  try {
    throw LocatedError("mlx5_1", "ibv_create_qp: Cannot allocate memory (12)");
  } catch (const LocatedError& e) {
    EXPECT_EQ(e.where().host, "node3");
    ASSERT_TRUE(e.where().rank.has_value());
    EXPECT_EQ(*e.where().rank, 2);
    EXPECT_EQ(describe(e.where()), "node3 rank 2 mlx5_1");
    EXPECT_STREQ(e.what(), "ibv_create_qp: Cannot allocate memory (12)");
  }
  EXPECT_EQ(describe(process_location()), "node3 rank 2") << "no device: the process alone";
  EXPECT_EQ(describe(Location{}), "");
}

}  // namespace
}  // namespace fabricproof
