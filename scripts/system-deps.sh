#!/usr/bin/env bash
# The system libraries Qt needs (even offscreen) and a Korean-capable font, on Debian/Ubuntu;
# the tools the packaging tests use (tests/packaging: .deb, .rpm, desktop entry, AppStream); and
# Debian's Chromium, which renders report.html headless in tests/html (the browser test); shellcheck,
# which checks scripts/gpu-check.sh (tests/test_gpu_check_script.py).
# Installs only what is missing, only as root with apt-get; otherwise says what to install.
set -u
missing=()
have_lib() { ldconfig -p 2>/dev/null | grep -q "$1"; }
have_lib 'libEGL.so.1'        || missing+=(libegl1)
have_lib 'libGL.so.1'         || missing+=(libgl1)
have_lib 'libxkbcommon.so.0'  || missing+=(libxkbcommon0)
have_lib 'libfontconfig.so.1' || missing+=(libfontconfig1)
have_lib 'libdbus-1.so.3'     || missing+=(libdbus-1-3)
have_lib 'libxcb-cursor.so.0' || missing+=(libxcb-cursor0)
have_lib 'libxkbcommon-x11.so.0' || missing+=(libxkbcommon-x11-0)
have_lib 'libxcb-icccm.so.4'  || missing+=(libxcb-icccm4)
have_lib 'libxcb-keysyms.so.1' || missing+=(libxcb-keysyms1)
have_lib 'libxcb-shape.so.0'  || missing+=(libxcb-shape0)
have_tool() { command -v "$1" >/dev/null 2>&1; }
have_tool dpkg-deb              || missing+=(dpkg)
have_tool dpkg-shlibdeps        || missing+=(dpkg-dev)
have_tool desktop-file-validate || missing+=(desktop-file-utils)
have_tool appstreamcli          || missing+=(appstream)
have_tool objdump               || missing+=(binutils)
have_tool rpmbuild              || missing+=(rpm)
have_tool shellcheck            || missing+=(shellcheck)
{ have_tool chromium || have_tool chromium-browser; } || missing+=(chromium)
if command -v fc-list >/dev/null 2>&1 && ! fc-list :lang=ko 2>/dev/null | grep -q .; then
  missing+=(fonts-noto-cjk)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing system packages Qt and the packaging tests need: ${missing[*]}"
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || echo "warning: could not install ${missing[*]}; the wizard may not start" >&2
else
  echo "note: install these system packages for the wizard: ${missing[*]}" >&2
fi
exit 0
