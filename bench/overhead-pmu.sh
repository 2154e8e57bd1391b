#!/usr/bin/env bash
# Costs of the pmu backend (thesis Eq. 4.1, C = alpha*n_s + beta*n_f per
# sample) on the example programs, with the step counter (no PMU needed).
#
#  1. bench-pmu-costs: alpha (one single-step), beta (one false-positive
#     page fault: stop, open, step, close, resume), a true hit by page
#     protection and by debug register, one injected system call.
#  2. Each example under `locprof record --backend pmu --counter step`,
#     once without samples (T0: the exact clock alone, every instruction
#     stepped and decoded) and once sampling at RATE (T1); median of RUNS
#     of the CPU time (user + system, locprof and the program: the wall
#     time of ptrace round trips on a shared machine is mostly waiting).
#     The engine's counts of the T1 run give, per sample, the single-steps
#     a PMU run would make to reach the sample point (n_s = skid steps) and
#     the faults (n_f: false positives; true hits).
#  3. Eq. 4.1: the cost of one sample C from those counts and the
#     micro-costs, the share of each mechanism in it (single-steps, false
#     positives, true hits, the mprotect calls that set watches), and the
#     overhead it projects for a PMU run at a period of 1e7 references on
#     a core retiring 1e9 references/s (the thesis's setting). Under the
#     step counter itself the clock (a step per instruction) dwarfs all of
#     these: T1/T0 shows how much sampling adds on top of it.
#
# usage: bench/overhead-pmu.sh [BUILD_DIR]   (default build/)
#        RUNS=5 RATE=0.01 MAXSKID=10 LINE=64 ITER=20000 bench/overhead-pmu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
RUNS=${RUNS:-5}
RATE=${RATE:-0.01}
MAXSKID=${MAXSKID:-10}
LINE=${LINE:-64}
ITER=${ITER:-20000}
L=$B/locprof
E=$B/examples
T=$(mktemp -d /tmp/locprof-bench-pmu.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -x "$B/bench/bench-pmu-costs" ] && [ -x "$L" ] || { echo "build first: scripts/build" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 2; }

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# timeit OUT CMD...: median CPU seconds (user + system of locprof and the
# program: on a machine shared with other work, wall time mostly measures
# waiting for a CPU) of RUNS runs; the last run's stderr in OUT
timeit() {
	local out=$1; shift
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%U %S" -o "$T/time" "$@" >/dev/null 2>"$out" || true
		awk '{ printf "%.6f\n", $1 + $2 }' "$T/time"
	done | median
}
stat() { grep -o " $2 [0-9]*" "$1" | head -1 | awk '{ print $2 }'; }

# ---- 1. micro-costs ----------------------------------------------------
"$B/bench/bench-pmu-costs" "$ITER" >"$T/costs"
cost() { awk -v k="$1" 'index($0, k) == 1 { print $NF }' "$T/costs"; } # the CPU column
A=$(cost "step (alpha)")
BETA=$(cost "false-positive fault")
HP=$(cost "true hit, page protection")
HD=$(cost "true hit, debug register")
INJ=$(cost "injected system call")
echo "# micro-costs (bench-pmu-costs $ITER), CPU microseconds per event (tracer + target)"
printf '%-34s %8.2f\n' "single-step (alpha)" "$A" "false-positive fault (beta)" "$BETA" \
	"true hit, page protection" "$HP" "true hit, debug register" "$HD" "injected system call" "$INJ"
echo

# ---- 2. the examples under the step counter ---------------------------
EXAMPLES=${EXAMPLES:-"matmul naive 24|matmul blocked 32|layout aos 3000|layout soa 3000|listwalk list 3000|listwalk array 3000|stencil 48 2"}
echo "# examples: record --backend pmu --counter step, rate $RATE, max skid $MAXSKID, line $LINE; CPU seconds, median of $RUNS"
printf '%-20s %7s %7s %6s %9s %7s %7s %7s %7s %7s %7s\n' example T0/s T1/s T1/T0 steps samples us/step \
	n_s n_f hits n_inj
IFS='|' read -ra EX <<<"$EXAMPLES"
: >"$T/fit"
for ex in "${EX[@]}"; do
	set -- $ex
	prog=$1; shift
	t0=$(timeit "$T/e0" "$L" record -q --backend pmu --counter step --rate 1e-12 -X stats -o "$T/p.lpp" -- "$E/$prog" "$@")
	t1=$(timeit "$T/e1" "$L" record -q --backend pmu --counter step --rate "$RATE" --max-skid "$MAXSKID" --line "$LINE" \
		-X stats -o "$T/p.lpp" -- "$E/$prog" "$@")
	steps0=$(stat "$T/e0" steps); inj0=$(stat "$T/e0" injected)
	steps=$(stat "$T/e1" steps); samples=$(stat "$T/e1" samples); skid=$(stat "$T/e1" skid_steps)
	ff=$(stat "$T/e1" false_faults); ph=$(stat "$T/e1" page_hits); dh=$(stat "$T/e1" dr_hits)
	inj=$(stat "$T/e1" injected)
	echo "$ex|$t0 $t1 $steps0 $steps $samples $skid $ff $ph $dh $inj $inj0" >>"$T/fit"
	awk -v ex="$ex" -v t0="$t0" -v t1="$t1" -v s0="$steps0" -v st="$steps" -v n="$samples" -v sk="$skid" \
	    -v ff="$ff" -v ph="$ph" -v dh="$dh" -v inj="$inj" -v inj0="$inj0" 'BEGIN {
		# Injected mprotect calls besides the two of each false positive
		# and the one of each page hit: setting and removing watches,
		# opening pages around system calls.
		ni = inj - inj0 - 2 * ff - ph; if (ni < 0) ni = 0
		printf "%-20s %7.2f %7.2f %6.2f %9d %7d %7.1f %7.1f %7.1f %7.2f %7.1f\n", ex, t0, t1, t1 / t0, st, n,
			t0 / s0 * 1e6, sk / n, ff / n, (ph + dh) / n, ni / n
	}'
done
echo "(T0: the exact clock alone (no samples), T1: sampling at rate $RATE; us/step: the clock's CPU"
echo " cost per instruction, single-step + decode; per sample: n_s single-steps to reach the sample"
echo " point (what a PMU run steps after a notification armed 2 + 2*MaxSkid references early),"
echo " n_f false-positive faults, hits (page or debug register), n_inj other injected mprotect calls)"
echo

# ---- 3. Eq. 4.1: the cost of a sample and its shares ------------------
echo "# Eq. 4.1 per sample, with the micro-costs above; projected to a PMU run (no clock stepping),"
echo "# overhead at a period of 1e7 references on a core retiring 1e9 references/s (100 samples/s)"
printf '%-20s %8s %10s %10s %10s %10s %10s\n' example C/ms "steps%" "false%" "hits%" "mprotect%" overhead
while IFS='|' read -r ex rest; do
	echo "$rest" | awk -v ex="$ex" -v A="$A" -v BETA="$BETA" -v HP="$HP" -v HD="$HD" -v INJ="$INJ" '{
		n = $5; ni = ($10 - $11 - 2 * $7 - $8) / n; if (ni < 0) ni = 0
		steps = A * $6 / n; fp = BETA * $7 / n; hits = ($8 * HP + $9 * HD) / n; inj = INJ * ni
		c = steps + fp + hits + inj
		printf "%-20s %8.3f %9.0f%% %9.0f%% %9.0f%% %9.0f%% %9.1f%%\n", ex, c / 1000, 100 * steps / c,
			100 * fp / c, 100 * hits / c, 100 * inj / c, 100 * c * 1e-6 * 100
	}'
done <"$T/fit"
echo "(C = alpha*n_s + beta*n_f + hits + mprotect calls; not included: the PMU's overflow stops, about"
echo " log2(period) per sample, ~0.2 ms; 64-byte lines are always watched by page protection, lines"
echo " of 32 bytes or less by the debug registers while the process has one thread)"
echo

# ---- 4. the double trap (-X sample-start=double-trap, thesis §3.3.2.2) ----
# The same examples with the step counter's emulated PEBS record (skid
# emulated 0..MaxSkid): no single-steps between the notification and the
# sample; instead one breakpoint trap, two one-byte writes and one step per
# sample. A breakpoint trap is costed as a debug-register hit (a trap stop,
# registers read and written, resume: the same round trip) plus one step.
echo "# double trap: record --backend pmu --counter step -X sample-start=double-trap -X emulate-skid=$MAXSKID;"
echo "# Eq. 4.1 per sample projected to a PMU run, against skid compensation (section 3)"
printf '%-20s %7s %8s %8s %8s %8s %10s %10s %9s\n' example samples replaced n_s n_f C/ms "C step/ms" "saving" overhead
while IFS='|' read -r ex rest; do
	set -- $ex
	prog=$1; shift
	"$L" record -q --backend pmu --counter step --rate "$RATE" --max-skid "$MAXSKID" --line "$LINE" \
		-X emulate-skid="$MAXSKID" -X sample-start=double-trap -X stats -o "$T/p.lpp" -- "$E/$prog" "$@" \
		</dev/null >/dev/null 2>"$T/dt"
	tr ' ' '\n' <"$T/dt" >"$T/dt.w"
	get() { awk -v k="$1" 'p {print; exit} $0 == k {p = 1}' "$T/dt.w"; }
	echo "$rest" | awk -v ex="$ex" -v A="$A" -v BETA="$BETA" -v HP="$HP" -v HD="$HD" -v INJ="$INJ" \
	    -v n="$(get samples)" -v rep="$(get replaced)" -v sk="$(get skid_steps)" -v ff="$(get false_faults)" \
	    -v ph="$(get page_hits)" -v dh="$(get dr_hits)" -v inj="$(get injected)" '{
		# skid compensation, as in section 3
		m = $5; ni = ($10 - $11 - 2 * $7 - $8) / m; if (ni < 0) ni = 0
		cs = A * $6 / m + BETA * $7 / m + ($8 * HP + $9 * HD) / m + INJ * ni
		# double trap
		nj = (inj - $11 - 2 * ff - ph) / n; if (nj < 0) nj = 0
		cd = A * sk / n + (HD + A) + BETA * ff / n + (ph * HP + dh * HD) / n + INJ * nj
		printf "%-20s %7d %8d %8.1f %8.1f %8.3f %10.3f %9.0f%% %8.1f%%\n", ex, n, rep, sk / n, ff / n, cd / 1000,
			cs / 1000, 100 * (cs - cd) / cs, 100 * cd * 1e-6 * 100
	}'
done <"$T/fit"
echo "(replaced: breakpoints removed unhit at the next notification, their samples lost; saving: 1 - C/C step,"
echo " per sample; overhead at a period of 1e7 references, 1e9 references/s, as in section 3)"
