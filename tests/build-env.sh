# The one debug build the test command makes, sourced by tests/run-all.sh and the scripts it calls,
# so every cargo command there finds everything already built (same target dir, same flags; a
# different flag or package selection would compile the dependencies again).
#  - The target dir lives outside the clone (CI keeps it between runs); a fresh machine builds it.
#  - Clippy lints the workspace's crates while they compile (clippy-driver wraps rustc for them),
#    so linting costs no second pass over the dependencies as `cargo clippy` would.
#  - mold, when installed (setup installs it), links the many test binaries.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cowork/target}"
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
# benchmark smoke runs and the tests then use.
build_everything() {
  cargo test --locked --workspace --all-targets --no-run "$@"
}
