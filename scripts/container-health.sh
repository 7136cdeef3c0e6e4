#!/bin/bash
# The container image's health check (its HEALTHCHECK; see Containerfile): GET /health from the
# easel serve in the same container, over bash's /dev/tcp, since the image has no HTTP client.
# Exits 0 when the answer is a 200 within 5 s. The port is EASEL_PORT's (8080 when unset): a
# port set in the config file instead needs EASEL_PORT too, or the check asks the wrong port.
set -euo pipefail
port="${EASEL_PORT:-8080}"
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
IFS= read -r -t 5 status <&3
exec 3<&-
[[ "$status" == "HTTP/1."[01]" 200 "* ]] || { echo "unhealthy: ${status%$'\r'}" >&2; exit 1; }
