#!/usr/bin/env bash
# scripts/gpu-bundle: what gpu-check carries to a bare GPU machine must run where none of this
# suite's run-time packages is installed. The bundle is built from this build tree, then used in a
# private mount namespace where this machine's Open MPI, PMIx, hwloc, rdma-core, fmt and jq are
# hidden (each of their files bound over by /dev/null, their plugin folders by empty ones): the
# binaries must not start without the bundle and must run with it, fabricproof as an MPI singleton
# (inventory and an MPI sweep), jq, and the NCCL library test against this machine's NCCL.
#   gpu_bundle_test.sh BUILD_DIR WORK_DIR
set -u
build=$1 work=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$build/tests/fabricproof_gpu_tests" ] || { echo "SKIPPED: built without CUDA (no GPU test binaries to bundle)"; exit 77; }
command -v jq >/dev/null || { echo "SKIPPED: no jq to bundle"; exit 77; }
unshare -m true 2>/dev/null || { echo "SKIPPED: no private mount namespace here (unshare -m needs root)"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
bundle=$work/gpu-bundle
"$repo/scripts/gpu-bundle" "$build" "$bundle" || { echo "FAILED: scripts/gpu-bundle"; exit 1; }

# Runs "$@" with the packages hidden; the bundle's libraries are the names to hide.
cat >"$work/hidden.sh" <<HIDE
set -e
sys=/usr/lib/\$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
for lib in "$bundle"/lib/*; do
  for f in "\$sys/\$(basename "\$lib")" "/lib/\$(basename "\$lib")"; do [ -f "\$f" ] && mount --bind /dev/null "\$(readlink -f "\$f")"; done
done
for f in \$sys/libpmix.so.2 /usr/bin/orterun /usr/bin/orted /usr/bin/jq; do [ -e "\$f" ] && mount --bind /dev/null "\$(readlink -f "\$f")"; done
for d in \$sys/openmpi \$sys/pmix2 \$sys/hwloc /usr/share/openmpi /usr/share/pmix /etc/openmpi; do [ -d "\$d" ] && mount -t tmpfs tmpfs "\$d"; done
set +e
"\$@"
HIDE
hidden() { unshare -m bash "$work/hidden.sh" "$@"; }
failures=0
check() {  # check DESCRIPTION COMMAND...: one line per check, a failure counted
  if "${@:2}" >"$work/check.out" 2>&1; then echo "ok: $1"; else echo "FAILED: $1"; sed 's/^/  /' "$work/check.out" | tail -20; failures=$((failures + 1)); fi
}

check "the hiding works: the build's fabricproof does not start without the bundle" hidden bash -c '! "$1" --version' _ "$build/fabricproof"
check "the hiding works: no jq" hidden bash -c '! jq --version'
with_bundle() { hidden bash -c '. "$1/env.sh"; shift; "$@"' _ "$bundle" "$@"; }
check "jq runs from the bundle" with_bundle jq --version
check "fabricproof runs from the bundle as an MPI singleton (inventory, MPI sweep to 64K)" \
  with_bundle fabricproof run --phases inventory,collectives --collective-engine mpi --max-bytes 64K --out "$work/run"
check "its report has the inventory and a full sweep" \
  jq -e '([.phases[] | select(.name == "inventory" or .name == "collectives") | .verdict] | all(. == "pass" or . == "warn"))
         and (.collectives.results[0].status == "ok") and (.collectives.results[0].rows | length) == 14' "$work/run/report.json"
# The device tool carries the repository and the bundle together, 64 MiB at most: unstripped, the
# bundle was 66 MB (2026-12-06), its binaries 53 of it.
check "the bundle is under 48 MiB, leaving room for the repository" test "$(du -sb "$bundle" | cut -f1)" -lt $((48 * 1024 * 1024))
check "the NCCL library test runs from the bundle (by its path, as gpu-check runs it)" with_bundle "$bundle/bin/fabricproof_nccl_library_tests"

# nccl-tests' all_reduce_perf, built as gpu-check builds it on the GPU machine (MPI=1 against the
# bundle's mpi.h and libmpi, this machine's Open MPI hidden), then started as gpu-check starts it:
# one rank (an MPI singleton) and two under the bundle's mpirun. Each must get past MPI_Init to
# nccl-tests' header ("# nThread 1 nGpus 1"); without a GPU it ends at CUDA after that.
# in_gpu_env SNIPPET ARG...: SNIPPET (its arguments in "$1"...) where gpu-check runs, after gpu-env.sh.
in_gpu_env() {
  hidden env FABRICPROOF_GPU_BUNDLE="$bundle" bash -c 'repo=$1 snippet=$2; shift 2; . "$repo/scripts/gpu-env.sh"; eval "$snippet"' _ "$repo" "$@"
}
perf=$work/nccl-tests/build/all_reduce_perf
check "nccl-tests' all_reduce_perf builds against the bundle's Open MPI (MPI=1)" \
  in_gpu_env 'build_nccl_tests "$1" "$2" || { tail -20 "$2"; false; }' "$work/nccl-tests" "$work/nccl-tests-make.txt"
check "it loads the bundle's libmpi" in_gpu_env 'ldd "$1" | grep -F "$2/lib/libmpi.so"' "$perf" "$bundle"
for ranks in 1 2; do
  check "it starts as $ranks rank(s) from the bundle and gets past MPI_Init" \
    in_gpu_env 'launch_ranks "$1" "$2" -b 8 -e 8 -g 1 >"$3" 2>&1; cat "$3"; grep -q "^# nThread 1 nGpus 1 " "$3"' "$ranks" "$perf" "$work/perf-$ranks.txt"
done
[ $failures -eq 0 ] && echo "all checks passed" || { echo "$failures check(s) failed"; exit 1; }
