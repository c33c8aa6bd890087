#!/usr/bin/env bash
# The Soft-RoCE lab tests (ctest label `lab`). One step per ctest test, sharing one running lab:
#   up -> rxe-ports -> write-bw -> acceptance -> collectives -> faults -> verbs-faults -> down
# Exit 77 (ctest: skipped) with the reason when this machine cannot run the lab at all.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
lab="$repo/scripts/lab/lab"
nodes=${FABRICPROOF_LAB_NODES:-4}
work=${FABRICPROOF_LAB_TEST_DIR:-$repo/build/lab-tests}
failures=0
# Short verbs runs with a small window: CI has 2 cores for 4 TCG VMs; the lab judges ratios, not
# absolute figures. With 128 x 64 KiB in flight, a starved guest's rxe can stall in retransmission
# (seen twice while another node's ssh ate the CPU); 32 in flight keeps it out of that corner.
verbs_args=(--verbs-duration 1 --verbs-lat-iterations 200 --verbs-tx-depth 32)
# The collective sweeps (MPI over the management network) stay small: correctness and the 1 -> 2 ->
# 4 node structure are what the lab shows; the fault steps leave them out.
coll_args=(--collective-engine mpi --max-bytes 256K --iters 3 --warmup 1)
fault_phases=(--phases inventory,verbs)

skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok   $*"; }
expect() {  # description, jq filter over the report that must print true, report
  local got
  got=$(jq -r "$2" "$3" 2>&1)
  if [ "$got" = "true" ]; then pass "$1"; else fail "$1 (jq '$2' gave: $got)"; fi
}
finish() { [ $failures -eq 0 ] && { echo "all checks passed"; exit 0; }; echo "$failures check(s) failed"; exit 1; }
# Runs `lab acceptance` into $work/NAME, checks its exit code and that a report was written, and
# sets r to the report. Usage: accept NAME EXPECTED_EXIT_CODE [lab acceptance options...]
accept() {
  local name=$1 expected=$2
  shift 2
  rm -rf "${work:?}/$name"
  "$lab" acceptance --out "$work/$name" "$@"
  local rc=$?
  if [ $rc -eq 255 ]; then
    # 255 is mpirun losing a daemon (seen once in CI: an ssh session to a TCG guest dropped), not
    # fabricproof's verdict. Show the guests' consoles, then give the scenario one more try.
    echo "note: $name: mpirun exited 255 (launcher failure); guest consoles, then one retry:"
    "$lab" consoles
    rm -rf "${work:?}/$name"
    "$lab" acceptance --out "$work/$name" "$@"
    rc=$?
  fi
  r="$work/$name/report.json"
  [ -f "$r" ] || { fail "$name: no report.json in $work/$name"; finish; }
  [ $rc -eq "$expected" ] && pass "$name: fabricproof exited $rc" || fail "$name: fabricproof exited $rc, expected $expected"
}

precheck() {
  [ "$(id -u)" -eq 0 ] || skip "the lab needs root (network namespace and taps)"
  [ -c /dev/net/tun ] || skip "no /dev/net/tun on this machine"
  ip netns list >/dev/null 2>&1 || skip "network namespaces are not available (ip netns)"
  command -v jq >/dev/null || "$repo/scripts/install-deps" --lab >/dev/null || skip "cannot install the lab's packages"
  command -v qemu-system-x86_64 >/dev/null || "$repo/scripts/install-deps" --lab >/dev/null || skip "cannot install qemu"
}

step_up() {
  "$lab" down >/dev/null 2>&1 || true
  local start=$(date +%s)
  "$lab" up --nodes "$nodes" || { fail "lab up --nodes $nodes"; finish; }
  pass "lab up: $nodes nodes in $(( $(date +%s) - start )) s"
  finish
}

# 1. Every node's rxe0 is PORT_ACTIVE, active MTU 4096, link layer Ethernet.
step_rxe_ports() {
  local i out
  for i in $(seq 1 "$nodes"); do
    out=$("$lab" exec "node$i" -- ibv_devinfo -d rxe0 2>/dev/null)
    [[ "$out" == *"PORT_ACTIVE"* ]] && pass "node$i rxe0 PORT_ACTIVE" || fail "node$i rxe0 not PORT_ACTIVE: $out"
    [[ "$out" =~ active_mtu:[[:space:]]+4096 ]] && pass "node$i rxe0 active MTU 4096" || fail "node$i active MTU: $out"
    [[ "$out" =~ link_layer:[[:space:]]+Ethernet ]] && pass "node$i rxe0 link layer Ethernet" || fail "node$i link layer: $out"
    [ "$("$lab" exec "node$i" -- hostname 2>/dev/null)" = "node$i" ] && pass "node$i has its own hostname" || fail "node$i hostname"
  done
  finish
}

# 2. perftest's ib_write_bw between node1 and node2 completes.
step_write_bw() {
  local gid out
  gid=$(cat /dev/null; "$lab" exec node2 -- sh -c 'for t in /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/*; do i=${t##*/}; case $(cat /sys/class/infiniband/rxe0/ports/1/gids/$i) in 0000:0000:0000:0000:0000:ffff:*) echo $i; break;; esac; done' 2>/dev/null)
  [ -n "$gid" ] || { fail "no IPv4 GID on node2's rxe0"; finish; }
  "$lab" exec node2 -- timeout 120 ib_write_bw -d rxe0 -F --report_gbits -D 3 -x "$gid" >"$work/write_bw_server.log" 2>&1 &
  local server=$!
  for _ in $(seq 1 60); do  # wait until the server listens: a client started before it fails
    "$lab" exec node2 -- sh -c 'ss -ltn | grep -q ":18515 "' 2>/dev/null && break
    sleep 1
  done
  out=$("$lab" exec node1 -- timeout 120 ib_write_bw -d rxe0 -F --report_gbits -D 3 -x "$gid" node2 2>&1)
  local rc=$?
  wait $server
  echo "$out" | grep -A2 "#bytes"
  [ $rc -eq 0 ] && [[ "$out" =~ 65536[[:space:]]+[0-9]+ ]] && pass "ib_write_bw node1 -> node2 completed" || fail "ib_write_bw failed (rc $rc): $out"
  finish
}

# 3. lab acceptance on all nodes: 4 nodes, RoCE ports healthy, software consistent, verdict pass.
step_acceptance() {
  accept acceptance 0 -- --expect-nodes "$nodes" "${verbs_args[@]}" "${coll_args[@]}"
  expect "report lists $nodes nodes" "(.nodes | length) == $nodes" "$r"
  expect "hosts are node1..node$nodes" "[.nodes[].host] | sort == [range(1; $nodes + 1) | \"node\\(.)\"]" "$r"
  expect "every node has a RoCE port ACTIVE" "[.nodes[] | any(.rdma_devices[].ports[]; .state == \"ACTIVE\" and .link_layer == \"Ethernet\")] | all" "$r"
  expect "every port has active MTU 4096" "[.nodes[].rdma_devices[].ports[].active_mtu] | all(. == 4096)" "$r"
  expect "every port has a RoCE v2 GID index" "[.nodes[].rdma_devices[].ports[].roce_v2_gid_index] | all(. != null)" "$r"
  expect "every netdev has MTU 9000" "[.nodes[].rdma_devices[].ports[].netdev_mtu] | all(. == 9000)" "$r"
  expect "software is consistent across nodes" "[.findings[] | select(.id | startswith(\"consistency_\")) | .verdict] | all(. == \"pass\")" "$r"
  expect "node count matches --expect-nodes" "[.findings[] | select(.id == \"node_count\") | .verdict] == [\"pass\"]" "$r"
  expect "verbs phase ran and passed" "[.phases[] | select(.name == \"verbs\") | .verdict] == [\"pass\"]" "$r"
  expect "every off-diagonal write_bw cell is a measurement" "[.verbs.matrix.write_bw.cells | to_entries[] | .key as \$i | .value | to_entries[] | select(.key != \$i) | .value | type] | all(. == \"number\")" "$r"
  expect "every off-diagonal latency cell is a measurement" "[.verbs.matrix.write_lat.cells | to_entries[] | .key as \$i | .value | to_entries[] | select(.key != \$i) | .value | type] | all(. == \"number\")" "$r"
  expect "the matrix has $nodes x $nodes cells" "(.verbs.matrix.write_bw.cells | length) == $nodes" "$r"
  expect "SEND payloads verified without mismatch" "[.verbs.pairs[].tests[] | select(.test == \"send_bw\") | (.verified > 0 and .mismatches == 0)] | all" "$r"
  expect "the collectives ran on 1, 2 and $nodes nodes" "[.collectives.results[].nodes] == [1, 2, $nodes]" "$r"
  expect "verdict pass" ".verdict == \"pass\"" "$r"
  finish
}

# 3b. The collective sweeps across the VMs: 1 -> 2 -> 4 node scaling with the MPI engine, every
#     result element verified, busbw = algbw x the allreduce factor of each group.
step_collectives() {
  accept collectives 0 -- --phases collectives --collective-engine mpi --collective-ops allreduce,allgather,reduce_scatter \
    --max-bytes 1M --iters 5 --warmup 1
  expect "one group per node count: 1, 2, $nodes" "[.collectives.groups[].nodes] == [1, 2, $nodes]" "$r"
  expect "each group holds its nodes' ranks" "[.collectives.groups[] | (.ranks | length) == .nodes] | all" "$r"
  expect "three ops on each group" "[.collectives.results[] | \"\\(.op)@\\(.nodes)\"] | sort == ([\"allreduce\", \"allgather\", \"reduce_scatter\"] | map(. as \$o | [1, 2, $nodes] | map(\"\\(\$o)@\\(.)\")) | flatten | sort)" "$r"
  expect "every sweep completed up to 1 MiB" "[.collectives.results[] | .status == \"ok\" and .rows[-1].bytes == 1048576] | all" "$r"
  expect "no wrong element anywhere" "[.collectives.results[].rows[] | .out_of_place.wrong, (.in_place // {wrong: 0}).wrong] | all(. == 0)" "$r"
  expect "allreduce busbw = algbw x 2(n-1)/n" "[.collectives.results[] | select(.op == \"allreduce\") | .ranks as \$n | .rows[] | .out_of_place | (.busbw_GBps - .algbw_GBps * 2 * (\$n - 1) / \$n) | fabs < 1e-9] | all" "$r"
  expect "the scaling table has the three node counts" "[.collectives.scaling[] | [.groups[].nodes] == [1, 2, $nodes]] | all" "$r"
  expect "the MPI baseline is not judged by the NCCL scaling rule" "[.findings[] | select(.id == \"collective_scaling\") | .verdict] | all(. == \"skip\")" "$r"
  jq -r '.collectives.scaling[] | "\(.op) at \(.bytes) B: " + ([.groups[] | "\(.nodes) node(s) \(.busbw_GBps * 1000 | round / 1000) GB/s"] | join(", "))' "$r"
  finish
}

# 4. Faults: node3 at MTU 1500 fails its MTU rule and is named in the consistency finding;
#    node2's data link down shows its port DOWN.
step_faults() {
  # Inventory only: the assertions are about the MTU rules, and under TCG rxe pairs across an MTU
  # mismatch have stalled (CI), which then left a guest unable to keep mpirun's ssh session.
  accept fault-mtu 1 --fault node3:mtu:1500 -- --phases inventory
  expect "node3's RoCE MTU rule fails at 1024" "[.findings[] | select(.id == \"roce_mtu\" and .subject == \"node3/rxe0:1\")] | .[0].verdict == \"fail\" and .[0].measured.active_mtu == 1024" "$r"
  expect "node3's netdev MTU rule fails at 1500" "[.findings[] | select(.id == \"roce_netdev_mtu\" and .subject == \"node3/rxe0:1\")] | .[0].verdict == \"fail\" and .[0].measured.mtu == 1500" "$r"
  expect "the other nodes' MTU rules pass" "[.findings[] | select((.id == \"roce_mtu\" or .id == \"roce_netdev_mtu\") and (.subject | startswith(\"node3/\") | not)) | .verdict] | all(. == \"pass\")" "$r"
  expect "the consistency finding names node3, and only node3" "[.findings[] | select(.id == \"consistency_active_mtus\")] | .[0].verdict == \"fail\" and (.[0].hint | contains(\"node3\")) and (.[0].hint | contains(\"node1\") | not)" "$r"

  accept fault-link-down 1 --fault node2:link-down -- "${fault_phases[@]}" "${verbs_args[@]}" --verbs-tests write_bw
  expect "node2's port is reported DOWN" "[.nodes[] | select(.host == \"node2\") | .rdma_devices[].ports[].state] == [\"DOWN\"]" "$r"
  expect "node2's port_state finding fails and names the netdev" "[.findings[] | select(.id == \"port_state\" and .subject == \"node2/rxe0:1\")] | .[0].verdict == \"fail\" and (.[0].hint | contains(\"eth1\"))" "$r"
  expect "the other ports are ACTIVE" "[.nodes[] | select(.host != \"node2\") | .rdma_devices[].ports[].state] | all(. == \"ACTIVE\")" "$r"
  expect "node2's pairs are planned but not measured (port DOWN)" "[.verbs.pairs[] | select(.a == 1 or .b == 1) | .tests[].status] | all(. == \"not_measured\")" "$r"
  finish
}

# 6. The verbs matrix under faults: rate shaping on node3 flags its pairs slow and names node3;
#    node2's data link going down in the middle of the phase leaves error cells, and the run ends
#    with its report.
step_verbs_faults() {
  accept verbs-rate 1 --fault node3:rate:50mbit -- "${fault_phases[@]}" "${verbs_args[@]}"
  expect "writes towards node3 are outliers" "[.findings[] | select(.id == \"verbs_pair_outlier\" and (.subject | contains(\"-> node3/rxe0\") and endswith(\"(write_bw)\"))) | .verdict] | (length == 3 and all(. == \"fail\"))" "$r"
  expect "pairs without node3 are not outliers" "[.findings[] | select(.id == \"verbs_pair_outlier\" and (.subject | contains(\"node3\") | not)) | .verdict] | all(. == \"pass\")" "$r"
  expect "node3 is named as the suspect endpoint" "[.findings[] | select(.id == \"verbs_suspect_endpoint\") | .subject] == [\"node3/rxe0\"]" "$r"

  local out="$work/verbs-link-down" rc
  rm -rf "$out"
  local log="$work/verbs-link-down.log"
  "$lab" acceptance --out "$out" -- "${fault_phases[@]}" --verbs-duration 2 --verbs-lat-iterations 200 --verbs-tx-depth 32 >"$log" 2>&1 &
  local run=$!
  for _ in $(seq 1 300); do grep -q "verbs: starting" "$log" && break; sleep 1; done
  grep -q "verbs: starting" "$log" || fail "the verbs phase never started"
  "$lab" fault node2 link-down  # lands mid-phase: ssh into a loaded TCG guest takes ~20 s
  wait $run
  rc=$?
  "$lab" fault node2 clear
  grep "verbs: round" "$log" | cut -c1-200
  r="$out/report.json"
  [ -f "$r" ] || { fail "no report.json after the mid-phase link-down (log: $log)"; finish; }
  [ $rc -eq 1 ] && pass "mid-phase link-down: fabricproof exited 1 and wrote its report" || fail "mid-phase link-down: exited $rc"
  expect "the verbs phase completed every pair" "(.verbs.pairs | length) == 6 and ([.phases[] | select(.name == \"verbs\") | .verdict] == [\"fail\"])" "$r"
  expect "node2's pairs have error cells" "[.verbs.pairs[] | select(.a == 1 or .b == 1) | .tests[] | select(.status == \"error\")] | length > 0" "$r"
  # Not asserted: under TCG a neighbour's link flap has twice stalled an unrelated rxe pair (seen in
  # CI runs, not on hardware). Shown so that a trend would be noticed.
  echo "note: error cells on pairs without node2: $(jq -r '[.verbs.pairs[] | select(.a != 1 and .b != 1) | .tests[] | select(.status == "error") | .reason] | length' "$r")"
  expect "the errors name the verbs status" "[.verbs.pairs[].tests[] | select(.status == \"error\") | .reason | length > 0] | all" "$r"
  finish
}

# 5. lab down leaves no qemu process, tap or namespace; running it twice is safe.
step_down() {
  "$lab" down && pass "lab down" || fail "lab down failed"
  "$lab" down && pass "lab down again is safe" || fail "second lab down failed"
  pgrep -f "fabricproof-lab-node" >/dev/null && fail "qemu processes left: $(pgrep -af fabricproof-lab-node)" || pass "no qemu process left"
  ip netns list | grep -qw "${FABRICPROOF_LAB_NETNS:-fplab}" && fail "namespace left" || pass "no namespace left"
  ip -o link show | grep -Eq ': (mgmt|data)[0-9]+[:@]' && fail "taps left: $(ip -o link show | grep -E ': (mgmt|data)[0-9]+')" || pass "no tap left"
  finish
}

precheck
mkdir -p "$work"
case "${1:-}" in
  up) step_up ;;
  rxe-ports) step_rxe_ports ;;
  write-bw) step_write_bw ;;
  acceptance) step_acceptance ;;
  collectives) step_collectives ;;
  faults) step_faults ;;
  verbs-faults) step_verbs_faults ;;
  down) step_down ;;
  *) echo "usage: lab_test.sh up|rxe-ports|write-bw|acceptance|collectives|faults|verbs-faults|down"; exit 2 ;;
esac
