#!/usr/bin/env bash
# Instructions per operation for the main workloads, counted by callgrind: repeatable on a noisy
# machine where wall-clock times are not, so this is the regression figure for the hot path.
#
#     ./instructions.sh                  every workload
#     ./instructions.sh chain dag        some of them
#     N=20000 ./instructions.sh          a larger size (default 10,000; the second run is 2N)
#     OUT=/tmp/cg ./instructions.sh async-width-1
#                                        keeps callgrind's outputs there (WORKLOAD-N.callgrind), for
#                                        callgrind_annotate
#
# Each workload runs at N and 2N operations; the difference of the totals divided by N is the
# cost per operation, with start-up and fixed costs cancelled out. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")"
command -v valgrind >/dev/null || { echo "instructions.sh needs valgrind (apt-get install valgrind)" >&2; exit 1; }
n=${N:-10000}
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(independent width-1 chain fan-in dag groups conditions exclusivity async-width-1)
# Quiet unless it fails: then its log says why (SwiftPM prints compile errors on standard output).
build_log="$(mktemp)"
if ! swift build -c release --product instructions >"$build_log" 2>&1; then
    cat "$build_log" >&2
    rm -f "$build_log"
    echo "instructions.sh: building the instructions product failed (log above)" >&2
    exit 1
fi
rm -f "$build_log"
built="$(swift build -c release --show-bin-path)/instructions"
# valgrind 3.19 (Debian 12) gives up on the DWARF 5 that clang writes for the library's C shim
# target ("unhandled dwarf2 abbrev form code 0x25 ... I can't recover"): callgrind runs a copy
# without debug information. The symbol table stays, so a profile still names every function.
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
binary="$scratch/instructions"
objcopy --strip-debug "$built" "$binary"
out=${OUT:-}
[ -z "$out" ] || mkdir -p "$out"
count() {
    local file=/dev/null
    [ -z "$out" ] || file="$out/$1-$2.callgrind"
    valgrind --tool=callgrind --callgrind-out-file="$file" "$binary" "$1" "$2" 2>&1 |
        awk '/Collected/ { print $4 }'
}
# Issue 26's targets (speed round 3), printed beside the workloads they are for.
target() {
    case "$1" in
        width-1) echo "≤ 2000" ;;
        independent) echo "≤ 2500" ;;
        chain) echo "≤ 3000" ;;
        *) echo "–" ;;
    esac
}
printf '| workload | instructions per operation | target (issue 26) |\n|---|---:|---:|\n'
for workload in "${workloads[@]}"; do
    small=$(count "$workload" "$n")
    large=$(count "$workload" $((2 * n)))
    printf '| %s | %d | %s |\n' "$workload" $(((large - small) / n)) "$(target "$workload")"
done
