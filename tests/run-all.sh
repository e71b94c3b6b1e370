#!/usr/bin/env bash
# Runs every test: unit, property, cross-crate and end-to-end (real SQLite files, real `cowork`
# processes killed with -9, real peers and the real window), plus a smoke run of each benchmark.
# Installs what it needs first. One debug build (tests/build-env.sh) serves lint, benchmarks and
# tests; each phase's time is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each phase's time, printed at the end (a failed run too): where a slow run spends it.
phase_times=()
phase_name=""
phase_start=$(date +%s)
run_start=$phase_start
phase() {
  local now
  now=$(date +%s)
  [ -n "$phase_name" ] && phase_times+=("$(printf '%5ss  %s' $((now - phase_start)) "$phase_name")")
  phase_name="$1"
  phase_start=$now
  [ -n "$1" ] && echo "== $1"
  return 0
}
report_times() {
  phase ""
  echo "== time by phase"
  printf '%s\n' "${phase_times[@]}"
  printf '%5ss  in all\n' $(($(date +%s) - run_start))
}
trap report_times EXIT

phase "setup: toolchain, Debian packages, UI"
bash tests/setup.sh build

# The tests' servers, models and corpora download (and llama.cpp's server builds, once) while
# the workspace compiles; niced, so the build keeps the cores it can use.
peers_log=$(mktemp)
nice -n 10 bash tests/setup.sh peers >"$peers_log" 2>&1 &
peers_pid=$!
trap 'kill $peers_pid 2>/dev/null || true; rm -f "$peers_log"; report_times' EXIT

# shellcheck source=tests/build-env.sh
source tests/build-env.sh
# Each build of a test leaves a new binary beside the old ones (hundreds of MB each in debug),
# and each change of a workspace crate a new library: keep the newest per name, or a kept target
# dir fills the disk within days (it did: 68 GB, when this used find's default regex dialect,
# where `\{16\}` matches nothing). Incremental caches are dropped too (21 GB seen); a fresh
# target dir has no deps folder yet: nothing to prune.
prune_newest() { sort -rn | awk '{ name = $2; sub(/-[0-9a-f]+(\.[a-z]+)?$/, "", name); if (seen[name]++) print $2 }' | xargs -r rm -f; }
deps="$CARGO_TARGET_DIR/debug/deps"
if [ -d "$deps" ]; then
  find "$deps" -maxdepth 1 -type f -perm -u+x -regextype posix-extended -regex '.*-[0-9a-f]{16}' -printf '%T@ %p\n' | prune_newest
  for ext in rlib rmeta; do
    find "$deps" -maxdepth 1 -type f -name "libcowork*.$ext" -printf '%T@ %p\n' | prune_newest
  done
  rm -rf "$CARGO_TARGET_DIR/debug/incremental"
fi

phase "lint and build (one build: clippy lints the workspace as it compiles)"
cargo fmt --all --check
# The UI gets the same care: Biome formats and lints ui/ (its rules and the few deliberate
# exceptions are in ui/biome.json and beside the code they excuse).
(cd ui && npx --no-install biome ci --colors=off .)
# The chat's state changes, as a pure reducer: checked without a page or a shell.
(cd ui && npm test --silent)
build_everything

phase "setup: waiting for the peers"
if ! wait $peers_pid; then
  cat "$peers_log"
  echo "setup's peers part failed (its output above)" >&2
  exit 1
fi
cat "$peers_log"

# The models and the browser driver, fetched by the `cowork` just built, exactly as an installed
# Cowork fetches them (the same code: manifest, resume, sha256). Their archives stay in the cache
# (--keep-downloads): tests/deb-install.sh serves them to the package as a loopback mirror.
phase "assets: cowork assets fetch"
"$CARGO_TARGET_DIR/debug/cowork" assets fetch --all --keep-downloads

# Benchmark smoke runs, of the build above (run_bench: no second resolution of features).
phase "benchmark smoke runs"
bench() { run_bench "$@"; }
echo "== gate benchmark (smoke run, debug build; real figures: cargo bench -p cowork-core --bench gate)"
GATE_BENCH_CALLS=640 bench gate
echo "== MCP gateway benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench mcp_gateway)"
MCP_BENCH_CALLS=200 bench mcp_gateway
echo "== files benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench files)"
FILES_BENCH_FILES=2000 FILES_BENCH_RUNS=1 bench files
echo "== personal benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench personal)"
CAL_BENCH_EVENTS=500 MAIL_BENCH_MESSAGES=50 BENCH_RUNS=3 bench personal
echo "== vault benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench vault)"
VAULT_BENCH_ENTRIES=2000 VAULT_BENCH_INGEST=100 BENCH_RUNS=3 bench vault
echo "== browser benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench browser)"
BROWSER_BENCH_ACTIONS=20 bench browser
echo "== chains benchmark (smoke run, debug build; real figures: cargo bench -p cowork-chains --bench overhead)"
CHAINS_BENCH_RUNS=2 bench overhead
echo "== web benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench web)"
WEB_BENCH_RUNS=5 bench web
echo "== voice benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench voice)"
BENCH_RUNS=1 bench voice
echo "== AgentDojo and AgentDyn replay (smoke run: banking and dailylife, one user task; full: cargo bench -p cowork-tests --bench agentdojo)"
AGENTDOJO_SUITES=banking,dailylife AGENTDOJO_USER_TASKS=1 bench agentdojo
echo "== window benchmark (smoke run, debug build; real figures: bash tests/bench-window.sh)"
bash tests/bench-window.sh --smoke

phase "tests"
# The e5 engine's and llama.cpp's OpenMP threads sleep when idle instead of spinning: two tests
# that both spin on two cores slow each other several times over (docs/benchmarks.md, "CI time").
export OMP_WAIT_POLICY=PASSIVE
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --locked --workspace --no-fail-fast
else
  cargo test --locked --workspace --no-fail-fast
fi
