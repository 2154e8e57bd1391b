# Shared helpers for the command-line tests (tests/cli/test-*.sh).
# ctest sets LOCPROF (the binary), LOCPROF_SRC and LOCPROF_BUILD.
set -euo pipefail
: "${LOCPROF:?run through ctest, which sets LOCPROF}"
T=$(mktemp -d /tmp/locprof-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# expect_status N CMD...: run CMD, capturing stdout in $T/out and stderr in
# $T/err, and fail unless it exits with status N.
expect_status() {
	local want=$1 got=0
	shift
	"$@" >"$T/out" 2>"$T/err" || got=$?
	if [ "$got" != "$want" ]; then
		echo "--- stdout" >&2; head -20 "$T/out" >&2
		echo "--- stderr" >&2; head -20 "$T/err" >&2
		fail "'$*' exited $got, expected $want"
	fi
}

# expect_grep PATTERN FILE: fail unless FILE has a line matching PATTERN.
expect_grep() {
	grep -qE -- "$1" "$2" || { echo "--- $2:" >&2; head -20 "$2" >&2; fail "no line matching '$1' in $2"; }
}

# expect_one_line FILE: an error message is exactly one line.
expect_one_line() {
	[ "$(wc -l <"$1")" -eq 1 ] || { cat "$1" >&2; fail "expected exactly one line in $1"; }
}

# For the tests of locprof cc's pass (test-cc-pass, test-loop-version,
# test-check-merge), which compare two builds of one program:
# need_pass: skip the test without clang or without the pass.
need_pass() {
	command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }
	[ -e "$LOCPROF_BUILD/src/rt/locprof-pass.so" ] || { echo "SKIP: the pass was not built (no llvm-14-dev)" >&2; exit 0; }
}
# $NR runs a command without address randomisation where setarch allows:
# heap and stack at the same addresses in both builds' runs, so that their
# lines and reuse times compare.
NR=; setarch -R true 2>/dev/null && NR="setarch -R"
# samples FILE: a text profile's samples without their pcs (thread, time,
# reuse time, size, kind, line size), sorted.
samples() { awk '!/^#/ { print $1, $2, $3, $6, $7, $8 }' "$1" | sort; }
# refs FILE: a text trace's kinds and sizes.
refs() { awk '$1 == "R" || $1 == "W" { print $1, $3 }' "$1"; }
# killed_keeps_counts SETTLE REPORT_LINE RECORD_ARGS...: $T/cyclic (built
# from tests/rt/cyclic.c by the caller) recorded with RECORD_ARGS at rate
# 0.001, with a flush every 20 ms and every 100 s, is killed by SIGKILL
# SETTLE seconds after it starts. The profile keeps its reference count up
# to the last flush (sent with every sample batch): non-zero, one thread,
# and consistent with its samples (about rate x references of them), and
# report shows REPORT_LINE after "profile ...: N samples, ", with REFS
# standing for that count (never a count of 0 beside samples).
killed_keeps_counts() {
	local settle=$1 line=$2 flush rec st refs n
	shift 2
	for flush in 20 100000; do
		rm -f "$T/pid"
		"$LOCPROF" record "$@" -o "$T/kill.lpp" --rate 0.001 --flush-ms $flush -- \
			"$T/cyclic" 97 1000 spin "$T/pid" >"$T/out" 2>"$T/err" &
		rec=$!
		for _ in $(seq 600); do [ -s "$T/pid" ] && break; sleep 0.05; done
		[ -s "$T/pid" ] || fail "the target did not start"
		sleep "$settle"
		kill -KILL "$(cat "$T/pid")"
		st=0; wait $rec || st=$?
		[ $st = 137 ] || fail "SIGKILL: locprof exited $st, expected 137"
		expect_status 0 "$LOCPROF" dump "$T/kill.lpp"
		expect_grep '^references: [1-9][0-9]*  threads: 1$' "$T/out"
		refs=$(awk '/^references:/ { print $2 }' "$T/out")
		n=$(awk '/^line 64:/ { print $6 }' "$T/out")
		# 1000 samples or more (a batch is 4096), and the samples of a
		# batch go with the count at the time it is sent
		[ "$n" -ge 1000 ] || fail "flush $flush: only $n samples kept"
		awk -v n="$n" -v r="$refs" 'BEGIN { e = r * 0.001; exit !(n > 0.9 * e && n < 1.1 * e) }' ||
			fail "flush $flush: $n samples for $refs references at rate 0.001"
		expect_status 0 "$LOCPROF" report "$T/kill.lpp" --top 0
		expect_grep "^profile .*: $n samples, ${line//REFS/$refs}" "$T/out"
	done
}
