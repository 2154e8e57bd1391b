#!/usr/bin/env bash
# Seed corpora for the harnesses of tests/fuzz, made by locprof itself:
# small valid inputs of every reader. Usage: make-seeds.sh LOCPROF DIR
# writes DIR/<harness>/<seed>.
set -euo pipefail
L=$1
D=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
for h in text lackey lpt lpp curve machine xrun xmodel spec source; do
	mkdir -p "$D/$h"
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# traces: every pattern, in the three formats
for pat in seq cyclic uniform zipf strided mix; do
	"$L" synth $pat -n 300 --seed 3 -o "$D/lpt/$pat.lpt" 2>/dev/null
	"$L" synth $pat -n 60 --seed 3 -o "$D/text/$pat.txt" 2>/dev/null
	"$L" synth $pat -n 60 --seed 3 -o "$D/lackey/$pat.lackey" 2>/dev/null
done
printf '# events and threads\nA 0x1000 4096 0x4444 2\nR 0x1000 8 0x401000 2\nW 0x1ff8 16 0x401004 1\nF 0x1000 0 0x4448 2\nR 0x2000 4096\n' \
	>"$D/text/events.txt"
# an allocation's call stack (frame records, lpt version 2)
printf 'R 0x2000 8 0x401000\nA 0x3000 64 0x4444 1\nS 0 0 0x401234 1\nS 0 0 0x7f0000001000 1\nW 0x3008 8 0x401004 1\nF 0x3000 0 0x4448 1\n' \
	>"$D/text/stacks.txt"
"$L" convert "$D/text/stacks.txt" "$D/lpt/stacks.lpt"
"$L" sample "$D/text/stacks.txt" -o "$D/lpp/stacks.lpp" --rate 1 2>/dev/null
"$L" convert "$D/text/events.txt" "$D/lpt/events.lpt"
head -40 "$src/tests/data/true-excerpt.lackey" >"$D/lackey/excerpt.lackey"
# an .lpt record payload (tests/fuzz/fuzz-lpt.c): 'P', count 2, no
# address bytes, two tags: a read and a write of the same address
printf 'P\002\000\000\000\000\000\000\004' >"$D/lpt/payload-2"
# and a read then a frame record (extra flag 4, pc 0x10)
printf 'P\002\000\000\000\000\000\000\300\040\004' >"$D/lpt/payload-frame"

# profiles: one and two line sizes, windows, allocation events
"$L" synth mix -n 4000 --seed 5 -o "$T/mix.lpt" 2>/dev/null
"$L" sample "$T/mix.lpt" -o "$D/lpp/mix.lpp" --rate 0.01 --window 500 2>/dev/null
"$L" sample "$T/mix.lpt" -o "$D/lpp/two-lines.lpp" --rate 0.005 --line 64,256 --window 1000 2>/dev/null
"$L" sample "$D/text/events.txt" -o "$D/lpp/events.lpp" --rate 1 2>/dev/null
for f in nosamples win-huge phases-overflow; do
	cp "$src/tests/data/fuzz-findings/$f.lpp" "$D/lpp/"
done

# sources (annotate): a program, and line ends of every kind
cp "$src/examples/matmul.c" "$D/source/matmul.c"
printf 'a\r\nb\n\nno newline' >"$D/source/ends.c"

# curves
"$L" stackdist --curve --format csv "$T/mix.lpt" >"$D/curve/stackdist.csv" 2>/dev/null
"$L" simulate "$D/lpt/zipf.lpt" --sizes 1K,4K,16K --policy lru,fifo --format csv >"$D/curve/simulate.csv" 2>/dev/null

# machine files
printf 'name itanium2\ncache L1 16K 4 64\ncache L2 256K 8 128\ncache L3 1536K 6 128\ntlb TLB1 32 16K\ntlb TLB2 128 16K full\n' \
	>"$D/machine/itanium2"
printf '# a comment\nname small\ncache L1 2K full 32B\ntlb TLB 8 1KiB 2\n' >"$D/machine/small"

# model runs and a fitted model (the walks of tests/cli/test-model-sets.sh)
for p in 64 96 128; do
	awk -v P=$p 'BEGIN { for (r = 0; r < 3; r++) for (i = 0; i < P; i++) printf "R %x 8 10\n", 1048576 + i * 4096
		for (r = 0; r < 2; r++) for (i = 0; i < P; i++) printf "R %x 8 20\n", 268435456 + i * 64 }' >"$T/walk-$p.txt"
	"$L" predict collect -q --size $p -o "$T/runs" --trace "$T/walk-$p.txt" --line 64 --page 4K --sets 64x64 2>/dev/null
done
"$L" predict fit -q "$T/runs" 2>/dev/null
cp "$T"/runs/size-*.xrun "$D/xrun/"
cp "$T/runs/model.xmodel" "$D/xmodel/"

# cache specs and size lists
i=0
for s in 32K:8:64 1M:full:64:plru 1.5M:3:64:random 4K:1:32:fifo 4K,32K..1M 64 1..1G 0x40; do
	printf '%s' "$s" >"$D/spec/$((i += 1))"
done
