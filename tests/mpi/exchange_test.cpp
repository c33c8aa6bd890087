// The deadline helpers of suite/mpi, and the MPI collective engine's buffers, under a real mpirun
// with 3 ranks (ctest runs it with mpiexec -np 3). Every rank runs every test in the same order:
// the tests are collective.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <thread>

#include "collectives/engine.hpp"
#include "mpi/exchange.hpp"

namespace fabricproof::mpi {
namespace {

Session* session = nullptr;

void sleep_s(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

TEST(Exchange, GatherNamesTheRankThatDidNotDeliverInTime) {
  auto& s = *session;
  ASSERT_EQ(s.size(), 3) << "run with mpiexec -np 3";
  if (s.rank() == 2) {
    s.next_tags();  // takes part in the sequence, but never delivers
    barrier(s, s.world(), deadline_in(30), "after the gather");
    return;
  }
  const auto g = gather_to_root(s, "part of rank " + std::to_string(s.rank()), deadline_in(1), "a test gather");
  if (s.is_root()) {
    ASSERT_EQ(g.parts.size(), 3u);
    EXPECT_EQ(g.parts[1], "part of rank 1");
    EXPECT_FALSE(g.parts[2].has_value());
    EXPECT_EQ(g.silent, std::vector<int>{2});
    try {
      g.require_all(s, "a test gather");
      ADD_FAILURE() << "require_all must throw when a rank is silent";
    } catch (const Lost& lost) {
      EXPECT_EQ(lost.silent(), std::vector<int>{2});
      EXPECT_NE(std::string(lost.what()).find("rank 2"), std::string::npos) << lost.what();
    }
  }
  barrier(s, s.world(), deadline_in(30), "after the gather");
}

// Rank 0 comes to the gather after its deadline (its own part of the step ran long, as a long
// iteration-mode verbs pair does); the parts the others sent in time are there and must count.
TEST(Exchange, GatherTakesThePartsThatArrivedWhenRank0ComesAfterTheDeadline) {
  auto& s = *session;
  const auto deadline = deadline_in(0.5);
  if (s.is_root()) sleep_s(1.5);
  const auto g = gather_to_root(s, "part of rank " + std::to_string(s.rank()), deadline, "a late gather");
  if (s.is_root()) {
    EXPECT_TRUE(g.silent.empty()) << g.silent.size() << " rank(s) taken for silent although their parts had arrived";
    ASSERT_EQ(g.parts.size(), 3u);
    EXPECT_EQ(g.parts[1], "part of rank 1");
    EXPECT_EQ(g.parts[2], "part of rank 2");
  }
  barrier(s, s.world(), deadline_in(30), "after the late gather");
}

// Rank 1 answers the first gather after rank 0 gave up on it; the second gather must get rank 1's
// second answer, never the late first one (each exchange has its own tag).
TEST(Exchange, LateAnswerOfAnEarlierExchangeIsNeverTakenForTheNext) {
  auto& s = *session;
  if (s.rank() == 1) sleep_s(1.5);
  const auto first = gather_to_root(s, "first", deadline_in(s.rank() == 0 ? 0.5 : 30), "the first gather");
  if (s.is_root()) {
    EXPECT_EQ(first.silent, std::vector<int>{1});
  }
  const auto second = gather_to_root(s, "second", deadline_in(30), "the second gather");
  if (s.is_root()) {
    ASSERT_TRUE(second.silent.empty());
    EXPECT_EQ(second.parts[1], "second") << "a late answer of the first gather was taken for the second";
    EXPECT_EQ(second.parts[2], "second");
  }
  barrier(s, s.world(), deadline_in(30), "after the gathers");
}

// A receive given up at its deadline keeps its buffer: the late message lands there, not in freed
// memory, and the session holds the request until the job ends.
TEST(Exchange, AbandonedRequestKeepsItsBufferForTheLateMessage) {
  auto& s = *session;
  const int tag = s.next_tags();
  std::shared_ptr<int> kept;
  if (s.rank() == 0) {
    const size_t before = s.abandoned();
    auto buffer = std::make_shared<int>(-1);
    MPI_Request request;
    MPI_Irecv(buffer.get(), 1, MPI_INT, 1, tag, s.world(), &request);
    EXPECT_THROW(wait_all(s, &request, 1, deadline_in(0.3), "a receive that times out", buffer), Lost);
    EXPECT_EQ(s.abandoned(), before + 1);
    EXPECT_GE(buffer.use_count(), 2) << "the session must hold the buffer of the abandoned request";
    kept = buffer;
  }
  if (s.rank() == 1) {
    sleep_s(0.8);
    auto value = std::make_shared<int>(4242);
    MPI_Request request;
    MPI_Isend(value.get(), 1, MPI_INT, 0, tag, s.world(), &request);
    wait_all(s, &request, 1, deadline_in(30), "the late send", value);
  }
  barrier(s, s.world(), deadline_in(30), "after the late send");
  if (s.rank() == 0) {
    // Progress for the abandoned receive: later MPI calls complete it.
    for (int i = 0; i < 100 && *kept != 4242; ++i) barrier(s, MPI_COMM_SELF, deadline_in(5), "progress");
    EXPECT_EQ(*kept, 4242);
  }
  barrier(s, s.world(), deadline_in(30), "after the check");
}

TEST(Exchange, CollectiveWithASilentRankThrowsLostAtTheDeadline) {
  auto& s = *session;
  const auto start = Clock::now();
  if (s.rank() == 2) sleep_s(2.0);  // joins the barrier late: the others give up first
  if (s.rank() == 2) {
    barrier(s, s.world(), deadline_in(30), "a late barrier");
  } else {
    EXPECT_THROW(barrier(s, s.world(), deadline_in(0.5), "a barrier with a silent rank"), Lost);
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 1.9) << "Lost must come at the deadline, not later";
  }
  // The abandoned barrier completes once rank 2 arrives; the world is in step again after it.
  barrier(s, s.world(), deadline_in(30), "after the late barrier");
}

TEST(Exchange, AgreeOnErrorTellsEveryRankTheFirstError) {
  auto& s = *session;
  const std::optional<std::string> mine =
      s.rank() == 1 ? std::optional<std::string>("boom on rank 1") : (s.rank() == 2 ? std::optional<std::string>("later error") : std::nullopt);
  EXPECT_EQ(agree_on_error(s, s.world(), mine, deadline_in(30)), "rank 1 of the group: boom on rank 1");
  EXPECT_EQ(agree_on_error(s, s.world(), std::nullopt, deadline_in(30)), std::nullopt);
  // An agreed error, agreed again (an engine's setup error from each later call), keeps one prefix
  // (seen on a GPU: "rank 0 of the group: rank 0 of the group: ncclCommInitRankConfig: ...").
  const std::string agreed = "rank 1 of the group: boom on rank 1";
  EXPECT_EQ(agree_on_error(s, s.world(), agreed, deadline_in(30)), agreed);
}

TEST(Exchange, AllreduceAndBroadcastCarryValues) {
  auto& s = *session;
  EXPECT_EQ(allreduce(s, s.world(), static_cast<uint64_t>(s.rank() + 1), MPI_SUM, deadline_in(30), "a sum"), 6u);
  EXPECT_DOUBLE_EQ(allreduce(s, s.world(), s.rank() * 1.5, MPI_MAX, deadline_in(30), "a max"), 3.0);
  EXPECT_EQ(broadcast_from_root(s, s.is_root() ? std::string(100000, 'x') : "", deadline_in(30), "a long text"), std::string(100000, 'x'));
}

// Rank 0's roll call: a rank in a wait loop answers with its step; a rank that does not poll is
// named silent; its late answer to that roll call is not taken for the next one.
TEST(Exchange, RollCallNamesWhatEachRankIsDoingAndWhoIsSilent) {
  auto& s = *session;
  s.set_step("test", s.rank() == 1 ? "waiting in a loop" : "busy without polling");
  if (s.rank() == 1) await_root(s, deadline_in(2.0));
  if (s.rank() == 2) sleep_s(2.0);
  if (s.is_root()) {
    const auto answers = roll_call(s, deadline_in(1.0));
    ASSERT_EQ(answers.size(), 3u);
    EXPECT_EQ(answers[1].doing, "test: waiting in a loop");
    EXPECT_FALSE(answers[2].doing.has_value()) << "rank 2 did not poll during the roll call";
  }
  barrier(s, s.world(), deadline_in(30), "between the roll calls");  // rank 2 answers the first call here, late
  s.set_step("test", "second call");
  // Every rank holds its new step before the second call: the first barrier ends on each rank at
  // its own time, and a rank still in it (a loaded machine, seen with ctest -j2) would answer the
  // second call truthfully with its old step.
  barrier(s, s.world(), deadline_in(30), "after the new step");
  if (s.is_root()) {
    const auto answers = roll_call(s, deadline_in(5.0));
    ASSERT_EQ(answers.size(), 3u);
    EXPECT_EQ(answers[1].doing, "test: second call");
    EXPECT_EQ(answers[2].doing, "test: second call") << "a late answer to the first roll call was taken";
  } else {
    await_root(s, deadline_in(2.0));
  }
  barrier(s, s.world(), deadline_in(30), "after the roll calls");
}

// A rank at work (a verbs pair streaming in iteration mode) shows signs of life as its progress
// notes do: a heartbeat every 100 ms for `seconds`, and no MPI call otherwise.
void work_with_signs_of_life(Session& s, double seconds) {
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < until) {
    s.heartbeat();
    sleep_s(0.1);
  }
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Rank 0's word that the round is over, patient: every rank gets it, the deadline long past.
void expect_round_end(Session& s, Clock::time_point deadline) {
  std::string next;
  EXPECT_NO_THROW(next = broadcast_from_root(s, "next", deadline, "the end of the round", Patience::while_alive)) << "rank " << s.rank();
  EXPECT_EQ(next, "next");
  barrier(s, s.world(), deadline_in(30), "after the patient round");
}

// The end of a verbs round: rank 1 streams 4 s past a 1 s deadline. A patient gather waits for its
// part as long as it lives, and rank 2, idle in that round, waits for rank 0's word as long as rank
// 0 lives (a fixed deadline made both give up on a pair that was only slow).
TEST(Exchange, PatientRoundEndOutlastsTheDeadlineWhileARankStreams) {
  auto& s = *session;
  const auto start = Clock::now();
  const auto deadline = deadline_in(1.0);
  if (s.rank() == 1) work_with_signs_of_life(s, 4.0);
  const auto g = gather_to_root(s, "part of rank " + std::to_string(s.rank()), deadline, "a round's results", Patience::while_alive);
  if (s.is_root()) {
    EXPECT_TRUE(g.silent.empty()) << "a rank that streamed past the deadline but lived was taken for silent";
    EXPECT_EQ(g.parts[1], "part of rank 1");
    EXPECT_GE(seconds_since(start), 3.5);
  }
  expect_round_end(s, deadline);
}

// The same with rank 0 in the streaming pair: ranks 1 and 2 send parts too big to leave eagerly
// (rank 0 must take them), and both wait past the deadline while rank 0 lives.
TEST(Exchange, PatientRoundEndOutlastsTheDeadlineWhileRank0Streams) {
  auto& s = *session;
  const auto deadline = deadline_in(1.0);
  if (s.is_root()) work_with_signs_of_life(s, 4.0);
  const std::string big(1 << 20, static_cast<char>('a' + s.rank()));
  std::optional<Gathered> g;
  EXPECT_NO_THROW(g = gather_to_root(s, big, deadline, "a round's results", Patience::while_alive)) << "rank " << s.rank();
  if (s.is_root() && g) {
    EXPECT_TRUE(g->silent.empty());
    EXPECT_EQ(g->parts[2], std::string(1 << 20, 'c'));
  }
  expect_round_end(s, deadline);
}

// Patience is not forever: rank 2 stops (no MPI call for longer than Session::kAliveWithin), and
// rank 0's patient gather names it silent once its last sign of life is that old, long before it
// comes back.
TEST(Exchange, PatientGatherStillEndsWhenARankShowsNoSignOfLife) {
  auto& s = *session;
  const double stopped_s = std::chrono::duration<double>(Session::kAliveWithin).count() + 5;
  barrier(s, s.world(), deadline_in(30), "before the stop");  // every rank has just shown signs of life
  const auto start = Clock::now();
  if (s.rank() == 2) sleep_s(stopped_s);
  const auto g = gather_to_root(s, "part", deadline_in(1.0), "a round's results", Patience::while_alive);
  if (s.is_root()) {
    EXPECT_EQ(g.silent, std::vector<int>{2});
    EXPECT_LT(seconds_since(start), stopped_s - 2) << "the gather must end when rank 2's signs of life stop, not when it returns";
    EXPECT_GE(seconds_since(start), 1.0);
  }
  barrier(s, s.world(), deadline_in(60), "after the stop");
}

TEST(Exchange, HugeTimeoutsDoNotOverflowTheDeadline) {
  EXPECT_GT(deadline_in(1e20), Clock::now() + std::chrono::hours(24));
  EXPECT_GT(deadline_in(std::numeric_limits<double>::infinity()), Clock::now() + std::chrono::hours(24));
  const auto negative = deadline_in(-5);
  EXPECT_LE(negative, Clock::now()) << "a negative timeout is a deadline that has passed";
}

TEST(Exchange, ClockOffsetsOfRanksOnOneHostAreSmall) {
  auto& s = *session;
  const auto offsets = clock_offsets(s, deadline_in(30));
  if (!s.is_root()) return;
  ASSERT_EQ(offsets.size(), 3u);
  for (double o : offsets) EXPECT_LT(std::abs(o), 0.05) << "ranks on one host share its clock";
}

// The mark of a phase whose calls may block (the roll call then waits for a blocked rank's
// watchdog): cleared when the phase ends or fails with its own error (NCCL's init failing on one
// rank), which a later phase's roll call must not wait for; kept when a wait gave up (Lost).
TEST(Session, BlockingCallsMarkIsClearedUnlessAWaitGaveUp) {
  auto& s = *session;
  const auto stall = std::chrono::seconds(20);
  bool ran = false;
  with_blocking_calls(s, stall, [&] {
    ran = true;
    EXPECT_GT(s.blocked_peers_wait(), stall) << "the roll call waits out a blocked rank's watchdog while the mark is set";
  });
  EXPECT_TRUE(ran);
  EXPECT_EQ(s.blocked_peers_wait(), Clock::duration::zero()) << "the mark outlived the phase";
  EXPECT_THROW(with_blocking_calls(s, stall, [] { throw std::runtime_error("ncclCommInitRank: unhandled system error"); }), std::runtime_error);
  EXPECT_EQ(s.blocked_peers_wait(), Clock::duration::zero()) << "a phase's own error left the mark set";
  EXPECT_THROW(with_blocking_calls(s, stall, [] { throw Lost("rank 2 stopped answering"); }), Lost);
  EXPECT_GT(s.blocked_peers_wait(), stall) << "a wait that gave up must leave the mark for the roll call that follows";
  s.expect_blocking_calls({});
}

// This process's resident memory (/proc/self/statm: pages).
uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// Making the MPI engine touches none of its buffers' pages: zeroing 2 x max-bytes up front made
// the 4 ranks of a 256 MiB sweep reach its first, 8-byte step seconds apart on a slow machine,
// past that step's exchange deadline. fill() writes what each size reads: the first call is right.
TEST(MpiEngine, MakingItTouchesNoBufferPageAndTheFirstCallIsRight) {
  auto& s = *session;
  constexpr uint64_t kMaxBytes = 256ull << 20;
  const uint64_t before = resident_bytes();
  auto engine = collectives::make_mpi_engine(s, s.world(), kMaxBytes, 30);
  const uint64_t after = resident_bytes();
  EXPECT_LT(after, before + (32ull << 20)) << "resident memory grew by " << ((after - before) >> 20) << " MiB making an engine of 2 x "
                                           << (kMaxBytes >> 20) << " MiB";
  const collectives::CollCall call{CollOp::allreduce, DataType::float32, ReduceOp::sum, 2, false};
  ASSERT_NO_THROW(engine->fill(call));
  EXPECT_GE(engine->run(call, 1), 0.0);
  EXPECT_EQ(engine->count_wrong(call), 0u);
  barrier(s, s.world(), deadline_in(30), "after the engine test");
}

}  // namespace
}  // namespace fabricproof::mpi

int main(int argc, char** argv) {
  fabricproof::mpi::Session session(&argc, &argv);
  fabricproof::mpi::session = &session;
  ::testing::InitGoogleTest(&argc, argv);
  if (session.rank() != 0) {  // one rank prints; every rank's failures still count in its exit code
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  fabricproof::mpi::share_hosts(session, fabricproof::mpi::deadline_in(30));
  return RUN_ALL_TESTS();
}
