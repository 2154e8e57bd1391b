# locprof predict collect --phase: the histograms of page-sized blocks are the
# average over placements of the address space shifted by multiples of the
# phase unit (where address randomisation puts arrays in a 16K page moves
# by 4K): equal to the mean of collections of the shifted traces, each
# without phases.
. "$(dirname "$0")/lib.sh"

# a walk of stride 3000 bytes (crossing 16K pages irregularly), 4 times,
# starting SHIFT bytes further
trace() {
	awk -v S="$1" 'BEGIN { for (i = 0; i < 4; i++) for (r = 0; r < 300; r++) printf "R %x 8 10\n", 1048576 + S + r * 3000 + i * 8 }' \
		>"$T/t$1.txt"
}
for s in 0 4096 8192 12288; do
	trace $s
	expect_status 0 "$LOCPROF" predict collect -q --size 1 -o "$T/d$s" --trace "$T/t$s.txt" --line 64 --page 4K,16K --phase 0
done
expect_status 0 "$LOCPROF" predict collect -q --size 1 -o "$T/dp" --trace "$T/t0.txt" --line 64 --page 4K,16K
# hist lines as lines "cold C" and "D C", sorted: the mean of the shifted
# runs per distance
mean() {
	cat "$T"/d0/size-1.xrun "$T"/d4096/size-1.xrun "$T"/d8192/size-1.xrun "$T"/d12288/size-1.xrun |
		awk -v B="$1" '$1 == "hist" && $3 == B { cold += $4; for (i = 5; i <= NF; i++) { split($i, a, ":"); c[a[1]] += a[2] } }
		END { printf "cold %.6f\n", cold / 4; for (d in c) printf "%s %.6f\n", d, c[d] / 4 }' | sort -n
}
one() {
	awk -v B="$1" '$1 == "hist" && $3 == B { printf "cold %.6f\n", $4; for (i = 5; i <= NF; i++) { split($i, a, ":"); printf "%s %.6f\n", a[1], a[2] } }' \
		"$2/size-1.xrun" | sort -n
}
[ "$(mean 16384)" = "$(one 16384 "$T/dp")" ] || fail "16K: phased $(one 16384 "$T/dp"), mean of the shifts $(mean 16384)"
# fractional counts: the 16K walk's page crossings depend on the shift
one 16384 "$T/dp" | grep -q '\.[0-9]*[1-9]' || fail "16K counts are whole numbers: $(one 16384 "$T/dp")"
# and fit reads the fractional counts
for p in 2 3; do
	cp "$T/dp/size-1.xrun" "$T/dp/size-$p.xrun"
	sed -i "s/^size 1$/size $p/" "$T/dp/size-$p.xrun"
done
expect_status 0 "$LOCPROF" predict fit -q "$T/dp"
expect_status 2 "$LOCPROF" predict collect --size 1 -o "$T/x" --trace "$T/t0.txt" --phase 3000
expect_grep "bad --phase .3000." "$T/err"
