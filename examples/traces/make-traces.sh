#!/usr/bin/env bash
# Write the small example traces that the documentation's examples read
# (docs/commands/*.md) into DIR (default: the current directory):
#   example.txt  20000 references: a 300-line loop interleaved with
#                pseudo-random 8-byte accesses to 4000 words (stackdist.md,
#                reusedist.md)
#   demo.txt     a 64x64 matrix of doubles written by rows, then read by
#                columns while reading a 16-entry table, three times
#                (simulate.md)
#   objs.txt     a 100-line heap block swept 30 times, a 2-line block read
#                between the sweep's accesses, with allocation events
#                (report.md)
#   alloc.txt    six records with an allocation and a free (dump.md)
#   threads.txt  thread 1 sweeps 1000 lines 20 times while thread 2 reads
#                4 lines between its accesses (report.md)
#   mix.txt      `locprof synth mix -n 600000 -p 50000` (sample.md, report.md)
#   sharing.txt  threads 1 and 2 each increment a 4-byte counter of their
#                own, 500 times in turn, first in one 64-byte block (both
#                counters on one line), then in a block with a line per
#                counter; then thread 1 writes a flag that thread 2 reads,
#                100 times (simulate.md)
# Every file is the same on every run and machine: the pseudo-random
# numbers come from a Park-Miller generator computed exactly in awk.
# LOCPROF names the locprof binary (default: locprof on PATH).
set -euo pipefail
dir=${1:-.}
locprof=${LOCPROF:-locprof}
mkdir -p "$dir"

awk 'BEGIN {
	x = 1
	for (i = 0; i < 20000; i++) {
		if (i % 3)
			a = 65536 + (i % 300) * 64
		else {
			x = (x * 48271) % 2147483647
			a = 524288 + (x % 4000) * 8
		}
		printf "%s 0x%x 8 0x%x\n", (i % 2 ? "R" : "W"), a, 4198400 + (i % 3) * 4
	}
}' >"$dir/example.txt"

awk 'BEGIN {
	m = 268435456; t = 536870912      # the matrix at 0x10000000, the table at 0x20000000
	for (rep = 0; rep < 3; rep++) {
		for (i = 0; i < 64; i++)
			for (j = 0; j < 64; j++)
				printf "W 0x%x 8 0x401000\n", m + (i * 64 + j) * 8
		for (j = 0; j < 64; j++)
			for (i = 0; i < 64; i++) {
				printf "R 0x%x 8 0x401010\n", m + (i * 64 + j) * 8
				printf "R 0x%x 8 0x401020\n", t + (i % 16) * 8
			}
	}
}' >"$dir/demo.txt"

awk 'BEGIN {
	big = 268435456; small = 536870912
	printf "A 0x%x 6400 0x400100\n", big
	printf "A 0x%x 128 0x400200\n", small
	for (rep = 0; rep < 30; rep++)
		for (k = 0; k < 100; k++) {
			printf "R 0x%x 8 0x401000\n", big + k * 64
			printf "R 0x%x 8 0x401008\n", small + (k % 2) * 64
		}
}' >"$dir/objs.txt"

awk 'BEGIN {
	for (rep = 0; rep < 20; rep++)
		for (k = 0; k < 1000; k++) {
			printf "R 0x%x 8 0x401000 1\n", 268435456 + k * 64
			printf "R 0x%x 8 0x401010 2\n", 536870912 + (k % 4) * 64
			printf "R 0x%x 8 0x401010 2\n", 536870912 + ((k + 2) % 4) * 64
		}
}' >"$dir/threads.txt"

cat >"$dir/alloc.txt" <<'TRACE'
A 0x10000 256 0x400100
R 0x10000 8 0x401000
W 0x10040 8 0x401000
R 0x10000 8 0x401000
F 0x10000 0 0x400200
R 0x20000 8 0x401008
TRACE

awk 'BEGIN {
	packed = 805306368; padded = 805310464; flag = 805314560   # 0x30000000, 0x30001000, 0x30002000
	printf "A 0x%x 64 0x401100 1\nA 0x%x 128 0x401200 1\n", packed, padded
	for (i = 0; i < 1000; i++) {
		t = 1 + i % 2
		printf "R 0x%x 4 0x401140 %d\nW 0x%x 4 0x401144 %d\n", packed + 4 * (t - 1), t, packed + 4 * (t - 1), t
	}
	for (i = 0; i < 1000; i++) {
		t = 1 + i % 2
		printf "R 0x%x 4 0x401240 %d\nW 0x%x 4 0x401244 %d\n", padded + 64 * (t - 1), t, padded + 64 * (t - 1), t
	}
	for (i = 0; i < 100; i++)
		printf "W 0x%x 4 0x401300 1\nR 0x%x 4 0x401340 2\n", flag, flag
}' >"$dir/sharing.txt"

"$locprof" synth mix -n 600000 -p 50000 -o "$dir/mix.txt"
