#include "mpi/exchange.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <limits>
#include <regex>
#include <thread>

namespace fabricproof::mpi {
namespace {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

double wall_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

std::string seconds_text(Clock::duration d) { return fmt::format("{:.0f} s", std::chrono::duration<double>(d).count()); }

// A relaxed poll sleeps 100 us at first and backs off to 5 ms: a rank that waits long for the
// others (a gather at the end of a round) then costs no CPU that a measuring rank on the same
// node, or a virtual node on the same host, could use.
class Backoff {
 public:
  void pause() {
    std::this_thread::sleep_for(sleep_);
    sleep_ = std::min(sleep_ * 2, std::chrono::microseconds(5000));
  }

 private:
  std::chrono::microseconds sleep_{100};
};

// A received message of whatever length, without blocking: MPI_Improbe, then MPI_Imrecv polled
// against the deadline (a sender stopped in the middle of a large message cannot hang us).
std::optional<std::string> receive_probed(Session& s, int source, int tag, MPI_Comm comm, Clock::time_point deadline,
                                          const std::string& what, int* from = nullptr) {
  int flag = 0;
  MPI_Message message;
  MPI_Status status;
  MPI_Improbe(source, tag, comm, &flag, &message, &status);
  if (!flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  auto payload = std::make_shared<std::string>(static_cast<size_t>(count), '\0');
  MPI_Request request;
  MPI_Imrecv(payload->data(), count, MPI_CHAR, &message, &request);
  wait_all(s, &request, 1, deadline, what, payload, Poll::relaxed, {status.MPI_SOURCE});
  if (from) *from = status.MPI_SOURCE;
  return *payload;
}

template <typename T>
T allreduce_as(Session& s, MPI_Comm comm, T value, MPI_Datatype type, MPI_Op op, Clock::time_point deadline, const std::string& what) {
  auto buffers = std::make_shared<std::pair<T, T>>(value, value);
  MPI_Request request;
  MPI_Iallreduce(&buffers->first, &buffers->second, 1, type, op, comm, &request);
  wait_all(s, &request, 1, deadline, what, buffers);
  return buffers->second;
}

// What keeps a patient exchange going past its deadline: on a rank other than 0, rank 0's signs
// of life; on rank 0 (a broadcast's sends, which the others take), any other rank's.
std::function<bool()> patient_on(Session& s, Patience patience) {
  if (patience != Patience::while_alive) return {};
  if (!s.is_root()) return [&s] { return s.alive(0); };
  return [&s] {
    for (int r = 1; r < s.size(); ++r)
      if (s.alive(r)) return true;
    return false;
  };
}

}  // namespace

Clock::time_point deadline_in(double seconds) {
  constexpr double kLongest = 10.0 * 24 * 3600;  // beyond any phase; keeps the arithmetic in range
  const double bounded = std::isfinite(seconds) ? std::clamp(seconds, 0.0, kLongest) : kLongest;
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(bounded));
}

void wait_all(Session& s, MPI_Request* requests, int count, Clock::time_point deadline, const std::string& what,
              std::shared_ptr<void> keep, Poll poll, std::vector<int> silent, const std::function<bool()>& still_alive) {
  const auto start = Clock::now();
  Backoff backoff;
  for (;;) {
    int done = 0;
    const int code = MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE);
    if (code != MPI_SUCCESS) {
      for (int i = 0; i < count; ++i)
        if (requests[i] != MPI_REQUEST_NULL) s.abandon(requests[i], keep);
      throw Lost(fmt::format("{}: {}", what, mpi_error_text(code)), std::move(silent));
    }
    if (done) return;
    s.answer_roll_call();
    if (poll == Poll::relaxed) s.heartbeat();  // never inside a timed loop
    if (Clock::now() > deadline && !(still_alive && still_alive())) {
      for (int i = 0; i < count; ++i)
        if (requests[i] != MPI_REQUEST_NULL) s.abandon(requests[i], keep);
      throw Lost(fmt::format("{}: not complete after {}", what, seconds_text(Clock::now() - start)), std::move(silent));
    }
    if (poll == Poll::busy)
      std::this_thread::yield();
    else
      backoff.pause();
  }
}

void Gathered::require_all(const Session& s, const std::string& what) const {
  if (silent.empty()) return;
  std::string names;
  for (int r : silent) names += (names.empty() ? "" : ", ") + s.rank_label(r);
  throw Lost(fmt::format("{}: no answer from {}", what, names), silent);
}

Gathered gather_to_root(Session& s, const std::string& mine, Clock::time_point deadline, const std::string& what, Patience patience) {
  const int tag = s.next_tags();
  Gathered out;
  if (!s.is_root()) {
    auto payload = std::make_shared<std::string>(mine);
    MPI_Request request;
    MPI_Isend(payload->data(), static_cast<int>(payload->size()), MPI_CHAR, 0, tag, s.world(), &request);
    wait_all(s, &request, 1, deadline, what + ": rank 0 did not take this rank's part", payload, Poll::relaxed, {0}, patient_on(s, patience));
    return out;
  }
  out.parts.resize(static_cast<size_t>(s.size()));
  out.parts[0] = mine;
  int pending = s.size() - 1;
  // A part that has arrived counts, even when rank 0 itself comes to the gather after the deadline
  // (its own work ran long): it looks for at least a second, the time MPI's progress needs to read
  // what sits in its sockets. A matched message is already on its way and gets a few seconds more.
  const auto give_up = std::max(deadline, Clock::now() + std::chrono::seconds(1));
  // Patient: past the deadline, rank 0 waits on while any rank it still waits for shows signs of life.
  const auto any_pending_alive = [&] {
    for (int r = 1; r < s.size(); ++r)
      if (!out.parts[static_cast<size_t>(r)] && s.alive(r)) return true;
    return false;
  };
  Backoff backoff;
  while (pending > 0 && (Clock::now() <= give_up || (patience == Patience::while_alive && any_pending_alive()))) {
    s.heartbeat();
    int from = -1;
    auto part = receive_probed(s, MPI_ANY_SOURCE, tag, s.world(), std::max(give_up, Clock::now() + std::chrono::seconds(5)), what, &from);
    if (!part) {
      backoff.pause();
      continue;
    }
    out.parts[static_cast<size_t>(from)] = std::move(*part);
    --pending;
  }
  for (int r = 1; r < s.size(); ++r)
    if (!out.parts[static_cast<size_t>(r)]) out.silent.push_back(r);
  return out;
}

void share_hosts(Session& s, Clock::time_point deadline) {
  const auto gathered = gather_to_root(s, s.host(), deadline, "sharing host names");
  if (!s.is_root()) return;
  std::vector<std::string> hosts(static_cast<size_t>(s.size()));
  for (size_t r = 0; r < hosts.size(); ++r) hosts[r] = gathered.parts[r].value_or("");
  s.set_hosts(std::move(hosts));
  gathered.require_all(s, "sharing host names");
}

std::string broadcast_from_root(Session& s, const std::string& value, Clock::time_point deadline, const std::string& what,
                                Patience patience) {
  const auto still_alive = patient_on(s, patience);
  auto length = std::make_shared<uint64_t>(value.size());
  MPI_Request request;
  MPI_Ibcast(length.get(), 1, MPI_UINT64_T, 0, s.world(), &request);
  wait_all(s, &request, 1, deadline, what, length, Poll::relaxed, {}, still_alive);
  if (*length > static_cast<uint64_t>(INT_MAX)) throw Lost(fmt::format("{}: {} bytes is more than one message can carry", what, *length));
  auto out = std::make_shared<std::string>(s.is_root() ? value : std::string(*length, '\0'));
  MPI_Ibcast(out->data(), static_cast<int>(*length), MPI_CHAR, 0, s.world(), &request);
  wait_all(s, &request, 1, deadline, what, out, Poll::relaxed, {}, still_alive);
  return *out;
}

uint64_t allreduce(Session& s, MPI_Comm comm, uint64_t value, MPI_Op op, Clock::time_point deadline, const std::string& what) {
  return allreduce_as(s, comm, value, MPI_UINT64_T, op, deadline, what);
}

double allreduce(Session& s, MPI_Comm comm, double value, MPI_Op op, Clock::time_point deadline, const std::string& what) {
  return allreduce_as(s, comm, value, MPI_DOUBLE, op, deadline, what);
}

void barrier(Session& s, MPI_Comm comm, Clock::time_point deadline, const std::string& what, Poll poll) {
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  wait_all(s, &request, 1, deadline, what, {}, poll);
}

OpenBarrier::OpenBarrier(Session& s, MPI_Comm comm) : s_(s) { MPI_Ibarrier(comm, &request_); }

OpenBarrier::~OpenBarrier() {
  if (request_ != MPI_REQUEST_NULL) s_.abandon(request_, {});
}

bool OpenBarrier::entered_by_all() {
  if (request_ == MPI_REQUEST_NULL) return true;
  int done = 0;
  if (MPI_Test(&request_, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;  // wait() names the failure
  return done != 0;
}

void OpenBarrier::wait(Clock::time_point deadline, const std::string& what) {
  if (request_ == MPI_REQUEST_NULL) return;
  try {
    wait_all(s_, &request_, 1, deadline, what);
  } catch (...) {
    request_ = MPI_REQUEST_NULL;  // wait_all handed it to the session
    throw;
  }
}

void broadcast_bytes(Session& s, MPI_Comm comm, void* data, int bytes, int root, Clock::time_point deadline, const std::string& what) {
  // The caller's buffer: on a deadline it is copied into a kept one would be too late, so the
  // exchange goes through a buffer of our own.
  auto buffer = std::make_shared<std::vector<char>>(static_cast<const char*>(data), static_cast<const char*>(data) + bytes);
  MPI_Request request;
  MPI_Ibcast(buffer->data(), bytes, MPI_BYTE, root, comm, &request);
  wait_all(s, &request, 1, deadline, what, buffer);
  std::copy(buffer->begin(), buffer->end(), static_cast<char*>(data));
}

std::optional<std::string> agree_on_error(Session& s, MPI_Comm comm, const std::optional<std::string>& mine, Clock::time_point deadline) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // The lowest failing rank tells its error to everybody; INT_MAX: nobody failed.
  const uint64_t candidate = mine ? static_cast<uint64_t>(rank) : static_cast<uint64_t>(INT_MAX);
  const auto first = allreduce(s, comm, candidate, MPI_MIN, deadline, "agreeing on errors");
  if (first == static_cast<uint64_t>(INT_MAX)) return std::nullopt;
  std::array<char, 512> text{};
  if (static_cast<uint64_t>(rank) == first) mine->copy(text.data(), text.size() - 1);
  broadcast_bytes(s, comm, text.data(), static_cast<int>(text.size()), static_cast<int>(first), deadline, "sharing an error");
  // An error agreed before (an engine's setup error, which every rank returns again from each
  // call) already names its rank: not twice.
  static const std::regex agreed(R"(rank \d+ of the group: .*)");
  if (std::regex_match(text.data(), agreed)) return text.data();
  return fmt::format("rank {} of the group: {}", first, text.data());
}

MPI_Comm split(Session& s, MPI_Comm parent, bool member, Clock::time_point deadline, const std::string& what) {
  return split_by_colour(s, parent, member ? 0 : -1, deadline, what);
}

MPI_Comm split_by_colour(Session& s, MPI_Comm parent, int colour, Clock::time_point deadline, const std::string& what) {
  barrier(s, parent, deadline, what);
  Session::Watch watch(s, deadline_in(std::chrono::duration<double>(deadline - Clock::now()).count() + 30), "MPI_Comm_split: " + what, parent);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_split(parent, colour >= 0 ? colour : MPI_UNDEFINED, s.rank(), &comm);
  return comm;
}

bool send_to(Session& s, int peer, int tag, const std::string& message, Clock::time_point deadline) {
  s.heartbeat();  // a streaming rank's progress notes are its signs of life too
  auto payload = std::make_shared<std::string>(message);
  MPI_Request request;
  MPI_Isend(payload->data(), static_cast<int>(payload->size()), MPI_CHAR, peer, tag, s.world(), &request);
  try {
    wait_all(s, &request, 1, deadline, "a message to the pair's peer", payload);
  } catch (const Lost&) {
    return false;
  }
  return true;
}

std::optional<std::string> try_receive(Session& s, int peer, int tag) {
  s.answer_roll_call();
  s.heartbeat();
  return receive_probed(s, peer, tag, s.world(), deadline_in(60), "a message from the pair's peer");
}

std::vector<RollAnswer> roll_call(Session& s, Clock::time_point deadline) {
  static int next_id = 1;
  const int id = next_id++;
  std::vector<RollAnswer> answers;
  for (int r = 0; r < s.size(); ++r) answers.push_back({r, r == 0 ? std::optional<std::string>(s.doing()) : std::nullopt});
  auto ping = std::make_shared<int>(id);
  for (int r = 1; r < s.size(); ++r) {
    MPI_Request request;
    MPI_Isend(ping.get(), 1, MPI_INT, r, kTagRollCall, s.world(), &request);
    s.abandon(request, ping);  // a stopped rank never takes it; the job ends soon after
  }
  int pending = s.size() - 1;
  while (pending > 0 && Clock::now() <= deadline) {
    int from = -1;
    std::optional<std::string> answer;
    try {
      answer = receive_probed(s, MPI_ANY_SOURCE, kTagRollAnswer, s.world(), deadline, "the roll call", &from);
    } catch (const Lost&) {
      break;
    }
    if (!answer) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    const auto tab = answer->find('\t');
    if (tab == std::string::npos || answer->substr(0, tab) != std::to_string(id)) continue;  // an earlier roll call's
    auto& slot = answers[static_cast<size_t>(from)].doing;
    if (!slot) --pending;
    slot = answer->substr(tab + 1);
  }
  return answers;
}

void await_root(Session& s, Clock::time_point deadline) {
  while (Clock::now() < deadline) {
    s.answer_roll_call();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<double> clock_offsets(Session& s, Clock::time_point deadline) {
  constexpr int kRounds = 8;
  const int tag = s.next_tags();
  std::vector<double> offsets(static_cast<size_t>(s.size()), 0.0);
  if (!s.is_root()) {
    for (int i = 0; i < kRounds; ++i) {
      auto buffers = std::make_shared<std::pair<double, double>>(0.0, 0.0);
      MPI_Request request;
      MPI_Irecv(&buffers->first, 1, MPI_DOUBLE, 0, tag, s.world(), &request);
      wait_all(s, &request, 1, deadline, "the clock exchange with rank 0", buffers, Poll::busy, {0});
      buffers->second = wall_seconds();
      MPI_Isend(&buffers->second, 1, MPI_DOUBLE, 0, tag, s.world(), &request);
      wait_all(s, &request, 1, deadline, "the clock exchange with rank 0", buffers, Poll::busy, {0});
    }
    return offsets;
  }
  for (int r = 1; r < s.size(); ++r) {
    double best_rtt = std::numeric_limits<double>::infinity();
    for (int i = 0; i < kRounds; ++i) {
      auto buffers = std::make_shared<std::pair<double, double>>(wall_seconds(), 0.0);
      MPI_Request requests[2];
      MPI_Irecv(&buffers->second, 1, MPI_DOUBLE, r, tag, s.world(), &requests[1]);
      MPI_Isend(&buffers->first, 1, MPI_DOUBLE, r, tag, s.world(), &requests[0]);
      wait_all(s, requests, 2, deadline, "the clock exchange with " + s.rank_label(r), buffers, Poll::busy, {r});
      const double t2 = wall_seconds();
      if (t2 - buffers->first < best_rtt) {
        best_rtt = t2 - buffers->first;
        offsets[static_cast<size_t>(r)] = buffers->second - (buffers->first + t2) / 2;
      }
    }
  }
  return offsets;
}

int rank_in(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

int size_of(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  return size;
}

void free_group(MPI_Comm& comm) {
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

}  // namespace fabricproof::mpi
