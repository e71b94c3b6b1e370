#!/usr/bin/env bash
# Runs every test: unit, property, cross-crate and end-to-end (real SQLite files, real `cowork`
# processes killed with -9), plus a smoke run of the gate benchmark. Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup.sh

# Reuse a target dir outside the clone when one exists (CI keeps it between runs); a fresh
# machine simply builds from scratch.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cowork/target}"
mkdir -p "$CARGO_TARGET_DIR"
export CARGO_TERM_COLOR=never
# Each build of a test leaves a new binary beside the old ones (hundreds of MB each in debug):
# keep the newest per name, or a kept target dir fills the disk within days.
# (A fresh target dir has no deps folder yet: nothing to prune.)
[ -d "$CARGO_TARGET_DIR/debug/deps" ] && find "$CARGO_TARGET_DIR/debug/deps" -maxdepth 1 -type f -perm -u+x -regex '.*-[0-9a-f]\{16\}' -printf '%T@ %p\n' 2>/dev/null \
  | sort -rn | awk '{ name = $2; sub(/-[0-9a-f]+$/, "", name); if (seen[name]++) print $2 }' | xargs -r rm -f || true

echo "== lint"
cargo fmt --all --check
cargo clippy --locked --workspace --all-targets -- -D warnings

echo "== build"
cargo build --locked --workspace --bins --tests

echo "== gate benchmark (smoke run, debug build; real figures: cargo bench -p cowork-core --bench gate)"
GATE_BENCH_CALLS=640 cargo test --locked -p cowork-core --bench gate
echo "== MCP gateway benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench mcp_gateway)"
MCP_BENCH_CALLS=200 cargo test --locked -p cowork-tests --bench mcp_gateway
echo "== files benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench files)"
FILES_BENCH_FILES=2000 FILES_BENCH_RUNS=1 cargo test --locked -p cowork-tests --bench files
echo "== personal benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench personal)"
CAL_BENCH_EVENTS=500 MAIL_BENCH_MESSAGES=50 BENCH_RUNS=3 cargo test --locked -p cowork-tests --bench personal
echo "== vault benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench vault)"
VAULT_BENCH_ENTRIES=2000 VAULT_BENCH_INGEST=100 BENCH_RUNS=3 cargo test --locked -p cowork-tests --bench vault
echo "== browser benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench browser)"
BROWSER_BENCH_ACTIONS=20 cargo test --locked -p cowork-tests --bench browser
echo "== chains benchmark (smoke run, debug build; real figures: cargo bench -p cowork-chains --bench overhead)"
CHAINS_BENCH_RUNS=2 cargo test --locked -p cowork-chains --bench overhead
echo "== web benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench web)"
WEB_BENCH_RUNS=5 cargo test --locked -p cowork-tests --bench web
echo "== voice benchmark (smoke run; real figures: cargo bench -p cowork-tests --bench voice)"
BENCH_RUNS=1 cargo test --locked -p cowork-tests --bench voice
echo "== AgentDojo replay (smoke run: banking, one user task; full: cargo bench -p cowork-tests --bench agentdojo)"
AGENTDOJO_SUITES=banking AGENTDOJO_USER_TASKS=1 cargo test --locked -p cowork-tests --bench agentdojo
echo "== window benchmark (smoke run, debug build; real figures: bash tests/bench-window.sh)"
bash tests/bench-window.sh --smoke

echo "== tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --locked --workspace --no-fail-fast
else
  cargo test --locked --workspace --no-fail-fast
fi
