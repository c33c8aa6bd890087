#include "inventory/host.hpp"

#include "inventory/network.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

#include <chrono>
#include <regex>
#include <sstream>
#include <thread>

#include "inventory/sysfs_rdma.hpp"

namespace fabricproof::probe {
namespace fs = std::filesystem;
namespace {

std::string value_of_key(const std::string& text, const std::string& key, char separator) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    auto pos = line.find(separator);
    if (pos == std::string::npos) continue;
    auto value = trim(line.substr(pos + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    return value;
  }
  return "";
}

KernelModule read_module(FileReader& files, const std::string& name, const std::string& kernel) {
  KernelModule m;
  const fs::path dir = files.path("sys/module") / name;
  m.loaded = files.exists(dir);
  if (m.loaded) {
    m.version = files.line_quiet(dir / "version").value_or("");
    m.taint = files.line_quiet(dir / "taint").value_or("");
  }
  // modules.dep lists every installable module with its path below /lib/modules/<kernel>.
  if (auto dep = files.text(files.path("lib/modules") / kernel / "modules.dep")) {
    std::istringstream in(*dep);
    const std::string wanted = "/" + name + ".ko";
    for (std::string line; std::getline(in, line);) {
      const auto colon = line.find(':');
      const std::string path = line.substr(0, colon);
      const auto at = path.find(wanted);
      if (at != std::string::npos && (at + wanted.size() == path.size() || path[at + wanted.size()] == '.')) {
        m.path = path;
        break;
      }
    }
  }
  // OFED installs its modules out of tree (updates/dkms, extra/); the kernel marks them 'O'.
  const bool out_of_tree = m.path.rfind("updates/", 0) == 0 || m.path.rfind("extra/", 0) == 0 ||
                           m.taint.find('O') != std::string::npos;
  if (m.loaded || !m.path.empty()) m.flavor = out_of_tree ? "ofed" : "inbox";
  return m;
}

// nvidia_peermem listed in a modules-load.d file or /etc/modules.
std::string persisted_in(FileReader& files, const std::string& module) {
  std::vector<fs::path> candidates = {files.path("etc/modules")};
  for (const char* dir : {"etc/modules-load.d", "usr/lib/modules-load.d", "lib/modules-load.d", "run/modules-load.d"})
    for (const auto& name : files.list(files.path(dir)))
      if (name.size() > 5 && name.substr(name.size() - 5) == ".conf") candidates.push_back(files.path(dir) / name);
  std::string dashed = module;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  for (const auto& file : candidates) {
    auto text = files.text(file);
    if (!text) continue;
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
      line = trim(line.substr(0, line.find('#')));
      if (line == module || line == dashed) return "/" + file.lexically_relative(files.root()).string();
    }
  }
  return "";
}

std::string nvidia_driver_version(FileReader& files) {
  if (auto v = files.line_quiet(files.path("sys/module/nvidia/version")); v && !v->empty()) return *v;
  if (auto text = files.line_quiet(files.path("proc/driver/nvidia/version"))) {
    static const std::regex kVersion(R"(Kernel Module(?: for [^ ]+)?\s+([0-9][0-9.]+))");
    std::smatch m;
    if (std::regex_search(*text, m, kVersion)) return m[1].str();
  }
  return "";
}

}  // namespace

void read_host(FileReader& files, NodeFacts& node) {
  node.host = files.line(files.path("proc/sys/kernel/hostname")).value_or("");
  node.boot_id = files.line(files.path("proc/sys/kernel/random/boot_id")).value_or("");
  if (auto cpuinfo = files.text(files.path("proc/cpuinfo"))) node.cpu_model = value_of_key(*cpuinfo, "model name", ':');
  for (const auto& name : files.list(files.path("sys/devices/system/node"))) {
    if (name.rfind("node", 0) != 0 || !leading_code(name.substr(4))) continue;
    NumaNode numa;
    numa.id = *leading_code(name.substr(4));
    const fs::path dir = files.path("sys/devices/system/node") / name;
    numa.cpus = files.line(dir / "cpulist").value_or("");
    if (auto meminfo = files.text(dir / "meminfo")) {
      static const std::regex kTotal(R"(MemTotal:\s+([0-9]+) kB)");
      std::smatch m;
      uint64_t kib = 0;
      if (std::regex_search(*meminfo, m, kTotal)) {
        const auto text = m[1].str();
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), kib);
        if (ec == std::errc() && kib <= UINT64_MAX / 1024) numa.memory_bytes = kib * 1024;
        else files.errors().push_back({"/sys/devices/system/node/" + name + "/meminfo", "MemTotal out of range: " + text.substr(0, 32)});
      }
    }
    node.numa_nodes.push_back(numa);
  }
  std::sort(node.numa_nodes.begin(), node.numa_nodes.end(), [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
}

void read_software(FileReader& files, SoftwareFacts& sw) {
  if (auto os = files.text(files.path("etc/os-release"))) sw.os = value_of_key(*os, "PRETTY_NAME=", '=');
  sw.kernel = files.line(files.path("proc/sys/kernel/osrelease")).value_or("");
  sw.mlx5_core = read_module(files, "mlx5_core", sw.kernel);
  if (files.exists(files.path("sys/module/mlx_compat")) && sw.mlx5_core.loaded) sw.mlx5_core.flavor = "ofed";
  sw.nvidia_driver = nvidia_driver_version(files);
  sw.nvidia_peermem = read_module(files, "nvidia_peermem", sw.kernel);
  sw.nvidia_peermem_persisted_in = persisted_in(files, "nvidia_peermem");
  sw.nvidia_peermem_persisted = !sw.nvidia_peermem_persisted_in.empty();
}

std::vector<GpuFacts> read_pci_gpus(FileReader& files) {
  std::vector<GpuFacts> gpus;
  const fs::path dir = files.path("sys/bus/pci/devices");
  for (const auto& address : files.list(dir)) {
    const fs::path function = files.resolve(dir / address).value_or(dir / address);
    const auto vendor = files.line_quiet(function / "vendor");
    const auto klass = files.line_quiet(function / "class");
    // NVIDIA (0x10de) VGA (0x0300) or 3D controller (0x0302): the data-centre GPUs are the latter.
    if (vendor != "0x10de" || !klass || (klass->rfind("0x0300", 0) != 0 && klass->rfind("0x0302", 0) != 0)) continue;
    auto pci = read_pci_function(files, function);
    GpuFacts g;
    g.pci = pci.address;
    g.driver = pci.driver;
    g.numa_node = pci.numa_node;
    g.pcie = pci.pcie;
    g.name = "NVIDIA device " + files.line_quiet(function / "device").value_or("?");
    gpus.push_back(g);
  }
  return gpus;
}

NodeFacts probe_node_files(const fs::path& root, bool read_vpd) {
  FileReader files(root);
  NodeFacts node;
  read_host(files, node);
  read_software(files, node.software);
  node.rdma_devices = read_rdma_devices(files, node.absent);
  read_network(files, node, root == "/");
  if (read_vpd) read_hca_vpd(files, node.rdma_devices, node.absent);
  node.gpus = read_pci_gpus(files);
  if (node.gpus.empty()) node.absent.push_back({"gpus", "no NVIDIA GPU on the PCI bus (/sys/bus/pci/devices)"});
  if (node.host.empty()) node.probe_errors.push_back({"/proc/sys/kernel/hostname", "hostname unreadable"});
  node.probe_errors.insert(node.probe_errors.end(), files.errors().begin(), files.errors().end());
  return node;
}

std::map<std::string, std::string> relevant_environment(char** envp) {
  std::map<std::string, std::string> env;
  for (char** e = envp; e && *e; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = entry.substr(0, eq);
    if (key.rfind("NCCL_", 0) == 0 || key.rfind("UCX_", 0) == 0 || key.rfind("FABRICPROOF_", 0) == 0 ||
        key == "CUDA_VISIBLE_DEVICES")
      env[key] = entry.substr(eq + 1);
  }
  return env;
}

std::string cpus_allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "";
  std::string out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    out += (out.empty() ? "" : ",") + (last == cpu ? std::to_string(cpu) : std::to_string(cpu) + "-" + std::to_string(last));
    cpu = last;
  }
  return out;
}

namespace {
// Everything the pipe holds now (non-blocking: stops when it is empty or closed).
void drain(int fd, std::string& into) {
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) into.append(buffer, static_cast<size_t>(n));
}
}  // namespace

ToolOutput run_tool(const std::string& path, const std::vector<std::string>& args, double timeout_s) {
  if (access(path.c_str(), X_OK) != 0) return {false, "", path + " not found"};
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {false, "", "pipe: " + std::string(std::strerror(errno))};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<std::string> words = args;
  words.insert(words.begin(), path);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    close(pipe_fds[0]);
    return {false, "", path + ": " + std::strerror(rc)};
  }
  // Read as it writes (a full pipe would stall it), to a deadline: a wedged tool must not hang the inventory.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
  ToolOutput out{true, "", ""};
  int status = 0;
  for (bool exited = false; !exited;) {
    drain(pipe_fds[0], out.output);
    exited = waitpid(pid, &status, WNOHANG) != 0;
    if (!exited && std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      close(pipe_fds[0]);
      return {false, out.output, fmt::format("{} did not finish in {:.0f} s", path, timeout_s)};
    }
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  drain(pipe_fds[0], out.output);  // what it wrote between the last read and its exit
  close(pipe_fds[0]);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {false, out.output, fmt::format("{} exited with status {}", path, WIFEXITED(status) ? WEXITSTATUS(status) : -1)};
  return out;
}

std::string ofed_info_version() {
  for (const char* tool : {"/usr/bin/ofed_info", "/usr/sbin/ofed_info"}) {
    if (access(tool, X_OK) != 0) continue;
    auto output = trim(run_tool(tool, {"-s"}, 10).output);
    if (!output.empty() && output.back() == ':') output.pop_back();  // "MLNX_OFED_LINUX-5.8-1.0.1.1:"
    return output;
  }
  return "";
}

}  // namespace fabricproof::probe
