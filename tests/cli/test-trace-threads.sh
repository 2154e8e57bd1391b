# locprof record --mode trace of a multi-threaded program: every reference
# carries its thread, and the trace's order agrees with the program's
# synchronisation (tests/rt/handoff.c passes a token between two threads:
# the accesses to its slots must alternate write, read). Under the
# compiler instrumentation and, where it was built, the valgrind tool.
. "$(dirname "$0")/lib.sh"
N=1000

# check TRACE SLOT_LO SLOT_HI: the slot accesses alternate W by one thread,
# R by the other, N of each
check() {
	"$LOCPROF" convert "$1" "$T/t.txt" || fail "cannot convert $1"
	awk -v lo="$2" -v hi="$3" -v n=$N '
	function hex(s,   i, c, v) { v = 0; s = tolower(s); sub(/^0x/, "", s);
		for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
		return v }
	BEGIN { l = hex(lo); h = hex(hi) }
	($1 == "R" || $1 == "W") { a = hex($2); if (a < l || a >= h) next
		k++; want = k % 2 ? "W" : "R"
		if ($1 != want) { print "access " k " is " $0 ", expected " want; bad = 1; exit }
		if ($1 == "W") wt = $5; else rt = $5
		if (wt != "" && rt != "" && wt == rt) { print "writer and reader both thread " wt; bad = 1; exit } }
	END { if (!bad && k != 2 * n) { print k " slot accesses, expected " 2 * n; bad = 1 } exit bad }' "$T/t.txt" ||
		fail "$1: the trace is not in the order of the program"
}

if command -v clang >/dev/null; then
	"$LOCPROF" cc -O1 -o "$T/handoff" "$LOCPROF_SRC/tests/rt/handoff.c" -lpthread || fail "cannot build handoff"
	expect_status 0 "$LOCPROF" record --mode trace -o "$T/inst.lpt" -- "$T/handoff" $N
	read -r _ lo hi <"$T/out"
	check "$T/inst.lpt" "$lo" "$hi"
fi

TOOL="$LOCPROF_BUILD/src/vg/locprof-amd64-linux"
if [ -x "$TOOL" ] && command -v valgrind >/dev/null; then
	gcc -O1 -g -pthread -o "$T/handoff-vg" "$LOCPROF_SRC/tests/rt/handoff.c"
	expect_status 0 "$LOCPROF" record --backend valgrind --mode trace -o "$T/vg.lpt" -- "$T/handoff-vg" $N
	read -r _ lo hi <"$T/out"
	check "$T/vg.lpt" "$lo" "$hi"
fi
