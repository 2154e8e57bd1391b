# locprof record --backend valgrind: the tool in src/vg on small programs
# (tests/vg/*.c, built here with gcc). Each valgrind run costs about a
# second of start-up, so the programs are tiny.
source "$(dirname "$0")/lib.sh"

TOOL="$LOCPROF_BUILD/src/vg/locprof-amd64-linux"
[ -x "$TOOL" ] || fail "the valgrind tool was not built ($TOOL): is valgrind installed (scripts/install-deps)?"
command -v valgrind >/dev/null || fail "valgrind is not installed (scripts/install-deps)"
for p in pattern crash threads; do
	gcc -O2 -g -pthread -o "$T/$p" "$LOCPROF_SRC/tests/vg/vg-$p.c"
done

# hex HEX -> decimal (mawk has no strtonum)
hexawk='function hex(s,   i, c, v) { v = 0; s = tolower(s); sub(/^0x/, "", s);
	for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
	return v }'

# ---- a known pattern: K lines, R cycles -> reuse distance K-1 -------------
K=100 R=200
expect_status 0 "$LOCPROF" record --backend valgrind --rate 0.05 --seed 3 -o "$T/p.lpp" -- "$T/pattern" $K $R
read -r _ lo hi _ <"$T/out"
expect_grep "p.lpp: [0-9]+ samples .* of [0-9]+ references( at rate [^,]*)?, 1 thread .*exit 0" "$T/err"
"$LOCPROF" dump "$T/p.lpp" >"$T/dump"
expect_grep "^source: valgrind" "$T/dump"
awk -v lo="$lo" -v hi="$hi" -v k=$K "$hexawk"'
	/^[0-9]/ && NF >= 7 { a = hex($4); if (a >= hex(lo) && a < hex(hi)) {
		if ($7 == "dangling") d++; else if ($7 == k - 1) ok++; else { bad++; print "bad sample: " $0 } } }
	END { printf "%d %d %d\n", ok, bad, d }' "$T/dump" >"$T/count"
read -r ok bad dangling <"$T/count"
# 20000 loads at rate 0.05: about 1000 samples; only those of the last cycle
# may dangle; every other one sees exactly K-1 references in between.
[ "$bad" -eq 0 ] || fail "$bad samples of the pattern have a reuse distance other than $((K - 1))"
[ "$ok" -ge 850 ] && [ "$ok" -le 1150 ] || fail "$ok pattern samples with distance $((K - 1)), expected about 1000"
[ "$dangling" -le 20 ] || fail "$dangling dangling pattern samples"

# Same seed, same samples: the same references are selected (time, pc). (Not
# every reuse distance repeats: ld.so reads tables indexed by the random
# bytes the kernel puts on the stack, a little differently each run.)
expect_status 0 "$LOCPROF" record --backend valgrind --rate 0.05 --seed 3 -o "$T/p2.lpp" -- "$T/pattern" $K $R
"$LOCPROF" dump "$T/p2.lpp" | grep '^[0-9]' | awk '{print $2, $3}' >"$T/s2"
grep '^[0-9]' "$T/dump" | awk '{print $2, $3}' >"$T/s1"
cmp -s "$T/s1" "$T/s2" || fail "two runs with the same seed selected different references"

# ---- the fast path is exact --------------------------------------------------
# Three loads per line from one base register (offsets 0, 24, 56): the
# instrumentation stores the base once and reads the filter once for the
# three; every sample must still have its exact distance (0 after the
# loads at 0 and 24, 3K-3 after the load at 56).
expect_status 0 "$LOCPROF" record --backend valgrind --rate 0.05 --seed 4 -o "$T/f.lpp" -- "$T/pattern" $K $R fields
read -r _ lo hi _ <"$T/out"
"$LOCPROF" dump "$T/f.lpp" >"$T/fdump"
awk -v lo="$lo" -v hi="$hi" -v k=$K "$hexawk"'
	/^[0-9]/ && NF >= 7 { a = hex($4); if (a >= hex(lo) && a < hex(hi)) {
		o = (a - hex(lo)) % 64; want = (o == 56) ? 3 * k - 3 : 0
		if ($7 == "dangling") d++; else if ($7 == want) ok++; else { bad++; print "bad sample: " $0 >"/dev/stderr" } } }
	END { printf "%d %d %d\n", ok, bad, d }' "$T/fdump" >"$T/count"
read -r ok bad dangling <"$T/count"
[ "$bad" -eq 0 ] || fail "$bad samples of the fields pattern have a wrong reuse distance"
[ "$ok" -ge 2600 ] && [ "$ok" -le 3400 ] || fail "$ok fields samples with the expected distance, expected about 3000"
# --selfcheck=yes: at every segment's end the tool rebuilds each address
# from the shared slots and compares it with the access's own (stored
# separately), and checks that the fast path called the slow path whenever
# the countdown expired or a line of the segment is watched: on the whole
# run (ld.so, libc, the program), with one and with two line sizes, and in
# trace mode.
for opts in "--rate 0.02 -o $T/sc.lpp" "--rate 0.05 --line 64,256 -o $T/sc.lpp" "-m trace -o $T/sc.lpt"; do
	# shellcheck disable=SC2086
	expect_status 0 "$LOCPROF" record --backend valgrind $opts --seed 5 -X --selfcheck=yes \
		-- "$T/pattern" $K 20 fields
	expect_grep "locprof-selfcheck: [1-9][0-9]* segments, [1-9][0-9]* accesses, [1-9][0-9]* sharing a slot, 0 wrong addresses, 0 missed calls" "$T/err"
	rm -f "$T/sc.lpp" "$T/sc.lpt"
done
# The same on string instructions (rep stos/movs, forward and backward:
# unrolled loops kept in one segment, addresses stepping by the direction
# flag), where the samples land in the loops.
for opts in "--rate 0.01 -o $T/sc.lpp" "-m trace -o $T/sc.lpt"; do
	# shellcheck disable=SC2086
	expect_status 0 "$LOCPROF" record --backend valgrind $opts --seed 5 -X --selfcheck=yes \
		-- "$T/pattern" 64 50 strings
	expect_grep "locprof-selfcheck: [1-9][0-9]* segments, [1-9][0-9]* accesses, [1-9][0-9]* sharing a slot, 0 wrong addresses, 0 missed calls" "$T/err"
	rm -f "$T/sc.lpp" "$T/sc.lpt"
done

# A rate locprof writes with an exponent (%.17g: 2.0000000000000002e-05)
# reaches the tool intact.
expect_status 0 "$LOCPROF" record --backend valgrind --rate 2e-5 -o "$T/r.lpp" -- "$T/pattern" 10 10
"$LOCPROF" dump "$T/r.lpp" >"$T/rdump"
expect_grep "^rate: 2e-05 " "$T/rdump"

# Trace mode: the buffer gets exactly K*R one-byte reads, in the stream of
# a compressed .lpt that the simulator reads.
expect_status 0 "$LOCPROF" record --backend valgrind -m trace -o "$T/p.lpt" -- "$T/pattern" $K $R
read -r _ lo hi _ <"$T/out"
expect_grep "p.lpt: [0-9]+ references" "$T/err"
"$LOCPROF" convert "$T/p.lpt" "$T/p.txt"
n=$(awk -v lo="$lo" -v hi="$hi" "$hexawk"'
	($1 == "R" || $1 == "W") { a = hex($2); if (a >= hex(lo) && a < hex(hi)) { if ($1 == "R" && $3 == 1) n++; else x++ } }
	END { print n + 0, x + 0 }' "$T/p.txt")
[ "$n" = "$((K * R)) 0" ] || fail "trace: buffer references (reads, others) = $n, expected $((K * R)) 0"
expect_status 0 "$LOCPROF" simulate "$T/p.lpt" --cache 32K:8:64:lru
expect_grep "^C1 +32K:8:64:lru" "$T/out"

# The tool's trace and its samples agree: the sampler's reference count is
# the number of references in the trace of the same program.
refs_sample=$(sed -n 's/^references: \([0-9]*\).*/\1/p' "$T/dump")
refs_trace=$(grep -c '^[RW] ' "$T/p.txt")
diff=$((refs_sample - refs_trace)); diff=${diff#-}
# The two runs differ only in the environment the program starts with.
[ "$diff" -le $((refs_trace / 100)) ] || fail "sample run counted $refs_sample references, trace $refs_trace"

# ---- allocations and their call sites ----------------------------------------
expect_status 0 "$LOCPROF" record --backend valgrind -m trace -o "$T/t.lpt" -- "$T/threads"
expect_grep "t.lpt: [0-9]+ references, [1-9][0-9]* allocations, 2 threads .*exit 0" "$T/err"
# the forked child: its own output, named after its pid, with its exit status
expect_grep "t\.[0-9]+\.lpt: [0-9]+ references, [1-9][0-9]* allocations, 1 thread .*exit 7" "$T/err"
"$LOCPROF" convert "$T/t.lpt" - | grep '^A ' >"$T/allocs" || true
# 400000-byte calloc from work(): the call site is a pc inside the program
expect_grep "^A 0x[0-9a-f]+ 400000 0x" "$T/allocs"
# without the malloc replacement: glibc's malloc runs (and is traced), no events
expect_status 0 "$LOCPROF" record --backend valgrind -X --allocs=no -m trace -o "$T/n.lpt" -- "$T/pattern" 10 10
expect_grep "n.lpt: [0-9]+ references, 0 allocations" "$T/err"

# ---- an image that execs: its output says so, the new image has its own --------
gcc -O1 -o "$T/cyclic" "$LOCPROF_SRC/tests/rt/cyclic.c" -lpthread
rm -f "$T"/e.*
expect_status 0 "$LOCPROF" record --backend valgrind --rate 0.01 -o "$T/e.lpp" -- "$T/cyclic" 50 20 exec
expect_grep "e\.lpp: [1-9][0-9]* samples .*, 1 thread \(pid [0-9]+, exec\)$" "$T/err"
expect_grep "e\.[0-9]+(-[0-9]+)?\.lpp: [1-9][0-9]* samples .*, 1 thread \(pid [0-9]+, exit 0\)$" "$T/err"

# ---- a crash leaves its profile -------------------------------------------------
expect_status 139 "$LOCPROF" record --backend valgrind --rate 0.01 -o "$T/c.lpp" -- "$T/crash"
expect_grep "c.lpp: [1-9][0-9]* samples .* of [1-9][0-9]* references" "$T/err"
[ -s "$T/c.lpp" ] || fail "no profile after the crash"
"$LOCPROF" dump "$T/c.lpp" >"$T/cdump"
expect_grep "^source: valgrind" "$T/cdump"
# 2 million references in the loop at rate 0.01: thousands of samples
[ "$(grep -c '^64 ' "$T/cdump")" -gt 10000 ] || fail "too few samples survived the crash"

# ---- the program's argv[0] is the name as typed ------------------------------
# (valgrind searches PATH itself), as natively and under Cachegrind: a longer
# argv[0] (/usr/bin/lua5.4 for lua5.4) changed Lua's heap and its misses by 2%.
expect_status 0 "$LOCPROF" record --backend valgrind -o "$T/a0.lpp" -- sh -c 'echo "argv0=$0"'
expect_grep "^argv0=sh$" "$T/out"

# ---- bad options: one clear line from locprof ---------------------------------
expect_status 2 "$LOCPROF" record --backend valgrind -X bogus -- "$T/pattern" 1 1
expect_grep "^locprof: error: .*-X takes valgrind options" "$T/err"
expect_status 2 "$LOCPROF" record --backend valgrind -X --allocs=maybe -- "$T/pattern" 1 1
expect_grep "^locprof: error: bad -X --allocs" "$T/err"
expect_status 2 "$LOCPROF" record --backend valgrind --samples 100 -- "$T/pattern" 1 1
expect_grep "^locprof: error: --samples is not supported by the valgrind backend" "$T/err"
# options valgrind or the tool reject: valgrind's message, then ours
expect_status 1 "$LOCPROF" record --backend valgrind -X --no-such-option -- "$T/pattern" 1 1
expect_grep "Unknown option: --no-such-option" "$T/err"
expect_grep "^locprof: error: valgrind stopped before running" "$T/err"
expect_status 1 "$LOCPROF" record --backend valgrind -X --reserve-fds=-3 -- "$T/pattern" 1 1
expect_grep "Bad option: --reserve-fds=-3" "$T/err"
expect_grep "^locprof: error: valgrind stopped before running" "$T/err"
[ ! -e locprof.lpp ] || true
# a program that does not exist
expect_status 127 "$LOCPROF" record --backend valgrind -- "$T/no-such-program"
expect_one_line "$T/err"

echo "valgrind backend: ok"
