#pragma once
// What the human formats show, derived once from the report model: the Markdown and HTML writers
// render these views, so both say the same thing (issue: "Markdown: the same content as tables").
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "uplink/uplink_model.hpp"
#include "report/report.hpp"

namespace fabricproof::view {

// A value the report may lack, as a table cell: "-" when absent.
template <typename T>
std::string or_dash(const std::optional<T>& v, const char* suffix = "") {
  return v ? fmt::format("{}{}", *v, suffix) : "-";
}

// One step of the seed's triage order for a slow or broken fabric, with the findings it explains.
struct StepFindings {
  std::string title;  // "MTU", "PFC and ECN (RoCE)", ...
  std::string advice; // what to check (core/hints.hpp)
  std::vector<const Finding*> findings;
};
// Steps that have findings, in order: MTU, PFC, cable/link, PCIe, NUMA, GPUDirect, NCCL and
// collectives, software consistency, everything else. Failing and erroring findings first.
std::vector<StepFindings> triage(const Report& report);

// The birth certificate: every component a measurement can name, per node.
struct Component {
  std::string host;
  std::string kind;  // "HCA" or "GPU"
  std::string name;  // mlx5_0 / GPU 0
  std::string slot;  // PCI address (the device name for a virtual HCA)
  std::string model; // board id / part number / GPU name
  std::string serial;
  std::string firmware;
  std::string guid;  // node GUID or GPU UUID
  std::string numa;
};
std::vector<Component> components(const Report& report);

// One verbs matrix (a test) as a grid: value or the reason there is none, and whether a failing
// finding names that cell.
struct MatrixCell {
  std::optional<double> value;
  std::string reason;  // empty when measured or on the diagonal
  bool diagonal = false;
  bool flagged = false;
};
struct Matrix {
  std::string title;  // "write_bw (Gb/s)"
  std::string test;
  bool lower_is_better = false;
  std::vector<std::string> labels;
  std::vector<std::vector<MatrixCell>> cells;
};
// The verbs section's matrices (write_bw, write_bw_bidir, send_bw, write_lat), then GPUDirect's
// host and GPU write matrices, when present.
std::vector<Matrix> matrices(const Report& report);

// busbw against message size for one engine and op: one series per node count.
struct Series {
  int nodes = 0;
  int ranks = 0;
  std::vector<std::pair<double, double>> points;  // bytes, busbw GB/s (out of place)
  std::string label;  // the legend; empty: "N node(s), M rank(s)"
};
struct SweepChart {
  std::string engine;
  std::string op;
  std::vector<Series> series;
  std::string quantity = "busbw (GB/s)";
};

// --verbs-mode locate, for people: the answer lines first (each fault's one line, what is not
// settled, a leaf map that was not used), then what was exercised, so a pass claims no more.
struct LocateView {
  bool present = false;
  std::vector<std::string> answers;  // "node17: slow with every partner ..." / "not settled: ..."
  std::string exercised;             // "5 rounds; 4 096 of 2 095 104 pairs (0.2%), 528 of 528 leaf paths, 1 024 of 1 024 nodes; 3 transient dip(s)"
};
LocateView verbs_locate(const VerbsSection& section);
// --collective-mode locate, the same way: its answer lines, then the rounds and groups it ran.
LocateView collective_locate(const CollectivesSection& section);

// The verbs bandwidth curve (--verbs-sizes): per size, the pairs measured and their slowest,
// median and fastest RDMA WRITE figure (Gb/s), and which pair was slowest.
struct CurveRow {
  uint64_t bytes = 0;
  size_t pairs = 0;
  size_t not_measured = 0;  // pairs without a figure at this size
  double slowest = 0, median = 0, fastest = 0;
  std::string slowest_pair;
};
std::vector<CurveRow> verbs_curve(const VerbsSection& section);
SweepChart verbs_curve_chart(const std::vector<CurveRow>& rows);
std::vector<SweepChart> sweeps(const Report& report);

// 1 -> 2 -> 4 nodes at one size, against the NIC ceiling of the group (k NICs x rate / 8).
struct ScalingPoint {
  int nodes = 0;
  std::optional<double> busbw_GBps;
  std::optional<double> ceiling_GBps;
};
struct ScalingChart {
  std::string engine;
  std::string op;
  double bytes = 0;
  std::vector<ScalingPoint> points;
};
std::vector<ScalingChart> scaling(const Report& report);

// The NCCL transport audit per rank and channel: the transports each rank's channel used.
struct ChannelTransport {
  std::string text;  // as NCCL printed it: NET/IB/0/GDRDMA, P2P/IPC, ...
  nccl::TransportClass transport_class = nccl::TransportClass::other;
  bool socket = false;
};
struct ChannelCell {
  std::vector<ChannelTransport> transports;  // distinct, in order of appearance
  bool socket_inter_node = false;       // the finding the audit exists for
};
struct RankRow {
  int rank = 0;
  std::string host;
  std::vector<ChannelCell> channels;  // index = channel
};
struct NcclAudit {
  bool present = false;
  std::optional<bool> socket_fallback;  // the audit's three values: yes, no, undecidable (nullopt)
  std::string socket_fallback_text() const { return socket_fallback ? (*socket_fallback ? "YES" : "no") : "undecidable"; }
  std::string version;
  int channels = 0;
  std::vector<RankRow> ranks;
};
NcclAudit nccl_audit(const Report& report);

}  // namespace fabricproof::view
