#pragma once
#include <nlohmann/json.hpp>

#include "app/build_info.hpp"

namespace fabricproof::app {

// The report's `build` section: version and which optional parts this binary contains.
inline nlohmann::json build_section() {
  nlohmann::json parts = {{"verbs", FABRICPROOF_HAVE_VERBS == 1}, {"cuda", FABRICPROOF_HAVE_CUDA == 1}, {"nccl", FABRICPROOF_HAVE_NCCL == 1}};
  nlohmann::json j = {{"version", build::kVersion}, {"compiler", build::kCompiler}, {"optional_parts", parts}};
  if (FABRICPROOF_HAVE_CUDA) {
    j["cuda_toolkit"] = build::kCudaToolkit;
    j["cuda_architectures"] = build::kCudaArchitectures;
  }
  return j;
}

}  // namespace fabricproof::app
