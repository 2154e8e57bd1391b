# StatCache chooses between the paper's equation and the fill model from
# the profile: a short run (uniform over 2000 lines, 6000 references: a
# footprint of about 1900 lines) never fills a cache of 4096 or 16384
# lines, where exact random-replacement simulation has no miss but its
# cold ones; the paper's equation (--no-fill) is 0.5 to 3 points above it
# there. Below the footprint the default is the paper's equation.
. "$(dirname "$0")/lib.sh"

expect_status 0 "$LOCPROF" synth uniform -L 2000 -n 6000 -o "$T/u.lpt"
expect_status 0 "$LOCPROF" simulate "$T/u.lpt" --sizes 96K,256K,1M --policy random
cold=$(awk '$1 == "1M" { print $3 }' "$T/out")
awk -v c="$cold" '$1 == "256K" && $3 != c { exit 1 }' "$T/out" || fail "simulation: misses beyond the cold ones at 256K"
expect_status 0 "$LOCPROF" sample "$T/u.lpt" -o "$T/u.lpp" --rate 0.5 --seed 1
for o in auto --fill --no-fill; do
	expect_status 0 "$LOCPROF" report "$T/u.lpp" --sizes 96K,256K,1M --policy random --top 0 $([ $o = auto ] || echo $o)
	awk '$1 ~ /^(96K|256K|1M)$/ { print $1, $2 }' "$T/out" >"$T/$o"
done
# the run never fills 256K or 1M: no miss beyond the cold ones, as simulated
awk '$1 != "96K" && $2 > 0.002 { exit 1 }' "$T/auto" || { cat "$T/auto" >&2; fail "auto: misses above the footprint"; }
cmp -s <(grep -v '^96K' "$T/auto") <(grep -v '^96K' "$T/--fill") || fail "auto differs from --fill above the footprint"
# --no-fill keeps the paper's equation, which is high there
awk '$1 == "256K" && $2 < 0.01 { exit 1 }' "$T/--no-fill" || fail "--no-fill: not the paper's equation at 256K"
# below the footprint the default is the paper's equation
[ "$(grep '^96K' "$T/auto")" = "$(grep '^96K' "$T/--no-fill")" ] || fail "auto differs from --no-fill below the footprint"
