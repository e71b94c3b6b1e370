#!/usr/bin/env bash
# Window launch → interactive and idle PSS of two release builds side by side: launches
# alternate under one Xvfb. Usage: build each commit with `cargo build --release -p cowork-desktop`
# and copy the binaries to /tmp/ab/before-desktop and /tmp/ab/after-desktop; RUNS=5 bash tests/bench-window-ab.sh
set -u
runs=${RUNS:-7}
Xvfb :94 -screen 0 1280x820x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null' EXIT
sleep 0.5
pss_kb() {
  local total=0 p
  for p in $(pstree -pT "$1" | grep -o '([0-9]*)' | tr -d '()'); do
    [ -r /proc/$p/smaps_rollup ] && total=$((total + $(awk '/^Pss:/ {print $2}' /proc/$p/smaps_rollup)))
  done
  echo $total
}
declare -A ready pss
for i in $(seq 1 $runs); do
  for which in before after; do
    app=/tmp/ab/$which-desktop
    home=$(mktemp -d); out=$(mktemp)
    COWORK_HOME=$home COWORK_REPORT_READY=1 DISPLAY=:94 "$app" >"$out" 2>/dev/null &
    pid=$!
    for _ in $(seq 1 200); do grep -q ready_ms "$out" && break; sleep 0.05; done
    ms=$(grep -o 'ready_ms=[0-9]*' "$out" | cut -d= -f2)
    ready[$which]+="${ms:-99999} "
    sleep 3
    pss[$which]+="$(( $(pss_kb $pid) / 1024 )) "
    kill $pid; wait $pid 2>/dev/null
    rm -rf "$home" "$out"
  done
done
median() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for which in before after; do
  echo "$which: launch → interactive median $(median "${ready[$which]}") ms (${ready[$which]}); idle PSS median $(median "${pss[$which]}") MB (${pss[$which]})"
done
