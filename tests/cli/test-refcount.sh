# The reference count of a profile is exact: the same at every sampling
# rate, with --samples, with every build option, and equal to the count of
# a full trace of the same binary. The target's first reference follows a
# malloc (tests/rt/allocfirst.c), where a thread set up by the allocation
# event once started its clock too early and added its first gap to the
# count.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

refs_of_profile() { "$LOCPROF" dump "$1" | awk '/^references:/ { print $2 }'; }
# line accesses of each line size of a profile: "16:N 64:M ..."
lines_of_profile() { "$LOCPROF" dump "$1" | awk '/^line [0-9]+:/ { sub(":", "", $2); printf "%s:%s ", $2, $3 }'; }

rates="1e-2 1e-3 1e-4 1e-5 1e-6 1e-7 1e-8 1e-9"
builds="lto"
[ -e "$LOCPROF_BUILD/src/rt/locprof-pass.so" ] && builds="$builds nolto sancov"
command -v gcc >/dev/null && builds="$builds gcc"
for b in $builds; do
	case $b in
	lto) opts= ;;
	nolto) opts=--no-lto ;;
	sancov) opts=--sancov ;;
	gcc) opts=--gcc ;;
	esac
	[ $b = gcc ] || "$LOCPROF" cc $opts -O2 -o "$T/$b" "$LOCPROF_SRC/tests/rt/allocfirst.c" || fail "cannot build $b"
	[ $b = gcc ] || expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/$b.lpt" -- "$T/$b"
	[ $b = gcc ] || expect_status 0 "$LOCPROF" stackdist "$T/$b.lpt"
	want=$(awk '/^references / { print $2 }' "$T/out")
	[ $b = gcc ] || [ "$want" -gt 400000 ] || fail "$b: trace has $want references"
	for how in "--rate 1e-2" "--rate 1e-4" "--rate 1e-6" "--rate 1e-9" "--samples 20"; do
		[ $b = gcc ] && break
		expect_status 0 "$LOCPROF" record -q -o "$T/$b.lpp" $how -- "$T/$b"
		got=$(refs_of_profile "$T/$b.lpp")
		[ "$got" = "$want" ] || fail "$b $how: $got references, the trace has $want"
		# No sample begins at or after the end of the run.
		"$LOCPROF" dump "$T/$b.lpp" | awk -v n="$want" '$1 ~ /^[0-9]+$/ && NF >= 8 && $2 + 0 >= n + 0 { bad = 1 } END { exit bad }' ||
			fail "$b $how: a sample begins after the last reference"
	done

	# Straddle patterns (tests/straddle/): unaligned 8-byte loads at offset
	# 60 of each line, 16- and 32-byte vector accesses at odd offsets, a
	# vectorised stencil. A reference touching k lines is k line accesses
	# in a profile, at every rate and line size, as in stackdist on the
	# trace of the same binary; the reference count is the same at every
	# rate from 1e-2 to 1e-9.
	for k in unaligned vecodd stencil; do
		case $k in
		unaligned) args="1024 20" ;;
		vecodd) args="4000 4" ;;
		stencil) args="120 4" ;;
		esac
		"$LOCPROF" cc $opts -O3 -mavx2 -o "$T/$k-$b" "$LOCPROF_SRC/tests/straddle/$k.c" || fail "cannot build $k $b"
		expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/$k.lpt" -- "$T/$k-$b" $args
		want_lines=
		for l in 16 64 128; do
			expect_status 0 "$LOCPROF" stackdist --line $l "$T/$k.lpt"
			want_lines="$want_lines$l:$(awk '/^line accesses / { print $3 }' "$T/out") "
			want=$(awk '/^references / { print $2 }' "$T/out")
		done
		[ $k != unaligned ] || [ "${want_lines#*64:}" != "${want_lines#*16:}" ] || fail "$k $b: nothing straddles ($want_lines)"
		for r in $rates; do
			expect_status 0 "$LOCPROF" record -q --rate $r --line 16,64,128 -o "$T/$k.lpp" -- "$T/$k-$b" $args
			got=$(refs_of_profile "$T/$k.lpp")
			[ "$got" = "$want" ] || fail "$k $b rate $r: $got references, the trace has $want"
			got=$(lines_of_profile "$T/$k.lpp")
			[ "$got" = "$want_lines" ] || fail "$k $b rate $r: line accesses $got, stackdist on the trace: $want_lines"
		done
	done
done

# A target killed by SIGKILL keeps its reference count up to the last
# flush, and report never shows a count of 0 beside its samples.
"$LOCPROF" cc -O1 -o "$T/cyclic" "$LOCPROF_SRC/tests/rt/cyclic.c" -lpthread || fail "cannot build cyclic"
killed_keeps_counts 1 "REFS line accesses of 64 bytes"
