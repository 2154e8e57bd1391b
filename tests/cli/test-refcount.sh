# The reference count of a profile is exact: the same at every sampling
# rate, with --samples, with every build option, and equal to the count of
# a full trace of the same binary. The target's first reference follows a
# malloc (tests/rt/allocfirst.c), where a thread set up by the allocation
# event once started its clock too early and added its first gap to the
# count.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

refs_of_profile() { "$LOCPROF" dump "$1" | awk '/^references:/ { print $2 }'; }

builds="lto"
[ -e "$LOCPROF_BUILD/src/rt/locprof-pass.so" ] && builds="$builds nolto sancov"
for b in $builds; do
	case $b in
	lto) opts= ;;
	nolto) opts=--no-lto ;;
	sancov) opts=--sancov ;;
	esac
	"$LOCPROF" cc $opts -O2 -o "$T/$b" "$LOCPROF_SRC/tests/rt/allocfirst.c" || fail "cannot build $b"
	expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/$b.lpt" -- "$T/$b"
	expect_status 0 "$LOCPROF" stackdist "$T/$b.lpt"
	want=$(awk '/^references / { print $2 }' "$T/out")
	[ "$want" -gt 400000 ] || fail "$b: trace has $want references"
	for how in "--rate 1e-2" "--rate 1e-4" "--rate 1e-6" "--rate 1e-9" "--samples 20"; do
		expect_status 0 "$LOCPROF" record -q -o "$T/$b.lpp" $how -- "$T/$b"
		got=$(refs_of_profile "$T/$b.lpp")
		[ "$got" = "$want" ] || fail "$b $how: $got references, the trace has $want"
		# No sample begins at or after the end of the run.
		"$LOCPROF" dump "$T/$b.lpp" | awk -v n="$want" '!/^#/ && NF == 8 && $2 + 0 >= n + 0 { bad = 1 } END { exit bad }' ||
			fail "$b $how: a sample begins after the last reference"
	done
done
