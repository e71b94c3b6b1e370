#!/bin/sh
# Installs Cowork from this unpacked tarball for you alone, without root: a menu entry (which
# also opens cowork:// links and .mcpb files) and the `cowork` command in ~/.local/bin. The
# program stays in this folder. `sh install.sh --uninstall` removes both (your data stays in
# ~/.local/share/cowork). Cowork's window needs WebKitGTK 4.1 from your system
# (Debian/Ubuntu: sudo apt-get install libwebkit2gtk-4.1-0 libayatana-appindicator3-1).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data="${XDG_DATA_HOME:-$HOME/.local/share}"
entry="$data/applications/cowork.desktop"
icon="$data/icons/hicolor/512x512/apps/cowork.png"
mime="$data/mime/packages/cowork.xml"
bin="$HOME/.local/bin/cowork"
if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$entry" "$icon" "$mime" "$bin"
  command -v update-desktop-database >/dev/null && update-desktop-database -q "$data/applications" || true
  command -v update-mime-database >/dev/null && update-mime-database "$data/mime" || true
  echo "Cowork's menu entry and command are removed; your data is still in $data/cowork."
  exit 0
fi
mkdir -p "$(dirname "$entry")" "$(dirname "$icon")" "$(dirname "$mime")" "$(dirname "$bin")"
sed -e "s|{{name}}|Cowork|" -e "s|{{exec}}|$here/cowork-desktop|" -e "s|{{icon}}|cowork|" \
  "$here/cowork.desktop.in" > "$entry"
cp "$here/icon.png" "$icon"
cp "$here/cowork-mime.xml" "$mime"
ln -sf "$here/cowork" "$bin"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$data/applications" || true
command -v update-mime-database >/dev/null && update-mime-database "$data/mime" || true
command -v xdg-mime >/dev/null && xdg-mime default cowork.desktop x-scheme-handler/cowork || true
echo "Cowork is in your applications menu; the command line is $bin."
case ":$PATH:" in *":$HOME/.local/bin:"*) ;; *) echo "(add ~/.local/bin to your PATH to type 'cowork')" ;; esac
