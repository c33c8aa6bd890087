#include "collectives/nccl_library.hpp"

#include "core/located_error.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <vector>

namespace fabricproof::collectives {
namespace {

struct Loaded {
  NcclLibrary library{};
  bool ok = false;
  std::string why;
};

std::vector<std::string> candidates() {
  // One chosen library (e.g. to compare NCCL releases on one cluster) and nothing else.
  if (const char* chosen = std::getenv("FABRICPROOF_NCCL_LIBRARY"); chosen && *chosen) return {chosen};
  std::vector<std::string> paths{"libnccl.so.2"};
  if (const char* home = std::getenv("NCCL_HOME"); home && *home) paths.push_back(fmt::format("{}/lib/libnccl.so.2", home));
#ifdef FABRICPROOF_NCCL_BUILD_DIR
  paths.push_back(FABRICPROOF_NCCL_BUILD_DIR "/libnccl.so.2");
#endif
  return paths;
}

// Resolves every function or names the first that is missing.
template <typename Fn>
bool resolve(void* handle, const char* symbol, Fn* out, std::string* why) {
  *out = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (!*out) *why = fmt::format("it lacks {} (this suite needs NCCL >= 2.14)", symbol);
  return *out != nullptr;
}

Loaded load() {
  Loaded l;
  void* handle = nullptr;
  std::vector<std::string> errors;
  for (const auto& path : candidates()) {
    // RTLD_GLOBAL: NCCL's own plugins (libnccl-net.so) look NCCL's symbols up globally.
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle) {
      l.library.path = path;
      break;
    }
    const char* e = dlerror();
    errors.push_back(e ? e : path + ": cannot open");
  }
  if (!handle) {
    l.why = fmt::format("NCCL not found ({})", fmt::join(errors, "; "));
    return l;
  }
  auto& n = l.library;
  l.ok = resolve(handle, "ncclGetVersion", &n.GetVersion, &l.why) && resolve(handle, "ncclGetErrorString", &n.GetErrorString, &l.why) &&
         resolve(handle, "ncclGetLastError", &n.GetLastError, &l.why) && resolve(handle, "ncclGetUniqueId", &n.GetUniqueId, &l.why) &&
         resolve(handle, "ncclCommInitRankConfig", &n.CommInitRankConfig, &l.why) &&
         resolve(handle, "ncclCommGetAsyncError", &n.CommGetAsyncError, &l.why) && resolve(handle, "ncclCommFinalize", &n.CommFinalize, &l.why) &&
         resolve(handle, "ncclCommDestroy", &n.CommDestroy, &l.why) && resolve(handle, "ncclCommAbort", &n.CommAbort, &l.why) &&
         resolve(handle, "ncclAllReduce", &n.AllReduce, &l.why) && resolve(handle, "ncclAllGather", &n.AllGather, &l.why) &&
         resolve(handle, "ncclReduceScatter", &n.ReduceScatter, &l.why) && resolve(handle, "ncclBroadcast", &n.Broadcast, &l.why) &&
         resolve(handle, "ncclSend", &n.Send, &l.why) && resolve(handle, "ncclRecv", &n.Recv, &l.why) &&
         resolve(handle, "ncclGroupStart", &n.GroupStart, &l.why) && resolve(handle, "ncclGroupEnd", &n.GroupEnd, &l.why);
  if (!l.ok) l.why = fmt::format("{} ({})", l.why, n.path);
  n.CommSplit = reinterpret_cast<decltype(n.CommSplit)>(dlsym(handle, "ncclCommSplit"));
  n.MemAlloc = reinterpret_cast<decltype(n.MemAlloc)>(dlsym(handle, "ncclMemAlloc"));
  n.MemFree = reinterpret_cast<decltype(n.MemFree)>(dlsym(handle, "ncclMemFree"));
  if (!n.MemAlloc || !n.MemFree) n.MemAlloc = nullptr, n.MemFree = nullptr;  // both or neither
  return l;  // the handle stays open for the life of the process
}

}  // namespace

const NcclLibrary& nccl_library() {
  static const Loaded loaded = load();
  if (!loaded.ok) throw LocatedError("", loaded.why);
  return loaded.library;
}

}  // namespace fabricproof::collectives
