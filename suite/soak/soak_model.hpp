#pragma once
// The soak's facts: the load it repeated (passes of the verbs matrix and the collective) and every
// node's port counters sampled at an interval, both placed on one time line (seconds since the
// soak started, each node on its own clock, started together by a broadcast).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_optional.hpp"
#include "core/status.hpp"
#include "inventory/inventory.hpp"

namespace fabricproof {

// One RDMA port at one moment: its state, its rate, and the counters the kernel exposes for it
// (counters/ and hw_counters/ by their sysfs names; the netdev's statistics as "netdev.<name>").
// A node's first and last sample hold every counter; the samples between hold only those whose
// value changed since the node's previous sample (a day at one sample a minute stays small).
struct PortSample {
  std::string device;
  int port = 0;
  std::string netdev;
  std::string link_layer;
  std::string state;
  std::optional<double> rate_gbps;
  std::map<std::string, uint64_t> counters;
};

// A GPU's Xid event from the kernel log (the NVIDIA driver's "NVRM: Xid (PCI:<bus id>): <code>, ...").
struct XidEvent {
  std::string pci;
  int xid = 0;
  std::string text;  // the kernel's line, as printed
};

// Every port of one node at one moment; `errors` says what could not be read. `xid` holds the Xid
// events the kernel logged since the previous sample; `kernel_log` whether the log could be read.
struct NodeSample {
  std::string host;
  double t_s = 0;
  std::string time;  // UTC
  std::vector<PortSample> ports;
  std::vector<std::string> errors;
  std::vector<XidEvent> xid;
  bool kernel_log = false;
};

// "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus." -> {0000:3b:00, 79};
// nullopt for any other line.
std::optional<XidEvent> parse_xid_line(const std::string& line);

// One figure of one pass: a verbs pair's bandwidth (Gb/s) or the collective's busbw (GB/s).
struct SoakFigure {
  std::string what;                // "node1/rxe0 <-> node2/rxe0 write_bw", "allreduce 4 node(s) 1M"
  std::string kind;                // "verbs" or "collective"
  std::string rail;                // verbs: "rail 0"; collective: ""
  std::vector<std::string> hosts;  // the nodes it ran on
  Status status = Status::not_measured;
  std::string reason;              // why not ok
  double value = 0;
  std::string unit;                // "Gb/s" or "GB/s"
};

struct SoakPass {
  int index = 0;
  double start_s = 0;
  double end_s = 0;
  std::vector<SoakFigure> figures;
};

// A GPU's memory health as the inventory read it before the soak and as NVML gave it at the end:
// what the load wore out. Only boards whose memory the inventory read are listed; `after.unread`
// says why the end's read failed.
struct SoakGpuMemory {
  std::string host;
  int index = 0;  // CUDA ordinal, as gpu_memory_health names the board ("node1/gpu0")
  std::string pci;
  std::string uuid;
  GpuMemoryHealth before;
  GpuMemoryHealth after;
};

struct SoakSection {
  double duration_s = 0;           // asked for (--soak)
  double interval_s = 0;           // between counter samples (--soak-interval)
  std::string started_at;          // UTC
  double ran_s = 0;                // how far it got
  std::vector<std::string> gpu_hosts;  // the nodes with GPUs (the inventory's): their Xid events are judged
  bool finished = false;           // false: cut short (or still running), `ran_s` says how far
  std::string load;                // what each pass runs, in words
  std::vector<std::string> load_not_run;  // a part of the load that could not run, and why
  std::vector<SoakPass> passes;
  std::vector<NodeSample> samples;
  std::vector<SoakGpuMemory> gpu_memory;  // read at both ends; empty without GPUs (or when cut short)
};

// What `run --soak` was asked for.
struct SoakOptions {
  double duration_s = 0;   // 0: no soak
  double interval_s = 60;  // between counter samples
};

// "2h", "90m", "45s", "1d", "3600": seconds; nullopt for anything else (or not above zero).
std::optional<double> parse_duration(const std::string& text);
// 4530 -> "1:15:30", 95 -> "1:35": a time into the soak.
std::string format_soak_time(double seconds);

FABRICPROOF_JSON(PortSample, device, port, netdev, link_layer, state, rate_gbps, counters)
FABRICPROOF_JSON(XidEvent, pci, xid, text)
FABRICPROOF_JSON(NodeSample, host, t_s, time, ports, errors, xid, kernel_log)
FABRICPROOF_JSON(SoakFigure, what, kind, rail, hosts, status, reason, value, unit)
FABRICPROOF_JSON(SoakPass, index, start_s, end_s, figures)
FABRICPROOF_JSON(SoakGpuMemory, host, index, pci, uuid, before, after)
FABRICPROOF_JSON(SoakSection, duration_s, interval_s, started_at, ran_s, gpu_hosts, finished, load, load_not_run, passes, samples, gpu_memory)

}  // namespace fabricproof
