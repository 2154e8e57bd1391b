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
