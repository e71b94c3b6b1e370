#!/usr/bin/env bash
# Builds Cowork's Linux installer into target/bundle/: a .deb with the desktop entry, the icon,
# the cowork:// link handler and the .mcpb file type.
#   bash src-tauri/package.sh
# The program is a release build without debug info, stripped, in its own target dir (the
# README's `cargo run --release` keeps its line tables). The package never touches the person's
# data (~/.local/share/cowork): removing or purging it keeps everything they made.
# AppImage: tauri's bundler downloads linuxdeploy from GitHub at bundle time; where GitHub is
# reachable, `bash src-tauri/package.sh appimage` adds one.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
bash tests/setup.sh >/dev/null
export CARGO_TARGET_DIR="${COWORK_DIST_TARGET:-$HOME/.cache/cowork/target-dist}"
export CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=true CARGO_TERM_COLOR=never
# Both faces in one package: the window (`cowork-desktop`, the desktop entry's program) and the
# command line (`cowork`, which the README documents).
cargo build --locked --release -p cowork-desktop -p cowork-cli

# The Tauri CLI wants tauri.conf.json beside a Cargo.toml with a [package] (our root holds the
# workspace): it bundles from a stage holding both, with the config's paths made absolute.
stage="$CARGO_TARGET_DIR/bundle-stage"
rm -rf "$stage" && mkdir -p "$stage/src"
python3 - "$root" "$stage" "$CARGO_TARGET_DIR/release/cowork" <<'PY'
import json, sys
root, stage, cli = sys.argv[1] + "/", sys.argv[2], sys.argv[3]
c = json.load(open(root + "tauri.conf.json"))
c["build"]["frontendDist"] = root + c["build"]["frontendDist"]
c["bundle"]["icon"] = [root + i for i in c["bundle"]["icon"]]
deb = c["bundle"]["linux"]["deb"]
deb["desktopTemplate"] = root + deb["desktopTemplate"]
deb["files"] = {k: root + v for k, v in deb["files"].items()}
deb["files"]["/usr/bin/cowork"] = cli
json.dump(c, open(stage + "/tauri.conf.json", "w"), indent=2)
open(stage + "/Cargo.toml", "w").write(
    '[package]\nname = "cowork-desktop"\nversion = "%s"\nedition = "2021"\n\n[workspace]\n' % c["version"])
open(stage + "/src/main.rs", "w").write("fn main() {}\n")
PY
bundles="deb"
[ "${1:-}" = "appimage" ] && bundles="deb,appimage"
(cd "$stage" && CI=true "$root/ui/node_modules/.bin/tauri" bundle --bundles "$bundles" --no-sign)
mkdir -p target/bundle
find "$CARGO_TARGET_DIR/release/bundle" -maxdepth 2 \( -name '*.deb' -o -name '*.AppImage' \) -exec cp {} target/bundle/ \;
ls -l target/bundle/
