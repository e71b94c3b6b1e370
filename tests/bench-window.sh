#!/usr/bin/env bash
# Window performance, release build, under a private Xvfb:
#  - launch → interactive chat input (median of 5 launches; the UI reports when the input is
#    mounted and focused),
#  - idle memory: PSS of the app plus its WebKit processes, 3 s after ready.
# Usage: bash tests/bench-window.sh   (run tests/setup.sh first)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cowork/target}"
cargo build --release --locked -p cowork-desktop >/dev/null
app="$CARGO_TARGET_DIR/release/cowork-desktop"

Xvfb :93 -screen 0 1280x820x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
sleep 0.5

pss_kb() { # PSS of a process and all its descendant processes (not threads), in kB
  local total=0 p
  for p in $(pstree -pT "$1" | grep -o '([0-9]*)' | tr -d '()'); do
    [ -r /proc/$p/smaps_rollup ] && total=$((total + $(awk '/^Pss:/ {print $2}' /proc/$p/smaps_rollup)))
  done
  echo $total
}

ready=()
for i in 1 2 3 4 5; do
  home=$(mktemp -d)
  out=$(mktemp)
  COWORK_HOME=$home COWORK_REPORT_READY=1 DISPLAY=:93 "$app" >"$out" 2>/dev/null &
  pid=$!
  for _ in $(seq 1 200); do grep -q ready_ms "$out" && break; sleep 0.05; done
  ms=$(grep -o 'ready_ms=[0-9]*' "$out" | cut -d= -f2)
  ready+=("${ms:-99999}")
  if [ "$i" = 5 ]; then
    sleep 3
    echo "idle PSS (app + WebKit processes): $(( $(pss_kb $pid) / 1024 )) MB"
  fi
  kill $pid; wait $pid 2>/dev/null || true
  rm -rf "$home" "$out"
done
sorted=($(printf '%s\n' "${ready[@]}" | sort -n))
echo "launch → interactive input: median ${sorted[2]} ms (runs: ${ready[*]})"
