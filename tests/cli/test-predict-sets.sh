# locprof predict with set-distance histograms (collect --sets / --machine):
# on traces whose walks fold onto one set (power-of-two strides), the
# prediction from set distances equals locprof simulate of the
# set-associative LRU cache exactly, at a fitted size and 4x beyond it,
# where the binomial model does not; a one-set level is the fully
# associative cut; refusals.
. "$(dirname "$0")/lib.sh"

# size P (a multiple of 64): pc 0x10 walks P lines 4096 bytes apart (all in
# one set of a 64-set cache of 64-byte lines) three times: set and stack
# distance P-1; then pc 0x20 walks P consecutive lines three times: stack
# distance P-1, set distance P/64-1 in 64 sets
trace() {
	awk -v P="$1" 'BEGIN {
		for (r = 0; r < 3; r++) for (i = 0; i < P; i++) printf "R %x 8 10\n", 1048576 + i * 4096
		for (r = 0; r < 3; r++) for (i = 0; i < P; i++) printf "R %x 8 20\n", 268435456 + i * 64
	}' >"$T/walk-$1.txt"
}
D=$T/runs
for p in 128 192 256 320 384 1536; do
	trace $p
done
for p in 128 192 256 320 384; do
	expect_status 0 "$LOCPROF" predict collect --size $p -o "$D" --trace "$T/walk-$p.txt" --line 64 --page 4K \
		--sets 64x64,1x64
done
grep -q '^blocks 64 4096 274877907008 4294967360$' "$D/size-256.xrun" ||
	fail "run file blocks: $(grep '^blocks' "$D/size-256.xrun")"
expect_status 0 "$LOCPROF" predict fit -q "$D"

printf 'name sa\ncache L1 16K 4 64\n' >"$T/sa.machine"
printf 'name one\ncache F 16K 256 64\n' >"$T/one.machine"
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d < 1e-3 && d > -1e-3) }'; }
for p in 256 1536; do
	sim=$("$LOCPROF" simulate "$T/walk-$p.txt" --cache 16K:4:64 --format csv | tail -1 | cut -d, -f4)
	expect_status 0 "$LOCPROF" predict at "$D" --size $p --machine "$T/sa.machine" --format csv --set-distances
	row=$(grep '^[0-9.e+]*,program,' "$T/out")
	sd=$(echo "$row" | cut -d, -f11)
	[ "$(echo "$row" | cut -d, -f15)" = setd ] || fail "sa_model: $row"
	close "$sd" "$sim" || fail "P=$p: set distances predict $sd misses, simulate says $sim"
	# the binomial model (random placement) is off at 256: the consecutive
	# walk's stack distance 255 in 64 sets of 4 ways looks like conflict
	# misses, but its 4 lines per set fit
	expect_status 0 "$LOCPROF" predict at "$D" --size $p --machine "$T/sa.machine" --format csv --binomial
	row=$(grep '^[0-9.e+]*,program,' "$T/out")
	[ "$(echo "$row" | cut -d, -f15)" = binomial ] || fail "sa_model with --binomial: $row"
	# ... which the default, strided placement, is for groups with no
	# measured walk (a trace without a binary has no loops, no strides)
	expect_status 0 "$LOCPROF" predict at "$D" --size $p --machine "$T/sa.machine" --format csv
	def=$(grep '^[0-9.e+]*,program,' "$T/out")
	[ "$(echo "$def" | cut -d, -f15)" = strided ] || fail "sa_model by default: $def"
	[ "$(echo "$def" | cut -d, -f1-14)" = "$(echo "$row" | cut -d, -f1-14)" ] ||
		fail "no walks: the default is not the binomial model: $def"
	# (at 1536 both miss on every reuse)
	[ $p != 256 ] || ! close "$(echo "$row" | cut -d, -f11)" "$sim" ||
		fail "P=$p: the binomial model is exact here?"
	# one set of 256 ways is a fully associative level: the cut (the unit
	# tests check that the set distances of one set give the same)
	fa=$("$LOCPROF" simulate "$T/walk-$p.txt" --cache 16K:full:64 --format csv | tail -1 | cut -d, -f4)
	expect_status 0 "$LOCPROF" predict at "$D" --size $p --machine "$T/one.machine" --format csv
	row=$(grep '^[0-9.e+]*,program,' "$T/out")
	[ "$(echo "$row" | cut -d, -f15)" = full ] || fail "sa_model of one set: $row"
	close "$(echo "$row" | cut -d, -f10)" "$fa" || fail "P=$p: cut $(echo "$row" | cut -d, -f10), simulate $fa"
	close "$(echo "$row" | cut -d, -f11)" "$fa" || fail "P=$p: one set $(echo "$row" | cut -d, -f11), simulate $fa"
done
# text and json say which model each level used
expect_status 0 "$LOCPROF" predict at "$D" --size 512 --machine "$T/sa.machine" --set-distances
expect_grep '^L1 .*4-way.* setd +[0-9.e+-]+\.\.[0-9.e+-]+ +[a-z+]+$' "$T/out"
printf 'name three\ncache L1 16K 4 64\ncache L2 64K 8 64\ntlb TLB1 32 4K\n' >"$T/three.machine"
expect_status 0 "$LOCPROF" predict at "$D" --size 512 --machine "$T/three.machine" --format json --set-distances
expect_grep '"name": "L1", .*"sa_model": "setd"' "$T/out"
expect_grep '"name": "L2", .*"sa_model": "binomial"' "$T/out"
expect_grep '"name": "TLB1", .*"sa_model": "full"' "$T/out"

# --machine collects the machine's set-associative levels and line sizes
expect_status 0 "$LOCPROF" predict collect -q --size 128 -o "$T/m" --trace "$T/walk-128.txt" --machine itanium2 --line 64 --page 4K
grep -q '^blocks 64 4096 128 274877907008 1099511627904 8796093022336$' "$T/m/size-128.xrun" ||
	fail "--machine itanium2: $(grep '^blocks' "$T/m/size-128.xrun")"

# refusals: usage status, the item named
for bad in 64 x64 0x64 64x63 64x; do
	expect_status 2 "$LOCPROF" predict collect --size 1 -o "$T/bad" --trace "$T/walk-128.txt" --sets "$bad"
	expect_grep "bad --sets item '$bad'" "$T/err"
done
expect_status 1 "$LOCPROF" predict collect --size 1 -o "$T/bad" --trace "$T/walk-128.txt" --machine /nonexistent
expect_one_line "$T/err"
# --calibrated: a consecutive walk of P lines, three times, fitted at 24..56
# lines in 64 sets (0.4 to 0.9 lines per set): its placement is even, and
# the calibrated prediction at 224 and 288 lines is the simulation (the
# binomial model is not; at 288, 32 sets hold 5 lines and miss, 32 hold 4)
ctrace() {
	awk -v P="$1" 'BEGIN { for (r = 0; r < 3; r++) for (i = 0; i < P; i++) printf "R %x 8 20\n", 268435456 + i * 64 }' \
		>"$T/cwalk-$1.txt"
}
C=$T/cruns
for p in 24 32 40 48 56; do
	ctrace $p
	expect_status 0 "$LOCPROF" predict collect -q --size $p -o "$C" --trace "$T/cwalk-$p.txt" --line 64 --page 4K --sets 64x64
done
expect_status 0 "$LOCPROF" predict fit -q "$C"
for p in 224 288; do
	ctrace $p
	sim=$("$LOCPROF" simulate "$T/cwalk-$p.txt" --cache 16K:4:64 --format csv | tail -1 | cut -d, -f4)
	expect_status 0 "$LOCPROF" predict at "$C" --size $p --machine "$T/sa.machine" --format csv --calibrated
	row=$(grep '^[0-9.e+]*,program,' "$T/out")
	[ "$(echo "$row" | cut -d, -f15)" = calibrated ] || fail "sa_model with --calibrated: $row"
	close "$(echo "$row" | cut -d, -f11)" "$sim" || fail "P=$p: calibrated $(echo "$row" | cut -d, -f11), simulate $sim"
	expect_status 0 "$LOCPROF" predict at "$C" --size $p --machine "$T/sa.machine" --format csv --binomial
	row=$(grep '^[0-9.e+]*,program,' "$T/out")
	! close "$(echo "$row" | cut -d, -f11)" "$sim" || fail "P=$p: the binomial model is exact here?"
done
expect_status 0 "$LOCPROF" predict at "$C" --size 288 --machine "$T/sa.machine" --calibrated
expect_grep '^L1 .*4-way.* calibrated +[0-9.e+-]+\.\.[0-9.e+-]+ +[a-z+]+$' "$T/out"
expect_grep '^L1 .* 0\.00 1\.00 0\.00 .* used$' "$T/out"
expect_status 0 "$LOCPROF" predict at "$C" --size 288 --machine "$T/sa.machine" --calibrated --format json
expect_grep '"placement": \[{"level": "L1", "random": 0, "even": 1, "cut": 0, .*"used": true}\]' "$T/out"
# with the cut instead: every reuse at 287 lines misses (the fully
# associative cut), so it is off at 288
expect_status 0 "$LOCPROF" predict at "$C" --size 288 --machine "$T/sa.machine" --format csv --placement cut
row=$(grep '^[0-9.e+]*,program,' "$T/out")
close "$(echo "$row" | cut -d, -f11)" "$(echo "$row" | cut -d, -f10)" || fail "--placement cut is not the cut: $row"
for bad in "--placement odd" "--agree 0" "--agree x"; do
	# shellcheck disable=SC2086
	expect_status 2 "$LOCPROF" predict at "$C" --size 288 --machine "$T/sa.machine" $bad
	expect_grep "bad ${bad% *} '${bad#* }'" "$T/err"
done
echo ok
