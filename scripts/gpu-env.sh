# shellcheck shell=bash disable=SC2034  # the variables set here are the including script's
# Sourced by scripts/gpu-check and scripts/bench/nccl-vs-nccl-tests: where fabricproof, its GPU
# tests, nccl-tests' source and the machine's NCCL are, and how a 1-rank run is launched.
# Sets bin, tests, nccl_tests_src, nccl_lib (empty when none is found), launch(), build_nccl_tests().
# Runs from gpu-bundle/ when it is there (scripts/gpu-bundle: the lent GPU machine has none of this
# suite's run-time packages, and a 1-rank run is then an MPI singleton), else from the build tree
# with mpirun (FABRICPROOF_BUILD_DIR names another build tree, and is used even beside a bundle).
# NCCL is the machine's own.
gpu_env_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -z "${FABRICPROOF_BUILD_DIR:-}" ] && [ -f "$gpu_env_repo/gpu-bundle/env.sh" ]; then
  . "$gpu_env_repo/gpu-bundle/env.sh"
  bin=$gpu_env_repo/gpu-bundle/bin tests=$gpu_env_repo/gpu-bundle/bin nccl_tests_src=$gpu_env_repo/gpu-bundle/nccl-tests
  launch() { "$@"; }  # an MPI singleton (env.sh: ess_singleton_isolated)
else
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  bin=${FABRICPROOF_BUILD_DIR:-$gpu_env_repo/build}
  tests=$bin/tests nccl_tests_src=$gpu_env_repo/../shared/reference/nccl-tests
  launch() { mpirun -np 1 "$@"; }  # local ranks inherit mpirun's environment
fi
# The machine's NCCL: the first libnccl.so.2 found, as fabricproof's loader and nccl-tests use it.
nccl_lib=
for candidate in "${FABRICPROOF_NCCL_LIBRARY:-}" /usr/local/cuda/lib/libnccl.so.2 /usr/local/cuda/lib64/libnccl.so.2 \
    $(ldconfig -p 2>/dev/null | awk '/libnccl\.so\.2 /{print $NF}') \
    $(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null); do
  if [ -n "$candidate" ] && [ -f "$candidate" ]; then nccl_lib=$candidate; break; fi
done
if [ -n "$nccl_lib" ]; then
  export FABRICPROOF_NCCL_LIBRARY=$nccl_lib
  LD_LIBRARY_PATH="$(dirname "$nccl_lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LD_LIBRARY_PATH
fi

# Builds nccl-tests' all_reduce_perf (MPI=0, -g 1) from nccl_tests_src in DIR against nccl_lib and
# prints its path; the make log goes to LOG. Errors go to stderr, status 1. nccl-tests links -lnccl
# from NCCL_HOME/lib and includes NCCL_HOME/include/nccl.h: a directory of links to the library and
# the header beside it (a pip wheel's NCCL has no libnccl.so link).
build_nccl_tests() {  # DIR LOG
  local dir=$1 log=$2 include cuda_home cc perf
  [ -n "$nccl_lib" ] || { echo "no libnccl.so.2 found on this machine" >&2; return 1; }
  rm -rf "$dir"
  cp -r "$nccl_tests_src" "$dir" 2>/dev/null || { echo "no nccl-tests source at $nccl_tests_src" >&2; return 1; }
  mkdir -p "$dir/nccl-home/lib"
  ln -s "$nccl_lib" "$dir/nccl-home/lib/libnccl.so"
  ln -s "$nccl_lib" "$dir/nccl-home/lib/libnccl.so.2"
  for include in "$(dirname "$(dirname "$nccl_lib")")/include" /usr/include /usr/local/cuda/include; do
    if [ -f "$include/nccl.h" ]; then ln -s "$include" "$dir/nccl-home/include"; break; fi
  done
  [ -e "$dir/nccl-home/include" ] || { echo "no nccl.h beside $nccl_lib, in /usr/include or in /usr/local/cuda/include" >&2; return 1; }
  cuda_home=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
  make -C "$dir" -j"$(nproc)" MPI=0 CUDA_HOME="$cuda_home" NCCL_HOME="$dir/nccl-home" \
    NVCC_GENCODE="-gencode=arch=compute_${cc:-90},code=sm_${cc:-90}" src.build >"$log" 2>&1 ||
    { echo "nccl-tests did not build (see $log)" >&2; return 1; }
  perf=$(find "$dir" -name all_reduce_perf -type f -perm -u+x | head -1)
  [ -n "$perf" ] || { echo "nccl-tests built no all_reduce_perf (see $log)" >&2; return 1; }
  echo "$perf"
}
