#include "uplink/uplink_plan.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace fabricproof {

namespace {

// The seed's read rates: vision/video ~1 GB/s per GPU; LLM pre-training on tokens 1-4 Gb/s for
// the whole cluster (plan with the upper end); fine-tuning with checkpoint reloads ~40 Gb/s bursts.
// Sets the need and its basis, or the error.
void size_the_need(const UplinkPlanInput& in, int gpus, UplinkPlan& plan) {
  if (in.workload == "vision") {
    plan.need_GBps = gpus * 1.0;
    plan.need_basis = fmt::format("{} nodes x {} GPUs x 1 GB/s (vision/video)", in.nodes, in.gpus_per_node);
  } else if (in.workload == "llm") {
    plan.need_GBps = 4.0 / 8;
    plan.need_basis = "LLM pre-training on tokenised text: 1-4 Gb/s for the cluster (the upper end)";
  } else if (in.workload == "finetune") {
    plan.need_GBps = 40.0 / 8;
    plan.need_basis = "fine-tuning with frequent checkpoint reloads: bursts of ~40 Gb/s";
  } else if (in.workload.rfind("custom:", 0) == 0) {
    double per_gpu = 0;
    const auto text = in.workload.substr(7);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), per_gpu);
    if (ec != std::errc() || end != text.data() + text.size() || !(per_gpu > 0 && per_gpu < 1e4)) {
      plan.error = fmt::format("workload '{}': custom:GBPS needs a read rate in GB/s per GPU (0 .. 10000)", in.workload);
      return;
    }
    plan.need_GBps = gpus * per_gpu;
    plan.need_basis = fmt::format("{} nodes x {} GPUs x {} GB/s", in.nodes, in.gpus_per_node, per_gpu);
  } else {
    plan.error = fmt::format("workload '{}' is not vision, llm, finetune or custom:GBPS", in.workload);
    return;
  }
}

// The seed's advice that applies to this plan.
void advise(const UplinkPlanInput& in, bool any_carries, bool any_needs_streams, UplinkPlan& plan) {
  plan.advice.push_back(fmt::format("Size the uplink to the dataset read rate ({:.0f} Gb/s), not to the fabric ({:.0f} Gb/s east-west): "
                                    "an uplink bought to match the fabric is the classic mistake.", plan.need_gbps, plan.east_west_gbps));
  if (!any_carries) plan.advice.push_back("No option on offer carries the need: add links per node or a faster uplink, or stage the data on local NVMe.");
  if (any_needs_streams || in.links_per_node > 1)
    plan.advice.push_back("One TCP flow gets one link (bond and ECMP hash per flow): the dataloader must open parallel streams "
                          "(DALI, WebDataset, MosaicML Streaming do) to use more than one link per node.");
  plan.advice.push_back("Always two fabrics: the management plane (ssh, IPMI/BMC, NTP, NCCL_SOCKET_IFNAME) must not depend on the data fabric.");
  if (in.nodes <= 4) plan.advice.push_back("Up to 4 nodes one switch suffices.");
  else if (in.nodes < 16) plan.advice.push_back("From about 8 nodes plan a routed L3 Clos (BGP unnumbered); from 16 it is the only sensible answer.");
  else plan.advice.push_back("At 16 nodes and more a routed L3 Clos (BGP unnumbered) is the only sensible answer.");
  plan.advice.push_back("Training and inference never share an RDMA fabric; they meet at an L3 router.");
  plan.advice.push_back(fmt::format("Plan checkpoint transfers with the upper end: {:.0f} GB of weights, a {:.0f} GB checkpoint.", plan.weights_GB,
                                    plan.checkpoint_GB));
}

}  // namespace

UplinkPlan plan_uplink(const UplinkPlanInput& in) {
  UplinkPlan plan;
  plan.workload = in.workload;
  if (in.nodes < 1 || in.gpus_per_node < 0 || in.links_per_node < 1 || in.uplinks_gbps.empty()) {
    plan.error = "nodes and links per node must be at least 1, GPUs per node at least 0, and at least one uplink given";
    return plan;
  }
  const int gpus = in.nodes * in.gpus_per_node;
  size_the_need(in, gpus, plan);
  if (!plan.error.empty()) return plan;
  plan.need_gbps = plan.need_GBps * 8;
  plan.need_per_node_gbps = plan.need_gbps / in.nodes;
  plan.east_west_gbps = in.nodes * in.fabric_busbw_GBps * 8;
  plan.weights_GB = in.model_params_billion * 2;  // bf16: 2 bytes per parameter
  plan.checkpoint_GB = plan.weights_GB * in.checkpoint_factor;
  bool any_carries = false, any_needs_streams = false;
  for (double link : in.uplinks_gbps) {
    if (!(link > 0)) {
      plan.error = fmt::format("uplink {} Gb/s: a link rate must be positive", link);
      return plan;
    }
    UplinkOption o;
    o.link_gbps = link;
    o.aggregate_gbps = link * in.links_per_node * in.nodes;
    o.carries_need = o.aggregate_gbps >= plan.need_gbps;
    o.single_flow_gbps = link;
    o.flows_per_node = std::max(1, static_cast<int>(std::ceil(plan.need_per_node_gbps / link - 1e-9)));
    o.weights_seconds = plan.weights_GB * 8 / link;
    o.checkpoint_seconds = plan.checkpoint_GB * 8 / link;
    any_carries |= o.carries_need;
    any_needs_streams |= o.carries_need && o.flows_per_node > 1;
    plan.options.push_back(o);
  }
  advise(in, any_carries, any_needs_streams, plan);
  return plan;
}

std::string render_uplink_plan(const UplinkPlan& p) {
  if (!p.error.empty()) return "plan-uplink: " + p.error + "\n";
  std::string out = fmt::format("sustained ingest need: {:.4g} GB/s = {:.4g} Gb/s ({}), {:.4g} Gb/s per node\n", p.need_GBps, p.need_gbps, p.need_basis,
                                p.need_per_node_gbps);
  out += fmt::format("east-west fabric traffic, for comparison: {:.0f} Gb/s\n", p.east_west_gbps);
  out += fmt::format("model: {:.0f} GB of weights, {:.0f} GB checkpoint\n\n", p.weights_GB, p.checkpoint_GB);
  out += fmt::format("{:>8} {:>12} {:>8} {:>12} {:>14} {:>10} {:>12}\n", "uplink", "aggregate", "carries", "one flow", "flows per node", "weights",
                     "checkpoint");
  for (const auto& o : p.options)
    out += fmt::format("{:>5.0f} GbE {:>8.0f} Gb/s {:>8} {:>7.0f} Gb/s {:>14} {:>8.0f} s {:>10.0f} s\n", o.link_gbps, o.aggregate_gbps,
                       o.carries_need ? "yes" : "NO", o.single_flow_gbps, o.flows_per_node, o.weights_seconds, o.checkpoint_seconds);
  out += "\n";
  for (const auto& a : p.advice) out += "- " + a + "\n";
  return out;
}

}  // namespace fabricproof
