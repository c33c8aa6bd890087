#pragma once
// The seed's uplink sizing, as a calculator that needs no cluster: size the uplink to the dataset
// read rate, not to the fabric; one TCP flow gets one link (bond/ECMP hashing), so a dataloader
// needs parallel streams; weights and checkpoints take minutes or seconds depending on the link.
#include <optional>
#include <string>
#include <vector>

#include "core/json_optional.hpp"

namespace fabricproof {

struct UplinkPlanInput {
  int nodes = 4;
  int gpus_per_node = 4;
  std::string workload = "vision";     // vision, llm, finetune, custom:GBPS (GB/s per GPU)
  double model_params_billion = 70;    // weights at 2 bytes per parameter (bf16)
  double checkpoint_factor = 2;        // checkpoint = weights x this (optimizer state; the seed: 2x)
  std::vector<double> uplinks_gbps = {25, 100, 400};
  int links_per_node = 1;
  double fabric_busbw_GBps = 22;       // measured or expected allreduce busbw per node, for east-west
};

struct UplinkOption {
  double link_gbps = 0;
  double aggregate_gbps = 0;       // nodes x links per node x link
  bool carries_need = false;       // aggregate >= the cluster's ingest need
  double single_flow_gbps = 0;     // one TCP flow: one link
  int flows_per_node = 1;          // parallel streams a node needs to reach its share of the need
  double weights_seconds = 0;      // at one link's rate
  double checkpoint_seconds = 0;
};

struct UplinkPlan {
  std::string workload;
  std::string need_basis;           // how the need was computed, in words
  double need_GBps = 0;             // sustained ingest of the cluster
  double need_gbps = 0;
  double need_per_node_gbps = 0;
  double east_west_gbps = 0;        // the fabric's traffic for comparison
  double weights_GB = 0;
  double checkpoint_GB = 0;
  std::vector<UplinkOption> options;
  std::vector<std::string> advice;  // the seed's advice that applies
  std::string error;                // bad input, named; the plan is empty then
};

UplinkPlan plan_uplink(const UplinkPlanInput& input);
std::string render_uplink_plan(const UplinkPlan& plan);  // a table for people

FABRICPROOF_JSON(UplinkOption, link_gbps, aggregate_gbps, carries_need, single_flow_gbps, flows_per_node, weights_seconds, checkpoint_seconds)
FABRICPROOF_JSON(UplinkPlan, workload, need_basis, need_GBps, need_gbps, need_per_node_gbps, east_west_gbps, weights_GB, checkpoint_GB, options,
                 advice, error)

}  // namespace fabricproof
