#!/usr/bin/env bash
# Debian's chromium for the web page's end-to-end test (tests/e2e/test_ui_browser.py),
# installed with apt when missing. Playwright's own browser download is not used (and
# not reachable here): the test drives /usr/bin/chromium through Playwright for Python,
# which the dev extra installs. Usage: bash infra/browser.sh   (as root, or with sudo)
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  chromium --version 2>/dev/null || true
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
chromium --version 2>/dev/null || true
