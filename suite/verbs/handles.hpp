#pragma once
// Move-only owners for libibverbs objects. Declare them in creation order in a struct so that
// destruction runs in reverse (MR before PD before context), as rc_pingpong tears down.
#include <infiniband/verbs.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "core/located_error.hpp"

namespace fabricproof::verbs {

struct DeviceListDeleter {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};
struct ContextDeleter {
  void operator()(ibv_context* c) const { ibv_close_device(c); }
};
struct PdDeleter {
  void operator()(ibv_pd* pd) const { ibv_dealloc_pd(pd); }
};
struct MrDeleter {
  void operator()(ibv_mr* mr) const { ibv_dereg_mr(mr); }
};
struct CqDeleter {
  void operator()(ibv_cq* cq) const { ibv_destroy_cq(cq); }
};
struct QpDeleter {
  void operator()(ibv_qp* qp) const { ibv_destroy_qp(qp); }
};

using DeviceList = std::unique_ptr<ibv_device*, DeviceListDeleter>;
using Context = std::unique_ptr<ibv_context, ContextDeleter>;
using ProtectionDomain = std::unique_ptr<ibv_pd, PdDeleter>;
using MemoryRegion = std::unique_ptr<ibv_mr, MrDeleter>;
using CompletionQueue = std::unique_ptr<ibv_cq, CqDeleter>;
using QueuePair = std::unique_ptr<ibv_qp, QpDeleter>;

// A failed verbs call: which API, the errno it left, and on which device.
class VerbsError : public LocatedError {
 public:
  // `device`: the RDMA device the call was made on, when there is one.
  VerbsError(std::string api, int code, const std::string& detail, const std::string& device = "");
  const std::string& api() const { return api_; }
  int code() const { return code_; }

 private:
  std::string api_;
  int code_;
};

// Opens a device by name ("mlx5_0", "rxe0"); throws VerbsError when it is absent or fails.
Context open_device(const std::string& name);

}  // namespace fabricproof::verbs
