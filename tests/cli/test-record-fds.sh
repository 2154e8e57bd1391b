# locprof record of programs that take the runtime's descriptor away
# (tests/rt/closefd.c): closing every descriptor above 2 (a loop and
# close_range), dup2() over them, closing then opening a file that gets
# fd 3, a socket dup2()ed over the runtime's, and threads whose
# connections the main thread closes. Each keeps its profile (docs/runtime.md,
# "The connection"): exit status 0, the "exit 0" summary, about as many
# samples and references as the same program leaving its descriptors
# alone, and nothing of the protocol in the program's own files.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

"$LOCPROF" cc -O1 -g -o "$T/closefd" "$LOCPROF_SRC/tests/rt/closefd.c" -lpthread || fail "cannot build closefd"

# summary FILE PATH: "samples references" of PATH's summary line in FILE.
summary() {
	sed -nE "s|^locprof: $2: ([0-9]+) samples \\([0-9]+ dangling\\) of ([0-9]+) references .*|\\1 \\2|p" "$1"
}

# check NAME RECORD_ARGS -- MODE [ARG]: recorded, MODE's run exits 0,
# prints the reference run's sum and nothing else (its stdout gets no
# protocol bytes), and keeps more than half of that run's samples and
# references.
check() {
	local name=$1 got s r
	shift
	expect_status 0 "$LOCPROF" record -o "$T/$name.lpp" "$@"
	[ "$(cat "$T/out")" = "$sum" ] || fail "$name: the program printed '$(head -3 "$T/out")', not $sum"
	expect_grep "^locprof: $T/$name.lpp: .*\\(pid [0-9]+, exit 0\\)$" "$T/err"
	got=$(summary "$T/err" "$T/$name.lpp")
	[ -n "$got" ] || fail "$name: no summary line"
	read -r s r <<<"$got"
	[ "$((2 * s))" -gt "$base_s" ] || fail "$name: $s samples, the reference run has $base_s"
	[ "$((2 * r))" -gt "$base_r" ] || fail "$name: $r references, the reference run has $base_r"
	expect_status 0 "$LOCPROF" dump "$T/$name.lpp"
	expect_grep '^references: [1-9][0-9]*  threads: [1-9]' "$T/out"
}

for flush in 100 1; do
	# 0. The reference run, at the same settings.
	expect_status 0 "$LOCPROF" record -o "$T/none.lpp" --rate 0.01 --flush-ms $flush -- "$T/closefd" none
	sum=$(head -1 "$T/out")
	read -r base_s base_r <<<"$(summary "$T/err" "$T/none.lpp")"
	[ "${base_s:-0}" -gt 1000 ] || fail "reference run: only ${base_s:-0} samples"

	# 1. Every descriptor above 2 closed, by a loop and by close_range.
	check close-$flush --rate 0.01 --flush-ms $flush -- "$T/closefd" close
	check range-$flush --rate 0.01 --flush-ms $flush -- "$T/closefd" range

	# 2. dup2(1, fd) over every open descriptor above 2 (the runtime's
	#    included): nothing but the sum on the program's stdout.
	check dup-$flush --rate 0.01 --flush-ms $flush -- "$T/closefd" dup

	# 3. All closed, then a file opened at fd 3 and written at the end:
	#    exactly what the program wrote.
	rm -f "$T/own.txt"
	check reopen-$flush --rate 0.01 --flush-ms $flush -- "$T/closefd" reopen "$T/own.txt"
	[ "$(cat "$T/own.txt")" = program ] || { od -c "$T/own.txt" | head >&2; fail "reopen: the program's file holds more than its own line"; }

	# 4. A socket of the program dup2()ed over the runtime's: not a byte
	#    reaches it (the child holding its other end counts them).
	rm -f "$T/stolen"
	check steal-$flush --rate 0.01 --flush-ms $flush -- "$T/closefd" steal "$T/stolen"
	[ "$(cat "$T/stolen")" = 0 ] || fail "steal: $(cat "$T/stolen") bytes reached the program's socket"

	# 5. Three threads; the main one closes everything while the two
	#    others have their connections.
	check threads-$flush --rate 0.01 --flush-ms $flush -- "$T/closefd" threads
	expect_grep '^references: [1-9][0-9]*  threads: 3$' "$T/out"
done

# 6. Trace mode: the whole trace, in order, across the new connection.
expect_status 0 "$LOCPROF" record --mode trace -o "$T/none.lpt" -- "$T/closefd" none
want=$(sed -nE 's/^locprof: .*: ([0-9]+) references, .*/\1/p' "$T/err")
expect_status 0 "$LOCPROF" record --mode trace -o "$T/close.lpt" -- "$T/closefd" range
expect_grep '\(pid [0-9]+, exit 0\)$' "$T/err"
got=$(sed -nE 's/^locprof: .*: ([0-9]+) references, .*/\1/p' "$T/err")
[ -n "$want" ] && [ "$got" -ge $((want - 10)) ] || fail "trace: $got references, the reference run has $want"

echo "PASS"
