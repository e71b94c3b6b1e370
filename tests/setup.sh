#!/usr/bin/env bash
# Installs what building and testing Cowork needs on Debian 12, idempotently: a second run
# installs nothing. Run as root or with sudo available.
set -euo pipefail

need_rust="1.88"
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found. Install Rust >= $need_rust with rustup (https://rustup.rs), then re-run." >&2
  echo "setup: (Debian 12's own rustc is 1.63, too old for this workspace.)" >&2
  exit 1
fi
have_rust=$(rustc --version | awk '{print $2}')
if [ "$(printf '%s\n%s\n' "$need_rust" "$have_rust" | sort -V | head -n1)" != "$need_rust" ]; then
  echo "setup: rustc $have_rust is older than $need_rust: run 'rustup update stable'." >&2
  exit 1
fi

# Debian packages: a C compiler for the bundled SQLite. (The window, mail, calendar, browser and
# voice issues add theirs here.)
packages=(build-essential pkg-config)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  # The image deletes cached .debs after each dpkg run; parallel installs can race: retry.
  for attempt in 1 2 3 4; do
    if DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"; then break; fi
    [ "$attempt" = 4 ] && { echo "setup: apt-get install ${missing[*]} failed" >&2; exit 1; }
    sleep 2
  done
fi
echo "setup: ok (rustc $have_rust)"
