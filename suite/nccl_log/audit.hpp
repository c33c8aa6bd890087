#pragma once
// Judging an NCCL log: any inter-node connection over NET/Socket fails (NCCL silently fell back to
// TCP: "you did not test what you thought you tested"), NET/IB without GPUDirect warns when
// GPUDirect is expected, no usable RDMA device fails, and a log without transport lines is an
// error, not a pass.
#include <string>
#include <vector>

#include "core/finding.hpp"
#include "nccl_log/model.hpp"

namespace fabricproof::nccl {

struct AuditOptions {
  bool expect_gdr = false;  // the cluster is meant to run GPUDirect RDMA
};

std::vector<Finding> audit(const LogFacts& facts, const AuditOptions& options = {});

// The report's `nccl_audit` section and the `nccl-audit --json` output: the facts of the audited
// logs and the findings. JSON: {"socket_fallback", "nccl_version", "ranks", "connections",
// "networks", "findings", ...}; the parser's line counters other than `lines` are not kept.
struct AuditSection {
  LogFacts facts;
  std::vector<Finding> findings;
};
void to_json(nlohmann::json& j, const AuditSection& a);
void from_json(const nlohmann::json& j, AuditSection& a);

// A table for people: one row per rank, peer, direction and transport, channels folded.
std::string audit_table(const LogFacts& facts, const std::vector<Finding>& findings);

}  // namespace fabricproof::nccl
