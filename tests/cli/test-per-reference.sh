# Line accesses and references side by side (docs/models.md, "What is
# counted", "Per reference"): report's per-reference ratios of a sampled
# profile against simulate's exact ones on the trace of the same run, and
# a version-1 profile (tests/data/profile-v1-straddle.lpp: `locprof
# sample --rate 0.2 --seed 3` of the walk below, written by a locprof of
# profile version 1) still reads.
. "$(dirname "$0")/lib.sh"

near() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { exit !(a - b <= d && b - a <= d) }'; }

# 8-byte loads at offset 60 of 64 lines, 20 passes: every reference
# straddles; per line access 50.8% miss at 2K (LRU), per reference 100%.
awk 'BEGIN { for (p = 0; p < 20; p++) for (i = 0; i < 64; i++) printf "R 0x%x 8 0x401000\n", 4096 + i * 64 + 60 }' >"$T/walk.txt"
expect_status 0 "$LOCPROF" simulate "$T/walk.txt" --cache 2K:full:64 --format csv
expect_grep '^C1,2K:full:64:lru,2560,1300,0.507812,65,1235,0,1280,1280,1.000000$' "$T/out"

# The old profile reads: its counts, and per-reference ratios equal to the
# per-line-access ones (its samples do not say which line of a reference
# they are).
V1=$LOCPROF_SRC/tests/data/profile-v1-straddle.lpp
expect_status 0 "$LOCPROF" dump "$V1"
expect_grep '^references: 1280  threads: 1$' "$T/out"
expect_grep '^line 64: 2560 line accesses, 541 samples' "$T/out"
expect_status 0 "$LOCPROF" report "$V1" --top 0 --cold --cache 2K:32:64 --format csv
awk -F, '$1 == "2K:32:64" { exit !($5 == $13 && $6 == $14) }' "$T/out" || fail "version 1: the per-reference ratios differ from the line-access ones"

# The same trace sampled now: the parts give the overlap (none here).
expect_status 0 "$LOCPROF" sample "$T/walk.txt" -o "$T/v2.lpp" --rate 0.2 --seed 3
expect_status 0 "$LOCPROF" report "$T/v2.lpp" --top 0 --cold --cache 2K:32:64 --format json
expect_grep '"lru":0\.[0-9]*,"random":0\.[0-9]*,"lru_ref":0\.9[0-9]*,"random_ref":' "$T/out"
expect_status 0 "$LOCPROF" report "$T/v2.lpp" --top 0 --cold --cache 2K:32:64 --format csv
expect_grep '^cache,size_bytes,ways,line_bytes,lru_miss_ratio,random_miss_ratio,.*,lru_ref_miss_ratio,random_ref_miss_ratio,lru_unseen$' "$T/out"

# A live profile (inst backend) of straddling programs against the exact
# trace of the same binary: line-access and per-reference ratios of
# 32K:8:64 within 3 points of simulate's (rate 1e-2).
command -v clang >/dev/null || { echo "SKIP: no clang for the live part" >&2; exit 0; }
for k in "unaligned 4096 20" "stencil 200 4"; do
	set -- $k
	"$LOCPROF" cc -O3 -mavx2 -o "$T/$1" "$LOCPROF_SRC/tests/straddle/$1.c" || fail "cannot build $1"
	expect_status 0 "$LOCPROF" record -q --mode trace -o "$T/$1.lpt" -- "$T/$1" $2 $3
	expect_status 0 "$LOCPROF" simulate "$T/$1.lpt" --cache 32K:8:64 --format csv
	IFS=, read -r _ _ _ _ line _ _ _ _ _ ref < <(sed -n 2p "$T/out")
	expect_status 0 "$LOCPROF" record -q --rate 1e-2 --seed 5 -o "$T/$1.lpp" -- "$T/$1" $2 $3
	expect_status 0 "$LOCPROF" report "$T/$1.lpp" --top 0 --cold --cache 32K:8:64 --format csv
	IFS=, read -r _ _ _ _ mline _ _ _ _ _ _ _ mref _ < <(grep '^32K:8:64,' "$T/out")
	near "$mline" "$line" 0.03 || fail "$1: line-access ratio $mline, simulate $line"
	near "$mref" "$ref" 0.03 || fail "$1: per-reference ratio $mref, simulate $ref"
	awk -v a="$ref" -v b="$line" 'BEGIN { exit !(a > b + 0.02) }' || fail "$1: nothing straddles ($ref, $line)"
done
