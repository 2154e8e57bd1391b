# Regions of interest under the inst backend (docs/commands/record.md,
# "Regions of interest"): the markers of locprof/roi.h in C and C++,
# --start-at/--stop-at, --skip, --whole-run, and the errors. A region's
# profile must count the kernel's references (within 2%) and give the
# working-set graph of a program that runs only the kernel.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/roi/roi-lib.sh"

need_pass
src="$LOCPROF_SRC/tests/cli/roi"
cd "$T"
expect_status 0 "$LOCPROF" cc -O2 -g -DROI_MARKED -o marked "$src/roi.c"
expect_status 0 "$LOCPROF" cc -O2 -g -DROI_KERNEL_ONLY -o konly "$src/roi.c"
expect_status 0 "$LOCPROF" cc -O2 -g -o plain "$src/roi.c"
./plain 100 >want
rec() { expect_status 0 "$LOCPROF" record -r 0.01 "$@"; }

# ---- the markers ----------------------------------------------------------
rec -o marked.lpp -- ./marked 100
cmp -s out want || fail "the marked program printed '$(cat out)'"
expect_grep "^locprof: marked.lpp: region \(locprof_start/locprof_stop\) entered 1 time, [0-9]+ references outside it left out" err
rec -o konly.lpp -- ./konly 100
grep -q region err && fail "a program without markers got a region: $(cat err)"
rec -o whole.lpp --whole-run -- ./marked 100
grep -q region err && fail "--whole-run kept the region: $(cat err)"
"$LOCPROF" dump "$T/marked.lpp" >dump
expect_grep "^region: locprof_start/locprof_stop; entered 1 time, [0-9]+ references outside it left out" dump
"$LOCPROF" dump --format json "$T/marked.lpp" >dump.json
python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["region"]; assert r["what"] == "locprof_start/locprof_stop" and r["entries"] == 1 and r["skipped"] > 0, r' dump.json ||
	fail "dump --format json has no region: $(head -c 300 dump.json)"
expect_status 0 "$LOCPROF" report marked.lpp
expect_grep "^region of interest: locprof_start/locprof_stop; entered 1 time" out
# The references outside are the whole run's less the region's.
skipped=$("$LOCPROF" dump marked.lpp | sed -n 's/^region: .*, \([0-9]*\) references outside.*/\1/p')
[ "$(( $(profile_refs marked.lpp) + skipped ))" -ge "$(profile_refs whole.lpp)" ] ||
	fail "region $(profile_refs marked.lpp) + outside $skipped < whole run $(profile_refs whole.lpp)"
check_region "C markers" marked.lpp konly.lpp "$(profile_refs konly.lpp)" whole.lpp

# ---- --start-at, --stop-at ---------------------------------------------------
rec -o fromto.lpp --start-at kernel --stop-at tail -- ./plain 100
expect_grep "fromto.lpp: region \(from kernel, till tail\) entered 1 time" err
check_region "--start-at kernel --stop-at tail" fromto.lpp konly.lpp "$(profile_refs konly.lpp)" whole.lpp
# --stop-at alone: the run up to the tail; with --start-at, two entries
# would show, one does here (the kernel runs once).
rec -o till.lpp --stop-at tail -- ./plain 100
expect_grep "till.lpp: region \(till tail\) entered 1 time" err
[ "$(profile_refs till.lpp)" -lt "$(profile_refs whole.lpp)" ] || fail "--stop-at tail left nothing out"

# ---- --skip: exactly N references, alone and after --start-at ----------------
rec -o skip.lpp --skip 100000 -- ./konly 100
expect_grep "skip.lpp: region \(skip 100000 references\) entered 1 time, 100000 references outside" err
[ "$(profile_refs skip.lpp)" -eq "$(( $(profile_refs konly.lpp) - 100000 ))" ] ||
	fail "--skip 100000: $(profile_refs skip.lpp) references of $(profile_refs konly.lpp)"
rec -o skip2.lpp --start-at kernel --stop-at tail --skip 1000 -- ./plain 100
[ "$(profile_refs skip2.lpp)" -eq "$(( $(profile_refs fromto.lpp) - 1000 ))" ] ||
	fail "--start-at kernel --skip 1000: $(profile_refs skip2.lpp) references, $(profile_refs fromto.lpp) without --skip"

# ---- an exec'd program is recorded whole: the region was set for PROGRAM ----
expect_status 0 "$LOCPROF" cc -O1 -o launch "$src/launch.c"
rec -o exec.lpp --start-at kernel -- ./launch ./marked 100
expect_grep "^locprof: exec.lpp: region \(from kernel\) entered 1 time" err
child=$(ls exec.*.lpp) || fail "no profile of the exec'd program; record said: $(cat err); files: $(ls)"
grep -q "$child: region" err && fail "the exec'd program got the launcher's region: $(cat err)"
"$LOCPROF" dump "$child" | grep -q '^region:' && fail "the exec'd program's profile has a region"
[ "$(profile_refs "$child")" -eq "$(profile_refs whole.lpp)" ] ||
	fail "the exec'd program has $(profile_refs "$child") references, its whole run $(profile_refs whole.lpp)"

# ---- C++: the markers from C++, --start-at by a demangled name ----------------
expect_status 0 "$LOCPROF" c++ -O2 -g -DROI_MARKED -o xmarked "$src/roi.cc"
expect_status 0 "$LOCPROF" c++ -O2 -g -DROI_KERNEL_ONLY -o xkonly "$src/roi.cc"
expect_status 0 "$LOCPROF" c++ -O2 -g -o xplain "$src/roi.cc"
rec -o xmarked.lpp -- ./xmarked 100
rec -o xkonly.lpp -- ./xkonly 100
rec -o xwhole.lpp -- ./xplain 100
check_region "C++ markers" xmarked.lpp xkonly.lpp "$(profile_refs xkonly.lpp)" xwhole.lpp
rec -o xfromto.lpp --start-at 'roi::Grid::relax(int)' --stop-at roi::tail -- ./xplain 100
check_region "C++ --start-at roi::Grid::relax(int)" xfromto.lpp xkonly.lpp "$(profile_refs xkonly.lpp)" xwhole.lpp

# ---- the header without locprof: a plain compiler, no runtime -----------------
if command -v gcc >/dev/null; then
	gcc -O2 -I"$LOCPROF_SRC/include" -DROI_MARKED -o gmarked "$src/roi.c" || fail "gcc cannot build with locprof/roi.h"
	[ "$(./gmarked 100)" = "$(cat want)" ] || fail "the markers changed what the program computes"
fi

# ---- the pmu backend: records the whole run, and says so ----------------------
if [ -x "$LOCPROF_BUILD/src/pmu/pmu-target-threads" ] && command -v gcc >/dev/null; then
	printf '%s\n' '#include <locprof/roi.h>' \
		'int main(void) { volatile int x = 0; locprof_start(); x++; locprof_stop(); return x - 1; }' >tiny.c
	gcc -O1 -I"$LOCPROF_SRC/include" -o tiny tiny.c
	expect_status 0 "$LOCPROF" record --backend pmu --counter step -o pmu.lpp -- ./tiny
	expect_grep "^locprof: the pmu backend does not see locprof_start\(\)/locprof_stop\(\): recording the whole run$" err
	grep -q "region (" err && fail "the pmu backend claims a region: $(cat err)"
fi

# ---- errors: one line, before the program runs --------------------------------
expect_status 2 "$LOCPROF" record -o e.lpp --start-at no_such_function -- ./plain
expect_one_line err
expect_grep "error: --start-at no_such_function: no function 'no_such_function' in '\./plain'" err
expect_status 2 "$LOCPROF" record -o e.lpp --start-at kernel --stop-at kernel -- ./plain
expect_grep "name the same function" err
expect_status 2 "$LOCPROF" record -o e.lpp --skip 0 -- ./plain
expect_status 2 "$LOCPROF" record -o e.lpt --mode trace --skip 10 -- ./plain
expect_grep "a region of interest is for sample mode" err
expect_status 2 "$LOCPROF" record -o e.lpp --backend pmu --start-at kernel -- ./plain
expect_grep "are for the inst and valgrind backends" err
[ -e e.lpp ] || [ -e e.lpt ] && fail "a refused run left an output"
echo "ok: regions of interest under the inst backend"
