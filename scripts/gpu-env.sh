# shellcheck shell=bash disable=SC2034  # the variables set here are the including script's
# Sourced by scripts/gpu-check and scripts/bench/nccl-vs-nccl-tests: where fabricproof, its GPU
# tests, nccl-tests' source and the machine's NCCL are, and how a 1-rank run is launched.
# Sets bin, tests, nccl_tests_src, mpi_include, nccl_lib (empty when none is found), launch(),
# launch_ranks(), build_nccl_tests().
# Runs from gpu-bundle/ when it is there (scripts/gpu-bundle: the lent GPU machine has none of this
# suite's run-time packages, and a 1-rank run is then an MPI singleton), else from the build tree
# with mpirun (FABRICPROOF_BUILD_DIR names another build tree, and is used even beside a bundle;
# FABRICPROOF_GPU_BUNDLE another bundle).
# NCCL is the machine's own.
gpu_env_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gpu_env_bundle=${FABRICPROOF_GPU_BUNDLE:-$gpu_env_repo/gpu-bundle}
if [ -z "${FABRICPROOF_BUILD_DIR:-}" ] && [ -f "$gpu_env_bundle/env.sh" ]; then
  . "$gpu_env_bundle/env.sh"
  bin=$gpu_env_bundle/bin tests=$gpu_env_bundle/bin nccl_tests_src=$gpu_env_bundle/nccl-tests mpi_include=$gpu_env_bundle/mpi-include
  launch() { "$@"; }  # an MPI singleton (env.sh: ess_singleton_isolated)
else
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  bin=${FABRICPROOF_BUILD_DIR:-$gpu_env_repo/build}
  tests=$bin/tests nccl_tests_src=$gpu_env_repo/../shared/reference/nccl-tests
  mpi_include=
  for gpu_env_dir in $(mpicc --showme:incdirs 2>/dev/null); do
    if [ -f "$gpu_env_dir/mpi.h" ]; then mpi_include=$gpu_env_dir; break; fi
  done
  launch() { mpirun -np 1 "$@"; }  # local ranks inherit mpirun's environment
fi
# N ranks on this machine, one GPU each (local rank i on GPU i): N = 1 as launch() does, else
# mpirun's own placement for both sides of a comparison.
launch_ranks() {  # N COMMAND...
  local n=$1
  shift
  if [ "$n" -eq 1 ]; then launch "$@"; else mpirun -np "$n" "$@"; fi
}
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

# Builds nccl-tests' all_reduce_perf (MPI=1, run as nccl-tests runs on clusters: one process per GPU,
# -g 1) from nccl_tests_src in DIR against nccl_lib and the libmpi fabricproof loads, and prints its
# path; the make log goes to LOG. Errors go to stderr, status 1. nccl-tests links -lnccl and -lmpi
# from NCCL_HOME/lib and MPI_HOME/lib and includes their include/: directories of links to the
# libraries and the headers (a pip wheel's NCCL has no libnccl.so link, Debian's libmpi.so.40 none
# outside its openmpi/ folder).
build_nccl_tests() {  # DIR LOG
  local dir=$1 log=$2 include cuda_home cc perf libmpi
  [ -n "$nccl_lib" ] || { echo "no libnccl.so.2 found on this machine" >&2; return 1; }
  libmpi=$(ldd "$bin/fabricproof" 2>/dev/null | awk '$1 ~ /^libmpi\.so/ && $3 ~ /^\// {print $3; exit}')
  [ -n "$libmpi" ] || { echo "fabricproof at $bin loads no libmpi that ldd finds" >&2; return 1; }
  [ -n "$mpi_include" ] && [ -f "$mpi_include/mpi.h" ] || { echo "no mpi.h (mpicc --showme:incdirs, or the bundle's mpi-include)" >&2; return 1; }
  rm -rf "$dir"
  cp -r "$nccl_tests_src" "$dir" 2>/dev/null || { echo "no nccl-tests source at $nccl_tests_src" >&2; return 1; }
  mkdir -p "$dir/nccl-home/lib" "$dir/mpi-home/lib"
  ln -s "$nccl_lib" "$dir/nccl-home/lib/libnccl.so"
  ln -s "$nccl_lib" "$dir/nccl-home/lib/libnccl.so.2"
  ln -s "$libmpi" "$dir/mpi-home/lib/libmpi.so"
  ln -s "$mpi_include" "$dir/mpi-home/include"
  for include in "$(dirname "$(dirname "$nccl_lib")")/include" /usr/include /usr/local/cuda/include; do
    if [ -f "$include/nccl.h" ]; then ln -s "$include" "$dir/nccl-home/include"; break; fi
  done
  [ -e "$dir/nccl-home/include" ] || { echo "no nccl.h beside $nccl_lib, in /usr/include or in /usr/local/cuda/include" >&2; return 1; }
  cuda_home=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
  # all_reduce_perf alone: half the time of all eleven tests (27 s against 59 s on 2 cores).
  perf=$dir/build/all_reduce_perf
  make -C "$dir/src" -j"$(nproc)" MPI=1 MPI_HOME="$dir/mpi-home" CUDA_HOME="$cuda_home" NCCL_HOME="$dir/nccl-home" \
    NVCC_GENCODE="-gencode=arch=compute_${cc:-90},code=sm_${cc:-90}" BUILDDIR="$dir/build" "$perf" >"$log" 2>&1 ||
    { echo "nccl-tests did not build (see $log)" >&2; return 1; }
  [ -x "$perf" ] || { echo "nccl-tests built no all_reduce_perf (see $log)" >&2; return 1; }
  echo "$perf"
}
