#pragma once
#include "report/report.hpp"

#include "app/build_info.hpp"

namespace fabricproof::app {

// The report's `build` section: version and which optional parts this binary contains.
inline BuildRecord build_section() {
  BuildRecord b{build::kVersion, build::kCompiler, {{"verbs", FABRICPROOF_HAVE_VERBS == 1}, {"cuda", FABRICPROOF_HAVE_CUDA == 1}, {"nccl", FABRICPROOF_HAVE_NCCL == 1}}, {}, {}};
  if (FABRICPROOF_HAVE_CUDA) {
    b.cuda_toolkit = build::kCudaToolkit;
    b.cuda_architectures = build::kCudaArchitectures;
  }
  return b;
}

}  // namespace fabricproof::app
