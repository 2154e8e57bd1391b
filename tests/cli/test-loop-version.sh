# The pass's loop versioning (docs/runtime.md, "Loop versioning"): an
# innermost affine loop runs an uninstrumented copy while no live watch
# lies in the address ranges of its next strip of iterations and no sample
# is due. It must not change any result: tests/rt/loops.c (streaming loops
# reusing a small array, so that watches are in range; loops much longer
# than the sampling gap; backwards, strided, conditional, short and
# indirect loops; a vectorised matrix multiply and a stencil) gives the
# same trace and, with the same seed, the same samples (thread, time,
# reuse time, size, kind, line size) built with and without versioning
# (LOCPROF_PASS_LOOP_VERSION=0), with and without LTO, at several rates
# and line sizes. And the runtime's range query never says "no watch"
# when one is in range (tests/rt/rangeq.c against a slow reference).
. "$(dirname "$0")/lib.sh"
RT=$LOCPROF_SRC/tests/rt
need_pass

for lto in --lto --no-lto; do
	LOCPROF_PASS_VERIFY=1 LOCPROF_PASS_STATS=1 "$LOCPROF" cc $lto -O2 -o "$T/v" "$RT/loops.c" 2>"$T/stats" ||
		fail "$lto: versioned build: $(head -5 "$T/stats")"
	LOCPROF_PASS_LOOP_VERSION=0 LOCPROF_PASS_STATS=1 "$LOCPROF" cc $lto -O2 -o "$T/n" "$RT/loops.c" 2>"$T/stats0" ||
		fail "$lto: build without versioning"
	# main's loops: all but the outer ones and the short one, the column
	# walk and the indirect loop with their accesses out of the ranges
	# checked one by one.
	grep -Eq 'main: .* (1[0-9]|[6-9]) loops versioned' "$T/stats" || fail "$lto: too few loops versioned: $(cat "$T/stats")"
	grep -Eq 'main: ([2-9]|[1-9][0-9]) loop accesses checked one by one' "$T/stats" ||
		fail "$lto: want the column walk's and the indirect loop's accesses checked: $(cat "$T/stats")"
	! grep -Eq '[1-9][0-9]* loops versioned' "$T/stats0" || fail "$lto: LOCPROF_PASS_LOOP_VERSION=0 still versions"
	# Both kinds: loops of one block (countdown written back where the
	# fast copy ends) and of several (countdown tested per iteration).
	read -r nv n1 < <(sed -n 's/.*main: .* \([0-9]*\) loops versioned (\([0-9]*\) of one block)/\1 \2/p' "$T/stats")
	[ "$n1" -ge 1 ] && [ "$n1" -lt "$nv" ] || fail "$lto: want loops of one and of several blocks: $(cat "$T/stats")"
	# Both kinds of range query: short ranges read the shadow inline,
	# the 256-byte step's calls the runtime.
	read -r rs ra < <(sed -n 's/.*main: \([0-9]*\) of \([0-9]*\) loop ranges read from the shadow/\1 \2/p' "$T/stats")
	[ -n "$rs" ] && [ "$rs" -ge 4 ] && [ "$rs" -lt "$ra" ] || fail "$lto: want ranges read from the shadow and others: $(cat "$T/stats")"
	objdump -d "$T/v" >"$T/dis"
	grep -q 'call.*<lp_rt_range_watched' "$T/dis" || fail "$lto: no range query in the versioned build"
	objdump -d "$T/n" >"$T/dis"
	! grep -q 'call.*<lp_rt_range_watched' "$T/dis" || fail "$lto: a range query in the build without versioning"
	for v in v n; do
		$NR "$LOCPROF" record -q --mode trace -o "$T/$v.txt" -- "$T/$v" 24 2 >"$T/$v.out" || fail "$lto $v: trace run"
	done
	cmp -s "$T/v.out" "$T/n.out" || fail "$lto: the two builds print different results"
	[ "$(refs "$T/v.txt" | wc -l)" -gt 10000 ] || fail "$lto: too few references in the trace"
	cmp -s <(refs "$T/v.txt") <(refs "$T/n.txt") || fail "$lto: traces differ"
	# rate 0.01: gaps shorter than most loops, many watches in range;
	# 1e-3 and two line sizes: longer gaps, larger arrays.
	for run in "0.01 64 64 4" "0.001 64,256 128 4" "0.0002 64 200 2"; do
		set -- $run
		for v in v n; do
			$NR "$LOCPROF" record -q --rate "$1" --line "$2" --seed 7 -o "$T/$v.samples" -- "$T/$v" "$3" "$4" >/dev/null ||
				fail "$lto $v: sample run ($run)"
		done
		[ "$(samples "$T/v.samples" | wc -l)" -gt 300 ] || fail "$lto ($run): too few samples"
		[ "$(awk '!/^#/ && $3 != "dangling"' "$T/v.samples" | wc -l)" -gt 100 ] || fail "$lto ($run): too few reuses"
		cmp -s <(samples "$T/v.samples") <(samples "$T/n.samples") ||
			fail "$lto ($run): samples differ ($(samples "$T/v.samples" | wc -l) vs $(samples "$T/n.samples" | wc -l))"
		cmp -s <(grep '^# references' "$T/v.samples") <(grep '^# references' "$T/n.samples") ||
			fail "$lto ($run): reference counts differ"
	done
done

# The range query against the slow reference: never 0 with a watch in
# range; mostly 0 without (aliasing of other watches may say 1).
"$LOCPROF" cc -O2 -o "$T/rq" "$RT/rangeq.c" || fail "rangeq build"
for ls in 64 4096; do
	lines=64; [ $ls = 4096 ] && lines=64,4096
	expect_status 0 "$LOCPROF" record -q --rate 1 --line $lines -o "$T/rq.lpp" -- "$T/rq" 100 1000 $ls
	read -r _ viol _ hits _ exact _ zero <"$T/out"
	[ "$viol" = 0 ] || fail "range query, line $ls: $viol ranges with a watch answered no: $(cat "$T/out")"
	[ "$hits" -gt 30 ] && [ "$zero" -gt 300 ] || fail "range query, line $ls: too few cases: $(cat "$T/out")"
	[ $((exact * 10)) -ge $((zero * 9)) ] || fail "range query, line $ls: too imprecise: $(cat "$T/out")"
done
# Without locprof record the runtime is inert: no watch, always 0.
expect_status 0 "$T/rq" 50 200 64
read -r _ viol _ hits _ exact _ zero <"$T/out"
[ "$viol" = "$hits" ] && [ "$exact" = "$zero" ] || fail "inert: the query said yes: $(cat "$T/out")"
exit 0
