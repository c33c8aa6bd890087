#include "soak/port_sampler.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inventory/file_reader.hpp"
#include "inventory/sysfs_rdma.hpp"
#include "core/units.hpp"
#include "core/utc_time.hpp"
#include "core/located_error.hpp"

namespace fabricproof::probe {
namespace {

namespace fs = std::filesystem;

std::optional<uint64_t> counter_value(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return n;
}

// statistics/* and the carrier counts of a netdev, as "netdev.<name>".
void read_netdev_counters(FileReader& files, const std::string& netdev, std::map<std::string, uint64_t>& into) {
  const fs::path dir = files.path("sys/class/net") / netdev;
  for (const auto& name : files.list(dir / "statistics"))
    if (auto n = counter_value(files.line_quiet(dir / "statistics" / name))) into["netdev." + name] = *n;
  for (const char* name : {"carrier_changes", "carrier_down_count", "carrier_up_count"})
    if (auto n = counter_value(files.line_quiet(dir / name))) into[std::string("netdev.") + name] = *n;
}

// One SIOCETHTOOL request on `netdev`; a LocatedError names the netdev, the request and errno.
void ethtool_request(int fd, const std::string& netdev, void* request, const char* what) {
  ifreq ifr{};
  std::snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", netdev.c_str());
  ifr.ifr_data = static_cast<char*>(request);
  if (ioctl(fd, SIOCETHTOOL, &ifr) != 0)
    throw LocatedError(netdev, fmt::format("{}: ethtool {}: {}", netdev, what, std::strerror(errno)));
}

PortSample read_port_sample(FileReader& files, const std::string& device, int port, const std::map<std::string, std::string>& netdevs) {
  const fs::path dir = files.path("sys/class/infiniband") / device / "ports" / std::to_string(port);
  PortSample p;
  p.device = device;
  p.port = port;
  if (auto s = files.line(dir / "state"))
    if (auto code = leading_code(*s); code && port_state_name(*code)) p.state = *port_state_name(*code);
  if (auto s = files.line(dir / "rate"))
    if (auto rate = parse_sysfs_rate(*s)) p.rate_gbps = rate->gbps;
  p.link_layer = files.line(dir / "link_layer").value_or("");
  p.counters = read_port_counters(files, device, port);
  const auto netdev = netdevs.find(fmt::format("{}:{}", device, port));
  if (netdev != netdevs.end()) {
    p.netdev = netdev->second;
    read_netdev_counters(files, p.netdev, p.counters);
  }
  return p;
}

// The driver's statistics of the live system's netdevs (a saved --root tree has none): an error
// once per port and sample would repeat itself, so a netdev without them just has none.
void add_ethtool_stats(const std::string& root, PortSample& p) {
  if (p.netdev.empty() || fs::path(root) != fs::path("/")) return;
  std::map<std::string, uint64_t> stats;
  if (failure_of([&] { stats = read_ethtool_stats(p.netdev); })) return;
  for (const auto& [name, value] : stats)
    if (soak_keeps_ethtool_stat(name)) p.counters["ethtool." + name] = value;
}

}  // namespace

std::map<std::string, uint64_t> read_ethtool_stats(const std::string& netdev) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw LocatedError(netdev, fmt::format("{}: a socket for ethtool: {}", netdev, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // ethtool_sset_info ends in a flexible array: one u32 (the set's length) follows it.
  alignas(ethtool_sset_info) uint8_t sset[sizeof(ethtool_sset_info) + sizeof(uint32_t)] = {};
  auto* info = reinterpret_cast<ethtool_sset_info*>(sset);
  info->cmd = ETHTOOL_GSSET_INFO;
  info->sset_mask = 1ull << ETH_SS_STATS;
  ethtool_request(fd, netdev, info, "GSSET_INFO");
  const uint32_t n = info->sset_mask ? info->data[0] : 0;
  if (n == 0 || n > 100000) throw LocatedError(netdev, netdev + ": the driver has no statistics");
  std::vector<uint8_t> strings(sizeof(ethtool_gstrings) + n * ETH_GSTRING_LEN);
  auto* names = reinterpret_cast<ethtool_gstrings*>(strings.data());
  names->cmd = ETHTOOL_GSTRINGS;
  names->string_set = ETH_SS_STATS;
  names->len = n;
  ethtool_request(fd, netdev, names, "GSTRINGS");
  std::vector<uint8_t> values(sizeof(ethtool_stats) + n * sizeof(uint64_t));
  auto* stats = reinterpret_cast<ethtool_stats*>(values.data());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = n;
  ethtool_request(fd, netdev, stats, "GSTATS");
  std::map<std::string, uint64_t> out;
  for (uint32_t i = 0; i < n && i < stats->n_stats; ++i) {
    const char* name = reinterpret_cast<const char*>(names->data + i * ETH_GSTRING_LEN);
    out[std::string(name, strnlen(name, ETH_GSTRING_LEN))] = stats->data[i];
  }
  return out;
}

bool soak_keeps_ethtool_stat(const std::string& name) {
  if (name.rfind("rx_queue_", 0) == 0 || name.rfind("tx_queue_", 0) == 0 || name.rfind("ch", 0) == 0) return false;  // per queue or channel
  for (const char* word : {"pause", "discard", "drop", "err", "crc", "out_of_buffer", "corrected", "link_down"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

std::map<std::string, std::string> port_netdevs(const std::string& root) {
  FileReader files(root);
  std::vector<Absence> absent;
  std::map<std::string, std::string> out;
  for (const auto& d : read_rdma_devices(files, absent))
    for (const auto& p : d.ports)
      if (!p.netdev.empty()) out[fmt::format("{}:{}", d.name, p.port)] = p.netdev;
  return out;
}

NodeSample sample_ports(const std::string& root, const std::map<std::string, std::string>& netdevs) {
  FileReader files(root);
  NodeSample sample;
  sample.time = utc_timestamp();
  const fs::path class_dir = files.path("sys/class/infiniband");
  for (const auto& device : files.list(class_dir))
    for (const auto& port : files.list(class_dir / device / "ports")) {
      int number = 0;
      const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
      if (ec != std::errc() || end != port.data() + port.size()) continue;
      sample.ports.push_back(read_port_sample(files, device, number, netdevs));
      add_ethtool_stats(root, sample.ports.back());
    }
  for (const auto& e : files.errors()) sample.errors.push_back(fmt::format("{}: {}", e.source, e.message));
  if (sample.ports.empty()) sample.errors.push_back("no RDMA port under " + class_dir.string());
  return sample;
}

KernelLog::KernelLog(const std::string& root) {
  const auto path = (fs::path(root) / "dev/kmsg").string();
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    error_ = fmt::format("{}: {} (the GPUs' Xid events are read from the kernel log)", path, std::strerror(errno));
    return;
  }
  struct stat st {};
  device_ = fstat(fd_, &st) == 0 && S_ISCHR(st.st_mode);
  if (device_) lseek(fd_, 0, SEEK_END);  // from now on: the soak's events, not the boot's
}

KernelLog::~KernelLog() {
  if (fd_ >= 0) ::close(fd_);
}

// /dev/kmsg gives one record a read ("PRI,SEQ,USEC,FLAGS;text"), EAGAIN at the end and EPIPE for
// records overwritten before they were read (then the next one); a regular file gives lines.
std::vector<XidEvent> KernelLog::new_xid_events() {
  std::vector<XidEvent> events;
  if (fd_ < 0) return events;
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::read(fd_, buffer, sizeof(buffer) - 1);
    if (n < 0 && errno == EPIPE) continue;
    if (n <= 0) break;
    std::string text = device_ ? std::string(buffer, static_cast<size_t>(n)) : partial_ + std::string(buffer, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      std::string line = text.substr(start, end - start);
      if (const auto semicolon = line.find(';'); device_ && semicolon != std::string::npos) line = line.substr(semicolon + 1);
      if (auto xid = parse_xid_line(line)) events.push_back(std::move(*xid));
    }
    partial_ = device_ ? std::string() : text.substr(start);
  }
  return events;
}

PortSampler::PortSampler(std::string root, std::string host, double interval_s, std::chrono::steady_clock::time_point zero)
    : root_(std::move(root)), host_(std::move(host)), interval_(interval_s), zero_(zero), netdevs_(port_netdevs(root_)), kernel_log_(root_) {
  sample_now(true);
  thread_ = std::thread([this] { loop(); });
}

PortSampler::~PortSampler() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// `every_counter`: the first and the last sample; the others keep only the counters that changed.
void PortSampler::sample_now(bool every_counter) {
  auto sample = sample_ports(root_, netdevs_);
  sample.host = host_;
  sample.xid = kernel_log_.new_xid_events();
  sample.kernel_log = kernel_log_.readable();
  if (!kernel_log_.readable()) sample.errors.push_back(kernel_log_.unreadable_reason());
  for (auto& port : sample.ports) {
    auto& last = last_values_[fmt::format("{}:{}", port.device, port.port)];
    auto read = port.counters;
    if (!every_counter)
      for (auto it = port.counters.begin(); it != port.counters.end();) {
        const auto was = last.find(it->first);
        it = was != last.end() && was->second == it->second ? port.counters.erase(it) : std::next(it);
      }
    last = std::move(read);
  }
  sample.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - zero_).count();
  std::lock_guard<std::mutex> lock(mutex_);
  taken_.push_back(std::move(sample));
}

// Samples on a fixed grid from `zero` (interval, 2 x interval, ...), so that a slow read does not
// shift the samples after it.
void PortSampler::loop() {
  for (int next = 1;; ++next) {
    const auto at = zero_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval_ * next);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (wake_.wait_until(lock, at, [this] { return stopping_; })) return;
    }
    sample_now(false);
  }
}

std::vector<NodeSample> PortSampler::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(taken_, {});
}

void PortSampler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  sample_now(true);
}

}  // namespace fabricproof::probe
