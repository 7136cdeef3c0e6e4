#!/usr/bin/env bash
# make figures: every side-by-side peer benchmark of Benchmarks/peers/ at a size that fits two
# cores (about 12 minutes after the builds), one after another, then docs/figures.md from what
# they measured (each script appends its figures to $FIGURES_OUT: Benchmarks/peers/figure.sh)
# and the README's headline figures from that page. A script that fails or passes its time
# limit is named on the page and its figures are left out (each script writes its own file,
# kept only when it ends well); the others go on.
#
#   make figures                   # everything
#   FIGURES_ONLY="big-photos video" make figures   # some scripts (the page then has only theirs)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK="$(mktemp -d "${TMPDIR:-/tmp}/easel-figures.XXXXXX")"
export SKIP_BUILD=1
: > "$WORK/figures.tsv"
log() { echo "figures: $*" >&2; }

scripts/install-deps.sh build test
for tool in wrk nginx varnishd; do
  command -v "$tool" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk nginx varnish >/dev/null; }
done
log "building release easel and the benchmark package"
# shellcheck disable=SC2046  # (the flag splits into its words on purpose)
swift build -c release --product easel $(scripts/build-id.sh) >&2
# shellcheck disable=SC2046
swift build -c release --product EaselFaces $(scripts/build-id.sh) >&2
swift build --package-path Benchmarks -c release >&2

cores=$(nproc)
# name, time limit in seconds, settings (the scripts' own knobs, sized for two cores)
runs=(
  "thumbnail|600|RUNS=2 REPEAT=3"
  "progressive|300|RUNS=3"
  "jobs-scaling|300|RUNS=2 REPEAT=2 JOBS=1 $cores"
  "big-photos|600|RUNS=3"
  "serve-vs-thumbor|600|PASSES=3 CLIENTS=4"
  "serve-vs-nginx|400|RUNS=2 DURATION=6"
  "serve-behind-varnish|300|RUNS=2 DURATION=6"
  "color-and-formats|600|REPS=3"
  "formats-in|600|REPS=2 SVG_BATCH=0"
  "video|400|REPS=3 BATCH=0"
  "diskcache-compare|600|REPEATS=3"
  "shared-tier|600|"
)
: > "$WORK/runs.tsv"
for run in "${runs[@]}"; do
  IFS='|' read -r name limit settings <<<"$run"
  if [ -n "${FIGURES_ONLY:-}" ] && [[ " $FIGURES_ONLY " != *" $name "* ]]; then continue; fi
  log "$name ($settings)"
  start=$(date +%s)
  status=0
  # (jobs-scaling's JOBS holds a space; every other setting is one word.)
  env_args=()
  if [ "$name" = jobs-scaling ]; then env_args=(RUNS=2 REPEAT=2 "JOBS=1 $cores"); else read -r -a env_args <<<"$settings"; fi
  : > "$WORK/$name.tsv"
  timeout --kill-after=10 "$limit" env FIGURES_OUT="$WORK/$name.tsv" "${env_args[@]}" bash "Benchmarks/peers/$name.sh" \
    > "$WORK/$name.out" 2> "$WORK/$name.err" || status=$?
  [ "$status" != 0 ] || cat "$WORK/$name.tsv" >> "$WORK/figures.tsv"
  seconds=$(( $(date +%s) - start ))
  printf '%s\t%s\t%s\t%s\n' "$name" "$settings" "$seconds" "$status" >> "$WORK/runs.tsv"
  if [ "$status" != 0 ]; then log "$name: exit $status after ${seconds}s; its last lines:"; tail -n 5 "$WORK/$name.err" >&2; fi
done

python3 scripts/figures.py "$WORK" docs/figures.md README.md
log "docs/figures.md and README.md written; each script's output is in $WORK"
