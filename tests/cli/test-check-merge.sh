# The pass's check merging (docs/runtime.md, "Check merging"): accesses at
# constant offsets from one pointer share one window test of the shadow,
# and those the window still covers test only a flag. It must not change
# any result: tests/rt/fields.c (node fields read and written in dominated
# blocks, with calls, back edges and samples in between, and a node of two
# clusters) and tests/rt/loops.c give the same samples (thread, time, reuse
# time, size, kind, line size) with the same seed, built with and without
# merging (LOCPROF_PASS_CHECK_MERGE=0), with and without LTO, with cloned
# blocks and with the in-place snippet only (--clone-max=0), at several
# rates and line sizes, lines below the 64-byte granule included.
. "$(dirname "$0")/lib.sh"
RT=$LOCPROF_SRC/tests/rt
need_pass

for build in "--lto" "--no-lto" "--lto --clone-max=0"; do
	LOCPROF_PASS_VERIFY=1 LOCPROF_PASS_STATS=1 "$LOCPROF" cc $build -O2 -o "$T/m" "$RT/fields.c" 2>"$T/stats" ||
		fail "$build: merged build: $(head -5 "$T/stats")"
	LOCPROF_PASS_CHECK_MERGE=0 LOCPROF_PASS_STATS=1 "$LOCPROF" cc $build -O2 -o "$T/p" "$RT/fields.c" 2>"$T/stats0" ||
		fail "$build: build without merging"
	# walk's fields: most checks covered, windows of more than one granule.
	read -r cov all win < <(sed -n 's/.*: walk: \([0-9]*\) of \([0-9]*\) checks covered by \([0-9]*\) windows/\1 \2 \3/p' "$T/stats" | head -1)
	[ -n "$cov" ] && [ "$cov" -ge 4 ] && [ "$win" -ge 2 ] || fail "$build: too few checks merged in walk: $(grep walk "$T/stats")"
	# indexed's elements: a[j], a[j+1], a[j+2] and p[j]'s fields share windows.
	read -r cov all win < <(sed -n 's/.*: indexed: \([0-9]*\) of \([0-9]*\) checks covered by \([0-9]*\) windows/\1 \2 \3/p' "$T/stats" | head -1)
	[ -n "$cov" ] && [ "$cov" -ge 5 ] && [ "$win" -ge 2 ] || fail "$build: too few checks merged in indexed: $(grep indexed "$T/stats")"
	! grep -q ': [1-9][0-9]* of [0-9]* checks covered' "$T/stats0" || fail "$build: LOCPROF_PASS_CHECK_MERGE=0 still merges"
	objdump -d "$T/m" >"$T/dis"
	grep -Eq 'cmp[wlq] +\$0x0,0x7fff8000\(' "$T/dis" || fail "$build: no window test in the merged build"
	for v in m p; do
		$NR "$LOCPROF" record -q --mode trace -o "$T/$v.txt" -- "$T/$v" 300 2 >"$T/$v.out" || fail "$build $v: trace run"
	done
	cmp -s "$T/m.out" "$T/p.out" || fail "$build: the two builds print different results"
	cmp -s <(refs "$T/m.txt") <(refs "$T/p.txt") || fail "$build: traces differ"
	for run in "0.01 64 300 4" "0.05 16,64 200 2" "0.002 32,256 400 6"; do
		set -- $run
		for v in m p; do
			$NR "$LOCPROF" record -q --rate "$1" --line "$2" --seed 11 -o "$T/$v.samples" -- "$T/$v" "$3" "$4" >/dev/null ||
				fail "$build $v: sample run ($run)"
		done
		[ "$(awk '!/^#/ && $3 != "dangling"' "$T/m.samples" | wc -l)" -gt 100 ] || fail "$build ($run): too few reuses"
		cmp -s <(samples "$T/m.samples") <(samples "$T/p.samples") ||
			fail "$build ($run): samples differ ($(samples "$T/m.samples" | wc -l) vs $(samples "$T/p.samples" | wc -l))"
	done
done

# loops.c: versioned loops and merged checks together.
"$LOCPROF" cc --lto -O2 -o "$T/m" "$RT/loops.c" || fail "loops: merged build"
LOCPROF_PASS_CHECK_MERGE=0 "$LOCPROF" cc --lto -O2 -o "$T/p" "$RT/loops.c" || fail "loops: build without merging"
for v in m p; do
	$NR "$LOCPROF" record -q --rate 0.01 --line 16,64 --seed 5 -o "$T/$v.samples" -- "$T/$v" 64 4 >/dev/null || fail "loops $v"
done
cmp -s <(samples "$T/m.samples") <(samples "$T/p.samples") || fail "loops: samples differ"
exit 0
