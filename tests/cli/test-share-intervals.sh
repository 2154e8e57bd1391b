# report --shared's intervals against the multi-threaded simulation of
# the same trace: four threads, each cycling over lines of its own, run
# in short bursts (1 to 8 accesses) in a random order, as threads on
# cores of their own interleave. At every size the 95% interval of the
# shared cache, of two caches of two threads and of the private caches
# holds the simulated ratio, or the report says a cliff lies within
# sampling error. Sizes 1K..16K put each cache's cycle (40 lines a
# thread: 160 shared, 80 a pair) below, near and above capacity: the
# shared cache at 8K and the pairs' at 4K are cliffs (LRU: 93% and 97%
# simulated with bursts of 1, 0% one size up). Bursts of hundreds of
# accesses (more threads than cores) are outside the model's assumptions
# (docs/models.md, "Threads and shared caches").
. "$(dirname "$0")/lib.sh"

# four threads, each cycling over 40 lines of its own, in random bursts
# of 1 to BURST accesses in a random order
threads() { # BURST
	awk -v burst_max="$1" 'BEGIN {
		srand(7)
		for (n = 0; n < 60000;) {
			t = int(rand() * 4); burst = 1 + int(rand() * burst_max)
			for (k = 0; k < burst; k++) {
				n++
				printf "R 0x%x 8 0x%x %d\n", 16777216 * (t + 1) + pos[t] * 64, 4198400 + t * 16, t
				pos[t] = (pos[t] + 1) % 40
			}
		}
	}'
}
threads 8 >"$T/mt.txt"
expect_status 0 "$LOCPROF" sample "$T/mt.txt" -o "$T/mt.lpp" --rate 0.05 --seed 2
expect_status 0 "$LOCPROF" report "$T/mt.lpp" --sizes 1K,2K,4K,8K,16K --shared --top 0 --format csv
awk '/^placement,/ { on = 1; next } on && /^$/ { on = 0 } on' "$T/out" >"$T/rep.csv"
[ "$(wc -l <"$T/rep.csv")" = 15 ] || fail "expected 15 placement rows"
# simulated: (replacement + coherence) / (accesses - cold), all threads
sim() { # SIZE [CORE-MAP]
	"$LOCPROF" simulate "$T/mt.txt" --private "$1:full:64" ${2:+--core-map "$2"} --format csv |
		awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$3 == "all" { printf "%.6f\n", ($c["replacement"] + $c["coherence"]) / ($c["accesses"] - $c["cold"]) }'
}
for size in 1K 2K 4K 8K 16K; do
	bytes=$(( ${size%K} * 1024 ))
	shared=$("$LOCPROF" simulate "$T/mt.txt" --sizes "$size" --policy lru --format csv | awk -F, '$1 == "lru-nocold" { print $3 }')
	for row in "shared $shared" "2 caches $(sim "$size" 0=0,1=0,2=1,3=1)" "private $(sim "$size")"; do
		want=${row##* }
		name=${row% *}
		awk -F, -v p="$name" -v b="$bytes" -v want="$want" '$1 == p && $3 == b {
				found = 1
				if (!($8 - 1e-9 <= want && want <= $9 + 1e-9) && $12 != 1) {
					printf "%s %s: simulated %s, reported %s in [%s, %s], no cliff\n", p, b, want, $4, $8, $9
					bad = 1
				}
			}
			END { exit !found || bad }' "$T/rep.csv" || fail "$name at $size: the interval misses the simulation"
	done
done
# the text says what the intervals are
expect_status 0 "$LOCPROF" report "$T/mt.lpp" --sizes 1K,2K,4K,8K,16K --shared --top 0
expect_grep '^2 caches +2 +8K +[0-9.]+ ±[0-9.]+ ' "$T/out"
expect_grep '95% interval of each ratio' "$T/out"
# the pairs' cliff at 4K is said in words
expect_grep '^2 caches 4K lru: cliff within sampling error' "$T/out"
# the threads ran together: no word of bursts; the same threads in bursts
# of up to 200 accesses: said
expect_status 0 "$LOCPROF" report "$T/mt.lpp" --sizes 4K --shared --top 0
grep -q 'ran in bursts' "$T/out" && fail "bursts said of finely interleaved threads"
threads 200 >"$T/bursts.txt"
expect_status 0 "$LOCPROF" sample "$T/bursts.txt" -o "$T/bursts.lpp" --rate 0.05 --seed 2
expect_status 0 "$LOCPROF" report "$T/bursts.lpp" --sizes 4K --shared --top 0
expect_grep '^the threads ran in bursts \(together 0\.[0-3][0-9]; ' "$T/out"
# several profiles summed (the ranks of a job): two copies of one give
# its ratios and intervals; ranks of other thread counts do not line up,
# and the report says so
cp "$T/mt.lpp" "$T/mt2.lpp"
expect_status 0 "$LOCPROF" report "$T/mt.lpp" --sizes 4K,8K --shared --top 0 --format csv
awk '/^placement,/ { on = 1; next } on && /^$/ { on = 0 } on' "$T/out" >"$T/one.csv"
expect_status 0 "$LOCPROF" report "$T/mt.lpp" "$T/mt2.lpp" --sizes 4K,8K --shared --top 0 --format csv
awk '/^placement,/ { on = 1; next } on && /^$/ { on = 0 } on' "$T/out" >"$T/two.csv"
[ -s "$T/one.csv" ] && cmp -s "$T/one.csv" "$T/two.csv" || fail "two copies of a profile summed: other placement rows"
awk '$5 < 2' "$T/mt.txt" >"$T/pair.txt"
expect_status 0 "$LOCPROF" sample "$T/pair.txt" -o "$T/pair.lpp" --rate 0.05
expect_status 0 "$LOCPROF" report "$T/mt.lpp" "$T/pair.lpp" --sizes 4K --shared --top 0
expect_grep '^threads and caches: not summed: the profiles.* placements differ' "$T/out"
