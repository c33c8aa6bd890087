#pragma once
// This node's RDMA ports sampled from sysfs at an interval, on a thread of its own, while the
// node's ranks run the soak's load (which never waits on it).
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "soak/soak_model.hpp"

namespace fabricproof::probe {

// A netdev's driver statistics, as `ethtool -S` prints them (SIOCETHTOOL: ETHTOOL_GSSET_INFO,
// GSTRINGS, GSTATS). A LocatedError names the netdev and why not (lo and many virtual devices have
// none).
std::map<std::string, uint64_t> read_ethtool_stats(const std::string& netdev);

// The driver statistics the soak keeps (as "ethtool.<name>"): pause frames, discards, drops,
// errors, FEC corrections, link-down events (mlx5: rx_pause_ctrl_phy, rx_discards_phy,
// rx_out_of_buffer, rx_corrected_bits_phy, rx_symbol_err_phy, link_down_events_phy; virtio_net:
// rx_drops). Traffic counters per queue are left out: sysfs has the netdev's totals.
bool soak_keeps_ethtool_stat(const std::string& name);

// Every RDMA port under `root` (/sys/class/infiniband), with its netdev's statistics and carrier
// counts (/sys/class/net/<netdev>) as "netdev.<name>", and on the live system (root "/") its
// driver's statistics that soak_keeps_ethtool_stat keeps. `netdevs` maps "device:port" to the netdev
// (found once by the inventory's reader: the GID table walk is too slow to repeat every interval).
NodeSample sample_ports(const std::string& root, const std::map<std::string, std::string>& netdevs);
// "device:port" -> netdev of every RoCE port under `root`.
std::map<std::string, std::string> port_netdevs(const std::string& root);

// The kernel log (/dev/kmsg under the root; a regular file there in tests): the Xid events logged
// since the last read. On the device, reading starts at its end (what the kernel logs from now on).
class KernelLog {
 public:
  explicit KernelLog(const std::string& root);
  ~KernelLog();
  KernelLog(const KernelLog&) = delete;
  KernelLog& operator=(const KernelLog&) = delete;
  bool readable() const { return fd_ >= 0; }
  std::string unreadable_reason() const { return error_; }
  std::vector<XidEvent> new_xid_events();

 private:
  int fd_ = -1;
  bool device_ = false;
  std::string error_;
  std::string partial_;  // a regular file's last line, not yet ended
};

class PortSampler {
 public:
  // Samples at once, then every `interval_s` until stop(). `zero`: the soak's start on this node.
  PortSampler(std::string root, std::string host, double interval_s, std::chrono::steady_clock::time_point zero);
  ~PortSampler();
  PortSampler(const PortSampler&) = delete;
  PortSampler& operator=(const PortSampler&) = delete;

  // The samples taken since the last take().
  std::vector<NodeSample> take();
  // Takes a last sample (the soak's end) and stops the thread.
  void stop();

 private:
  void loop();
  void sample_now(bool every_counter);

  std::string root_, host_;
  std::chrono::duration<double> interval_;
  std::chrono::steady_clock::time_point zero_;
  std::map<std::string, std::string> netdevs_;
  std::map<std::string, std::map<std::string, uint64_t>> last_values_;
  KernelLog kernel_log_;  // "device:port" -> the counters last read
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<NodeSample> taken_;
  std::thread thread_;
};

}  // namespace fabricproof::probe
