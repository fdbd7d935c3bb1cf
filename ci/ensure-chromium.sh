#!/usr/bin/env bash
# Makes sure headless Chromium is at /usr/bin/chromium for the browser test of report.html
# (reports/html_browser_test.go): does nothing when it is there, else installs the Debian package
# chromium with apt-get (as root, or through sudo), and fails with a clear message when it cannot.
# Idempotent; safe to call on every run of ci/test.sh.
set -euo pipefail

readonly CHROMIUM=/usr/bin/chromium

die() { printf 'ci/ensure-chromium.sh: %s\n' "$*" >&2; exit 1; }

[ -x "$CHROMIUM" ] && exit 0

printf '==> %s\n' "Chromium is not installed at $CHROMIUM; installing the Debian package chromium"
command -v apt-get >/dev/null ||
  die "apt-get not found: install Chromium so that $CHROMIUM exists (Debian/Ubuntu package chromium), then rerun"

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || die "installing chromium needs root; rerun as root or install it: apt-get install -y chromium"
  sudo=(sudo -n)
fi

export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q ||
  die "apt-get update failed (no network or no root?); install it by hand: apt-get install -y chromium"
"${sudo[@]}" apt-get install -y -q chromium ||
  die "apt-get install chromium failed; the browser test of report.html needs $CHROMIUM"

[ -x "$CHROMIUM" ] || die "the chromium package is installed but $CHROMIUM is missing"
printf '==> %s\n' "installed $("$CHROMIUM" --version 2>/dev/null || echo chromium)"
