#!/usr/bin/env bash
# Make a Chromium available for the browser tests: Debian's package when we can
# install it (as root), else Playwright's own download.
set -euo pipefail
venv_python="${1:-.venv/bin/python}"

if command -v chromium >/dev/null 2>&1 || [ -n "${CHROMIUM_PATH:-}" ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's chromium (and a Chinese font for its screenshots) for the browser tests..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei >/dev/null
else
  "$venv_python" -m playwright install chromium
fi
