#!/usr/bin/env bash
# Overhead of the inst backend: each example and each larger real program
# (Lua, SQLite, zstd: bench/realprog.sh) run natively and instrumented,
# inert (no locprof record) and under `locprof record` at rates 1e-3 and
# 1e-4 (fixed: --max-samples 0, so a long program pays for every sample
# of its rate), with and without LTO. All builds use the same clang -O2; the LTO
# columns compare with a native -flto build, the others with plain -O2.
# Each round runs every configuration once, each right after a run of its
# baseline (native -flto for the LTO builds, plain -O2 for the others); the
# table has the median over RUNS rounds (default 5) of each configuration's
# ratio to the baseline run just before it, and the median row the median
# over the programs (of an even count, the mean of the two middle values).
#
# Two tables: the program's own CPU time (user + system, from
# bench-cputime: steady on a loaded machine, and without the collector,
# which runs on another core), and the wall time of the whole command
# (locprof record included: what a user waits for, noisy when cores are
# shared). The last row of each is the median over the programs.
# usage: bench/overhead.sh [BUILD_DIR]   (default build/)
#   RUNS=N  rounds;  NOREAL=1  examples only;  ONLY=REGEX  some workloads
#   SANCOV=1  also the SanitizerCoverage builds (locprof cc --sancov) at
#             1e-4, with and without LTO, in the same rounds (columns sc-*)
#   NOLV=1  also the pass without loop versioning (LOCPROF_PASS_LOOP_VERSION=0):
#           inert and at 1e-4 with and without LTO, same rounds (nolv-*)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
RUNS=${RUNS:-5}
L=$B/locprof
CPU=$B/bench/bench-cputime
T=$(mktemp -d /tmp/locprof-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -x "$CPU" ] || { echo "overhead: build first (no $CPU)" >&2; exit 1; }

# Workloads: "label|dir-prefix|args"; binaries are PREFIX-native,
# PREFIX-native-lto, PREFIX-lp, PREFIX-lp-nolto (and PREFIX-sc, -sc-nolto).
W=()
for ex in matmul layout listwalk stencil; do
	clang -O2 -w -o "$T/$ex-native" "examples/$ex.c"
	clang -O2 -w -flto -fuse-ld=lld -o "$T/$ex-native-lto" "examples/$ex.c"
	ln -sf "$(cd "$B/examples" && pwd)/$ex-lp" "$T/$ex-lp"
	ln -sf "$(cd "$B/examples" && pwd)/$ex-lp-nolto" "$T/$ex-lp-nolto"
	if [ -n "${NOLV:-}" ]; then # the pass without loop versioning, same rounds
		LOCPROF_PASS_LOOP_VERSION=0 "$L" cc --lto -O2 -g -o "$T/$ex-nolv" "examples/$ex.c"
		LOCPROF_PASS_LOOP_VERSION=0 "$L" cc --no-lto -O2 -g -o "$T/$ex-nolv-nolto" "examples/$ex.c"
	fi
	if [ -n "${SANCOV:-}" ]; then
		"$L" cc --sancov --lto -O2 -g -o "$T/$ex-sc" "examples/$ex.c"
		"$L" cc --sancov --no-lto -O2 -g -o "$T/$ex-sc-nolto" "examples/$ex.c"
	fi
done
W+=("matmul naive|$T/matmul|naive" "matmul interchange|$T/matmul|interchange 700"
	"matmul blocked|$T/matmul|blocked 700" "layout aos|$T/layout|aos 3000000"
	"layout soa|$T/layout|soa 3000000" "listwalk list|$T/listwalk|list"
	"listwalk array|$T/listwalk|array 6000000" "stencil|$T/stencil|1024 150")
if [ -z "${NOREAL:-}" ]; then
	. bench/realprog.sh
	R=$B/realprog
	realprog_build "$B" "$R"
	while read -r name bin args; do
		args=${args//@W@/$PWD/bench/workloads}
		W+=("$name|$R/bin/$bin|${args//@D@/$R}")
	done < <(realprog_workloads)
fi

if [ -n "${ONLY:-}" ]; then
	keep=()
	for w in "${W[@]}"; do [[ ${w%%|*} =~ $ONLY ]] && keep+=("$w"); done
	W=("${keep[@]}")
fi

# The median; of an even count, the mean of the two middle values.
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# run KIND PREFIX ARGS -> "cpu wall" of one run
run() {
	local kind=$1 p=$2; shift 2
	local t0 t1
	t0=$(date +%s.%N)
	case $kind in
	native) "$CPU" "$T/t" "$p-native" "$@" ;;
	native-lto) "$CPU" "$T/t" "$p-native-lto" "$@" ;;
	inert) "$CPU" "$T/t" "$p-lp" "$@" ;;
	lto-*) "$L" record -q --max-samples 0 -o "$T/p.lpp" --rate "${kind#lto-}" -- "$CPU" "$T/t" "$p-lp" "$@" ;;
	nolto-*) "$L" record -q --max-samples 0 -o "$T/p.lpp" --rate "${kind#nolto-}" -- "$CPU" "$T/t" "$p-lp-nolto" "$@" ;;
	nolv-inert) "$CPU" "$T/t" "$p-nolv" "$@" ;;
	nolv-lto-*) "$L" record -q --max-samples 0 -o "$T/p.lpp" --rate "${kind#nolv-lto-}" -- "$CPU" "$T/t" "$p-nolv" "$@" ;;
	nolv-nolto-*) "$L" record -q --max-samples 0 -o "$T/p.lpp" --rate "${kind#nolv-nolto-}" -- "$CPU" "$T/t" "$p-nolv-nolto" "$@" ;;
	sc-lto-*) "$L" record -q --max-samples 0 -o "$T/p.lpp" --rate "${kind#sc-lto-}" -- "$CPU" "$T/t" "$p-sc" "$@" ;;
	sc-nolto-*) "$L" record -q --max-samples 0 -o "$T/p.lpp" --rate "${kind#sc-nolto-}" -- "$CPU" "$T/t" "$p-sc-nolto" "$@" ;;
	esac >/dev/null 2>"$T/err" || { echo "overhead: $kind $p $* failed: $(head -c 300 "$T/err")" >&2; exit 1; }
	t1=$(date +%s.%N)
	echo "$(cut -d' ' -f1 "$T/t") $(echo "$t1 - $t0" | bc -l)"
}

K=(inert lto-1e-3 lto-1e-4 nolto-1e-3 nolto-1e-4)
[ -n "${NOLV:-}" ] && K+=(nolv-inert nolv-lto-1e-4 nolv-nolto-1e-4)
[ -n "${SANCOV:-}" ] && K+=(sc-lto-1e-4 sc-nolto-1e-4)
hdr=$(printf '| %-20s | %9s |' program "native s"; printf ' %-10s |' "${K[@]}")
declare -A CPUR WALLR
for w in "${W[@]}"; do
	IFS='|' read -r name p args <<<"$w"
	for _ in $(seq "$RUNS"); do
		read -r nc nw < <(run native "$p" $args)
		echo "$nc" >>"$T/native-$name"
		# Each configuration against its baseline run just before it
		# (native -flto for the LTO builds, plain -O2 for the others):
		# this machine's speed moves by a third between phases of a few
		# seconds, and two runs seconds apart are in the same phase.
		for k in "${K[@]}"; do
			case $k in
			inert|lto-*|sc-lto-*|nolv-inert|nolv-lto-*) read -r bc_ bw < <(run native-lto "$p" $args) ;;
			*) read -r bc_ bw < <(run native "$p" $args) ;;
			esac
			read -r c wl < <(run "$k" "$p" $args)
			echo "$c / $bc_" | bc -l >>"$T/cpu-$name-$k"
			echo "$wl / $bw" | bc -l >>"$T/wall-$name-$k"
		done
	done
	for k in "${K[@]}"; do
		CPUR[$name,$k]=$(median <"$T/cpu-$name-$k")
		WALLR[$name,$k]=$(median <"$T/wall-$name-$k")
	done
	printf '%s done\n' "$name" >&2
done
for table in cpu wall; do
	echo
	[ $table = cpu ] && echo "Program CPU time, ratio to native (median of $RUNS)" ||
		echo "Wall time of the whole command, ratio to native (median of $RUNS)"
	echo "$hdr"
	printf '|%s|%s|' "$(printf -- '-%.0s' $(seq 22))" "$(printf -- '-%.0s' $(seq 11))"
	for _ in "${K[@]}"; do printf '%s|' "$(printf -- '-%.0s' $(seq 12))"; done
	echo
	for w in "${W[@]}"; do
		IFS='|' read -r name p args <<<"$w"
		printf '| %-20s | %9.3f |' "$name" "$(median <"$T/native-$name")"
		for k in "${K[@]}"; do
			[ $table = cpu ] && v=${CPUR[$name,$k]} || v=${WALLR[$name,$k]}
			printf ' %9.2fx |' "$v"
		done
		echo
	done
	printf '| %-20s | %9s |' "median" ""
	for k in "${K[@]}"; do
		for w in "${W[@]}"; do
			IFS='|' read -r name p args <<<"$w"
			[ $table = cpu ] && echo "${CPUR[$name,$k]}" || echo "${WALLR[$name,$k]}"
		done | median | xargs printf ' %9.2fx |'
	done
	echo
done
