# Shared by test-roi.sh and test-roi-valgrind.sh: comparing a region's
# profile with the profile of a program that runs only the region.

# profile_refs PROFILE: its reference count.
profile_refs() { "$LOCPROF" dump "$1" | awk '/^references:/ { print $2 }'; }

# curve PROFILE: the LRU (StatStack) miss ratios of the default sizes.
curve() { "$LOCPROF" report "$1" -F csv --policy lru | awk -F, '$1 == "statstack" { print $3 }'; }

# meandiff A B: the mean absolute difference of two curves, in points.
meandiff() {
	paste <(curve "$1") <(curve "$2") |
		awk '{ d = $1 - $2; if (d < 0) d = -d; s += d; n++ } END { printf "%.2f\n", n ? 100 * s / n : 999 }'
}

# within A B PERCENT: |A - B| <= PERCENT % of B.
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= p / 100 * b) }'; }

# below X LIMIT, above X LIMIT: numeric comparisons.
below() { awk -v x="$1" -v l="$2" 'BEGIN { exit !(x <= l) }'; }
above() { awk -v x="$1" -v l="$2" 'BEGIN { exit !(x > l) }'; }

# check_region NAME REGION KERNEL_ONLY KERNEL_REFS WHOLE: the region's
# profile counts the kernel's references within 2% and its working-set
# graph is within 1.5 points (mean) of the kernel-only program's, while the
# whole run's is more than 10 points away (the check can fail).
check_region() {
	local name=$1 region=$2 konly=$3 krefs=$4 whole=$5 r d w
	r=$(profile_refs "$region")
	d=$(meandiff "$region" "$konly")
	w=$(meandiff "$whole" "$konly")
	echo "$name: region $r references, kernel $krefs; curve mean difference $d points (whole run: $w)"
	within "$r" "$krefs" 2 || fail "$name: the region has $r references, the kernel $krefs"
	below "$d" 1.5 || fail "$name: the region's curve is $d points from the kernel-only program's"
	above "$w" 10 || fail "$name: the whole run's curve is only $w points from the kernel's"
}
