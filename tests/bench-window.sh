#!/usr/bin/env bash
# Window performance, release build, under a private Xvfb:
#  - launch → interactive chat input (median of 5 launches; the UI reports when the input is
#    mounted and focused),
#  - idle memory: PSS of the app plus its WebKit processes, 3 s after ready,
#  - idle memory of a start hidden in the tray (`--hidden`, a tray host on a private session
#    bus, as a desktop panel is one): PSS 8 s after the icon registers (median of 3; 1 in smoke).
# Usage: bash tests/bench-window.sh   (run tests/setup.sh first)
#        bash tests/bench-window.sh --smoke   (CI: the debug build, one launch, and it fails
#        when start-up does what it must not — maps the embedding model, takes over 10 s, or
#        idles above a debug-build ceiling)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cowork/target}"
smoke=0
[ "${1:-}" = "--smoke" ] && smoke=1
if [ $smoke = 1 ]; then
  # The same build as the test command's (so in CI this builds nothing).
  # shellcheck source=tests/build-env.sh
  source tests/build-env.sh
  build_everything >/dev/null
  app="$CARGO_TARGET_DIR/debug/cowork-desktop"
  runs=1
else
  cargo build --release --locked -p cowork-desktop >/dev/null
  # The panel stand-in: its own memory is not measured, so the test command's debug build
  # serves (its flags, so nothing else compiles again).
  (source tests/build-env.sh && cargo build --locked -q -p cowork-tests --bin tray-host)
  app="$CARGO_TARGET_DIR/release/cowork-desktop"
  runs=5
fi
tray_host="$CARGO_TARGET_DIR/debug/tray-host"

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
failed=0
for i in $(seq 1 $runs); do
  home=$(mktemp -d)
  out=$(mktemp)
  COWORK_HOME=$home COWORK_REPORT_READY=1 DISPLAY=:93 "$app" >"$out" 2>/dev/null &
  pid=$!
  for _ in $(seq 1 200); do grep -q ready_ms "$out" && break; sleep 0.05; done
  ms=$(grep -o 'ready_ms=[0-9]*' "$out" | cut -d= -f2)
  ready+=("${ms:-99999}")
  if [ "$i" = "$runs" ]; then
    sleep 3
    idle_mb=$(( $(pss_kb $pid) / 1024 ))
    echo "idle PSS (app + WebKit processes): $idle_mb MB"
    if [ $smoke = 1 ]; then
      # The vault's model loads at the first embedding, never at start (it is ~90 MB mapped).
      if grep -q 'e5-small' /proc/$pid/maps 2>/dev/null; then
        echo "FAIL: the embedding model is mapped at start (it must load when first needed)"; failed=1
      fi
      # The debug build idles near 260 MB; the release build's target is 200 MB (full bench).
      if [ "$idle_mb" -gt 330 ]; then
        echo "FAIL: idle PSS $idle_mb MB is over the debug-build ceiling of 330 MB"; failed=1
      fi
    fi
  fi
  kill $pid; wait $pid 2>/dev/null || true
  rm -rf "$home" "$out"
done
sorted=($(printf '%s\n' "${ready[@]}" | sort -n))
median=${sorted[$(( ${#sorted[@]} / 2 ))]}
echo "launch → interactive input: median $median ms (runs: ${ready[*]})"

# Hidden in the tray: no window is made, so neither WebKit's processes nor GL belong here.
hidden=()
for i in $(seq 1 $(( smoke == 1 ? 1 : 3 ))); do
  session=$(mktemp -d)
  home=$(mktemp -d)
  bus="unix:path=$session/bus"
  dbus-daemon --session --nofork --nopidfile --address="$bus" >/dev/null 2>&1 &
  bus_pid=$!
  for _ in $(seq 50); do [ -e "$session/bus" ] && break; sleep 0.1; done
  tray_out=$(mktemp)
  "$tray_host" "$bus" >"$tray_out" 2>&1 &
  tray_pid=$!
  for _ in $(seq 100); do grep -q ready "$tray_out" && break; sleep 0.1; done
  COWORK_HOME=$home XDG_RUNTIME_DIR=$session DBUS_SESSION_BUS_ADDRESS=$bus DISPLAY=:93 \
    "$app" --hidden >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 300); do grep -q icon "$tray_out" && break; sleep 0.1; done
  if ! grep -q icon "$tray_out"; then
    echo "FAIL: a --hidden start registered no tray icon"; failed=1
  fi
  sleep 8
  kb=$(pss_kb $pid)
  hidden+=("$(( kb / 1024 ))")
  if grep -qE 'libLLVM|/dri/' /proc/$pid/maps 2>/dev/null; then
    echo "FAIL: a --hidden start loaded GL (mesa's llvmpipe)"; failed=1
  fi
  kill $pid $tray_pid $bus_pid 2>/dev/null || true
  wait $pid $tray_pid $bus_pid 2>/dev/null || true
  rm -rf "$session" "$home" "$tray_out"
done
sorted=($(printf '%s\n' "${hidden[@]}" | sort -n))
hidden_mb=${sorted[$(( ${#sorted[@]} / 2 ))]}
echo "idle PSS hidden in the tray (every process, 8 s after the icon): median $hidden_mb MB (runs: ${hidden[*]})"
# The debug build idles hidden near 140 MB; the release build's target is 100 MB (full bench).
if [ $smoke = 1 ] && [ "$hidden_mb" -gt 220 ]; then
  echo "FAIL: hidden idle PSS $hidden_mb MB is over the debug-build ceiling of 220 MB"; failed=1
fi
if [ $smoke = 1 ] && [ "$median" -gt 10000 ]; then
  echo "FAIL: the window took over 10 s to become interactive"; failed=1
fi
exit $failed
