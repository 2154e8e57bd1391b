# Two global variables in one line (tests/data/names-lineshare.c): every
# miss on the line is the write of counters, which ends the samples of the
# flag read before it. report names the object that the missing access
# touched (the sample's reuse address), not the sampled access's
# neighbour: counters gets the misses, flag_word none; with the inst and
# valgrind backends and a sampled trace, as simulate --attribute does.
# Then two heap blocks allocated on one line: two objects, told apart by
# their columns, or by their order where they share the column too.
. "$(dirname "$0")/lib.sh"

objects_of() { # cc|c++, -O flag, source, name: built, recorded, report's objects at 32K in $T/objects
	"$LOCPROF" "$1" "$2" -g -o "$T/$4" "$3" || fail "cannot build $3"
	expect_status 0 "$LOCPROF" record -q -o "$T/$4.lpp" --rate 0.01 -- "$T/$4"
	expect_status 0 "$LOCPROF" report "$T/$4.lpp" --sizes 32K --at 32K --top 5
	sed -n '/^top data objects/,/^$/p' "$T/out" >"$T/objects"
}
expect_object() { # regex, name
	grep -qE "$1" "$T/objects" || { cat "$T/objects" >&2; fail "no object '$2'"; }
}
objects() {
	sed -n '/^top data objects/,/^$/p' "$T/out" | awk 'NR > 2 && NF { print $1, $2 }' >"$T/objects"
}
check() { # label, profile
	expect_status 0 "$LOCPROF" report "$2" --sizes 16K --at 16K --top 5
	objects
	# one miss a round: 4000, sampled at 0.05
	awk '$1 == "counters" && $2 > 3000 && $2 < 5000 { ok = 1 } $1 == "flag_word" { bad = 1 }
	     END { exit !(ok && !bad) }' "$T/objects" ||
		{ cat "$T/objects" >&2; fail "$1: the misses on the line should be counters' (about 4000), none flag_word's"; }
}

if command -v clang >/dev/null; then
	"$LOCPROF" cc -O2 -g -o "$T/ls" "$LOCPROF_SRC/tests/data/names-lineshare.c" || fail "cannot build names-lineshare.c"
	expect_status 0 "$LOCPROF" record -q -o "$T/inst.lpp" --rate 0.05 --seed 2 -- "$T/ls"
	check "inst" "$T/inst.lpp"
	"$LOCPROF" dump "$T/inst.lpp" >"$T/dump"
	expect_grep '^# line time pc addr kind tid reuse reuse_pc.* reuse_addr$' "$T/dump"
	expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/ls.lpt" -- "$T/ls"
	expect_status 0 "$LOCPROF" sample "$T/ls.lpt" -o "$T/trace.lpp" --rate 0.05 --seed 2
	check "sampled trace" "$T/trace.lpp"
	# the exact count: 4000 misses of counters, flag_word's one cold miss
	expect_status 0 "$LOCPROF" simulate "$T/ls.lpt" --cache 16K:full:64 --attribute --top 5
	awk '/^## data objects/ { on = 1; next } /^##/ { on = 0 } on && $1 == "counters" { ok = $3 == 4000 }
	     on && $1 == "flag_word" { bad = $3 > 1 } END { exit !(ok && !bad) }' "$T/out" ||
		{ cat "$T/out" >&2; fail "simulate --attribute: counters should miss 4000 times, flag_word once"; }
fi
# Two allocations on one line are two objects, named with their columns
# (which only then say something), in report as in simulate --attribute;
# the one alone on its line has none.
if command -v clang >/dev/null; then
	cat >"$T/three.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	long n = 1 << 16; double s = 0;
	double *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	double *c = malloc(n * sizeof(*c));
	for (long i = 0; i < n; i++)
		a[i] = b[i] = c[i] = (double)i;
	for (int r = 0; r < 10; r++)
		for (long i = 0; i < n; i++)
			s += a[i] * b[i] + c[i];
	printf("%g\n", s);
	free(a), free(b), free(c);
	return 0;
}
C
	"$LOCPROF" cc -O1 -g -o "$T/three" "$T/three.c" || fail "cannot build three.c"
	expect_status 0 "$LOCPROF" record -q -o "$T/three.lpp" --rate 0.01 -- "$T/three"
	expect_status 0 "$LOCPROF" report "$T/three.lpp" --sizes 32K --at 32K --top 5
	objects
	[ "$(grep -cE '^heap@main \(three\.c:6:[0-9]+\)$' "$T/objects")" = 2 ] &&
		[ "$(grep -cE '^heap@main \(three\.c:7\)$' "$T/objects")" = 1 ] ||
		{ cat "$T/objects" >&2; fail "three.c: expected three.c:6 twice with columns, three.c:7 without"; }
	expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/three.lpt" -- "$T/three"
	expect_status 0 "$LOCPROF" simulate "$T/three.lpt" --cache 32K:full:64 --attribute --top 5
	sed -n '/^## data objects/,/^$/p' "$T/out" | awk 'NR > 2 && NF { print $1, $2, $3 }' >"$T/simobj"
	[ "$(grep -cE '^heap@main \(three\.c:6:[0-9]+\)' "$T/simobj")" = 2 ] &&
		[ "$(grep -cE '^heap@main \(three\.c:7\)' "$T/simobj")" = 1 ] ||
		{ cat "$T/simobj" >&2; fail "three.c: simulate --attribute names the blocks otherwise"; }
	# two allocations at one line and column (a macro, as Fortran's
	# allocate(a(n), b(n))): told apart by their order
	cat >"$T/two-allocations.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#define TWO(a, b, n) ((a) = malloc((n) * sizeof(*(a))), (b) = malloc((n) * sizeof(*(b))))
int main(void)
{
	long n = 1 << 16; double s = 0, *x, *y;
	TWO(x, y, n);
	for (long i = 0; i < n; i++)
		x[i] = y[i] = (double)i;
	for (int r = 0; r < 10; r++)
		for (long i = 0; i < n; i++)
			s += x[i] * y[i];
	printf("%g\n", s);
	free(x), free(y);
	return 0;
}
C
	objects_of cc -O1 "$T/two-allocations.c" two
	for k in 1 2; do
		expect_object "^ *heap@main \(two-allocations\.c:7, call $k of 2\) " \
			"heap@main (two-allocations.c:7, call $k of 2)"
	done
	# names over 32 characters widen the column: every row as long as
	# the heading
	awk 'NR > 1 && NF { n[length($0)]++ } END { k = 0; for (l in n) k++; exit k != 1 }' "$T/objects" ||
		{ cat "$T/objects" >&2; fail "the objects table's rows are not aligned"; }
fi
# One template allocating at one line, instantiated for two types and
# inlined into main at two lines: two data structures, whose names elide
# the template arguments alike; the caller's line tells them apart, in
# report as in simulate --attribute.
if command -v clang++ >/dev/null; then
	cat >"$T/inst.cpp" <<'C'
#include <cstdio>
template <class T> static T *make(long n)
{
	return new T[n]();
}
template <class T> static double sweep(T *p, long n)
{
	double s = 0;
	for (int r = 0; r < 10; r++)
		for (long i = 0; i < n; i++)
			s += (double)(p[i] += (T)1);
	return s;
}
int main()
{
	long n = 1 << 15;
	float *f = make<float>(n);
	double *d = make<double>(n);
	std::printf("%g\n", sweep(f, n) + sweep(d, n));
	delete[] f;
	delete[] d;
	return 0;
}
C
	objects_of c++ -O2 "$T/inst.cpp" instcpp
	for line in 17 18; do
		expect_object "^ *heap@make<\.\.\.> \(inst\.cpp:4\) in main \(inst\.cpp:$line\) " \
			"heap@make<...> (inst.cpp:4) in main (inst.cpp:$line)"
	done
	expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/instcpp.lpt" -- "$T/instcpp"
	expect_status 0 "$LOCPROF" simulate "$T/instcpp.lpt" --cache 32K:full:64 --attribute --top 5
	[ "$(sed -n '/^## data objects/,/^$/p' "$T/out" |
		grep -cE '^heap@make<\.\.\.> \(inst\.cpp:4\) in main \(inst\.cpp:1[78]\) ')" = 2 ] ||
		{ cat "$T/out" >&2; fail "simulate --attribute names the two instances otherwise"; }
	# the program's own lines: a std::map filled and searched, its
	# inlined tree code charged to main's lines that call it (7 and 11),
	# where the lines table has the library's headers
	cat >"$T/own.cpp" <<'C'
#include <cstdio>
#include <map>
int main()
{
	std::map<long, long> m;
	for (long i = 0; i < 200000; i++)
		m[i * 7919 % 200003] = i;
	long s = 0;
	for (int r = 0; r < 3; r++)
		for (long i = 0; i < 200000; i++) {
			auto it = m.find(i);
			s += it != m.end() ? it->second % 3 : 0;
		}
	std::printf("%ld\n", s);
	return 0;
}
C
	"$LOCPROF" c++ -O2 -g -o "$T/own" "$T/own.cpp" || fail "cannot build own.cpp"
	expect_status 0 "$LOCPROF" record -q -o "$T/own.lpp" --rate 1e-3 -- "$T/own"
	expect_status 0 "$LOCPROF" report "$T/own.lpp" --sizes 32K --top 3
	sed -n '/^top source lines/,/^$/p' "$T/out" | awk 'NR == 3 { print $NF }' >"$T/top-line"
	sed -n '/^top lines of the program.s own code/,/^$/p' "$T/out" | awk 'NR == 3 { print $NF }' >"$T/top-own"
	grep -qE '^(stl_[a-z_]+|[a-z_]+)\.h:[0-9]+$' "$T/top-line" ||
		{ cat "$T/out" >&2; fail "own.cpp: the lines table's top row should be the library's header"; }
	grep -qE '^own\.cpp:(7|11)$' "$T/top-own" ||
		{ cat "$T/out" >&2; fail "own.cpp: the program's own lines should put own.cpp:7 or :11 first"; }
	expect_status 0 "$LOCPROF" report "$T/own.lpp" --sizes 32K --top 3 --format json
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); h = d["hot"]
assert h["own_lines"][0]["file"] == "own.cpp" and h["own_lines"][0]["line"] in (7, 11), h["own_lines"]' "$T/out" ||
		fail "own.cpp: report --format json has no own_lines with own.cpp first"
fi
if command -v gcc >/dev/null; then
	gcc -O2 -g -o "$T/lsg" "$LOCPROF_SRC/tests/data/names-lineshare.c" || fail "gcc cannot build names-lineshare.c"
	expect_status 0 "$LOCPROF" record -q --backend valgrind -o "$T/vg.lpp" --rate 0.05 --seed 2 -- "$T/lsg"
	check "valgrind" "$T/vg.lpp"
fi
echo ok
