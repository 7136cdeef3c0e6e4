# shellcheck shell=bash
# figure AREA MEASURE PEER EASEL THEIRS UNIT higher|lower [GOAL]: one figure for `make figures`
# (see figures_out.py), appended to $FIGURES_OUT when it is set.
figure() {
  [ -n "${FIGURES_OUT:-}" ] || return 0
  [ -n "$4" ] && [ -n "$5" ] || return 0
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7" "${8:-}" >> "$FIGURES_OUT"
}
