#include "verbs/rc_endpoint.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace fabricproof::verbs {
namespace {

std::string gid_hex(const ibv_gid& gid) {
  std::string out;
  for (uint8_t b : gid.raw) out += fmt::format("{:02x}", b);
  return out;
}

ibv_gid gid_from_hex(const std::string& hex) {
  ibv_gid gid{};
  for (size_t i = 0; i < 16 && 2 * i + 1 < hex.size(); ++i) gid.raw[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return gid;
}

void modify(ibv_qp* qp, ibv_qp_attr& attr, int mask, const char* step) {
  if (int rc = ibv_modify_qp(qp, &attr, mask); rc != 0) throw VerbsError("ibv_modify_qp", rc, step);
}

}  // namespace

RcEndpoint::RcEndpoint(const EndpointConfig& config, MemoryProvider& memory) : config_(config) {
  context_ = open_device(config.device);
  if (ibv_query_port(context_.get(), config.port, &port_attr_) != 0) throw VerbsError("ibv_query_port", errno, config.device, config.device);
  const bool ethernet = port_attr_.link_layer == IBV_LINK_LAYER_ETHERNET;
  if (ethernet && !config.gid_index) throw VerbsError("gid", EINVAL, config.device + ": RoCE needs a GID index and the port has no RoCE v2 IPv4 GID", config.device);
  if (config.gid_index && ibv_query_gid(context_.get(), config.port, *config.gid_index, &gid_) != 0)
    throw VerbsError("ibv_query_gid", errno, fmt::format("{} port {} index {}", config.device, config.port, *config.gid_index), config.device);
  pd_.reset(ibv_alloc_pd(context_.get()));
  if (!pd_) throw VerbsError("ibv_alloc_pd", errno, config.device, config.device);
  const int send_cqe = config.tx_depth * config.qps + 64, recv_cqe = config.rx_depth + 64;
  send_cq_.reset(ibv_create_cq(context_.get(), send_cqe, nullptr, nullptr, 0));
  if (!send_cq_) throw VerbsError("ibv_create_cq", errno, fmt::format("send CQ of {} entries", send_cqe), config.device);
  recv_cq_.reset(ibv_create_cq(context_.get(), recv_cqe, nullptr, nullptr, 0));
  if (!recv_cq_) throw VerbsError("ibv_create_cq", errno, fmt::format("receive CQ of {} entries", recv_cqe), config.device);
  for (int i = 0; i < config.qps; ++i) {
    ibv_qp_init_attr init{};
    init.send_cq = send_cq_.get();
    init.recv_cq = recv_cq_.get();
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = static_cast<uint32_t>(config.tx_depth);
    init.cap.max_recv_wr = static_cast<uint32_t>(config.rx_depth);
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.cap.max_inline_data = 64;  // the 2-byte latency writes go inline, as in ib_write_lat
    QueuePair qp(ibv_create_qp(pd_.get(), &init));
    if (!qp) {
      init.cap.max_inline_data = 0;  // a device without inline support
      qp.reset(ibv_create_qp(pd_.get(), &init));
    }
    if (!qp) throw VerbsError("ibv_create_qp", errno, config.device, config.device);
    max_inline_ = init.cap.max_inline_data;
    qps_.push_back(std::move(qp));
  }
  buffer_ = memory.allocate(pd_.get(), static_cast<size_t>(config.rx_slots + config.tx_slots) * config.slot_bytes);
  HostMemoryProvider host;  // the latency test polls memory with the CPU: always host memory
  latency_ = host.allocate(pd_.get(), 4096);
  std::random_device random;
  psn_ = random() & 0xffffff;
}

int RcEndpoint::qp_index(uint32_t qp_num) const {
  for (size_t i = 0; i < qps_.size(); ++i)
    if (qps_[i]->qp_num == qp_num) return static_cast<int>(i);
  return -1;
}

ConnectionInfo RcEndpoint::local_info() const {
  ConnectionInfo info;
  info.lid = port_attr_.lid;
  for (const auto& qp : qps_) info.qpns.push_back(qp->qp_num);
  info.psn = psn_;
  info.gid = gid_hex(gid_);
  info.mtu_code = port_attr_.active_mtu;
  info.addr = reinterpret_cast<uint64_t>(buffer_.addr());
  info.rkey = buffer_.mr->rkey;
  info.lat_addr = reinterpret_cast<uint64_t>(latency_.addr());
  info.lat_rkey = latency_.mr->rkey;
  return info;
}

void RcEndpoint::connect(const ConnectionInfo& remote) {
  if (remote.qpns.size() != qps_.size())
    throw VerbsError("connect", EINVAL, fmt::format("peer has {} QPs, we have {}", remote.qpns.size(), qps_.size()));
  const auto mtu = static_cast<ibv_mtu>(std::min<int>(remote.mtu_code, port_attr_.active_mtu));
  for (size_t i = 0; i < qps_.size(); ++i) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = static_cast<uint8_t>(config_.port);
    attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    modify(qps_[i].get(), attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "RESET->INIT");

    attr = {};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = mtu;
    attr.dest_qp_num = remote.qpns[i];
    attr.rq_psn = remote.psn;
    attr.max_dest_rd_atomic = 1;
    attr.min_rnr_timer = 12;
    attr.ah_attr.dlid = static_cast<uint16_t>(remote.lid);
    attr.ah_attr.sl = 0;
    attr.ah_attr.port_num = static_cast<uint8_t>(config_.port);
    if (config_.gid_index) {  // RoCE always; InfiniBand when a GID index was given
      attr.ah_attr.is_global = 1;
      attr.ah_attr.grh.dgid = gid_from_hex(remote.gid);
      attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(*config_.gid_index);
      attr.ah_attr.grh.hop_limit = 64;  // routed RoCE (L3 fabrics) needs more than rc_pingpong's 1
      // The class NCCL's traffic will carry: on DSCP-classified lossless RoCE the tests then run
      // in the same PFC priority and ETS class as NCCL, not in the default one.
      if (config_.traffic_class) attr.ah_attr.grh.traffic_class = static_cast<uint8_t>(*config_.traffic_class);
    }
    modify(qps_[i].get(), attr,
           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
           "INIT->RTR");

    attr = {};
    attr.qp_state = IBV_QPS_RTS;
    attr.timeout = 14;   // 4.096 us x 2^14 = 67 ms per try
    attr.retry_cnt = 7;  // then IBV_WC_RETRY_EXC_ERR: a dead link becomes an error cell within ~0.5 s
    attr.rnr_retry = 7;  // receiver not ready: retry forever (the SEND test reposts receives)
    attr.sq_psn = psn_;
    attr.max_rd_atomic = 1;
    modify(qps_[i].get(), attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
           "RTR->RTS");
  }
}

}  // namespace fabricproof::verbs
