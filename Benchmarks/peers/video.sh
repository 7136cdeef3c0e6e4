#!/usr/bin/env bash
# A video frame as a 256 px JPEG thumbnail (issue 27; goal ≥ 1× ffmpeg): `easel thumbnail --at N`
# against `ffmpeg -ss N -i FILE -frames:v 1 -vf scale=256:-2` — both whole processes, one
# decoder thread, on one core (taskset), release. The videos are made here by Debian's ffmpeg:
# 1080p H.264 with one key frame every 10 s (the worst seek: every frame from 0 to N decoded),
# 1080p H.264 with a key frame a second, and 720p VP9. Prints the median of REPS runs of each and
# ffmpeg's time over ours (above 1: easel is faster). Then the same in batches of BATCH files:
# one `easel thumbnail` over all of them against one ffmpeg a file (what a batch script runs),
# per file — easel's start (about 90 ms: the dynamic loader binds some thirty libraries) paid
# once instead of per file.
#
#   SKIP_BUILD=1 CPU=0 REPS=7 Benchmarks/peers/video.sh
set -euo pipefail
PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$(dirname "$PEERS")")"
CPU="${CPU:-0}"
REPS="${REPS:-7}"
BATCH="${BATCH:-10}"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  "$ROOT/scripts/install-deps.sh" build test
  nice -n 19 swift build --package-path "$ROOT" -c release --product easel -j 1 >/dev/null
fi
EASEL="${EASEL_BIN:-$ROOT/.build/release/easel}"
command -v ffmpeg >/dev/null || { echo "no ffmpeg (scripts/install-deps.sh test)" >&2; exit 1; }
work=$(mktemp -d); mkdir -p "$work/out"
trap 'rm -rf "$work"' EXIT
Q=(ffmpeg -hide_banner -loglevel error -y)
"${Q[@]}" -f lavfi -i "testsrc2=s=1920x1080:d=10:r=25" -pix_fmt yuv420p -c:v libx264 -preset veryfast -g 250 "$work/h264-gop10s.mp4"
"${Q[@]}" -f lavfi -i "testsrc2=s=1920x1080:d=10:r=25" -pix_fmt yuv420p -c:v libx264 -preset veryfast -g 25 "$work/h264-gop1s.mp4"
"${Q[@]}" -f lavfi -i "testsrc2=s=1280x720:d=10:r=25" -pix_fmt yuv420p -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 2M -g 250 "$work/vp9-720p.webm"
# shellcheck source=Benchmarks/peers/figure.sh
. "$PEERS/figure.sh"
ffmpeg_version=$(ffmpeg -version | head -1 | awk '{print $3}')
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Wall seconds of one command, to the microsecond.
timed() { local start end; start=$(date +%s%N); "$@" >/dev/null 2>&1; end=$(date +%s%N); echo "scale=6; ($end - $start) / 1000000000" | bc; }
echo "## A video frame as a 256 px JPEG: easel vs ffmpeg (whole processes, one core, median of $REPS)"
echo "| video | second | ffmpeg ms | easel ms | ffmpeg / easel |"
echo "|---|---|---|---|---|"
for video in h264-gop10s.mp4 h264-gop1s.mp4 vp9-720p.webm; do
  for second in 1 5; do
    theirs=() ours=()
    for _ in $(seq "$REPS"); do
      theirs+=("$(timed taskset -c "$CPU" "${Q[@]}" -threads 1 -filter_threads 1 -ss "$second" -i "$work/$video" -frames:v 1 \
        -vf scale=256:-2 -q:v 3 "$work/ffmpeg.jpg")")
      ours+=("$(timed taskset -c "$CPU" "$EASEL" thumbnail --jobs 1 --size 256x256 --at "$second" --output-dir "$work/out" "$work/$video")")
    done
    [ -s "$work/ffmpeg.jpg" ] && [ -s "$work/out/tn_${video%.*}.jpg" ] || { echo "no thumbnail made for $video" >&2; exit 1; }
    t=$(printf '%s\n' "${theirs[@]}" | median) o=$(printf '%s\n' "${ours[@]}" | median)
    printf '| %s | %s | %.1f | %.1f | %.2f× |\n' "$video" "$second" "$(echo "$t * 1000" | bc)" "$(echo "$o * 1000" | bc)" "$(echo "scale=4; $t / $o" | bc)"
    figure "Formats" "the frame at ${second} s of $video as a 256 px JPEG, whole processes, one core" "ffmpeg $ffmpeg_version" \
      "$(echo "$o * 1000" | bc)" "$(echo "$t * 1000" | bc)" "ms" lower
  done
done
# (BATCH=0: no batch table, which is not like for like: one easel process against BATCH ffmpeg processes.)
[ "$BATCH" -gt 0 ] || exit 0
echo
echo "## The same in batches of $BATCH files (one easel process, $BATCH ffmpeg processes), per file, median of $REPS"
echo "| video | second | ffmpeg ms a file | easel ms a file | ffmpeg / easel |"
echo "|---|---|---|---|---|"
for video in h264-gop10s.mp4 h264-gop1s.mp4 vp9-720p.webm; do
  mkdir -p "$work/batch"
  for i in $(seq "$BATCH"); do cp "$work/$video" "$work/batch/$i-$video"; done
  for second in 1 5; do
    theirs=() ours=()
    for _ in $(seq "$REPS"); do
      start=$(date +%s%N)
      for i in $(seq "$BATCH"); do
        taskset -c "$CPU" "${Q[@]}" -threads 1 -filter_threads 1 -ss "$second" -i "$work/batch/$i-$video" -frames:v 1 \
          -vf scale=256:-2 -q:v 3 "$work/ffmpeg-$i.jpg" >/dev/null 2>&1
      done
      end=$(date +%s%N)
      theirs+=("$(echo "scale=6; ($end - $start) / 1000000000 / $BATCH" | bc)")
      start=$(date +%s%N)
      taskset -c "$CPU" "$EASEL" thumbnail --jobs 1 --size 256x256 --at "$second" --output-dir "$work/out" "$work"/batch/*-"$video" >/dev/null 2>&1
      end=$(date +%s%N)
      ours+=("$(echo "scale=6; ($end - $start) / 1000000000 / $BATCH" | bc)")
    done
    t=$(printf '%s\n' "${theirs[@]}" | median) o=$(printf '%s\n' "${ours[@]}" | median)
    printf '| %s | %s | %.1f | %.1f | %.2f× |\n' "$video" "$second" "$(echo "$t * 1000" | bc)" "$(echo "$o * 1000" | bc)" "$(echo "scale=4; $t / $o" | bc)"
  done
  rm -rf "$work/batch"
done
