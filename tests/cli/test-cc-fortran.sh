# A program that ran no instrumented code is an error (exit 1, one line,
# its empty profile kept); a Fortran source, which clang would hand to
# gfortran uninstrumented, is refused by locprof cc with one line, and
# instrumented by gfortran with --gcc when compiled apart (-c) and linked.
. "$(dirname "$0")/lib.sh"
command -v clang >/dev/null || { echo "SKIP: no clang" >&2; exit 0; }

printf 'int main(void) { return 0; }\n' >"$T/nop.c"
"$LOCPROF" cc -O2 -o "$T/nop" "$T/nop.c" || fail "cannot build nop.c"
expect_status 1 "$LOCPROF" record -q -o "$T/nop.lpp" -- "$T/nop"
expect_one_line "$T/err"
expect_grep "^locprof: error: '.*/nop' ran no instrumented code: its profile .*nop\.lpp holds no memory reference" "$T/err"
[ -s "$T/nop.lpp" ] || fail "the empty profile was not kept"

command -v gfortran >/dev/null || { echo "SKIP: the Fortran part: no gfortran" >&2; echo ok; exit 0; }
cat >"$T/sweep.f90" <<'F'
program sweep
  implicit none
  integer, parameter :: n = 512
  real(8), allocatable :: a(:,:), b(:,:)
  integer :: i, j, r
  real(8) :: s
  allocate(a(n, n), b(n, n))
  a = 1.0d0
  b = 2.0d0
  s = 0
  do r = 1, 4
    do i = 1, n
      do j = 1, n
        s = s + a(i, j) * b(i, j)
      end do
    end do
  end do
  print *, s
end program sweep
F
expect_status 2 "$LOCPROF" cc -O2 -g -o "$T/sweep" "$T/sweep.f90"
expect_grep "^locprof: error: '.*sweep\.f90' is Fortran, which clang hands to gfortran uninstrumented" "$T/err"
expect_status 2 env LOCPROF_GCC=gfortran "$LOCPROF" cc --gcc -O2 -g -o "$T/sweep" "$T/sweep.f90"
expect_grep "a Fortran source is instrumented only when compiled apart" "$T/err"
expect_status 0 env LOCPROF_GCC=gfortran "$LOCPROF" cc --gcc -O2 -g -c -o "$T/sweep.o" "$T/sweep.f90"
expect_status 0 env LOCPROF_GCC=gfortran "$LOCPROF" cc --gcc -O2 -g -o "$T/sweep" "$T/sweep.o"
expect_status 0 "$LOCPROF" record -o "$T/f.lpp" --rate 0.01 -- "$T/sweep"
# 4 sweeps of 2 x 512 x 512 loads, and the stores of the assignments
refs=$(awk '/ references at rate/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "references") print $i }' "$T/err")
[ -n "$refs" ] && [ "$refs" -ge 1000000 ] || { cat "$T/err" >&2; fail "the Fortran program made $refs references, expected over 10^6"; }
# the column walk's line is named, and the two arrays of one allocate
# statement are two objects, by their order
expect_status 0 "$LOCPROF" report "$T/f.lpp" --at 16K --top 3
expect_grep 'sweep\.f90:1[0-9]' "$T/out"
expect_grep '^ *heap@sweep \(sweep\.f90:7, call 1 of 2\) ' "$T/out"
expect_grep '^ *heap@sweep \(sweep\.f90:7, call 2 of 2\) ' "$T/out"
echo ok
