# The valgrind backend's allocation events in sample mode: by default only
# the blocks a sample or a reuse touched (each allocation sent, with its
# original time, when a sample first falls in the block; its free only if
# the allocation was sent), with the run's totals; -X --alloc-events=all
# sends every block's. The data-object attribution of `locprof report` must
# be the same with both (tests/vg/vg-allocs.c: 20000 short-lived nodes,
# 20000 blocks freed untouched, three hot arrays, one grown by realloc).
source "$(dirname "$0")/lib.sh"

TOOL="$LOCPROF_BUILD/src/vg/locprof-amd64-linux"
[ -x "$TOOL" ] || fail "the valgrind tool was not built ($TOOL): is valgrind installed (scripts/install-deps)?"
command -v valgrind >/dev/null || fail "valgrind is not installed (scripts/install-deps)"
gcc -O2 -g -o "$T/allocs" "$LOCPROF_SRC/tests/vg/vg-allocs.c"

hexawk='function hex(s,   i, c, v) { v = 0; s = tolower(s); sub(/^0x/, "", s);
	for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
	return v }'

# The default preload wraps the program's own malloc (glibc's, traced);
# -X --allocs=replace uses valgrind's malloc replacement (blocks from
# valgrind's allocator, malloc's own references not traced).
check_allocs() { # PRELOAD-MODE
	local am=$1
	for m in touched all; do
		expect_status 0 "$LOCPROF" record --backend valgrind --rate 0.01 --seed 5 -X --alloc-events=$m \
			-X --allocs=$am -o "$T/$m.lpp" -- "$T/allocs" 20000 30
		"$LOCPROF" dump "$T/$m.lpp" >"$T/$m.dump"
		for at in 4K 32K; do
			"$LOCPROF" report --top 100 --at $at "$T/$m.lpp" >"$T/$m.rep" || fail "report of $m.lpp failed"
			# the objects section, without its heading (which counts the blocks)
			# and the tables after it
			sed -n '/^top data objects/,/^$/p' "$T/$m.rep" | tail -n +2 >"$T/$m.$at.obj"
			[ -s "$T/$m.$at.obj" ] || fail "no data objects in the report of $m.lpp"
		done
	done

	# the same attribution from the touched blocks as from all of them
	for at in 4K 32K; do
		diff "$T/all.$at.obj" "$T/touched.$at.obj" >"$T/diff" ||
			fail "--allocs=$am: data objects at $at differ between --alloc-events=all and touched: $(cat "$T/diff")"
	done
	# the array grown by realloc is named by the realloc's call site
	expect_grep "heap@grow_c " "$T/touched.32K.obj"
	expect_grep "heap@make_a " "$T/touched.32K.obj"
	expect_grep "heap@make_b " "$T/touched.32K.obj"

	# the profile says what its events are, and has the run's totals
	expect_grep "^allocation events of touched blocks only$" "$T/touched.dump"
	grep -q "touched blocks only" "$T/all.dump" && fail "--alloc-events=all profile claims touched blocks only"
	# 20000 nodes + 20000 untouched + 3 arrays + realloc's new block + libc's stdout buffer
	expect_grep "^allocations in the run: 40005 \(40004 frees, [0-9]+ bytes\)$" "$T/touched.dump"
	expect_grep "^allocations in the run: 40005 \(40004 frees, [0-9]+ bytes\)$" "$T/all.dump"
	expect_grep "^allocation events: 80009 \(40005 allocs, 40004 frees\)$" "$T/all.dump"
	expect_grep '"alloc_flags":7,' <("$LOCPROF" dump --format json "$T/touched.lpp")
	expect_grep "the touched ones of 40005 allocated" "$T/touched.rep"

	# blocks freed before any sample touched them leave no event
	[ "$(grep -c '^alloc .* 777 0x' "$T/all.dump")" -eq 20000 ] || fail "--alloc-events=all lost 777-byte blocks"
	n777=$(grep -c '^alloc .* 777 0x' "$T/touched.dump" || true)
	if [ "$am" = replace ]; then
		# the program never touches the 777-byte blocks: no sample can fall there
		[ "$n777" -eq 0 ] || fail "an untouched 777-byte block has an allocation event"
	else
		# glibc's free writes its free-list link into the block: a few are sampled
		[ "$n777" -lt 2000 ] || fail "$n777 events of 777-byte blocks that only malloc touched"
	fi
	# most nodes are never sampled either (rate 0.01, a few references each)
	n=$(sed -n 's/^allocation events: [0-9]* (\([0-9]*\) allocs.*/\1/p' "$T/touched.dump")
	[ "$n" -gt 3 ] && [ "$n" -lt 8000 ] || fail "$n allocation events of touched blocks, expected a few thousand"

	# every event pairs up: a free only after its block's allocation; every
	# block sent holds the line of a sample (the sample's or its reuse's line:
	# the reuse is on the same line)
	awk "$hexawk"'
		/^# event/ { ev = 1; next }
		!ev && /^[0-9]/ { line[int(hex($4) / 64)] = 1; next }
		ev && $1 == "alloc" { a = hex($4); open[a] = 1; s = hex($5);
			hit = 0; for (l = int(a / 64); l <= int((a + s - 1) / 64); l++) if (l in line) { hit = 1; break }
			if (!hit) { print "block sent but never sampled: " $0; bad++ } }
		ev && $1 == "free" { a = hex($4); if (!(a in open)) { print "free without its allocation: " $0; bad++ }
			delete open[a] }
		END { exit bad > 0 }' "$T/touched.dump" >"$T/pairs" || fail "$(head -3 "$T/pairs")"
	# allocation times: the allocating thread's clock, before its samples
	awk '/^# event/ { ev = 1; next } ev && $1 == "alloc" && $2 == "-" { bad++ } END { exit bad > 0 }' \
		"$T/touched.dump" || fail "an allocation event without a time"
}
check_allocs yes
check_allocs replace

# C++: new and delete are reported once (not also their malloc and free
# inside), at the program's call site
if command -v g++ >/dev/null; then
	cat >"$T/cxx.cc" <<'CXX'
#include <cstdio>
__attribute__((noinline)) static long *make(int n) { long *p = new long[n]; __asm__ volatile("" : : "r"(p) : "memory"); return p; }
int main() {
	long s = 0;
	for (int r = 0; r < 200; r++) {
		long *p = make(1000);
		for (int i = 0; i < 1000; i++) s += p[i] = i;
		delete[] p;
	}
	std::printf("%ld\n", s);
}
CXX
	g++ -O2 -g -o "$T/cxx" "$T/cxx.cc"
	expect_status 0 "$LOCPROF" record --backend valgrind --rate 0.01 -X --alloc-events=all -o "$T/cxx.lpp" -- "$T/cxx"
	"$LOCPROF" dump "$T/cxx.lpp" >"$T/cxx.dump"
	[ "$(grep -c '^alloc .* 8000 0x' "$T/cxx.dump")" -eq 200 ] || fail "new long[1000] is not 200 events of 8000 bytes"
	"$LOCPROF" report --top 5 --at 4K "$T/cxx.lpp" >"$T/cxx.rep"
	expect_grep "heap@make" "$T/cxx.rep"
fi

# threads and a forked child (tests/vg/vg-threads.c: each thread and the
# child calloc 400000 bytes in work()): every thread's calls are watched
gcc -O2 -g -pthread -o "$T/threads" "$LOCPROF_SRC/tests/vg/vg-threads.c"
expect_status 0 "$LOCPROF" record --backend valgrind --rate 0.01 -X --alloc-events=all -o "$T/th.lpp" -- "$T/threads"
"$LOCPROF" dump "$T/th.lpp" >"$T/th.dump"
[ "$(grep -c '^alloc [0-9]* [01] 0x[0-9a-f]* 400000 ' "$T/th.dump")" -eq 2 ] ||
	fail "not one 400000-byte allocation per thread: $(grep 400000 "$T/th.dump")"
for f in "$T"/th.[0-9]*.lpp; do
	"$LOCPROF" dump "$f" | grep -c '^alloc [0-9]* 0 0x[0-9a-f]* 400000 ' >/dev/null || fail "the forked child's allocation is missing"
done
"$LOCPROF" report --top 5 --at 4K "$T/th.lpp" >"$T/th.rep"
expect_grep "heap@work " "$T/th.rep"

# bad value
expect_status 1 "$LOCPROF" record --backend valgrind -X --alloc-events=some -- "$T/allocs" 1 1
expect_grep "Bad option: --alloc-events=some" "$T/err"

echo "valgrind allocation events: ok"
