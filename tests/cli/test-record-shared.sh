# locprof record on threads that share lines (tests/rt/mtshare.c): the
# runtime's samples carry shared time and coherence. Adjacent per-thread
# counters give false-sharing samples written by another thread at the
# counter's store; the same counters padded to a line each, a shared
# read-only table and per-thread arrays give none. Every sample's shared
# distance to its own reuse is at least its private one (the other
# threads' accesses are added), and a shared read-only table is reused by
# other threads.
. "$(dirname "$0")/lib.sh"

"$LOCPROF" cc -O1 -o "$T/mtshare" "$LOCPROF_SRC/tests/rt/mtshare.c" -lpthread || fail "cannot build mtshare"
rec() { # rec MODE [ITERS]: record and dump MODE's samples with 4 threads
	expect_status 0 "$LOCPROF" record -o "$T/$1.lpp" --rate 0.01 --seed 3 -- "$T/mtshare" "$1" 4 "${2:-1000000}"
	expect_status 0 "$LOCPROF" dump "$T/$1.lpp"
	expect_grep '^# line time pc addr kind tid reuse reuse_pc stime sreuse stid coh wtid wpc reuse_addr$' "$T/out"
	awk '!/^#/ && NF == 15' "$T/out" >"$T/$1.s"
	[ "$(wc -l <"$T/$1.s")" -gt 1000 ] || fail "$1: too few samples"
	# own reuse: the shared distance is at least the private one
	awk '$7 != "dangling" && $10 != "dangling" && $10 + 0 > 0 && $11 == $6 && $10 + 0 < $7 + 0 { bad++ } END { exit bad > 0 }' "$T/$1.s" ||
		fail "$1: a shared distance below the private one"
}
count() { awk -v c="$2" '$12 == c' "$T/$1.s" | wc -l; }

# False sharing shows only while two threads run at once. On a loaded
# machine the scheduler may run a short program's threads one after the
# other on one core, so a run without overlap is retried, longer.
for iters in 1000000 4000000 16000000; do
	rec false $iters
	[ "$(count false false)" -gt 20 ] && break
done
[ "$(count false false)" -gt 20 ] || fail "false: $(count false false) false-sharing samples, expected many"
# written by another thread, at the store of add_false
awk '$12 == "false" && $13 == $6 { bad = 1 } END { exit bad }' "$T/false.s" || fail "false: a sample invalidated by its own thread"
[ "$(count false true)" -lt "$(count false false)" ] || fail "false: more true sharing than false"
# report --shared: the false sharing table names the counters and the
# function whose store misses and writes
expect_status 0 "$LOCPROF" report "$T/false.lpp" --sizes 32K --shared --top 0
awk '/^false sharing:/ { on = 1; next } /^true sharing:/ { on = 0 } on' "$T/out" >"$T/fs"
expect_grep ' counters +0x[0-9a-f]+ +0x[0-9a-f]+ +add_false; add_false$' "$T/fs"
expect_grep '^private +5 +32K ' "$T/out"
# the same tables in the HTML report, with their intervals
expect_status 0 "$LOCPROF" report "$T/false.lpp" --sizes 32K --shared --top 0 --html "$T/page"
sed -n '/id="share"/,$p' "$T/page/index.html" >"$T/share.html"
expect_grep '<td class="name">private</td><td data-v="5">5</td><td data-v="32768">32K</td><td data-v="[0-9.e-]+">[0-9.]+ <small>±[0-9.]+' "$T/share.html"
expect_grep '<td class="name">false sharing</td><td class="name">counters</td>' "$T/share.html"
# columns: placement caches size lru ±half lru-coh random ±half rand-coh
awk '$1 == "private" && $2 == 5 { ok = $4 > 0 && $6 > 0 && $4 >= $6 && $5 ~ /^±/ } END { exit !ok }' "$T/out" ||
	fail "false: private caches show no coherence misses"

for m in padded table disjoint; do
	rec $m
	[ "$(awk '$12 != "none"' "$T/$m.s" | wc -l)" -eq 0 ] || fail "$m: coherence samples where no thread writes a shared line"
	expect_status 0 "$LOCPROF" report "$T/$m.lpp" --sizes 32K --shared --top 0
	awk '/^false sharing:/ { on = 1; while ((getline l) > 0 && l !~ /pc that misses/) ; next } /^$/ { on = 0 } on' "$T/out" | grep -q . &&
		fail "$m: false sharing reported"
done
[ "$(awk '$10 != "dangling" && $11 != $6' "$T/table.s" | wc -l)" -gt 10 ] ||
	fail "table: no sample reused first by another thread"
echo ok
