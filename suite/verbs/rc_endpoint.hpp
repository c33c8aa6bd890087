#pragma once
// One side of a reliable-connected (RC) pair, brought up in rdma-core's rc_pingpong order:
// device -> PD -> CQs -> QPs -> memory; then INIT -> RTR -> RTS with the peer's {lid, qpn, psn,
// gid}. Members are declared in creation order so that destruction runs in reverse.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_optional.hpp"
#include "verbs/handles.hpp"
#include "verbs/memory.hpp"

namespace fabricproof::verbs {

// What the peer needs to reach us: the out-of-band exchange, sent as JSON over MPI.
struct ConnectionInfo {
  int lid = 0;
  std::vector<uint32_t> qpns;
  uint32_t psn = 0;
  std::string gid;  // 32 hex digits; all zero when the port is used without GRH (InfiniBand LIDs)
  int mtu_code = 0; // ibv_mtu of our port; the connection uses the smaller of the two
  uint64_t addr = 0;
  uint32_t rkey = 0;
  uint64_t lat_addr = 0;
  uint32_t lat_rkey = 0;
};
FABRICPROOF_JSON(ConnectionInfo, lid, qpns, psn, gid, mtu_code, addr, rkey, lat_addr, lat_rkey)

struct EndpointConfig {
  std::string device;
  int port = 1;
  std::optional<int> gid_index;  // required on RoCE; optional on InfiniBand (then GRH is used)
  std::optional<int> traffic_class;  // GRH traffic class (RoCE: the IP ToS, DSCP << 2 | ECN), as NCCL_IB_TC sets it
  int qps = 1;
  int tx_depth = 128;
  int rx_depth = 128;
  size_t slot_bytes = 65536;  // one message
  int rx_slots = 512;         // receive ring of the SEND test (perftest: rx_depth 512 > tx_depth 128)
  int tx_slots = 128;         // send ring: pattern-filled sources
};

class RcEndpoint {
 public:
  RcEndpoint(const EndpointConfig& config, MemoryProvider& memory);
  RcEndpoint(const RcEndpoint&) = delete;
  RcEndpoint& operator=(const RcEndpoint&) = delete;

  ConnectionInfo local_info() const;
  void connect(const ConnectionInfo& remote);

  const EndpointConfig& config() const { return config_; }
  // Sends and receives complete on separate CQs, as in perftest: a late receive completion (the
  // closing zero-length SEND of a step) can never be taken for a send completion of the next.
  ibv_cq* send_cq() const { return send_cq_.get(); }
  ibv_cq* recv_cq() const { return recv_cq_.get(); }
  ibv_qp* qp(size_t i) const { return qps_.at(i).get(); }
  size_t qp_count() const { return qps_.size(); }
  int qp_index(uint32_t qp_num) const;
  Buffer& buffer() { return buffer_; }
  char* rx_slot(int i) { return static_cast<char*>(buffer_.addr()) + static_cast<size_t>(i) * config_.slot_bytes; }
  char* tx_slot(int i) { return rx_slot(config_.rx_slots + i); }
  size_t tx_offset(int i) const { return static_cast<size_t>(config_.rx_slots + i) * config_.slot_bytes; }
  volatile uint8_t* latency_buffer() { return static_cast<volatile uint8_t*>(latency_.addr()); }
  uint32_t latency_lkey() const { return latency_.mr->lkey; }
  uint32_t max_inline() const { return max_inline_; }

 private:
  EndpointConfig config_;
  Context context_;
  ProtectionDomain pd_;
  CompletionQueue send_cq_;
  CompletionQueue recv_cq_;
  std::vector<QueuePair> qps_;
  Buffer buffer_;
  Buffer latency_;
  ibv_port_attr port_attr_{};
  ibv_gid gid_{};
  uint32_t psn_ = 0;
  uint32_t max_inline_ = 0;
};

}  // namespace fabricproof::verbs
