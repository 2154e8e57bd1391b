#!/usr/bin/env bash
# Agreement of the valgrind backend's traces with Cachegrind (docs/valgrind.md).
#
# For each program: record its full trace under valgrind with locprof's tool
# (`locprof record --backend valgrind -m trace`, without the malloc
# replacement so that glibc's malloc runs as under Cachegrind), simulate a
# 32 KiB, 8-way, 64-byte-line LRU L1 with `locprof simulate`, and compare the
# misses with Cachegrind's D1 misses for the same cache
# (`valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64`).
# The target: within 1%. The rules where the two differ are listed in
# docs/valgrind.md ("Agreement with Cachegrind").
#
# usage: bench/cachegrind-agreement.sh [BUILD_DIR] [PROGRAM...]
#   PROGRAM: the programs of bench/workloads/vg-programs.sh (default: its
#   long and short runs, the ones bench/overhead-valgrind.sh reports).
#   Prints a markdown table; exits 1 if any program is off by more than 1%.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
progs=("$@")
locprof=$build/locprof
[ -x "$locprof" ] || { echo "no $locprof: build first (scripts/build)" >&2; exit 2; }

w=$(mktemp -d /tmp/locprof-cgagree.XXXXXX)
trap 'rm -rf "$w"' EXIT
# shellcheck source=bench/workloads/vg-programs.sh
source bench/workloads/vg-programs.sh
[ ${#progs[@]} -gt 0 ] || progs=("${vg_long_programs[@]}" "${vg_short_programs[@]}")
for p in "${progs[@]}"; do vg_cmd_of "$p" >/dev/null || exit 2; done
vg_make_inputs "$w"

num() { tr -d , <<<"$1"; }

status=0
echo "| program | command | references (locprof) | D refs (cachegrind) | L1 misses (locprof simulate) | D1 misses (cachegrind) | difference |"
echo "|---|---|---:|---:|---:|---:|---:|"
for p in "${progs[@]}"; do
	spec=$(vg_cmd_of "$p")
	in=${spec%%|*}
	cmd=${spec#*|}
	read -ra argv <<<"$cmd"
	command -v "${argv[0]}" >/dev/null || { echo "$p: ${argv[0]} not installed (scripts/install-deps)" >&2; status=1; continue; }
	(cd "$w" && "$OLDPWD/$locprof" record --backend valgrind -X --allocs=no -m trace -q \
		-o "$w/$p.lpt" -- "${argv[@]}" <"$in" >"$w/$p.out1")
	"$locprof" simulate "$w/$p.lpt" --cache 32K:8:64:lru >"$w/$p.sim"
	read -r acc ours < <(awk '$1 == "C1" { print $3, $4 }' "$w/$p.sim")
	refs=$(awk '/references/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "references") print $i }' "$w/$p.sim" | head -1)
	(cd "$w" && valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 \
		--cachegrind-out-file=/dev/null "${argv[@]}" <"$in" >"$w/$p.out2" 2>"$w/$p.cg")
	cmp -s "$w/$p.out1" "$w/$p.out2" || { echo "$p: the two runs printed different output" >&2; status=1; }
	theirs=$(num "$(sed -n 's/.*D1  misses: *\([0-9,]*\).*/\1/p' "$w/$p.cg")")
	drefs=$(num "$(sed -n 's/.*D   refs: *\([0-9,]*\).*/\1/p' "$w/$p.cg")")
	rm -f "$w/$p.lpt"
	diff=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%+.3f%%", 100 * (a - b) / b }')
	ok=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { d = (a - b) / b; print (d < 0 ? -d : d) <= 0.01 }')
	[ "$ok" = 1 ] || status=1
	echo "| $p | \`$cmd\` | $refs | $drefs | $ours | $theirs | $diff |"
done
exit $status
