#pragma once
// The report model: what rank 0 writes after every phase. JSON is the contract
// ("fabricproof.report/1"); Markdown and the console summary are rendered from the same model.
#include <nlohmann/json.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "collectives/collective_model.hpp"
#include "core/finding.hpp"
#include "core/located_error.hpp"
#include "gpudirect/gpudirect_rules.hpp"
#include "inventory/inventory.hpp"
#include "launch/launch.hpp"
#include "core/utc_time.hpp"  // utc_timestamp(), which the report's writers use
#include "soak/soak_model.hpp"
#include "uplink/uplink_model.hpp"
#include "verbs/verbs_model.hpp"
#include "nccl_log/audit.hpp"

namespace fabricproof {

inline constexpr const char* kReportSchema = "fabricproof.report/1";

struct PhaseRecord {
  std::string name;
  Verdict verdict = Verdict::skip;
  std::string reason;
  double duration_s = 0;
};

struct RankPlacement {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  std::optional<int> gpu;
  std::string gpu_uuid;
};

// What a run was doing when this report was written (absent from a finished run's report).
struct InFlight {
  std::string phase;
  std::string step;
  std::string since;  // UTC timestamp of the step's start
};

// The profile a run judged with: its name, where it came from, and the effective document (kept
// whole, so that a re-run can use the same thresholds).
struct ProfileRecord {
  std::string name;
  std::string origin;
  nlohmann::json document;
};
void to_json(nlohmann::json& j, const ProfileRecord& p);
void from_json(const nlohmann::json& j, ProfileRecord& p);

// What the binary was built with: its version, compiler, the optional parts it holds (verbs, cuda,
// nccl) and, with CUDA, the toolkit and the GPU architectures of its kernels.
struct BuildRecord {
  std::string version;
  std::string compiler;
  std::map<std::string, bool> optional_parts;
  std::optional<std::string> cuda_toolkit;
  std::optional<std::string> cuda_architectures;
};
void to_json(nlohmann::json& j, const BuildRecord& b);
void from_json(const nlohmann::json& j, BuildRecord& b);

struct Report {
  std::string schema = kReportSchema;
  // While a run is going its report says so: `"verdict": "incomplete"`, the step in flight and no
  // `finished_at`. Only the last write of a run carries its final verdict.
  bool finished = true;
  std::optional<InFlight> in_flight;
  Verdict verdict = Verdict::pass;  // of what is finished so far while !finished
  std::string started_at;
  std::string finished_at;
  std::vector<std::string> command;
  std::optional<ProfileRecord> profile;  // null in a report written before the profile loaded
  std::optional<BuildRecord> build;
  int world_size = 0;
  std::vector<int> missing_ranks;
  std::vector<RankPlacement> rank_map;
  std::vector<NodeFacts> nodes;
  std::vector<Finding> findings;
  std::vector<PhaseRecord> phases;
  // The sections of the phases that ran (and the launcher); absent when a phase did not run. JSON
  // meets them only in to_json/from_json: every writer reads these types.
  std::optional<Launch> launcher;
  std::optional<VerbsSection> verbs;
  std::optional<GpudirectSection> gpudirect;
  std::optional<CollectivesSection> collectives;
  std::optional<nccl::AuditSection> nccl_audit;
  std::optional<UplinkSection> uplink;
  std::optional<SoakSection> soak;
  // Top-level keys this version does not know (a newer writer's sections), kept as they were.
  nlohmann::json other_sections = nlohmann::json::object();

  // Verdict of the whole run: the worst finding or phase; skips alone do not fail a run.
  Verdict overall() const;
  // "PASS", "FAIL", ... or "INCOMPLETE": how the human formats head the report.
  std::string verdict_label() const;
  // What was selected or declared and not measured, for the first line of every human format:
  // "not run: verbs (no RDMA device on any node); 2 declared measurement(s) missing", or "".
  std::string not_proven_line() const;
};

void to_json(nlohmann::json& j, const InFlight& f);
void from_json(const nlohmann::json& j, InFlight& f);
void to_json(nlohmann::json& j, const PhaseRecord& p);
void from_json(const nlohmann::json& j, PhaseRecord& p);
void to_json(nlohmann::json& j, const RankPlacement& r);
void from_json(const nlohmann::json& j, RankPlacement& r);
void to_json(nlohmann::json& j, const Report& r);
void from_json(const nlohmann::json& j, Report& r);

// Fills nodes, rank_map, world_size and missing_ranks from the gathered facts.
void set_cluster(Report& report, const ClusterFacts& cluster);


// Writes `content` to `path` via a temporary file (created O_EXCL|O_NOFOLLOW beside it), fsync and
// rename(2), so a reader, a crash or a full disk never sees half a report: on any failed step
// (write, fsync, close) the old file stays as it was, and a LocatedError names the file and the step.
void write_file_atomic(const std::string& path, const std::string& content);

// An advisory lock (flock(2)) on the report directory's `.report.lock`, taken by a run around the
// check that its report.json is still its own and the write that replaces it, and by `report
// --finalize` around its whole read and rewrite: without it a finaliser's write could land between
// the run's check and its rename (the run's JSON rendered and fsync'ed meanwhile) and be replaced
// by the run's unfinished report. Waits up to `wait_s` for another holder.
class ReportLock {
 public:
  enum class State { held, busy, unsupported };  // busy: another process kept it for wait_s
  ReportLock(const std::string& dir, double wait_s);
  ~ReportLock();
  ReportLock(const ReportLock&) = delete;
  ReportLock& operator=(const ReportLock&) = delete;
  State state() const { return state_; }

 private:
  int fd_ = -1;
  State state_ = State::unsupported;  // no lock file or no locks on this file system: writers go on unlocked
};

// A file as it is now (inode and modification time, nanoseconds): a rename over it, even within the
// same clock tick, gives another inode. nullopt when it cannot be read.
struct FileIdentity {
  uint64_t inode = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};
std::optional<FileIdentity> file_identity(const std::string& path);

// Creates `dir` if needed and proves a report can be written there (a probe file, removed); a
// LocatedError names the directory and why not.
void check_output_directory(const std::string& dir);

}  // namespace fabricproof
