#!/usr/bin/env bash
# Installs the system libraries Easel builds against, when missing (Debian/Ubuntu, as root or via sudo).
set -euo pipefail
needed=()
for package in libsqlite3-dev libjpeg62-turbo-dev libpng-dev libspng-dev libwebp-dev libgif-dev; do
  dpkg -s "$package" >/dev/null 2>&1 || needed+=("$package")
done
if [ ${#needed[@]} -gt 0 ]; then
  echo "installing: ${needed[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${needed[@]}"
fi
