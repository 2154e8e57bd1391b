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
