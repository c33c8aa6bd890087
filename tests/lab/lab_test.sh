#!/usr/bin/env bash
# The Soft-RoCE lab tests (ctest label `lab`). One step per ctest test, sharing one running lab:
#   up -> rxe-ports -> write-bw -> acceptance -> slurm -> collectives -> uplink -> faults -> config-faults -> verbs-faults
#   -> verbs-iterations -> soak -> lost-nodes -> cabling (a lab of two rails, LLDP) -> down
# cabling starts a lab of its own and leaves it for down: it follows lost-nodes, which leaves node3
# dead, so that the lab is started once for it, not twice (~50 s under TCG).
# Every fault is checked on its node and on no other. Faults that degrade are sized from the lab's
# own baseline, measured in the same step; faults that must land mid-run are triggered by the
# run's own output (lab acceptance --fault-at), so they land at the same step on any machine.
# Exit 77 (ctest: skipped) with the reason when this machine cannot run the lab at all.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
lab="$repo/scripts/lab/lab"
nodes=${FABRICPROOF_LAB_NODES:-4}
work=${FABRICPROOF_LAB_TEST_DIR:-$repo/build/lab-tests}
failures=0
# Short verbs runs: CI has 2 cores for 4 TCG VMs; the lab judges ratios, not absolute figures.
# 2 s per test, so the measured window (the middle half) is 1 s: one rxe retransmission (a lost
# frame on the guests' virtual NICs, 67 ms timeout, then go-back-N at TCG speed) cost ~0.3 s and
# put a healthy send_bw at 0.39x its peers in a 0.5 s window. With 128 x 64 KiB in flight, a starved guest's rxe can stall in retransmission
# (seen twice while another node's ssh ate the CPU); 32 in flight keeps it out of that corner.
# One pair at a time (isolated; lab acceptance's default): in concurrent rounds the 4 one-vCPU
# guests time-slice on 2 cores, and healthy pairs then spread 11x in latency and 5x in bandwidth.
verbs_base=(--verbs-mode isolated --verbs-duration 2 --verbs-tx-depth 32)
verbs_args=("${verbs_base[@]}" --verbs-lat-iterations 200)
# The collective sweeps (MPI over the management network) stay small, one timed call a size:
# correctness and the 1 -> 2 -> 4 node structure are what the lab shows; the fault steps leave them out.
coll_args=(--collective-engine mpi --max-bytes 256K --iters 1 --warmup 0)
fault_phases=(--phases "inventory,verbs")
# What the lab is (specs/lab-soft-roce.json): 4 nodes, one RoCE rxe device each at MTU 4096, no
# GPU (NCCL and GPUDirect waived), latency outliers failing. The guests see the repository at the
# same path (9p), so rank 0 reads it there.
lab_spec="$repo/specs/lab-soft-roce.json"
# The step's own limit in seconds (tests/CMakeLists.txt sets it, ctest's TIMEOUT 120 s beyond; none
# when run by hand): a `lab acceptance` still going then is ended, and the step fails with what the
# lab shows (finish) rather than being killed by ctest with its log cut (lab_lost-nodes, once).
step_limit=${FABRICPROOF_LAB_STEP_LIMIT:-0}

source "$repo/tests/scripts/skip_missing.sh"
skip() { skip_missing "$@"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); failed_checks+=("$*"); }
failed_checks=()
# What a run shows here (its whole output is in $work/NAME.log): the faults the lab applied, the
# verdict, the first findings that failed or warned (cut at 150 characters), a phase's error. CI
# shows the first ~9 KB of a failed test's output: a step's output must fit in it, or the check
# that failed is cut away (lab_verbs-faults printed 60 KB, then 12.6 KB with every finding line).
show_run() {
  awk '/^lab: (reusing|run ended|acceptance: fabricproof exited)/ { next }
    /^(lab: |note: |fabricproof: |  phase [a-z_]+ error|  not finished)/ { print substr($0, 1, 200); fflush(); next }
    /^  (FAIL|ERROR|WARN|NOT PROVEN) / { if (++shown <= 2) { print substr($0, 1, 150); fflush() } else more++ }
    END { if (more) print "  (" more " more finding line(s) in the log)" }'
}
pass() { echo "ok   $*"; }
expect() {  # description, jq filter over the report that must print true, report
  local got
  got=$(jq -r "$2" "$3" 2>&1)
  if [ "$got" = "true" ]; then pass "$1"; else fail "$1 (jq '$2' gave: $got)"; fi
}
# A dip its re-measurement did not repeat (measured.intermittent; --verbs-remeasure is on by
# default). The lab's 4 guests share the host's cores: a busy host once halved one direction of one
# pair for a second in CI (0.052 Gb/s against a typical 0.12), and once took node4 -> node1 to
# 0.075 Gb/s against a typical 0.161 (0.164 measured again). A true event the report must show,
# counted and printed here; a dip that repeats is not one.
unrepeated_dip='(.measured | type) == "object" and .measured.intermittent == true'
note_dips() {  # jq selection of findings, report
  local dips
  dips=$(jq -r "[.findings[] | select(($1) and $unrepeated_dip) | .subject] | join(\"; \")" "$2")
  [ -n "$dips" ] && echo "note: dip(s) that the re-measurement did not repeat: $dips"
}
# A healthy lab's verdict: pass, or warn where every finding below pass is an unrepeated dip.
expect_healthy() {  # report
  note_dips true "$1"
  expect "verdict pass (or warn for unrepeated dips only)" \
    ".verdict == \"pass\" or (.verdict == \"warn\" and ([.findings[] | select(.verdict == \"warn\" or .verdict == \"fail\")] | all($unrepeated_dip)))" "$1"
}
# Under a fault on node3, the pairs without node3: each finding of the rule passes or is an
# unrepeated dip. Such a pair failing twice, or a finding missing, fails the check.
expect_not_outliers() {  # rule id, number of findings expected for the pairs without node3, report
  local sel=".id == \"$1\" and (.subject | contains(\"node3\") | not)"
  note_dips "$sel" "$3"
  expect "pairs without node3 pass $1 (or dip once only)" \
    "[.findings[] | select($sel)] | (length == $2 and all(.verdict == \"pass\" or (.verdict == \"warn\" and $unrepeated_dip)))" "$3"
}
# A failed step leaves the lab's own evidence in the log: each VM, its data NIC as the host sees it
# (QEMU's virtio rings, the tap's counters) and as the guest counts it, the guests' last kernel
# messages, QEMU's stderr and Soft-RoCE's counters.
finish() {
  [ $failures -eq 0 ] && { echo "all checks passed"; exit 0; }
  echo "$failures check(s) failed:"
  printf '  %s\n' "${failed_checks[@]}"
  echo "the runs' whole output: $work/*.log; the lab now:"
  "$lab" status 2>&1
  "$lab" consoles 8 2>&1
  # Soft-RoCE's own counters, those not 0: a transport error (a PSN sequence error, a retransmission,
  # a request the responder refused as invalid) shows there and not on the consoles.
  # Into a file, not a pipe: ssh hands its output descriptors to the node's connection master,
  # which keeps them open after `timeout` ended the client; for a dead node, minutes (a
  # $(timeout 15 lab exec node3 ...) took 200 s after node3 was killed: lab_lost-nodes' ctest
  # timeouts whenever one of its checks failed).
  local i answer="$work/.node-answer"
  for i in $(seq 1 "$nodes"); do
    timeout 15 "$lab" exec "node$i" -- sh -c \
      'cd /sys/class/infiniband/rxe0/ports/1/hw_counters 2>/dev/null && grep -H . * | grep -v ":0$"' >"$answer" 2>&1
    echo "--- node$i rxe0 counters not 0: $(tr '\n' ' ' <"$answer")"
    # The guest's side of its data NIC's transmit queue (packets completed, kicks, timeouts), to
    # set beside the host's view in `lab status` when a transmit queue stalled.
    timeout 15 "$lab" exec "node$i" -- sh -c 'ethtool -S eth1 | grep -E "tx_queue_0_(packets|kicks|tx_timeouts)"' >"$answer" 2>&1
    echo "--- node$i eth1 transmit queue as the guest counts it: $(tr -s ' \n' ' ' <"$answer")"
  done
  exit 1
}
# `lab acceptance` into $work/NAME (log: $work/NAME.log), ended at the step's limit: then the step
# fails here, naming the processes of the run that were still there, with the lab's evidence.
acceptance_within_limit() {  # name, lab acceptance options...
  local name=$1 rc left=0 limit=()
  shift
  if [ "$step_limit" -gt 0 ]; then
    left=$((step_limit - SECONDS))
    [ $left -gt 0 ] || { fail "$name: not started, the step's ${step_limit} s are spent"; finish; }
    # timeout signals its whole process group: the lab script, its ssh into node1, the fault trigger.
    limit=(timeout --kill-after=10 "$left")
  fi
  "${limit[@]}" "$lab" acceptance --out "$work/$name" "$@" 2>&1 | tee "$work/$name.log" | show_run
  rc=${PIPESTATUS[0]}
  if [ ${#limit[@]} -gt 0 ] && { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; }; then
    echo "--- processes of the lab's runs on this host at the limit:"
    ps -eo pid,etimes,args | grep -E "fabricproof|mpirun|lab (acceptance|fault|exec)" | grep -Ev "grep|qemu-system"
    fail "$name: still running at the step's limit (${step_limit} s), ended after $left s; its log: $work/$name.log"
    local i  # the job inside the guests outlives its ssh: end it, so that the next step finds the lab idle
    for i in $(seq 1 "$nodes"); do timeout 15 "$lab" exec "node$i" -- pkill -KILL -f '[f]abricproof|[m]pirun|[o]rted' >/dev/null 2>&1; done
    finish
  fi
  return "$rc"
}

# Runs `lab acceptance` into $work/NAME, checks its exit code and that a report was written, and
# sets r to the report. Usage: accept NAME EXPECTED_EXIT_CODE [lab acceptance options...]
accept() {
  local name=$1 expected=$2 rc
  shift 2
  rm -rf "${work:?}/$name"
  local start=$SECONDS
  acceptance_within_limit "$name" "$@"
  rc=$?
  if [ $rc -eq 255 ]; then
    # 255 is mpirun losing a daemon (seen once in CI: an ssh session to a TCG guest dropped), not
    # fabricproof's verdict. Show the guests' consoles, then give the scenario one more try. The
    # retry is counted; a retry needed twice in a row fails the step.
    local previous
    previous=$(cat "$work/retried" 2>/dev/null || echo "")
    echo "note: $name: mpirun exited 255 (launcher failure); guest consoles, then one retry (previous retry: ${previous:-none})"
    "$lab" consoles
    [ -n "$previous" ] && fail "$name: a launcher retry was needed twice in a row (also in $previous)"
    echo "$name" >"$work/retried"
    rm -rf "${work:?}/$name"
    start=$SECONDS
    acceptance_within_limit "$name" "$@"
    rc=$?
  else
    rm -f "$work/retried"
  fi
  elapsed=$((SECONDS - start))
  r="$work/$name/report.json"
  [ -f "$r" ] || { fail "$name: no report.json in $work/$name"; finish; }
  [ $rc -eq "$expected" ] && pass "$name: fabricproof exited $rc (${elapsed} s)" || fail "$name: fabricproof exited $rc, expected $expected"
  # The report reads back against the published schema, as a later re-validation reads it to compare.
  local reread
  reread=$("${FABRICPROOF_BIN:-$repo/build/fabricproof}" report "$r" --format md --out "$work/$name/reread" 2>&1) \
    || fail "$name: the report does not read back: $reread"
}

# Seconds from the --fault-at trigger to the end of the run (the lab's log lines), and from the
# trigger to the report's finished_at: the run ends when the report is final, then mpirun gets the
# wrapper's exit grace (20 s) to go.
fault_time() { grep -o "fault-at '.*' at [0-9]*" "$work/$1.log" | grep -o '[0-9]*$' | head -1; }
since_fault() {
  local t end
  t=$(fault_time "$1")
  end=$(grep -o "run ended at [0-9]*" "$work/$1.log" | grep -o '[0-9]*$' | tail -1)
  echo $(( ${end:-$(date +%s)} - ${t:-0} ))
}
final_after_fault() { echo $(( $(jq -r '.finished_at | fromdateiso8601' "$work/$1/report.json") - $(fault_time "$1") )); }

# No failing or erroring finding names a node other than NODE (in its subject or in its hint,
# where consistency findings name the odd node).
only_about() {  # node, report
  expect "no failing finding names a node other than $1" \
    "[.findings[] | select(.verdict == \"fail\" or .verdict == \"error\") | (.subject + \" \" + .hint) | [scan(\"node[0-9]+\")] | map(select(. != \"$1\")) | length] | all(. == 0)" "$2"
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
  rm -rf "${work:?}"/*  # a report here is then one of this lab (baseline() relies on it)
  local start
  start=$(date +%s)
  "$lab" up --nodes "$nodes" || { fail "lab up --nodes $nodes"; finish; }
  pass "lab up: $nodes nodes in $(( $(date +%s) - start )) s"
  # The guests' memory barriers must reach the host CPU, or a virtio ring can stall (see SMP in
  # scripts/lab/lab). The nodes share one command line: node1 answers for all.
  local barriers
  barriers=$("$repo/scripts/lab/barrier-litmus" translation node1 2>&1) && pass "the guest's barriers are host barriers: ${barriers//$'\n'/; }" ||
    fail "the guest's barriers do not reach the host CPU: $barriers"
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
  # What a failed step prints to explain a stalled data NIC reads as it should: both of its virtio
  # rings (read from guest memory) on every node, never more waiting than a ring holds.
  local i line
  for i in $(seq 1 "$nodes"); do
    line=$("$lab" status 2>&1 | grep "^node$i running")
    if [[ "$line" =~ rx\ ring:\ ([0-9]+)\ of\ ([0-9]+)\ buffers\ free.*tx\ ring:\ ([0-9]+)\ of\ ([0-9]+)\ packets\ waiting ]] &&
       [ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[3]}" -le "${BASH_REMATCH[4]}" ]; then
      pass "lab status reads node$i's virtio rings: ${line#*data NIC: }"
    else
      fail "lab status does not read node$i's virtio rings: $line"
    fi
  done
  finish
}

# 3. lab acceptance on all nodes, judged against the lab's spec: 4 nodes, RoCE ports healthy,
#    software consistent, every pair measured, verdict pass. Then a spec drafted from this report
#    (the factory's birth certificate), which the Slurm step feeds back.
step_acceptance() {
  accept acceptance 0 -- --expect-nodes "$nodes" --spec "$lab_spec" "${verbs_args[@]}" "${coll_args[@]}"
  expect "every check of the lab spec passes" "[.findings[] | select(.id | startswith(\"spec_\")) | .verdict] | (length > 0 and all(. == \"pass\"))" "$r"
  expect "every pair of nodes is covered by the spec's verbs check" "[.findings[] | select(.id == \"spec_verbs_pair\")] | length == 0" "$r"
  expect "the phases the spec waives are skips with their reason, none not proven" "[.phases[] | select(.name == \"gpudirect\" or .name == \"nccl_audit\") | .verdict] == [\"skip\", \"skip\"]" "$r"
  local bin=${FABRICPROOF_BIN:-$repo/build/fabricproof}
  if "$bin" spec draft --from "$r" --out "$work/drafted.spec.json" --profile lab-soft-roce && "$bin" spec check "$work/drafted.spec.json"; then
    pass "spec draft from the acceptance report validates"
  else
    fail "spec draft from the acceptance report"
  fi
  expect "report lists $nodes nodes" "(.nodes | length) == $nodes" "$r"
  expect "hosts are node1..node$nodes" "[.nodes[].host] | sort == [range(1; $nodes + 1) | \"node\\(.)\"]" "$r"
  expect "every node has a RoCE port ACTIVE" "[.nodes[] | any(.rdma_devices[].ports[]; .state == \"ACTIVE\" and .link_layer == \"Ethernet\")] | all" "$r"
  expect "every port has active MTU 4096" "[.nodes[].rdma_devices[].ports[].active_mtu] | all(. == 4096)" "$r"
  expect "every port has a RoCE v2 GID index" "[.nodes[].rdma_devices[].ports[].roce_v2_gid_index] | all(. != null)" "$r"
  expect "every netdev has MTU 9000" "[.nodes[].rdma_devices[].ports[].netdev_mtu] | all(. == 9000)" "$r"
  expect "software is consistent across nodes" "[.findings[] | select(.id | startswith(\"consistency_\")) | .verdict] | all(. == \"pass\")" "$r"
  expect "node count matches --expect-nodes" "[.findings[] | select(.id == \"node_count\") | .verdict] == [\"pass\"]" "$r"
  expect "verbs phase ran and passed (or warned of unrepeated dips)" "[.phases[] | select(.name == \"verbs\") | .verdict] | . == [\"pass\"] or . == [\"warn\"]" "$r"
  expect "every off-diagonal write_bw cell is a measurement" "[.verbs.matrix.write_bw.cells | to_entries[] | .key as \$i | .value | to_entries[] | select(.key != \$i) | .value | type] | all(. == \"number\")" "$r"
  expect "every off-diagonal latency cell is a measurement" "[.verbs.matrix.write_lat.cells | to_entries[] | .key as \$i | .value | to_entries[] | select(.key != \$i) | .value | type] | all(. == \"number\")" "$r"
  expect "the matrix has $nodes x $nodes cells" "(.verbs.matrix.write_bw.cells | length) == $nodes" "$r"
  expect "SEND payloads verified without mismatch" "[.verbs.pairs[].tests[] | select(.test == \"send_bw\") | (.verified > 0 and .mismatches == 0)] | all" "$r"
  expect "the collectives ran on 1, 2 and $nodes nodes" "[.collectives.results[].nodes] == [1, 2, $nodes]" "$r"
  expect_healthy "$r"
  finish
}

# 3a. Slurm (issue 19): slurmctld on node1, slurmd and munged on every node (lab slurm-up), and
#     the run launched by `srun --mpi=pmix` instead of mpirun: the same nodes and verbs matrix, the
#     Slurm job in the report, and every node's route back to srun's node on the management network.
step_slurm() {
  local start=$SECONDS
  "$lab" slurm-up || { fail "lab slurm-up"; finish; }
  pass "lab slurm-up: slurmctld on node1, slurmd on $nodes nodes, all idle ($((SECONDS - start)) s)"
  # Fed back with --spec: the spec drafted from the acceptance step's report passes on the same lab
  # (it requires the phases that ran there: inventory, verbs, collectives).
  [ -f "$work/drafted.spec.json" ] || fail "no drafted spec from the acceptance step ($work/drafted.spec.json)"
  accept slurm 0 --launcher srun -- --phases inventory,verbs,collectives --expect-nodes "$nodes" --spec "$work/drafted.spec.json" \
    --verbs-tests write_bw "${verbs_args[@]}" "${coll_args[@]}"
  expect "every check of the drafted spec passes" "[.findings[] | select(.id | startswith(\"spec_\")) | .verdict] | (length > 0 and all(. == \"pass\"))" "$r"
  expect "launched by srun with PMIx" '.launcher.kind == "srun" and .launcher.wireup == "pmix"' "$r"
  expect "the report names the Slurm job, its $nodes nodes and tasks" \
    "(.launcher.slurm.job_id | length > 0) and .launcher.slurm.nodelist == \"node[1-$nodes]\" and .launcher.tasks == $nodes" "$r"
  expect "report lists $nodes nodes" "(.nodes | length) == $nodes" "$r"
  expect "hosts are node1..node$nodes" "[.nodes[].host] | sort == [range(1; $nodes + 1) | \"node\\(.)\"]" "$r"
  expect "the matrix has $nodes x $nodes cells" "(.verbs.matrix.write_bw.cells | length) == $nodes" "$r"
  expect "every off-diagonal write_bw cell is a measurement" "[.verbs.matrix.write_bw.cells | to_entries[] | .key as \$i | .value | to_entries[] | select(.key != \$i) | .value | type] | all(. == \"number\")" "$r"
  expect "every node reaches srun's node over the management network" \
    "[.findings[] | select(.id == \"management_plane\" and (.subject | endswith(\"route to the launch node\")))] | length == $nodes and all(.verdict == \"pass\" and .measured.launch_node == \"10.99.0.1\")" "$r"
  expect_healthy "$r"
  finish
}

# 3b. The collective sweeps across the VMs: 1 -> 2 -> 4 node scaling with the MPI engine, every
#     result element verified, busbw = algbw x the allreduce factor of each group.
step_collectives() {
  # One timed call a size and form, no warm-up: what this step checks is the structure, every
  # element and the busbw arithmetic, not the TCG VMs' figures; each call across 4 VMs is
  # latency-bound (this step took 4.4x its time under the 3x CPU emulation, with --iters 5).
  accept collectives 0 -- --phases collectives --collective-engine mpi --collective-ops allreduce,allgather,reduce_scatter \
    --max-bytes 256K --iters 1 --warmup 0
  expect "one group per node count: 1, 2, $nodes" "[.collectives.groups[].nodes] == [1, 2, $nodes]" "$r"
  expect "each group holds its nodes' ranks" "[.collectives.groups[] | (.ranks | length) == .nodes] | all" "$r"
  expect "three ops on each group" "[.collectives.results[] | \"\\(.op)@\\(.nodes)\"] | sort == ([\"allreduce\", \"allgather\", \"reduce_scatter\"] | map(. as \$o | [1, 2, $nodes] | map(\"\\(\$o)@\\(.)\")) | flatten | sort)" "$r"
  expect "every sweep completed up to 256 KiB" "[.collectives.results[] | .status == \"ok\" and .rows[-1].bytes == 262144] | all" "$r"
  expect "no wrong element anywhere" "[.collectives.results[].rows[] | .out_of_place.wrong, (.in_place // {wrong: 0}).wrong] | all(. == 0)" "$r"
  expect "allreduce busbw = algbw x 2(n-1)/n" "[.collectives.results[] | select(.op == \"allreduce\") | .ranks as \$n | .rows[] | .out_of_place | (.busbw_GBps - .algbw_GBps * 2 * (\$n - 1) / \$n) | fabs < 1e-9] | all" "$r"
  expect "the scaling table has the three node counts" "[.collectives.scaling[] | [.groups[].nodes] == [1, 2, $nodes]] | all" "$r"
  expect "the MPI baseline is not judged by the NCCL scaling rule" "[.findings[] | select(.id == \"collective_scaling\") | .verdict] | all(. == \"skip\")" "$r"
  jq -r '.collectives.scaling[] | "\(.op) at \(.bytes) B: " + ([.groups[] | "\(.nodes) node(s) \(.busbw_GBps * 1000 | round / 1000) GB/s"] | join(", "))' "$r"
  finish
}

# 3c. The uplink (the seed's second half). Each node has two links shaped to 10 Mbit/s behind a
#     core that hashes per flow (ECMP); the storage host sits behind 50 Mbit/s (scripts/lab/lab).
#     Ingest need 0.04 Gb/s, 10 Mbit/s per node: one flow stays on one link (~9.6 Mbit/s of payload)
#     and falls short, 16 parallel flows spread over both links (all 16 on one link: p = 2^-15) and
#     carry it, and all nodes together share the storage link. Then node2 with one link down: its
#     parallel flows fall to one link's rate and its share fails, on node2 only.
#     The rates are half of what they were (20 and 100 Mbit/s): under the 3x CPU emulation with a
#     1.5 ms period, 64 flows from four TCG guests at once carried only 59 Mbit/s in all, short of
#     the 80 the need then was; the guests' TCP, not the shaping, was the limit.
step_uplink() {
  local targets="storage:5201" i link=0.01 storage=0.05
  for i in $(seq 2 "$nodes"); do targets+=",storage:$((5200 + i))"; done
  local args=(--phases "inventory,uplink" --uplink-target "$targets" --uplink-seconds 4 --uplink-flows 16 --uplink-need 0.04)
  # The same run has the job's control path over the data fabric: mpirun's own TCP (and so its
  # address, which the ranks route back to) on eth1, the NIC under rxe0. A warning on every node,
  # naming eth1, and a warning only: the run still exits 0. (In this run, not one of its own: each
  # launch costs ~25 s, over a minute under the 3x CPU emulation.)
  accept uplink 0 --mpi-if eth1 -- "${args[@]}"
  expect "every node's route to the launch node warns: it leaves over the RDMA netdev eth1" \
    "[.findings[] | select(.id == \"management_plane\" and (.subject | endswith(\"route to the launch node\")))] | length == $nodes and all(.verdict == \"warn\" and .measured.interface == \"eth1\" and .measured.launch_node == \"10.99.1.1\")" "$r"
  jq -r '.uplink.nodes[] | "\(.host) via \(.path.interface): 1 flow \(.single.gbps * 1000 | round) Mb/s, \(.parallel.flows) flows \(.parallel.gbps * 1000 | round) Mb/s, together \(.together.gbps * 1000 | round) Mb/s"' "$r"
  expect "every node measured 1 flow, parallel flows and all together" "[.uplink.nodes[] | .single.status, .parallel.status, .together.status] | (length == 3 * $nodes and all(. == \"ok\"))" "$r"
  expect "the route to storage leaves through the service address's interface, not the fabric" "[.uplink.nodes[].path | .interface == \"uplink0\" and .rdma == false] | all" "$r"
  expect "one flow stays at one link's rate" "[.uplink.nodes[].single.gbps] | all(. <= $link * 1.05)" "$r"
  expect "parallel flows reach beyond one link (both links)" "[.uplink.nodes[] | .parallel.gbps >= $link * 1.3] | all" "$r"
  # Together: the aggregate over the window in which every node measured (the nodes' own averages
  # added up came to 53.9 Mb/s on this 50 Mbit/s link once, their windows not lined up).
  jq -r '.findings[] | select(.id == "uplink_aggregate") | "together: \(.measured.gbps * 1000 | round) Mb/s over the common \(.measured.common_window_s) s (the averages of the nodes added up: \(.measured.sum_of_node_averages_gbps * 1000 | round) Mb/s)"' "$r"
  expect "all nodes together share the storage link" "([.findings[] | select(.id == \"uplink_aggregate\") | .measured.gbps][0]) as \$t | ([.uplink.nodes[].parallel.gbps] | add) as \$p | \$t <= $storage * 1.05 and \$t < 0.8 * \$p" "$r"
  expect "one flow short of the share warns with the parallel-streams hint on every node" "[.findings[] | select(.id == \"uplink_single_flow\") | .verdict == \"warn\" and (.hint | contains(\"parallel streams\"))] | (length == $nodes and all)" "$r"
  expect "every node alone carries its share with parallel flows" "[.findings[] | select(.id == \"uplink_node_share\") | .verdict] | (length == $nodes and all(. == \"pass\"))" "$r"
  expect "all nodes together carry the need" "[.findings[] | select(.id == \"uplink_aggregate\") | .verdict] == [\"pass\"]" "$r"

  accept uplink-down 1 --fault node2:uplink-down -- "${args[@]}"
  jq -r '.uplink.nodes[] | "\(.host): 1 flow \(.single.gbps * 1000 | round) Mb/s, \(.parallel.flows) flows \(.parallel.gbps * 1000 | round) Mb/s"' "$r"
  expect "node2's parallel flows fall to one link's rate" "[.uplink.nodes[] | select(.host == \"node2\") | .parallel.gbps <= $link * 1.05] == [true]" "$r"
  expect "the other nodes still use both links" "[.uplink.nodes[] | select(.host != \"node2\") | .parallel.gbps >= $link * 1.3] | (length == $nodes - 1 and all)" "$r"
  expect "node2's share fails, and only node2's" "[.findings[] | select(.id == \"uplink_node_share\" and .verdict == \"fail\") | .subject | split(\" \")[0]] == [\"node2\"]" "$r"
  finish
}

# 4. Faults: node3 at MTU 1500 fails its MTU rule and is named in the consistency finding;
#    node2's data link down (carrier lost, QMP) shows its port DOWN. No other node is blamed.
step_faults() {
  # Inventory only: the assertions are about the MTU rules, and under TCG rxe pairs across an MTU
  # mismatch have stalled (CI), which then left a guest unable to keep mpirun's ssh session.
  accept fault-mtu 1 --fault node3:mtu:1500 -- --phases inventory
  expect "node3's RoCE MTU rule fails at 1024" "[.findings[] | select(.id == \"roce_mtu\" and .subject == \"node3/rxe0:1\")] | .[0].verdict == \"fail\" and .[0].measured.active_mtu == 1024" "$r"
  expect "node3's netdev MTU rule fails at 1500" "[.findings[] | select(.id == \"roce_netdev_mtu\" and .subject == \"node3/rxe0:1\")] | .[0].verdict == \"fail\" and .[0].measured.mtu == 1500" "$r"
  expect "the other nodes' MTU rules pass" "[.findings[] | select((.id == \"roce_mtu\" or .id == \"roce_netdev_mtu\") and (.subject | startswith(\"node3/\") | not)) | .verdict] | (length == 6 and all(. == \"pass\"))" "$r"
  expect "the consistency finding names node3, and only node3" "[.findings[] | select(.id == \"consistency_active_mtus\")] | .[0].verdict == \"fail\" and (.[0].hint | contains(\"node3\")) and (.[0].hint | contains(\"node1\") | not)" "$r"
  only_about node3 "$r"

  accept fault-link-down 1 --fault node2:link-down -- "${fault_phases[@]}" "${verbs_args[@]}" --verbs-tests write_bw
  expect "node2's port is reported DOWN" "[.nodes[] | select(.host == \"node2\") | .rdma_devices[].ports[].state] == [\"DOWN\"]" "$r"
  expect "node2's port_state finding fails and names the netdev" "[.findings[] | select(.id == \"port_state\" and .subject == \"node2/rxe0:1\")] | .[0].verdict == \"fail\" and (.[0].hint | contains(\"eth1\"))" "$r"
  expect "the other ports are ACTIVE" "[.nodes[] | select(.host != \"node2\") | .rdma_devices[].ports[].state] | all(. == \"ACTIVE\")" "$r"
  expect "node2's pairs are planned but not measured (port DOWN)" "[.verbs.pairs[] | select(.a == 1 or .b == 1) | .tests[].status] | all(. == \"not_measured\")" "$r"
  expect "the pairs without node2 are measured (3 pairs, both directions)" "[.verbs.pairs[] | select(.a != 1 and .b != 1) | .tests[].status] | (length == 6 and all(. == \"ok\"))" "$r"
  only_about node2 "$r"
  finish
}

# 4b. Faults of configuration, each on its own node and in a run of its own (so that one cannot
#     fail the run for the other): node2's clock 30 s ahead; node4 without its RDMA device, judged
#     against the lab spec. Each is caught on its node and on no other. Then a spec of 5 nodes on
#     this lab of 4: it fails whatever phases run (here the collectives alone).
step_config_faults() {
  accept config-clock 1 --fault node2:clock-offset:30 -- --phases inventory
  expect "node2's clock offset fails at about +30 s" "[.findings[] | select(.id == \"clock_offset\" and .verdict == \"fail\")] | (length == 1 and .[0].subject == \"node2\" and .[0].measured > 28 and .[0].measured < 32)" "$r"
  expect "the other clocks pass" "[.findings[] | select(.id == \"clock_offset\" and .subject != \"node2\") | .verdict] | (length == 3 and all(. == \"pass\"))" "$r"
  only_about node2 "$r"

  accept config-no-rdma 1 --fault node4:no-rdma -- --phases inventory --spec "$lab_spec"
  expect "node4 has no RDMA device" "[.nodes[] | select(.host == \"node4\") | .rdma_devices | length] == [0]" "$r"
  expect "the spec's device count fails on node4, and only there" "[.findings[] | select(.id == \"spec_rdma_count\" and .verdict == \"fail\") | .subject] == [\"node4\"]" "$r"
  expect "the verbs phase the spec requires fails as not run" "[.findings[] | select(.id == \"spec_phase\" and .subject == \"verbs\") | .verdict] == [\"fail\"]" "$r"
  expect "node4's missing HCA is named on node4" "[.findings[] | select((.verdict == \"fail\" or .verdict == \"warn\") and .id == \"hca_count\") | .subject] == [\"node4\"]" "$r"
  expect "the other nodes keep their rxe0" "[.nodes[] | select(.host != \"node4\") | .rdma_devices | length] == [1, 1, 1]" "$r"
  jq -r '.findings[] | select(.verdict == "fail" or .verdict == "warn") | "  \(.verdict) \(.id) \(.subject)"' "$r"

  jq '.nodes = {"count": 5} | .name = "five-nodes"' "$lab_spec" >"$work/five-nodes.spec.json"
  accept spec-five-nodes 1 -- --phases collectives --collective-engine mpi --max-bytes 4K --iters 1 --warmup 0 --spec "$work/five-nodes.spec.json"
  expect "a spec of 5 nodes fails on this lab of $nodes, with the collectives alone" "[.findings[] | select(.id == \"spec_nodes\") | .verdict == \"fail\" and .measured.nodes == $nodes] == [true]" "$r"

  # NCCL's view of the fabric, from the variables a user exports on the launch node: a GID index
  # that holds a link-local (or RoCE v1) GID, the bootstrap on the data NIC, a device that does not
  # exist. And the lab's virtio NICs have no DCB: recorded as unreadable with the errno.
  accept env-faults 1 --env NCCL_IB_GID_INDEX=0 --env NCCL_SOCKET_IFNAME=eth1 --env NCCL_IB_HCA=mlx5_0 -- --phases inventory
  expect "the GID index fails on every node's port" "[.findings[] | select(.id == \"nccl_gid_index\" and .verdict == \"fail\") | .subject] | sort == [\"node1/rxe0:1\", \"node2/rxe0:1\", \"node3/rxe0:1\", \"node4/rxe0:1\"]" "$r"
  expect "the bootstrap on the data NIC fails the management plane on every node" "[.findings[] | select(.id == \"management_plane\" and (.subject | endswith(\"NCCL_SOCKET_IFNAME\")) and .verdict == \"fail\")] | length == $nodes" "$r"
  expect "NCCL_IB_HCA naming a missing device fails on every node" "[.findings[] | select(.id == \"nccl_ib_hca\") | .verdict == \"fail\" and .measured.not_found == [\"mlx5_0\"]] | (length == $nodes and all)" "$r"
  expect "DCB on the virtio NICs is unreadable (a skip with the errno), not a pass or a fail" "[.findings[] | select(.id == \"roce_pfc\") | .verdict == \"skip\" and (.measured | contains(\"Operation not supported\"))] | (length == $nodes and all)" "$r"
  finish
}

# The healthy baseline faults are sized from, in $r: a matrix of this lab (lab_up empties $work)
# with every write_bw and write_lat cell measured, taken with the same verbs options: the
# acceptance step's, else one measured earlier by this function, else one measured now. Reusing
# the acceptance step's saves a launch (95 s under the 3x emulation).
baseline() {
  local whole="[.verbs.pairs[].tests[] | select(.test == \"write_bw\" or .test == \"write_lat\") | .status] | (length == 3 * $nodes * ($nodes - 1) / 2 and all(. == \"ok\"))"
  for r in "$work/acceptance/report.json" "$work/verbs-baseline/report.json"; do
    [ -f "$r" ] && jq -e "$whole" "$r" >/dev/null && { echo "baseline: the matrix of $r"; return; }
  done
  accept verbs-baseline 0 -- "${fault_phases[@]}" "${verbs_args[@]}" --verbs-tests write_bw,write_lat
}

# 6. The verbs matrix under faults, sized from a healthy baseline (baseline()): node3's data
#    link shaped to a quarter of the typical pair rate (writes towards it are outliers, node3 the
#    suspect); node3's data link delayed by ten times the typical latency (its pairs are latency
#    outliers at the profile's factor of 3); node2's data link going down in the middle of the
#    phase (error cells on node2's pairs only, and the run ends with its report).
step_verbs_faults() {
  baseline
  local rate_kbit delay_us
  rate_kbit=$(jq '[.verbs.pairs[].tests[] | select(.test == "write_bw" and .status == "ok") | .gbps] | sort | .[length / 2 | floor] * 1e6 / 4 | floor' "$r")
  delay_us=$(jq '[.verbs.pairs[].tests[] | select(.test == "write_lat" and .status == "ok") | .latency.p50_usec] | sort | .[length / 2 | floor] * 10 | floor' "$r")
  echo "baseline: typical write_bw $((rate_kbit * 4)) kbit/s, typical latency $((delay_us / 10)) us"
  [ "${rate_kbit:-0}" -gt 0 ] && [ "${delay_us:-0}" -gt 0 ] || { fail "no baseline figures"; finish; }

  accept verbs-rate 1 --fault "node3:rate:${rate_kbit}kbit" -- "${fault_phases[@]}" "${verbs_args[@]}" --verbs-tests write_bw
  expect "writes towards node3 are outliers" "[.findings[] | select(.id == \"verbs_pair_outlier\" and (.subject | contains(\"-> node3/rxe0\") and endswith(\"(write_bw)\"))) | .verdict] | (length == 3 and all(. == \"fail\"))" "$r"
  expect_not_outliers verbs_pair_outlier 6 "$r"
  expect "node3 is named as the suspect endpoint" "[.findings[] | select(.id == \"verbs_suspect_endpoint\") | .subject] == [\"node3/rxe0\"]" "$r"
  expect "node3's rounds ran again (write_bw only) and the dips repeated" \
    "(.verbs.remeasured | map(select(.a == 2 or .b == 2)) | length) == 3 and ([.verbs.remeasured[].tests[].test] | unique == [\"write_bw\"]) and ([.findings[] | select(.id == \"verbs_pair_outlier\" and .verdict == \"fail\") | .measured.intermittent] | (length == 3 and all(. == false)))" "$r"

  # Locate (issue 42) on the same fault, then on one link only (node1 <-> node3 shaped both ways,
  # each fine with the others): it names node3, then the pair, and nothing else. Every pair of 4
  # nodes is screened; the pairs run one at a time (the lab's 2 cores time-slice concurrent pairs).
  local locate_args=(--verbs-mode locate --verbs-locate-isolated --verbs-duration 2 --verbs-tx-depth 32 --verbs-tests write_bw)
  accept verbs-locate-node 1 --fault "node3:rate:${rate_kbit}kbit" -- "${fault_phases[@]}" "${locate_args[@]}"
  jq -r '.verbs.locate | "locate: \(.rounds) rounds, \(.pairs_tested) of \(.pairs_total) pairs", (.faults[].summary), (.unresolved[])' "$r"
  expect "locate names node3 as the node at fault, and nothing else" "[.verbs.locate.faults[] | [.kind, .hosts]] == [[\"node\", [\"node3\"]]]" "$r"
  expect "its verdict fails on the locate finding" "[.findings[] | select(.id == \"verbs_locate_fault\") | .verdict] == [\"fail\"]" "$r"
  expect "judged at the lab profile's threshold, half the healthy rate" ".verbs.locate.slow_below == 0.5" "$r"
  accept verbs-locate-link 1 --fault "node3:pair-rate:node1:${rate_kbit}kbit" -- "${fault_phases[@]}" "${locate_args[@]}"
  jq -r '.verbs.locate | "locate: \(.rounds) rounds, \(.pairs_tested) of \(.pairs_total) pairs", (.faults[].summary), (.unresolved[])' "$r"
  expect "locate names the node1 <-> node3 link, and nothing else" "[.verbs.locate.faults[] | [.kind, (.hosts | sort)]] == [[\"link\", [\"node1\", \"node3\"]]]" "$r"
  expect "the link's repeats are the pair's re-measurements" "[.verbs.remeasured[] | select([.a, .b] | sort == [0, 2])] | length >= 4" "$r"
  # Locate by latency (no bandwidth test asked for: pairs compared by write_lat's round trips per
  # second, slow beyond the profile's latency outlier factor) on node3's delayed link; then node3's
  # link pulled the moment locate's first round is printed: node3 named both times, nobody else.
  accept verbs-locate-delay 1 --fault "node3:delay:${delay_us}us" -- "${fault_phases[@]}" --verbs-mode locate --verbs-locate-isolated \
    --verbs-lat-iterations 50 --verbs-tests write_lat
  jq -r '.verbs.locate | "locate: \(.figure), \(.rounds) rounds", (.faults[].summary), (.unresolved[])' "$r"
  expect "locate by latency names node3, and nothing else" "[.verbs.locate.faults[] | [.kind, .hosts]] == [[\"node\", [\"node3\"]]] and (.verbs.locate.figure | startswith(\"write_lat\"))" "$r"
  accept verbs-locate-link-down 1 --fault-at "verbs locate 1: round 1 of" node3:link-down -- "${fault_phases[@]}" "${locate_args[@]}"
  jq -r '.verbs.locate | "locate: \(.rounds) rounds", (.faults[].summary), (.unresolved[])' "$r"
  expect "locate names node3 when its link goes down mid-run, and nothing else" "[.verbs.locate.faults[] | [.kind, .hosts]] == [[\"node\", [\"node3\"]]]" "$r"

  # 50 round trips, not 200: a delayed pair's ping-pong takes iterations x (round trip + delay),
  # and on a slow machine the typical latency the delay is sized from is itself long (10-15 ms
  # under the 3x CPU emulation, whose throttling stalls each round trip): 200 made this run 7.5
  # minutes there (six delayed pairs with the re-measurements). The median of 50 shows 10x as well.
  # Judged against the lab spec, which makes latency outliers fail: the run fails naming node3.
  accept verbs-delay 1 --fault "node3:delay:${delay_us}us" -- "${fault_phases[@]}" "${verbs_base[@]}" --verbs-lat-iterations 50 --verbs-tests write_lat \
    --spec "$lab_spec"
  expect "node3's latency pairs are outliers" "[.findings[] | select(.id == \"verbs_latency_outlier\" and (.subject | contains(\"node3\")) and .verdict == \"warn\")] | length == 3" "$r"
  expect_not_outliers verbs_latency_outlier 3 "$r"
  expect "node3 is named as the suspect endpoint" "[.findings[] | select(.id == \"verbs_suspect_endpoint\") | .subject] == [\"node3/rxe0\"]" "$r"
  expect "the spec's latency rule fails, naming node3" "[.findings[] | select(.id == \"spec_latency_outlier\") | .verdict == \"fail\" and .subject == \"node3/rxe0\"] == [true]" "$r"

  # The link goes down on the host side (QMP) the moment round 1's results are printed: round 2
  # (node2 <-> node3 in isolated mode) and every later pair of node2 run without it.
  accept verbs-link-down 1 --fault-at "round 1 of 6" node2:link-down -- "${fault_phases[@]}" "${verbs_args[@]}" --verbs-tests write_bw
  grep "verbs: round" "$work/verbs-link-down.log" | cut -c1-120
  expect "the verbs phase completed every pair and failed" "(.verbs.pairs | length) == 6 and ([.phases[] | select(.name == \"verbs\") | .verdict] == [\"fail\"])" "$r"
  expect "node2's pairs after the link went down have error cells" "[.verbs.pairs[] | select((.a == 1 or .b == 1) and .round > 0) | .tests[] | .status] | (length > 0 and all(. == \"error\"))" "$r"
  expect "pairs without node2 have no error cell" "[.verbs.pairs[] | select(.a != 1 and .b != 1) | .tests[].status] | all(. == \"ok\")" "$r"
  expect "the errors name the verbs status" "[.verbs.pairs[].tests[] | select(.status == \"error\") | .reason | length > 0] | all" "$r"
  "$lab" fault node2 clear
  finish
}

# 6b. Iteration mode has no length known in advance: one pair's write_bw sized to last ~30 s at the
#     fastest rate of the baseline, with --verbs-timeout 3, outlasts every wait of the pair (the
#     target's was 2 x 3 s + 10 s); the sender's progress notes keep the target waiting, and both
#     directions are measured. Uses the baseline of the verbs-faults step. Sized from
#     the fastest pair, not the typical one: node1 <-> node2 alone ran 1.7x the typical rate in CI.
step_verbs_iterations() {
  local fastest_kbit iterations
  baseline
  fastest_kbit=$(jq '[.verbs.pairs[].tests[] | select(.test == "write_bw" and .status == "ok") | .gbps] | max * 1e6 | floor' "$r")
  [ "${fastest_kbit:-0}" -gt 0 ] || { fail "no baseline figure"; finish; }
  iterations=$((fastest_kbit * 1000 / 8 / 65536 * 30))
  echo "baseline: fastest write_bw $fastest_kbit kbit/s; $iterations messages of 64 KiB last ~30 s at that rate"
  accept verbs-iterations 0 --hosts node1,node2 -- "${fault_phases[@]}" --verbs-tests write_bw --verbs-iterations "$iterations" \
    --verbs-size 65536 --verbs-tx-depth 32 --verbs-timeout 3
  expect "both directions measured all $iterations messages" "[.verbs.pairs[0].tests[] | select(.test == \"write_bw\") | .status == \"ok\" and .messages == $iterations] | (length == 2 and all)" "$r"
  expect "each direction outlasted the pair's waits (16 s)" "[.verbs.pairs[0].tests[] | .seconds > 16] | (length == 2 and all)" "$r"
  finish
}

# 6c. By hand, not in CI (three rounds of 2+ minutes each, where the 3x-slow CI has ~10 minutes to
#     spare): `FABRICPROOF_LAB_NODES=3 lab_test.sh up`, then `long-rounds`, then `down` (or any lab
#     of 3+ nodes). Iteration-mode streams longer than the round's budget on three nodes, one pair at
#     a time, so a rank idles in every round: rank 0 in round 1 (node2 <-> node3), another rank in
#     rounds 2 and 3. Their waits for the round's end go on while the ranks they wait for show signs
#     of life (with a fixed budget, 070e9f4 failed this step: rank_lost for node2 and node3, both
#     healthy, after round 1, verdict error).
#     Each direction sized to ~70 s at the baseline's fastest rate.
step_long_rounds() {
  local fastest_kbit iterations
  [ "$nodes" -ge 3 ] || skip "long-rounds needs a lab of 3 nodes or more (FABRICPROOF_LAB_NODES)"
  baseline
  fastest_kbit=$(jq '[.verbs.pairs[].tests[] | select(.test == "write_bw" and .status == "ok") | .gbps] | max * 1e6 | floor' "$r")
  [ "${fastest_kbit:-0}" -gt 0 ] || { fail "no baseline figure"; finish; }
  iterations=$((fastest_kbit * 1000 / 8 / 65536 * 70))
  # The round's budget (app/verbs_phase.cpp, round_budget): one pair a rank, 2 steps x (3 s + 3 s)
  # + 4 x 3 s + 60 s = 84 s; a rank outside the pair waits for rank 0's word 30 s beyond it.
  local budget=84
  echo "baseline: fastest write_bw $fastest_kbit kbit/s; $iterations messages of 64 KiB last ~70 s a direction at that rate"
  accept long-rounds 0 --hosts node1,node2,node3 -- "${fault_phases[@]}" --verbs-tests write_bw --verbs-iterations "$iterations" \
    --verbs-size 65536 --verbs-tx-depth 32 --verbs-timeout 3
  expect "no rank taken for lost" "[.findings[] | select(.id == \"rank_lost\")] | length == 0" "$r"
  expect "3 pairs, both directions measured all $iterations messages" \
    "[.verbs.pairs[].tests[] | select(.test == \"write_bw\") | .status == \"ok\" and .messages == $iterations] | (length == 6 and all)" "$r"
  expect "round 1 (rank 0 idle) outlasted the budget ($budget s)" "[.verbs.pairs[] | select(.round == 0) | [.tests[].seconds] | add] | (length == 1 and .[0] > $budget)" "$r"
  expect "rounds 2 and 3 (a rank idle) outlasted the budget and rank 0's word ($((budget + 30)) s)" \
    "[.verbs.pairs[] | select(.round > 0) | [.tests[].seconds] | add] | (length == 2 and all(. > $((budget + 30))))" "$r"
  expect_healthy "$r"
  finish
}

# 6c. The cabling (issue 43), on a lab of two data rails: each bridge a leaf that speaks LLDP
#     (leaf-rail0, leaf-rail1; port id = the node), lldpd on the guests' data NICs. A clean run
#     passes with every port's neighbour in the report and the verbs matrix on both rails; node3's
#     rail-0 cable moved onto leaf-rail1 fails naming node3, rxe0, leaf-rail1 and leaf-rail0; a node
#     without lldpd has its neighbours from the frames it hears (--lldp-listen); a port whose LLDP
#     is not heard is unread (not proven), never a pass. The lab stays on two rails for down (by
#     hand, `up` again before another step).
step_cabling() {
  check_transmit_timeouts  # of the lab the steps before ran on, before it goes
  "$lab" down >/dev/null 2>&1 || true
  "$lab" up --nodes "$nodes" --rails 2 >/dev/null || { fail "lab up --rails 2"; finish; }
  pass "lab up --rails 2"
  sleep 5  # two LLDP intervals of the leaves (2 s): every guest has heard its neighbours
  accept cabling-clean 0 -- --phases inventory,verbs --check-cabling --verbs-duration 2 --verbs-tx-depth 32 --verbs-tests write_bw
  jq -r '.nodes[] | .host as $h | .rdma_devices[] | .name as $d | .ports[] | "  \($h)/\($d): \(.neighbour.switch_name // "-") port \(.neighbour.switch_port // "-") \(.neighbour.unread // "")"' "$r"
  expect "every port's neighbour is its rail's leaf, the port named after its node" \
    "[.nodes[] | .host as \$h | .rdma_devices[] | (.name | ltrimstr(\"rxe\")) as \$rail | .ports[] | .neighbour.switch_name == (\"leaf-rail\" + \$rail) and .neighbour.switch_port == \$h] | (length == 2 * $nodes and all)" "$r"
  expect "the cabling rules pass on both rails" "[.findings[] | select(.id == \"cabling_rail\" and (.subject | startswith(\"rail \"))) | .verdict] == [\"pass\", \"pass\"]" "$r"
  expect "the verbs matrix ran rail by rail on both rails" "[.verbs.pairs[] | [.a, .b] as \$p | .tests[] | select(.status == \"ok\")] | length == 2 * 2 * $nodes * ($nodes - 1) / 2" "$r"
  expect "each pair is rail-matched" "[.verbs.endpoints as \$e | .verbs.pairs[] | \$e[.a].device == \$e[.b].device] | (length > 0 and all)" "$r"

  accept cabling-moved 1 --fault node3:cable-move:1 -- --phases inventory --check-cabling
  expect "node3's rxe0 fails, cabled to leaf-rail1 where rail 0's leaf is leaf-rail0" \
    "[.findings[] | select(.id == \"cabling_rail\" and .verdict == \"fail\" and (.subject | contains(\"/\"))) | [.subject, .measured.switch, .expected.switch]] == [[\"node3/rxe0:1\", \"leaf-rail1\", \"leaf-rail0\"]]" "$r"
  expect "its hint names node3, rxe0 and both leaves" "[.findings[] | select(.id == \"cabling_rail\" and .verdict == \"fail\" and (.subject | contains(\"/\"))) | .hint | test(\"node3 rxe0.*leaf-rail1.*leaf-rail0\")] == [true]" "$r"

  # node2 without lldpd: the run listens for the leaves' frames itself (--lldp-listen; they send
  # every 2 s) and reads the same neighbours.
  "$lab" exec node2 -- pkill -x lldpd
  accept cabling-frames 0 -- --phases inventory --check-cabling --lldp-listen 6
  expect "node2's ports read from the frames, the same leaves; the others from lldpd" \
    "[.nodes[] | .host as \$h | .rdma_devices[] | (.name | ltrimstr(\"rxe\")) as \$rail | .ports[] | .neighbour | .switch_name == (\"leaf-rail\" + \$rail) and .source == (if \$h == \"node2\" then \"lldp frames\" else \"lldpd\" end)] | (length == 2 * $nodes and all)" "$r"

  # node2's rail-1 port stops hearing LLDP (its leaf's speaker gone): unread, not proven.
  local pid
  pid=$(cat "${FABRICPROOF_LAB_DIR:-$repo/build/lab}/lldp-r1data2.pid" 2>/dev/null || true)
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  accept cabling-unheard 3 -- --phases inventory --check-cabling --lldp-listen 6
  expect "node2's rxe1 is unread (not proven), never a pass" \
    "[.findings[] | select(.subject == \"node2/rxe1:1\" and (.id | startswith(\"cabling\"))) | .verdict] == [\"not_proven\"]" "$r"
  expect "it says no frame came" "[.nodes[] | select(.host == \"node2\") | .rdma_devices[] | select(.name == \"rxe1\") | .ports[0].neighbour.unread | contains(\"no frame within 6 s\")] == [true]" "$r"
  finish
}

# 7. A node lost in the middle of a run: the run ends within its bound, exit 2, the report names
#    the node and the step in flight, and the results before it are kept. node3 frozen (its qemu
#    stopped) in the verbs matrix, then node3 dead (its qemu killed) in the collective sweeps. The
#    kill leaves the lab without node3: cabling, which starts a lab of its own, follows.
step_lost_nodes() {
  # One test (write_bw, 2 steps a pair): the round's deadline is what the run waits out, and fewer
  # steps make it shorter. Bound: that deadline (one pair: 2 steps x (2 s + 5 s timeout) + 4 x 5 s
  # + 60 s = 94 s) + 60 s, from the moment the fault lands.
  accept lost-hang 2 --fault-at "round 2 of 6" node3:hang -- "${fault_phases[@]}" "${verbs_args[@]}" --verbs-timeout 5 --verbs-tests write_bw
  local took final
  final=$(final_after_fault lost-hang)
  [ "$final" -le $((94 + 60)) ] && pass "node3 hang: the report was final ${final} s after the fault" || fail "node3 hang: the report was final ${final} s after the fault (bound 154 s)"
  took=$(since_fault lost-hang)
  [ "$took" -le $((final + 20 + 30)) ] && pass "node3 hang: the run ended ${took} s after the fault" || fail "node3 hang: ended ${took} s after the fault (bound: final + 20 s grace + 30 s)"
  expect "the report is final, verdict error" ".verdict == \"error\" and (has(\"in_flight\") | not)" "$r"
  expect "rank_lost names node3 and its pair in flight" "[.findings[] | select(.id == \"rank_lost\")] | (length == 1 and .[0].measured.host == \"node3\" and (.[0].measured.step | contains(\"node3/rxe0\")))" "$r"
  expect "the pairs of rounds 1 and 2 are kept" "[.verbs.pairs[] | select(.round < 2) | .tests[].status] | (length > 0 and all(. == \"ok\"))" "$r"
  expect "every node is in the report" "[.nodes[].host] | sort == [\"node1\", \"node2\", \"node3\", \"node4\"]" "$r"
  "$lab" fault node3 clear

  # node1 frozen: mpirun, the wrapper and rank 0 with it, so nothing on node1 can finish the report.
  # The run's ssh from the host gives up after 30 s of silence, and the lab (the job's outside, as a
  # scheduler would be) finalises the report naming node1. Bound: 30 s + 15 s (the check that node1
  # does not answer) + 30 s.
  accept lost-node1-hang 2 --fault-at "round 2 of 6" node1:hang -- "${fault_phases[@]}" "${verbs_args[@]}" --verbs-timeout 5 --verbs-tests write_bw
  took=$(since_fault lost-node1-hang)
  [ "$took" -le $((30 + 15 + 30)) ] && pass "node1 hang: the run ended ${took} s after the fault" || fail "node1 hang: ended ${took} s after the fault (bound 75 s)"
  expect "the report is final, verdict error, naming node1 as lost" \
    ".verdict == \"error\" and (has(\"in_flight\") | not) and ([.findings[] | select(.id == \"node_lost\") | .measured.host] == [\"node1\"])" "$r"
  expect "the step in flight is named: a round of the verbs phase" "[.findings[] | select(.id == \"run_incomplete\") | .measured.in_flight | test(\"^verbs: round [2-6] of 6\")] == [true]" "$r"
  "$lab" fault node1 clear
  for i in $(seq 1 "$nodes"); do timeout 15 "$lab" exec "node$i" -- pkill -KILL -f '[f]abricproof|[m]pirun|[o]rted' >/dev/null 2>&1; done

  # Bound: the collective timeout (15 s) + 60 s, from the moment the fault lands.
  accept lost-kill 2 --fault-at "on 4 node(s)" node3:kill -- --phases inventory,collectives --collective-engine mpi --max-bytes 64K \
    --iters 3 --warmup 1 --collective-timeout 15
  final=$(final_after_fault lost-kill)
  [ "$final" -le $((15 + 60)) ] && pass "node3 kill: the report was final ${final} s after the fault" || fail "node3 kill: the report was final ${final} s after the fault (bound 75 s)"
  took=$(since_fault lost-kill)
  [ "$took" -le $((final + 20 + 30)) ] && pass "node3 kill: the run ended ${took} s after the fault" || fail "node3 kill: ended ${took} s after the fault (bound: final + 20 s grace + 30 s)"
  expect "rank_lost names node3 in the 4-node sweep" "[.findings[] | select(.id == \"rank_lost\")] | (length == 1 and .[0].measured.host == \"node3\" and (.[0].measured.step | contains(\"on 4 node(s)\")))" "$r"
  expect "the 1- and 2-node sweeps are kept" "[.collectives.results[] | select(.nodes < 4) | .status] == [\"ok\", \"ok\"]" "$r"
  expect "no report of this run says pass" ".verdict == \"error\"" "$r"

  # node1 killed (node3 is dead from here on: node1 and node2 alone). Bound as the hang's.
  accept lost-node1-kill 2 --hosts node1,node2 --fault-at "verbs: starting" node1:kill -- "${fault_phases[@]}" "${verbs_args[@]}" \
    --verbs-timeout 5 --verbs-tests write_bw
  took=$(since_fault lost-node1-kill)
  [ "$took" -le $((30 + 15 + 30)) ] && pass "node1 kill: the run ended ${took} s after the fault" || fail "node1 kill: ended ${took} s after the fault (bound 75 s)"
  expect "the report is final, verdict error, naming node1 as lost" \
    ".verdict == \"error\" and (has(\"in_flight\") | not) and ([.findings[] | select(.id == \"node_lost\") | .measured.host] == [\"node1\"])" "$r"
  finish
}

# 8. The soak (burn-in), short: a healthy lab passes, every port sampled and every pass measured;
#    node2's data link pulled for 5 s after the second pass fails naming node2's port and the
#    interval it happened in, and node2's pairs show the dip; node3 hung in mid-soak ends the run
#    with the report on disk saying how far the soak got (its time line kept).
step_soak() {
  local load=(--phases inventory --soak-interval 10s --verbs-mode isolated --verbs-duration 1 --verbs-tx-depth 32 --collective-engine mpi --max-bytes 256K --iters 1 --warmup 0)
  local soak_args=("${load[@]}" --soak 60s)
  accept soak-healthy 0 -- "${soak_args[@]}"
  expect "the soak ran its minute in 3 passes or more, every figure ok" \
    ".soak.finished and .soak.ran_s >= 60 and (.soak.passes | length >= 3) and ([.soak.passes[].figures[].status] | all(. == \"ok\"))" "$r"
  expect "each pass measured 12 write_bw directions and the allreduce" "[.soak.passes[] | .figures | length] | all(. == 13)" "$r"
  expect "every node's port was sampled at the start, every 10 s and at the end" \
    "[.soak.samples[] | select(.ports | length == 1) | .host] | (group_by(.) | length == $nodes and all(length >= 6))" "$r"
  expect "no link went down and no error counter failed" "[.findings[] | select(.id == \"soak_link_down\" or .id == \"soak_port_errors\") | .verdict] | (length == 2 * $nodes and all(. == \"pass\"))" "$r"
  expect "the BER says it needs 125 minutes" "[.findings[] | select(.id == \"soak_ber\") | .verdict] | (length == $nodes and all(. == \"skip\"))" "$r"
  jq -r '.findings[] | select(.id == "soak_stability") | "  \(.subject): \(.verdict) worst \(.measured.worst_ratio)"' "$r"

  accept soak-link-flap 1 --fault-at "soak: pass 2 done" node2:link-flap:5 -- "${soak_args[@]}"
  local offset
  offset=$(( $(fault_time soak-link-flap) - $(jq -r '.soak.started_at | fromdateiso8601' "$r") ))
  echo "the link went down $offset s into the soak"
  expect "soak_link_down fails on node2/rxe0:1 and no other port" \
    "[.findings[] | select(.id == \"soak_link_down\" and .verdict == \"fail\") | .subject] == [\"node2/rxe0:1\"]" "$r"
  expect "its event lies around the minute the link went down ($offset s into the soak, down 5 s)" \
    "[.findings[] | select(.id == \"soak_link_down\" and .verdict == \"fail\") | .measured.events[0].between_s] | .[0] | (.[0] <= $offset + 7 and .[1] >= $offset - 2)" "$r"
  expect "the hint names the port and the minute" "[.findings[] | select(.id == \"soak_link_down\" and .verdict == \"fail\") | .hint] | .[0] | (contains(\"node2/rxe0 port 1\") and contains(\"(minute \"))" "$r"
  expect "node2's pairs show the dip (a failed or slow pass), the pairs without node2 none failed" \
    "([.findings[] | select(.id == \"soak_stability\" and .verdict == \"fail\" and (.subject | contains(\"node2/\")))] | length >= 1) and ([.soak.passes[].figures[] | select(.kind == \"verbs\" and (.hosts | index(\"node2\") | not)) | .status] | all(. == \"ok\"))" "$r"
  jq -r '.soak.passes[] | "  pass \(.index) \(.start_s | floor)-\(.end_s | floor) s: \([.figures[] | select(.hosts | index("node2")) | if .status == "ok" then (.value * 100 | floor / 100 | tostring) else "ERR" end] | join(" "))"' "$r"

  accept soak-hang 2 --fault-at "soak: pass 2 done" node3:hang -- "${load[@]}" --soak 10m --timeout 20 --verbs-timeout 5
  expect "the report is final, names node3, and keeps the soak so far (cut short)" \
    ".verdict == \"error\" and ([.findings[] | select(.id == \"rank_lost\") | .measured.host] | index(\"node3\")) and (.soak.finished | not) and (.soak.passes | length >= 2) and (.soak.samples | length >= $nodes)" "$r"
  expect "the soak's phase record says where it stopped" "[.phases[] | select(.name == \"soak\") | .verdict] == [\"error\"]" "$r"
  grep -q "cut short or still running" "$work/soak-hang/report.md" && pass "report.md says the soak was cut short" || fail "report.md does not say the soak was cut short"
  finish
}

# A guest whose data NIC stopped transmitting fails the steps that needed it; its kernel's
# watchdog says so on the console, and `lab status` counts it (seen twice on 2026-12-04).
check_transmit_timeouts() {
  local timeouts
  timeouts=$("$lab" status 2>&1 | grep "transmit timeout")
  [ -z "$timeouts" ] && pass "no guest reported a transmit timeout on its data NIC" || fail "a guest's data NIC stopped transmitting: $timeouts"
}

# 5. lab down leaves no qemu process, ssh master, tap or namespace; running it twice is safe.
step_down() {
  check_transmit_timeouts
  "$lab" down && pass "lab down" || fail "lab down failed"
  "$lab" down && pass "lab down again is safe" || fail "second lab down failed"
  pgrep -f "fabricproof-lab-node" >/dev/null && fail "qemu processes left: $(pgrep -af fabricproof-lab-node)" || pass "no qemu process left"
  ip netns list | grep -qw "${FABRICPROOF_LAB_NETNS:-fplab}" && fail "namespace left" || pass "no namespace left"
  pgrep -f "ControlPath=/run/${FABRICPROOF_LAB_NETNS:-fplab}-mux-" >/dev/null && fail "ssh masters left: $(pgrep -af "ControlPath=/run/${FABRICPROOF_LAB_NETNS:-fplab}-mux-")" || pass "no ssh master left"
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
  slurm) step_slurm ;;
  collectives) step_collectives ;;
  uplink) step_uplink ;;
  faults) step_faults ;;
  config-faults) step_config_faults ;;
  verbs-faults) step_verbs_faults ;;
  verbs-iterations) step_verbs_iterations ;;
  cabling) step_cabling ;;
  soak) step_soak ;;
  lost-nodes) step_lost_nodes ;;
  long-rounds) step_long_rounds ;;
  down) step_down ;;
  *) echo "usage: lab_test.sh up|rxe-ports|write-bw|acceptance|slurm|collectives|faults|config-faults|verbs-faults|cabling|soak|lost-nodes|long-rounds|down"; exit 2 ;;
esac
