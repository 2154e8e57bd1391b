# locprof simulate: hand-checked results, formats, refusals, damaged input.
. "$(dirname "$0")/lib.sh"

# A direct-mapped 2-line cache of 16-byte lines (sets = line mod 2):
#  0x00 line 0 set 0  miss (cold)
#  0x20 line 2 set 0  miss (cold)        evicts line 0
#  0x00 line 0 set 0  miss               FA-LRU of 2 lines holds {0,2}: conflict
#  0x10 line 1 set 1  miss (cold)
#  0x0f 2 bytes: lines 0 and 1, both hits (a straddling reference = 2 accesses)
#  A event: not an access
#  0x40 line 4 set 0  miss (cold)
#  0x20 line 2 set 0  miss               FA-LRU {4,0}... 2 was evicted: capacity
cat >"$T/a.txt" <<'T'
R 0x00 4
R 0x20 4
W 0x00 4
R 0x10 4
R 0x0f 2
A 0x1000 64 0x401000
R 0x40 4
R 0x20 4
T
expect_status 0 "$LOCPROF" simulate "$T/a.txt" --cache 32:1:16 --format csv
# Per reference: 7 accesses, of which the straddling one (both lines hit)
# is the only hit: 6 misses.
expect_grep '^cache,spec,accesses,misses,miss_ratio,cold,capacity,conflict,ref_accesses,ref_misses,ref_miss_ratio$' "$T/out"
expect_grep '^C1,32:1:16:lru,8,6,0.750000,4,1,1,7,6,0.857143$' "$T/out"
expect_status 0 "$LOCPROF" simulate "$T/a.txt" --cache 32:1:16
expect_grep '^C1 +32:1:16:lru +8 +6 +75.000 +4 +1 +1 +6 +85.714$' "$T/out"
expect_grep '7 references, 7 accesses per reference' "$T/out"

# Line accesses and references apart: an 8-byte read straddling lines 3
# and 4 (two line misses, one reference miss), the write of the same
# instruction to the same bytes (a read-modify-write: Cachegrind's one
# "modify" access, two line hits), the same read by another pc (a second
# access, two line hits).
cat >"$T/m.txt" <<'T'
R 0x3c 8 0x10
W 0x3c 8 0x10
R 0x3c 8 0x11
T
expect_status 0 "$LOCPROF" simulate "$T/m.txt" --cache 1K:full:16 --format json
expect_grep '"references": 3, "ref_accesses": 2,' "$T/out"
expect_grep '"accesses": 6, "misses": 2, "miss_ratio": 0.333333, .*"ref_misses": 1, "ref_miss_ratio": 0.500000}' "$T/out"

# a hierarchy: L2 (full, 4 lines) sees the 6 misses of L1
expect_status 0 "$LOCPROF" simulate "$T/a.txt" --level 32:1:16 --level 64:full:16 --format json
expect_grep '"name": "L2", "spec": "64:full:16:lru", "accesses": 6, "misses": 4, .*"cold": 4, "capacity": 0, "conflict": 0' "$T/out"

# working-set graph in the shared curve CSV
expect_status 0 "$LOCPROF" simulate "$T/a.txt" --sizes 16,32,64 --line 16 --policy lru,fifo,random --format csv
expect_grep '^# locprof curve v1' "$T/out"
expect_grep '^curve,size_bytes,miss_ratio,misses,accesses$' "$T/out"
expect_grep '^lru,64,0.500000,4,8$' "$T/out"
expect_grep '^lru-nocold,64,0.000000,0,4$' "$T/out"
expect_grep '^fifo,32,' "$T/out"
expect_grep '^random,16,' "$T/out"
expect_status 0 "$LOCPROF" simulate "$T/a.txt" --sizes 16..64 --line 16 --format json
expect_grep '"size": 32, "accesses": 8, "cold": 4, "lru_misses": ' "$T/out"

# sampling: one sample over everything equals the full run with mu = 1
expect_status 0 "$LOCPROF" simulate "$T/a.txt" --cache 32:1:16 --sample-length 100 --sample-ratio 1 --format csv
expect_grep '^32:1:16:lru,known_misses,4$' "$T/out"
expect_grep '^32:1:16:lru,unknown,2$' "$T/out"
expect_grep '^32:1:16:lru,estimate_mu1,0.750000$' "$T/out"
expect_grep '^32:1:16:lru,true_miss_ratio,0.750000$' "$T/out"
expect_status 0 "$LOCPROF" simulate "$T/a.txt" --cache 32:1:16 --sample-length 2 --sample-interval 4 --random-lengths --seed 3
expect_grep '^estimate mu=0.5 ' "$T/out"

# set counts that are not powers of two: the set is line mod sets. A
# direct-mapped cache of 3 lines: lines 0 and 3 share set 0 (with the low
# bits as the index, line 3 would go to set 3 & 2 = 2 and never conflict).
cat >"$T/mod.txt" <<'T'
R 0x00 4
R 0x30 4
R 0x00 4
R 0x10 4
R 0x00 4
T
expect_status 0 "$LOCPROF" simulate "$T/mod.txt" --cache 48:1:16 --format csv
expect_grep '^C1,48:1:16:lru,5,4,0.800000,3,0,1,5,4,0.800000$' "$T/out"
# a last-level cache of 480 MiB, 16 ways: 491520 sets
expect_status 0 "$LOCPROF" simulate "$T/a.txt" --cache 480M:16:64 --format csv
expect_grep '^C1,480M:16:64:lru,7,2,0.285714,2,0,0,7,2,0.285714$' "$T/out"

# refusals: one line, exact reason
expect_status 2 "$LOCPROF" simulate "$T/a.txt" --cache 24K:12:64:plru
expect_grep "policy plru needs a power-of-two number of ways, not 12" "$T/err"
expect_status 2 "$LOCPROF" simulate "$T/a.txt" --cache 32K:8:64:mru
expect_grep "unknown replacement policy 'mru'" "$T/err"
expect_status 2 "$LOCPROF" simulate "$T/a.txt" --cache 1000:1:64
expect_grep "not a multiple of the line size 64" "$T/err"
expect_status 2 "$LOCPROF" simulate "$T/a.txt" --cache 0:1:64
expect_grep "cache size must not be zero" "$T/err"
expect_status 2 "$LOCPROF" simulate "$T/a.txt" --cache 32:1:16 --sizes 1K
expect_grep "exactly one of --cache, --level, --sizes or --private" "$T/err"
# several threads: what --private refuses
expect_status 2 "$LOCPROF" simulate "$T/a.txt" --shared 1M:16:64
expect_grep "go with --private" "$T/err"
expect_status 2 "$LOCPROF" simulate "$T/a.txt" --private 32K:8:64 --cache 32K:8:64
expect_status 2 "$LOCPROF" simulate "$T/a.txt" --private 32K:8:64 --core-map 0=0,1
expect_grep "bad core map '0=0,1'" "$T/err"
expect_status 2 "$LOCPROF" simulate "$T/a.txt" --private 32K:8:64 --cores 65
expect_status 2 "$LOCPROF" simulate "$T/a.txt" --private 32K:8:64 --protocol moesi
expect_grep "unknown protocol 'moesi'" "$T/err"
expect_status 1 "$LOCPROF" simulate "$T/a.txt" --private 32K:8:64 --shared 1M:16:128
expect_grep "every level takes the line size of the first \(64 bytes\)" "$T/err"
expect_one_line "$T/err"
expect_status 1 "$LOCPROF" simulate "$T/a.txt" --private 32K:8:64:plru
expect_grep "a private cache takes policy lru, fifo or random, not plru" "$T/err"
printf 'R 0x1000 4 0x400000 0\nR 0x1000 4 0x400000 3\n' >"$T/t3.txt"
expect_status 1 "$LOCPROF" simulate "$T/t3.txt" --private 32K:8:64 --core-map 0=0,1=1
expect_grep "thread 3 has no core in the core map" "$T/err"
expect_one_line "$T/err"
expect_status 2 "$LOCPROF" simulate "$T/a.txt" --level 32:1:16 --sample-length 5 --sample-ratio 0.5
expect_status 1 "$LOCPROF" simulate "$T/a.txt" --cache 64:4:16:fifo --sample-length 5 --sample-ratio 0.5
expect_grep "sampling needs LRU replacement" "$T/err"
expect_one_line "$T/err"
expect_status 1 "$LOCPROF" simulate "$T/missing.txt" --cache 32:1:16
expect_one_line "$T/err"
expect_status 0 "$LOCPROF" simulate --help
expect_grep '^usage: locprof simulate' "$T/out"

# damaged input: malformed text is an error naming the line
printf 'R 0x10 8\nR zz 8\n' >"$T/bad.txt"
expect_status 1 "$LOCPROF" simulate "$T/bad.txt" --cache 32:1:16
expect_grep "line 2: bad address 'zz'" "$T/err"
# A truncated .lpt gives the results of the complete blocks before the cut,
# a warning and status 3. The trace has four blocks (65536 records each,
# the last partial) and is cut in the middle, inside the second or third
# block: the results must be those of exactly the first 65536*k records
# (k >= 1), checked against a simulation of that prefix in text form.
"$LOCPROF" synth uniform -n 200000 -L 4096 -o "$T/four.lpt"
head -c $(( $(stat -c %s "$T/four.lpt") / 2 )) "$T/four.lpt" >"$T/cut.lpt"
expect_status 3 "$LOCPROF" simulate "$T/cut.lpt" --cache 4K:2:64 --format csv
expect_grep "warning: .*truncated inside a block \([12] complete blocks, (65536|131072) records read\)" "$T/err"
read -r _ _ got _ < <(grep '^C1,' "$T/out" | tr ',' ' ')
[ "$got" = 65536 ] || [ "$got" = 131072 ] || fail "truncated trace: $got accesses, not a whole number of blocks"
"$LOCPROF" convert "$T/four.lpt" "$T/four.txt"
awk -v n="$got" '!/^#/ { print; if (++k == n) exit }' "$T/four.txt" >"$T/prefix.txt"
expect_status 0 "$LOCPROF" simulate "$T/prefix.txt" --cache 4K:2:64 --format csv
grep '^C1,' "$T/out" >"$T/prefix.csv"
"$LOCPROF" simulate "$T/cut.lpt" --cache 4K:2:64 --format csv 2>/dev/null | grep '^C1,' >"$T/cut.csv" || true
cmp -s "$T/prefix.csv" "$T/cut.csv" || fail "truncated trace: $(cat "$T/cut.csv") != prefix $(cat "$T/prefix.csv")"
# cut inside the file header and inside the first block: no records, still 3
head -c 10 "$T/four.lpt" >"$T/cut0.lpt"
expect_status 1 "$LOCPROF" simulate "$T/cut0.lpt" --cache 4K:2:64
expect_one_line "$T/err"
head -c 2000 "$T/four.lpt" >"$T/cut1.lpt"
expect_status 3 "$LOCPROF" simulate "$T/cut1.lpt" --cache 4K:2:64
expect_grep '0 records read' "$T/err"

# MemSpy attribution on a real program: compile it with -g, take its
# addresses from nm, write the trace by hand.
cat >"$T/prog.c" <<'C'
#include <stdlib.h>
double g_table[4096];
double walk_table(void)
{
	double s = 0;
	for (int i = 0; i < 4096; i += 8)
		s += g_table[i];
	return s;
}
long *make_list(int n)
{
	long *p = malloc(n * sizeof(long));
	for (int i = 0; i < n; i++)
		p[i] = i;
	return p;
}
int main(void)
{
	return (int)walk_table() + (int)make_list(10)[3];
}
C
cc -g -O0 -no-pie -fno-pie -o "$T/prog" "$T/prog.c"
addr() { nm "$T/prog" | awk -v n="$1" '$3 == n { print "0x" $1 }'; }
table=$(addr g_table); walk=$(addr walk_table); mk=$(addr make_list)
{
	printf 'A 0x10000000 800 0x%x\n' $((mk + 20))
	for i in $(seq 0 99); do printf 'W 0x%x 8 0x%x\n' $((0x10000000 + 8 * i)) $((mk + 40)); done
	for rep in 1 2; do
		for i in $(seq 0 8 4095); do printf 'R 0x%x 8 0x%x\n' $((table + 8 * i)) $((walk + 8)); done
	done
} >"$T/prog.txt"
expect_status 0 "$LOCPROF" simulate "$T/prog.txt" --cache 4K:1:64 --attribute --binary "$T/prog" --miss-latency 50
expect_grep '^g_table +walk_table +1024 +1024 +512 +512 +9[0-9]\.[0-9]$' "$T/out"
expect_grep '^heap@make_list \(prog.c:[0-9]+(:[0-9]+)?\) +make_list +100 +13 +13 +0 ' "$T/out"
expect_grep '^walk_table +1024 +1024 +100.00 +51200 +1024 ' "$T/out"
expect_grep '^0x[0-9a-f]+ prog.c:[0-9]+ +walk_table ' "$T/out"
expect_status 0 "$LOCPROF" simulate "$T/prog.txt" --cache 4K:1:64 --attribute --binary "$T/prog" --format csv
expect_grep '^pairs,g_table,walk_table,0x0,,1024,1024,1024,512,512,102400,1024,' "$T/out"
expect_status 0 "$LOCPROF" simulate "$T/prog.txt" --cache 4K:1:64 --attribute --format json
expect_grep '"object": "heap@0x' "$T/out"
expect_status 2 "$LOCPROF" simulate "$T/prog.txt" --cache 4K:1:64 --cache 8K:1:64 --attribute
expect_status 1 "$LOCPROF" simulate "$T/prog.txt" --cache 4K:1:64 --attribute --binary "$T/nothere"
expect_one_line "$T/err"
echo ok

# this machine's caches by level name, where /sys describes them
if [ -r /sys/devices/system/cpu/cpu0/cache/index0/level ]; then
	expect_status 0 "$LOCPROF" simulate "$T/a.txt" --cache L1 --format csv
	expect_grep '^C1,[0-9]+[KMG]?:([0-9]+|full):[0-9]+:lru,' "$T/out"
	expect_status 0 "$LOCPROF" simulate "$T/a.txt" --level host --format json
	expect_grep '"name": "L1", ' "$T/out"
fi
