# bench-trace-interleave (bench/mt-accuracy.sh INTERLEAVE=N): a trace
# whose threads ran one at a time in bursts of 400 accesses, rewritten
# with the threads taking turns in bursts of 1 to 7. Every record is kept,
# each thread's own records in their order; a thread starts only after the
# records before its first one (its creation); and report --shared, which
# said the recording ran in bursts, finds the new trace interleaved.
. "$(dirname "$0")/lib.sh"
IL=$LOCPROF_BUILD/bench/bench-trace-interleave
[ -x "$IL" ] || { echo "SKIP: no $IL" >&2; exit 0; }

# thread 0 initialises 100 lines; threads 1 and 2 each cycle over 60
# lines of their own in turns of 400 accesses; thread 0 reads 20 lines
awk 'BEGIN {
	for (i = 0; i < 100; i++) printf "W 0x%x 8 0x4010 0\n", 16777216 + i * 64
	for (n = 0; n < 10; n++)
		for (t = 1; t <= 2; t++)
			for (k = 0; k < 400; k++) {
				printf "R 0x%x 8 0x%x %d\n", 16777216 * (t + 1) + pos[t] * 64, 4198400 + t * 16, t
				pos[t] = (pos[t] + 1) % 60
			}
	for (i = 0; i < 20; i++) printf "R 0x%x 8 0x4020 0\n", 16777216 + i * 64
}' >"$T/bursts.txt"
expect_status 0 "$IL" "$T/bursts.txt" "$T/fine.txt" 4 3
expect_grep '8120 records of 3 threads, bursts of 1 to 7 accesses' "$T/err"
[ "$(grep -c . "$T/fine.txt")" = 8120 ] || fail "records lost: $(grep -c . "$T/fine.txt") of 8120"
# each record as KIND ADDR SIZE PC TID (the text writer leaves out a tid of 0)
tid() { awk '{ print $1, $2, $3, $4, (NF > 4 ? $5 : 0) }' "$1"; }
tid "$T/bursts.txt" >"$T/bursts.n"
tid "$T/fine.txt" >"$T/fine.n"
for t in 0 1 2; do
	awk -v t="$t" '$5 == t' "$T/bursts.n" >"$T/a"
	awk -v t="$t" '$5 == t' "$T/fine.n" >"$T/b"
	cmp -s "$T/a" "$T/b" || fail "thread $t's records changed or moved"
done
# nothing of threads 1 and 2 before thread 0's 100 first records
head -100 "$T/fine.n" | awk '$5 != 0 { bad = 1 } END { exit bad }' || fail "a thread ran before it was created"
# while threads 1 and 2 both run, no thread goes on for more than 7 accesses
# (until one of them has no records left)
awk 'NR == FNR { left[$5]++; next } $5 == 0 { next } !left[1] || !left[2] { exit }
	{ left[$5]--; if ($5 == last) run++; else run = 1; last = $5; if (run > max) max = run }
	END { if (max > 7) { print "longest run " max; exit 1 } }' "$T/fine.n" "$T/fine.n" ||
	fail "a burst of more than 7 accesses"
# report --shared: bursts said of the recording, not of the new trace
for f in bursts fine; do
	expect_status 0 "$LOCPROF" sample "$T/$f.txt" -o "$T/$f.lpp" --rate 0.05 --seed 1
	expect_status 0 "$LOCPROF" report "$T/$f.lpp" --sizes 4K --shared --top 0 --format json
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["share"]["together"])' "$T/out" >"$T/$f.together"
done
awk '{ exit !($1 < 0.6) }' "$T/bursts.together" || fail "recording: together $(cat "$T/bursts.together")"
awk '{ exit !($1 > 0.8) }' "$T/fine.together" || fail "interleaved: together $(cat "$T/fine.together")"
