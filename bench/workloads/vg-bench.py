# A Python workload for bench/overhead-valgrind.sh and
# bench/cachegrind-agreement.sh (about a second natively): the
# interpreter's dispatch, a large dict, list sorting and string building.
# usage: python3 vg-bench.py [N]   (default 400000)
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 400000
x = 12345
vals = []
for i in range(n):
    x = (x * 1103515245 + 12345) % 2147483648
    vals.append(x)
d = {}
for v in vals:
    d[v % 100003] = d.get(v % 100003, 0) + 1
vals.sort()
s = ",".join(str(v % 1000) for v in vals[::3])
print(len(d), max(d.values()), vals[n // 2], len(s))
