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
[ $failures -eq 0 ] && echo "all checks passed" || { echo "$failures check(s) failed"; exit 1; }
