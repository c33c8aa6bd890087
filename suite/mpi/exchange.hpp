#pragma once
// Every wait on another rank, with a deadline (design.md, principle 4). Each exchange posts the
// non-blocking form of its MPI call and polls it, answering rank 0's roll call meanwhile. When the
// deadline passes, the request and its buffer are kept until the job ends (Session::abandon) and
// Lost is thrown: the run then ends with the silent ranks named (app/run.cpp). Point-to-point
// exchanges use sequenced tags, so a late answer is never taken for the next exchange's.
// No other code in the suite waits on MPI.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mpi/session.hpp"

namespace fabricproof::mpi {

// The deadline `seconds` from now (bounded: a huge timeout does not overflow the clock).
Clock::time_point deadline_in(double seconds);

// relaxed: sleep between polls (control messages; ranks are oversubscribed in tests).
// busy: only yield (the timed calls of a collective sweep).
enum class Poll { relaxed, busy };

// Waits for all `count` requests. Throws Lost naming `what` (and `silent`, when the caller knows
// who did not answer) when the deadline passes or MPI reports an error. With `still_alive`, the
// wait goes on past the deadline while it holds (the ranks waited for show signs of life).
void wait_all(Session& s, MPI_Request* requests, int count, Clock::time_point deadline, const std::string& what,
              std::shared_ptr<void> keep = {}, Poll poll = Poll::relaxed, std::vector<int> silent = {},
              const std::function<bool()>& still_alive = {});

// How an exchange treats its deadline: as the end, or as the end only once the ranks it waits for
// show no sign of life (the end of a verbs round: a pair may stream longer than any budget).
enum class Patience { until_deadline, while_alive };

// Rank 0 learns every rank's host name (Session::host_of), for naming a rank that is lost later.
void share_hosts(Session& s, Clock::time_point deadline);

struct Gathered {
  std::vector<std::optional<std::string>> parts;  // rank 0: one per rank (nullopt: not in time)
  std::vector<int> silent;                        // rank 0: the ranks that did not deliver
  // Throws Lost naming the silent ranks, if any.
  void require_all(const Session& s, const std::string& what) const;
};

// Every rank sends `mine` to rank 0, which takes them in whatever order they come until the
// deadline. Other ranks get an empty result once rank 0 has taken theirs (Lost if it never does).
Gathered gather_to_root(Session& s, const std::string& mine, Clock::time_point deadline, const std::string& what,
                        Patience patience = Patience::until_deadline);

// Rank 0's `value` on every rank of the world.
std::string broadcast_from_root(Session& s, const std::string& value, Clock::time_point deadline, const std::string& what,
                                Patience patience = Patience::until_deadline);

// Collectives of a group (sub-communicator); every rank of `comm` calls them in the same order.
uint64_t allreduce(Session& s, MPI_Comm comm, uint64_t value, MPI_Op op, Clock::time_point deadline, const std::string& what);
double allreduce(Session& s, MPI_Comm comm, double value, MPI_Op op, Clock::time_point deadline, const std::string& what);
void barrier(Session& s, MPI_Comm comm, Clock::time_point deadline, const std::string& what, Poll poll = Poll::relaxed);

// A barrier of `comm` entered now and tested later, so that a rank can go on working until every
// rank has entered it (a locate group keeps its load on until every group of the round is done).
class OpenBarrier {
 public:
  OpenBarrier(Session& s, MPI_Comm comm);
  ~OpenBarrier();  // one never completed (the run is ending) is handed to the session, not waited on
  OpenBarrier(const OpenBarrier&) = delete;
  OpenBarrier& operator=(const OpenBarrier&) = delete;
  bool entered_by_all();  // tests it, without waiting
  void wait(Clock::time_point deadline, const std::string& what);

 private:
  Session& s_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};
void broadcast_bytes(Session& s, MPI_Comm comm, void* data, int bytes, int root, Clock::time_point deadline, const std::string& what);

// The first failure of any rank of `comm`, as "rank N of the group: text", on every rank (nothing
// when none). Ranks with nothing to report still take part, so no rank is left behind on a failure.
std::optional<std::string> agree_on_error(Session& s, MPI_Comm comm, const std::optional<std::string>& mine, Clock::time_point deadline);

// A sub-communicator of `parent` holding the ranks with `member` (MPI_COMM_NULL elsewhere). MPI has
// no non-blocking split: the ranks first meet in a barrier with a deadline, and the split itself
// runs under the session's watchdog.
MPI_Comm split(Session& s, MPI_Comm parent, bool member, Clock::time_point deadline, const std::string& what);
// Groups side by side: one sub-communicator per colour >= 0 (ordered by rank), MPI_COMM_NULL for -1.
MPI_Comm split_by_colour(Session& s, MPI_Comm parent, int colour, Clock::time_point deadline, const std::string& what);

// This rank's place in a group and the group's size; and the end of a group made by split().
int rank_in(MPI_Comm comm);
int size_of(MPI_Comm comm);
void free_group(MPI_Comm& comm);

// Point-to-point messages between two ranks on a tag (the verbs pairs' out-of-band channel).
// send_to returns false when the peer did not take the message before the deadline.
bool send_to(Session& s, int peer, int tag, const std::string& message, Clock::time_point deadline);
std::optional<std::string> try_receive(Session& s, int peer, int tag);

// Rank 0 asks every other rank what it is doing; nullopt for a rank that did not answer before
// the deadline. Other ranks answer from their wait loops (Session::answer_roll_call).
struct RollAnswer {
  int rank = 0;
  std::optional<std::string> doing;
};
std::vector<RollAnswer> roll_call(Session& s, Clock::time_point deadline);

// A rank other than 0 after Lost: keeps answering the roll call until rank 0 ends the job, and
// returns when `deadline` passes without that (rank 0 itself is then the one that is lost).
void await_root(Session& s, Clock::time_point deadline);

// Wall-clock offset of each rank against rank 0 (seconds, positive = ahead), by ping-pong keeping
// the exchange with the shortest round trip. Meaningful on rank 0; every rank calls it.
std::vector<double> clock_offsets(Session& s, Clock::time_point deadline);

}  // namespace fabricproof::mpi
