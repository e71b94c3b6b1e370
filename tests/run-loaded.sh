#!/usr/bin/env bash
# The tests on a busy machine (issue 45): two `yes` processes keep both cores busy while the
# window suites (every window test binary) run WINDOW_RUNS times in a row, then the whole test
# phase of tests/run-all.sh FULL_RUNS times in a row. One line per run (pass or FAIL, seconds,
# nextest's summary, the load) in ~/.cache/cowork/loaded/summary.txt, each run's log beside it.
# Run tests/run-all.sh once first (setup, peers, the build).
#   bash tests/run-loaded.sh [WINDOW_RUNS=10] [FULL_RUNS=2]
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tests/build-env.sh
source tests/build-env.sh
export OMP_WAIT_POLICY=PASSIVE
out="$HOME/.cache/cowork/loaded"
mkdir -p "$out"
yes >/dev/null &
y1=$!
yes >/dev/null &
y2=$!
trap 'kill $y1 $y2 2>/dev/null' EXIT
one() { # name, then cargo nextest's arguments
  local name=$1 start r
  shift
  start=$(date +%s)
  if cargo nextest run --locked --no-fail-fast "$@" >"$out/$name.log" 2>&1; then r=pass; else r=FAIL; fi
  echo "$name: $r in $(($(date +%s) - start)) s: $(grep -E '^\s+Summary' "$out/$name.log" | tail -1 | sed 's/^ *//') (load $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$out/summary.txt"
}
for k in $(seq 1 "${1:-10}"); do
  one "window-$k" -p cowork-desktop --test window --test window_approvals --test window_chat --test window_gallery
done
for k in $(seq 1 "${2:-2}"); do
  one "full-$k" --workspace
done
