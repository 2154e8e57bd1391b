; The pass on hand-written IR: tests/cli/test-pass-ir.sh runs
; opt -passes=locprof on it and opt's verifier must accept the result.
; B2 (two accesses, cloned) defines %p; B1, earlier in layout order but
; dominated by B2, loads through %p.
define i32 @f(i32* %a, i64 %n) {
entry:
  br label %b2
b1:
  %v = load i32, i32* %p
  %s = add i32 %v, %x
  %c = icmp ult i64 %i.next, %n
  br i1 %c, label %b2, label %exit
b2:
  %i = phi i64 [ 0, %entry ], [ %i.next, %b1 ]
  %p = getelementptr inbounds i32, i32* %a, i64 %i
  %x = load i32, i32* %p
  %q = getelementptr inbounds i32, i32* %p, i64 1
  %y = load i32, i32* %q
  %i.next = add i64 %i, 1
  br label %b1
exit:
  ret i32 %s
}
