# locprof cc's own LLVM pass (src/pass) against SanitizerCoverage
# (locprof cc --sancov): both instrument the same loads and stores at the
# same point of clang's pipeline and call the same runtime, so a program's
# trace (kind and size of every reference) and its samples with the same
# seed (thread, time, reuse time, size, kind, line size) must be identical;
# only the pcs differ. Checked with and without LTO on the known-pattern
# programs and on a C++ program with calls in loops, exceptions,
# vectorised loops, recursion and longjmp (tests/rt/passmix.cpp); and again
# with --clone-max=0, where the pass clones no block (the in-place snippet
# of functions over the clone limit).
. "$(dirname "$0")/lib.sh"
RT=$LOCPROF_SRC/tests/rt
need_pass

# The default is the pass; --sancov is the old path; --gcc excludes --sancov.
"$LOCPROF" cc --show -O2 -c -o "$T/x.o" "$RT/count.c" 2>"$T/show" || fail "pass build"
grep -q -- '-fpass-plugin=.*locprof-pass.so' "$T/show" || fail "default is not the pass: $(cat "$T/show")"
! grep -q -- '-fsanitize-coverage' "$T/show" || fail "the pass build also has SanitizerCoverage"
"$LOCPROF" cc --sancov --show -O2 -c -o "$T/x.o" "$RT/count.c" 2>"$T/show" || fail "sancov build"
grep -q -- '-fsanitize-coverage=edge,trace-loads,trace-stores' "$T/show" || fail "--sancov: $(cat "$T/show")"
expect_status 2 "$LOCPROF" cc --sancov --gcc -c "$RT/count.c"
expect_grep 'different instrumentations' "$T/err"
# a static link is refused in one line (its libc's malloc clashes with the
# runtime's); compiling with -static alone (-c) links nothing and is fine
expect_status 2 "$LOCPROF" cc -O2 -static -o "$T/st" "$RT/count.c"
expect_grep '^locprof: error: -static: a static link cannot be instrumented ' "$T/err"
expect_status 0 "$LOCPROF" cc -O2 -static -c -o "$T/st.o" "$RT/count.c"

PASSOPT=() # extra options of the pass builds
build() { # build NAME SOURCE [options...]
	local name=$1 src=$2 drv=cc; shift 2
	case $src in *.cpp) drv=c++ ;; esac
	"$LOCPROF" $drv "$@" -O2 -o "$T/$name" "$src" -lpthread || fail "cannot build $name"
}

# compare NAME SOURCE RATE TRACE-ARGS -- SAMPLE-ARGS
compare() {
	local name=$1 src=$2 rate=$3; shift 3
	local targs=() sargs=()
	while [ "$1" != -- ]; do targs+=("$1"); shift; done; shift
	sargs=("$@")
	for lto in --lto --no-lto; do
		build "$name-p" "$src" $lto "${PASSOPT[@]}"
		build "$name-s" "$src" $lto --sancov
		nm "$T/$name-p" | grep -q ' U __sanitizer_cov' && fail "$name $lto: the pass build calls SanitizerCoverage"
		for v in p s; do
			$NR "$LOCPROF" record -q --mode trace -o "$T/$v.txt" -- "$T/$name-$v" "${targs[@]}" >"$T/$v.out" ||
				fail "$name-$v $lto: trace run failed"
			$NR "$LOCPROF" record -q --rate "$rate" --seed 11 -o "$T/$v.samples" -- "$T/$name-$v" "${sargs[@]}" >/dev/null ||
				fail "$name-$v $lto: sample run failed"
		done
		cmp -s "$T/p.out" "$T/s.out" || fail "$name $lto: the two builds print different results"
		[ "$(refs "$T/p.txt" | wc -l)" -gt 1000 ] || fail "$name $lto: too few references in the trace"
		cmp -s <(refs "$T/p.txt") <(refs "$T/s.txt") ||
			fail "$name $lto: traces differ ($(refs "$T/p.txt" | wc -l) vs $(refs "$T/s.txt" | wc -l) references)"
		[ "$(samples "$T/p.samples" | wc -l)" -gt 50 ] || fail "$name $lto: too few samples"
		cmp -s <(samples "$T/p.samples") <(samples "$T/s.samples") ||
			fail "$name $lto: samples differ ($(samples "$T/p.samples" | wc -l) vs $(samples "$T/s.samples" | wc -l))"
		cmp -s <(grep '^# references' "$T/p.samples") <(grep '^# references' "$T/s.samples") ||
			fail "$name $lto: reference counts differ"
	done
}

compare cyclic "$RT/cyclic.c" 0.01 97 20 -- 97 200
compare lockstep "$RT/lockstep.c" 0.02 50 30 -- 50 300
compare random "$RT/random.c" 0.01 1024 20000 -- 4096 200000
compare passmix "$RT/passmix.cpp" 0.01 300 -- 3000

# Functions above the clone limit run the per-access snippet in place
# (no clone): with the limit at 0 every function does, and must still
# give SanitizerCoverage's references and samples.
"$LOCPROF" cc --clone-max=0 --show -O2 -c -o "$T/x.o" "$RT/count.c" 2>/dev/null || fail "--clone-max=0 build"
expect_status 2 "$LOCPROF" cc --clone-max=x -c "$RT/count.c"
expect_grep 'clone-max needs a number' "$T/err"
LOCPROF_PASS_STATS=1 "$LOCPROF" c++ --no-lto -O2 -c -o "$T/x.o" "$RT/passmix.cpp" 2>"$T/stats" || fail "stats build"
grep -Eq ', [1-9][0-9]* of [0-9]+ blocks cloned' "$T/stats" || fail "default: no block cloned: $(cat "$T/stats")"
LOCPROF_PASS_STATS=1 "$LOCPROF" c++ --clone-max=0 --no-lto -O2 -c -o "$T/x.o" "$RT/passmix.cpp" 2>"$T/stats" || fail "stats build"
grep -q 'blocks cloned' "$T/stats" || fail "--clone-max=0: no statistics"
! grep -Eq ', [1-9][0-9]* of [0-9]+ blocks cloned' "$T/stats" || fail "--clone-max=0: blocks cloned: $(cat "$T/stats")"
PASSOPT=(--clone-max=0)
compare lockstep0 "$RT/lockstep.c" 0.02 50 30 -- 50 300
compare passmix0 "$RT/passmix.cpp" 0.01 300 -- 3000
PASSOPT=()

# The known answers hold for the pass build on its own (not only equal to
# SanitizerCoverage's): cyclic sweep distance K-1, lock-step 2N-1.
build cyclic "$RT/cyclic.c"
expect_status 0 "$LOCPROF" record -o "$T/c.samples" --rate 0.01 -- "$T/cyclic" 97 200
[ "$(awk '!/^#/ && $3 != "dangling" && $6 == 1 { print $3 - $2 - 1 }' "$T/c.samples" | sort -u)" = 96 ] ||
	fail "pass: cyclic distances are not all 96"
build lockstep "$RT/lockstep.c" --no-lto
expect_status 0 "$LOCPROF" record -o "$T/l.samples" --rate 0.02 -- "$T/lockstep" 50 300
[ "$(awk '!/^#/ && $3 != "dangling" && $6 == 1 { print $3 - $2 - 1 }' "$T/l.samples" | sort -u)" = 99 ] ||
	fail "pass: lockstep distances are not all 99"

# -O0 builds are instrumented too, and work.
"$LOCPROF" cc -O0 -o "$T/count0" "$RT/count.c" || fail "-O0 build"
expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/c0.txt" -- "$T/count0" 1000
[ "$(awk '$1 == "W" && $3 == 4' "$T/c0.txt" | wc -l)" -ge 1000 ] || fail "-O0: fewer than 1000 4-byte stores"
exit 0
