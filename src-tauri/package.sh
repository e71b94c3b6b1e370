#!/usr/bin/env bash
# Builds Cowork's Linux packages into target/bundle/: a .deb and an .rpm (the desktop entry, the
# icon, the cowork:// link handler, the .mcpb file type, both faces: `cowork-desktop` the window,
# `cowork` the command line) and a tarball for installing without root (its install.sh adds the
# menu entry and the command for the person alone). One program serves both faces (the `cowork`
# launcher runs it with --cli): two programs of ~60 MB each made a 45 MB .deb. Models and the
# browser driver are not in any package: Cowork downloads them when asked (crates/assets).
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
cargo build --locked --release -p cowork-desktop

# The Tauri CLI wants tauri.conf.json beside a Cargo.toml with a [package] (our root holds the
# workspace): it bundles from a stage holding both, with the config's paths made absolute.
stage="$CARGO_TARGET_DIR/bundle-stage"
rm -rf "$stage" && mkdir -p "$stage/src"
python3 - "$root" "$stage" <<'PY'
import json, sys
root, stage = sys.argv[1] + "/", sys.argv[2]
c = json.load(open(root + "tauri.conf.json"))
c["build"]["frontendDist"] = root + c["build"]["frontendDist"]
c["bundle"]["icon"] = [root + i for i in c["bundle"]["icon"]]
deb = c["bundle"]["linux"]["deb"]
deb["desktopTemplate"] = root + deb["desktopTemplate"]
deb["files"] = {k: root + v for k, v in deb["files"].items()}
deb["files"]["/usr/bin/cowork"] = root + "src-tauri/linux/cowork"
rpm = c["bundle"]["linux"].setdefault("rpm", {})
rpm["depends"] = ["webkit2gtk4.1", "libappindicator-gtk3", "bubblewrap"]
rpm["desktopTemplate"] = deb["desktopTemplate"]
rpm["files"] = deb["files"]
json.dump(c, open(stage + "/tauri.conf.json", "w"), indent=2)
open(stage + "/Cargo.toml", "w").write(
    '[package]\nname = "cowork-desktop"\nversion = "%s"\nedition = "2021"\n\n[workspace]\n' % c["version"])
open(stage + "/src/main.rs", "w").write("fn main() {}\n")
PY
bundles="deb,rpm"
[ "${1:-}" = "appimage" ] && bundles="deb,rpm,appimage"
(cd "$stage" && CI=true "$root/ui/node_modules/.bin/tauri" bundle --bundles "$bundles" --no-sign)
mkdir -p target/bundle
find "$CARGO_TARGET_DIR/release/bundle" -maxdepth 2 \( -name '*.deb' -o -name '*.rpm' -o -name '*.AppImage' \) -exec cp {} target/bundle/ \;
# Tauri's bundler packs the .deb with gzip; xz makes it 27 → 16 MB (dpkg reads both).
for deb in target/bundle/*.deb; do
  unpacked=$(mktemp -d)
  dpkg-deb -R "$deb" "$unpacked/root"
  dpkg-deb -Zxz -b "$unpacked/root" "$deb" >/dev/null
  rm -rf "$unpacked"
done

# The tarball: the program, its launcher, and what install.sh puts in the person's menu.
version=$(python3 -c "import json; print(json.load(open('tauri.conf.json'))['version'])")
tarball="cowork-$version-x86_64-linux"
rm -rf "$stage/$tarball" && mkdir -p "$stage/$tarball"
cp "$CARGO_TARGET_DIR/release/cowork-desktop" src-tauri/linux/cowork src-tauri/linux/install.sh \
  src-tauri/linux/cowork-mime.xml src-tauri/icons/icon.png "$stage/$tarball/"
cp src-tauri/linux/cowork.desktop "$stage/$tarball/cowork.desktop.in"
rm -f target/bundle/cowork-*.tar.*
tar -C "$stage" -cJf "target/bundle/$tarball.tar.xz" "$tarball"
ls -l target/bundle/
