#!/usr/bin/env bash
# Installs what `make test` needs beyond Go, when missing: Node.js (runs the GOOS=js test binaries),
# npm (installs wrangler for the Worker's end-to-end test) and Chromium (the browser tests).
set -euo pipefail
need=()
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
command -v chromium >/dev/null 2>&1 || [ -n "${BERTLAB_CHROME:-}" ] || need+=(chromium chromium-driver)
[ ${#need[@]} -eq 0 ] && exit 0
echo "make test needs: ${need[*]}; installing with apt-get"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "run as root or install: apt-get install -y ${need[*]}" >&2; exit 1; }
  sudo=sudo
fi
$sudo apt-get update
$sudo apt-get install -y "${need[@]}"
