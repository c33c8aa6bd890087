#!/usr/bin/env bash
# scripts/fabricproof-mpirun: the mpirun line it builds, and its errors on bad hostfiles.
set -u
here=$(cd "$(dirname "$0")" && pwd)
wrapper="$here/../../scripts/fabricproof-mpirun"
hostfiles="$here/../../hostfiles"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
check() {  # description, command output, expected substring
  if [[ "$2" == *"$3"* ]]; then echo "ok   $1"; else echo "FAIL $1: expected '$3' in: $2"; failures=$((failures + 1)); fi
}
status_is() {
  if [ "$2" -eq "$3" ]; then echo "ok   $1"; else echo "FAIL $1: exit $2, expected $3"; failures=$((failures + 1)); fi
}

out=$(NCCL_IB_HCA=mlx5_0,mlx5_1 NCCL_SOCKET_IFNAME=eno1 UCX_TLS=rc FABRICPROOF_X=1 OTHER=1 \
      "$wrapper" --hostfile "$hostfiles/cluster-4x4" --dry-run -- run --out /tmp/r 2>&1); rc=$?
status_is "dry run exits 0" $rc 0
check "one rank per slot" "$out" "-np 16 --map-by slot"
check "bound to NUMA" "$out" "--bind-to numa"
check "MPI kept on TCP" "$out" "--mca pml ob1 --mca btl self\\,vader\\,tcp"
check "NCCL_IB_HCA exported" "$out" "-x NCCL_IB_HCA"
check "NCCL_SOCKET_IFNAME exported" "$out" "-x NCCL_SOCKET_IFNAME"
check "UCX_TLS exported" "$out" "-x UCX_TLS"
check "FABRICPROOF_X exported" "$out" "-x FABRICPROOF_X"
check "fabricproof arguments passed" "$out" "run --out /tmp/r"
[[ "$out" == *"-x OTHER"* ]] && { echo "FAIL unrelated variable exported"; failures=$((failures + 1)); }

out=$("$wrapper" --hostfile "$hostfiles/two-nodes" --ranks-per-node 2 --dry-run -- run --out d 2>&1)
check "ranks per node" "$out" "-np 4 --map-by ppr:2:node"

out=$("$wrapper" --hostfile "$hostfiles/cluster-4x4" --mgmt-net 10.0.0.0/24 --dry-run -- run --out d 2>&1)
check "MPI pinned to the management network" "$out" "--mca btl_tcp_if_include 10.0.0.0/24 --mca oob_tcp_if_include 10.0.0.0/24"
out=$("$wrapper" --hostfile "$hostfiles/cluster-4x4" --mca btl_tcp_if_include eno1 --dry-run -- run --out d 2>&1)
[[ "$out" == *"btl_tcp_if_include eno1"* && "$out" != *"pinned to the management network"* ]] && echo "ok   a given btl_tcp_if_include wins" ||
  { echo "FAIL a given btl_tcp_if_include wins: $out"; failures=$((failures + 1)); }

printf 'node1 slots=4\nnode2 slots=four\n' >"$tmp/bad-slots"
out=$("$wrapper" --hostfile "$tmp/bad-slots" --dry-run -- run 2>&1); rc=$?
status_is "bad slots exits 2" $rc 2
check "bad slots names file and line" "$out" "$tmp/bad-slots:2: 'slots=four'"

printf '# rack A\nnode1 slots=4\n\nnode1 slots=4\n' >"$tmp/duplicate"
out=$("$wrapper" --hostfile "$tmp/duplicate" --dry-run -- run 2>&1); rc=$?
status_is "duplicate host exits 2" $rc 2
check "duplicate host named" "$out" "$tmp/duplicate:4: host 'node1' is listed twice (line 2)"

printf 'node1 gpus=4\n' >"$tmp/unknown"
out=$("$wrapper" --hostfile "$tmp/unknown" --dry-run -- run 2>&1)
check "unknown field named" "$out" "unknown field 'gpus=4'"

printf '# nothing here\n' >"$tmp/empty"
out=$("$wrapper" --hostfile "$tmp/empty" --dry-run -- run 2>&1); rc=$?
status_is "empty hostfile exits 2" $rc 2
check "empty hostfile named" "$out" "no hosts"

out=$("$wrapper" --hostfile "$tmp/missing" --dry-run -- run 2>&1); rc=$?
status_is "missing hostfile exits 2" $rc 2
check "missing hostfile named" "$out" "$tmp/missing: cannot read the hostfile"

out=$("$wrapper" --hostfile "$hostfiles/localhost" --ranks-per-node x 2>&1); rc=$?
status_is "bad ranks per node exits 2" $rc 2

# The watcher: a job whose report is final while mpirun stays (a frozen node's daemon) is ended
# after --exit-grace; a job whose report is still incomplete is left to run. A stand-in for mpirun
# writes the report (its --out) and then waits. The report gets the mtime of the watcher's marker,
# as a report written in the clock tick of a look has (file times are jiffy-coarse): a watcher that
# took only strictly newer reports would miss it for good.
cat >"$tmp/fake-mpirun" <<'FAKE'
#!/bin/bash
out="" prev=""
for a in "$@"; do [ "$prev" = --out ] && out=$a; prev=$a; done
printf '{"verdict": "%s"}\n' "$FAKE_VERDICT" >"$out/report.json"
# A watchdog's line, as a rank blocked in a collective prints it on stderr before ending the job.
[ -n "${FAKE_WATCHDOG:-}" ] && echo 'fabricproof: watchdog: {"host":"h","rank":0,"what":"MPI allreduce"}' >&2
touch -r "$(ls "$out"/.fabricproof-mpirun.* | head -1)" "$out/report.json"
echo $$ >"$out/../$(basename "$out").pid"  # exec keeps the pid: the test looks for this process, not any "sleep 300"
exec sleep "$FAKE_SECONDS"
FAKE
chmod +x "$tmp/fake-mpirun"
start=$SECONDS
out=$(FAKE_VERDICT=fail FAKE_SECONDS=300 timeout 60 "$wrapper" --hostfile "$hostfiles/localhost" --mpirun "$tmp/fake-mpirun" \
      --exit-grace 2 -- run --out "$tmp/final" 2>&1); rc=$?
took=$((SECONDS - start))
check "a final report with mpirun staying: mpirun ended after the grace" "$out" "but mpirun has not exited after 2 s; ending mpirun"
[ $rc -ne 124 ] && [ $took -le 20 ] && echo "ok   ... and the wrapper returned in $took s" ||
  { echo "FAIL the wrapper took $took s (exit $rc) with a final report and a 2 s grace"; failures=$((failures + 1)); }
# The stand-in's own pid (a "sleep 300" of anything else on the machine is none of this test's).
fake=$(cat "$tmp/final.pid" 2>/dev/null)
[ -n "$fake" ] && kill -0 "$fake" 2>/dev/null && { echo "FAIL the stand-in mpirun is still running"; failures=$((failures + 1)); kill "$fake"; }
ls "$tmp/final"/.fabricproof-mpirun.* >/dev/null 2>&1 && { echo "FAIL the watcher's marker was left in the report directory"; failures=$((failures + 1)); }
# The ranks' watchdogs ended the job (a blocking collective that never returned): the report stays
# incomplete, mpirun may wait for a frozen node's daemon, and the wrapper ends it after the grace.
start=$SECONDS
out=$(FAKE_VERDICT=incomplete FAKE_WATCHDOG=1 FAKE_SECONDS=300 timeout 60 "$wrapper" --hostfile "$hostfiles/localhost" --mpirun "$tmp/fake-mpirun" \
      --exit-grace 2 -- run --out "$tmp/watchdog" 2>&1)
took=$((SECONDS - start))
check "a watchdog's end with mpirun staying: mpirun ended after the grace" "$out" "the ranks' watchdogs ended the job) but mpirun has not exited after 2 s"
[ $took -le 20 ] && echo "ok   ... and the wrapper returned in $took s" ||
  { echo "FAIL the wrapper took $took s with a watchdog's end and a 2 s grace"; failures=$((failures + 1)); }
fake=$(cat "$tmp/watchdog.pid" 2>/dev/null)
[ -n "$fake" ] && kill -0 "$fake" 2>/dev/null && { echo "FAIL the stand-in mpirun is still running"; failures=$((failures + 1)); kill "$fake"; }
start=$SECONDS
out=$(FAKE_VERDICT=incomplete FAKE_SECONDS=6 timeout 60 "$wrapper" --hostfile "$hostfiles/localhost" --mpirun "$tmp/fake-mpirun" \
      --exit-grace 2 -- run --out "$tmp/running" 2>&1)
took=$((SECONDS - start))
[[ "$out" != *"ending mpirun"* ]] && [ $took -ge 6 ] && echo "ok   an incomplete report: mpirun left to run ($took s)" ||
  { echo "FAIL an incomplete report: mpirun ended early ($took s): $out"; failures=$((failures + 1)); }

# With the real mpirun and binary: a report of an earlier run never survives a later one into the
# same directory. A host that does not resolve: the job never starts, and the report (and report.prom,
# asked for with --format) says so in one line naming the host, never a signal, never the old pass.
bin=${FABRICPROOF_BIN:-$here/../../build/fabricproof}
if [ -x "$bin" ] && command -v mpirun >/dev/null && command -v ssh >/dev/null; then
  mkdir -p "$tmp/stale"
  echo '{"schema": "fabricproof.report/1", "verdict": "pass"}' >"$tmp/stale/report.json"
  printf 'fabricproof_run_verdict{verdict="pass"} 1\n' >"$tmp/stale/report.prom"
  printf 'nosuchhost.invalid slots=1\n' >"$tmp/unresolvable"
  out=$(timeout 120 "$wrapper" --hostfile "$tmp/unresolvable" --mgmt-net none -- run --phases inventory --format json,prom --out "$tmp/stale" 2>&1); rc=$?
  status_is "a host that does not resolve: exit 2" $rc 2
  check "... the console names the host and the reason" "$out" "ERROR  launch_failed          nosuchhost"
  check "... and says the job could not start" "$out" "mpirun could not start the job (exit status 255)"
  [[ "$out" == *"signal"* ]] && { echo "FAIL an exit status read as a signal: $out"; failures=$((failures + 1)); }
  check "... the report names it" "$(jq -r '.verdict + " " + ([.findings[] | select(.id == "launch_failed") | .subject + ": " + .measured.launcher] | join(";"))' "$tmp/stale/report.json" 2>&1)" \
    "error nosuchhost: the host name does not resolve"
  check "... report.prom is this run's, not the earlier pass" "$(cat "$tmp/stale/report.prom" 2>&1)" 'fabricproof_run_verdict{verdict="error"} 1'
  # Rank 0 killed at its first step, into a directory holding a passing report: never a pass.
  echo '{"schema": "fabricproof.report/1", "verdict": "pass"}' >"$tmp/stale/report.json"
  out=$(FABRICPROOF_INJECT="0:start:kill" timeout 120 "$wrapper" --hostfile "$hostfiles/localhost" --ranks-per-node 2 --mgmt-net none -- \
        run --phases inventory --out "$tmp/stale" 2>&1); rc=$?
  status_is "rank 0 killed in its first step: exit 2" $rc 2
  check "... the report of the earlier pass did not survive" "$(jq -r .verdict "$tmp/stale/report.json" 2>&1)" "error"
else
  skip_what="no fabricproof binary ($bin), mpirun or ssh"
  [ "${CI:-}" = "true" ] && { echo "FAIL $skip_what (CI=true)"; failures=$((failures + 1)); } || echo "note: not checked: $skip_what"
fi

[ $failures -eq 0 ] && echo "all checks passed" || echo "$failures check(s) failed"
exit $((failures > 0))
