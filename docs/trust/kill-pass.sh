#!/usr/bin/env bash
# Kill pass over `colo calibrate run --fake-gpu` and `colo calibrate trace --fake-gpu`: starts a
# run, sends SIGKILL / SIGINT / SIGTERM at a random moment, resumes, N times per signal; after
# each complete run checks the store, the traces folder and --tmp (docs/trust/README.md).
#
# usage: docs/trust/kill-pass.sh [COLO_BINARY] [KILLS_PER_SIGNAL] [SEED]
#   (defaults: target/debug/colo, 30, 34); prints one line per kill and FAIL lines; exits 1 on
#   any failed check. Needs bash and python3; writes only under a mktemp -d folder.
set -u
set -m # background jobs in their own process group, SIGINT not ignored
COLO=$(realpath "${1:-target/debug/colo}")
N=${2:-30}
RANDOM=${3:-34}
W=$(mktemp -d /tmp/colo-kill-pass.XXXXXX)
trap 'rm -rf "$W"' EXIT
HERE=$(cd "$(dirname "$0")" && pwd)
FAILS=0
fail() {
    echo "FAIL: $*"
    FAILS=$((FAILS + 1))
}

# 27 records (9 set repeats alone, 6 pairs, 3 MPS pairs), 3 traces; `slow` sleeps its window,
# so a run takes about 5 s.
cat >"$W/plan.ron" <<'EOF'
(name: "kill", repeats: 3, window_s: 0.4, groups: [
    (id: "alone", mode: Exclusive, trace: true, sets: [["resnet18:128:32"], ["slow:1:1"], ["resnet50:64:224"]]),
    (id: "pairs", mode: Timeslice, sets: [["slow:1:1", "resnet18:128:32"], ["resnet50:64:224", "slow:2:1"]]),
    (id: "mps", mode: Mps, sets: [["slow:1:1", "resnet18:64:32"]]),
])
EOF
# 200 points to trace (about 1.5 s), one that crashes and one out of memory.
POINTS=(crash:1:1 oom:1:1)
for b in $(seq 1 100); do POINTS+=("resnet18:$b:32" "resnet50:$b:64"); done

# Runs `$@` in the background, signals it after a random 0..MAX_MS ms; sets RC.
signal_at_random() {
    local sig=$1 max_ms=$2 log=$3
    shift 3
    "$@" >/dev/null 2>>"$log" &
    local pid=$!
    local ms=$((RANDOM % max_ms))
    sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
    kill "-$sig" "$pid" 2>/dev/null
    wait "$pid"
    RC=$?
    DELAY=$ms
}

# Expected exit status of a signalled run: 130 (its handler) for INT/TERM, 137 for KILL; 0 if it
# finished first.
expect_rc() {
    local sig=$1 rc=$2 what=$3
    case "$sig:$rc" in
    KILL:137 | INT:130 | TERM:130 | *:0) ;;
    *) fail "$what: SIG$sig gave exit status $rc" ;;
    esac
}

check_tmp() {
    local tmp=$1 what=$2
    if [ -n "$(ls -A "$tmp" 2>/dev/null)" ]; then
        fail "$what: left in --tmp: $(ls -A "$tmp" | head -5 | tr '\n' ' ')"
    fi
}

run_pass() {
    local sig=$1 round=0 out tmp kills=0 finished=0
    out="$W/run-$sig-$round"
    tmp="$W/tmp-run-$sig"
    mkdir -p "$tmp"
    local args=(calibrate run "$W/plan.ron" --out "$out" --fake-gpu --tmp "$tmp")
    for i in $(seq 1 "$N"); do
        signal_at_random "$sig" 4000 "$W/run.log" "$COLO" "${args[@]}"
        expect_rc "$sig" "$RC" "run $sig #$i"
        echo "run SIG$sig #$i after ${DELAY} ms: exit $RC"
        check_tmp "$tmp" "run $sig #$i"
        if [ "$RC" = 0 ]; then # complete: check it, start a fresh store
            finished=$((finished + 1))
            check_run "$out" "$tmp" "run $sig round $round"
            round=$((round + 1))
            out="$W/run-$sig-$round"
            args=(calibrate run "$W/plan.ron" --out "$out" --fake-gpu --tmp "$tmp")
        else
            kills=$((kills + 1))
        fi
    done
    "$COLO" "${args[@]}" >/dev/null 2>"$W/final.log" || fail "run $sig: final run exit $?"
    check_run "$out" "$tmp" "run $sig round $round"
    echo "run SIG$sig: $kills runs signalled mid-run, $finished finished first, $((round + 1)) stores checked"
}

check_run() {
    local out=$1 tmp=$2 what=$3
    check_tmp "$tmp" "$what"
    local summary_err
    summary_err=$("$COLO" calibrate summary "$out" 2>&1 >"$W/summary.txt") || fail "$what: summary failed: $summary_err"
    python3 "$HERE/kill_check.py" run "$out" "$W/summary.txt" "$summary_err" || fail "$what: store check"
}

trace_pass() {
    local sig=$1 round=0 out tmp kills=0 finished=0
    out="$W/trace-$sig-$round"
    tmp="$W/tmp-trace-$sig"
    mkdir -p "$tmp"
    for i in $(seq 1 "$N"); do
        signal_at_random "$sig" 2000 "$W/trace.log" \
            "$COLO" calibrate trace --fake-gpu --out "$out" --tmp "$tmp" "${POINTS[@]}"
        expect_rc "$sig" "$RC" "trace $sig #$i"
        echo "trace SIG$sig #$i after ${DELAY} ms: exit $RC"
        check_tmp "$tmp" "trace $sig #$i"
        if [ "$RC" = 0 ]; then
            finished=$((finished + 1))
            python3 "$HERE/kill_check.py" trace "$out" "${#POINTS[@]}" || fail "trace $sig round $round"
            round=$((round + 1))
            out="$W/trace-$sig-$round"
        else
            kills=$((kills + 1))
        fi
    done
    "$COLO" calibrate trace --fake-gpu --out "$out" --tmp "$tmp" "${POINTS[@]}" >/dev/null 2>&1 ||
        fail "trace $sig: final run exit $?"
    check_tmp "$tmp" "trace $sig final"
    python3 "$HERE/kill_check.py" trace "$out" "${#POINTS[@]}" || fail "trace $sig round $round"
    echo "trace SIG$sig: $kills runs signalled mid-run, $finished finished first, $((round + 1)) folders checked"
}

start=$(date +%s)
for sig in KILL INT TERM; do run_pass "$sig"; done
for sig in KILL INT TERM; do trace_pass "$sig"; done
echo "kill pass: $((3 * N)) run kills, $((3 * N)) trace kills, $(($(date +%s) - start)) s, $FAILS failed checks"
[ "$FAILS" = 0 ]
