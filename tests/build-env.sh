# The one debug build the test command makes, sourced by tests/run-all.sh and the scripts it calls,
# so every cargo command there finds everything already built (same target dir, same flags; a
# different flag or package selection would compile the dependencies again).
#  - The target dir lives outside the clone (CI keeps it between runs); a fresh machine builds it.
#  - Clippy lints the workspace's crates while they compile (clippy-driver wraps rustc for them),
#    so linting costs no second pass over the dependencies as `cargo clippy` would.
#  - mold, when installed (setup installs it), links the many test binaries.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cowork/target}"
mkdir -p "$CARGO_TARGET_DIR"
export CARGO_TERM_COLOR=never
clippy_driver="$(command -v clippy-driver || true)"
if [ -z "$clippy_driver" ]; then
  echo "clippy-driver not found: run 'rustup component add clippy' (tests/setup.sh does)." >&2
  exit 1
fi
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
export CLIPPY_ARGS="-Dwarnings"
if command -v mold >/dev/null 2>&1; then
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C link-arg=-fuse-ld=mold"
fi

# Every target of every crate (lib, bins, tests, benches in the test profile), linted: what the
# benchmark smoke runs and the tests then use. What it built is listed (cargo's JSON messages)
# for run_bench.
build_everything() {
  cargo test --locked --workspace --all-targets --no-run --message-format=json-render-diagnostics "$@" \
    >"$CARGO_TARGET_DIR/everything.json"
}

# Runs one benchmark as build_everything built it, from its package's folder as cargo would.
# Not through `cargo test --bench NAME`: with one target selected cargo resolves the
# dependencies' features for that target alone (dev-dependencies of the other crates drop out)
# and compiles them all again.
run_bench() {
  local name=$1 exe dir
  shift
  read -r exe dir < <(python3 - "$CARGO_TARGET_DIR/everything.json" "$name" <<'PY'
import json, os, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    t = m.get("target", {})
    if m.get("reason") == "compiler-artifact" and "bench" in t.get("kind", []) and t.get("name") == sys.argv[2] and m.get("executable"):
        print(m["executable"], os.path.dirname(m["manifest_path"]))
        break
PY
  )
  if [ -z "$exe" ]; then
    echo "run_bench: no benchmark named $name in the build (build_everything first)" >&2
    return 1
  fi
  (cd "$dir" && CARGO_MANIFEST_DIR="$dir" "$exe" "$@")
}
