/* Instrumentation: every data access of the guest (loads, stores, guarded
 * loads and stores, memory touched by dirty helpers, CAS, LL/SC; the set
 * lackey traces) with the address of its guest instruction.
 *
 * A superblock is cut into segments at its side exits (and every
 * LPVG_SEG_MAX accesses): inside a segment every access happens, except
 * guarded ones whose guard is known only at run time. Per access the code
 * stores the address into the thread's shadow buffer abuf[i] (a guarded
 * access not done stores LPVG_NONE_ADDR) and, in sample mode, adds up the
 * filter bytes of the lines. At the end of the segment (before the exit):
 *
 *   sample mode:  cd -= references done + (filter sum << 40);
 *                 if (cd <= 0) lpvg_seg_sample(gsp, seg)
 *   trace mode:   lpvg_seg_trace(gsp, seg)
 *
 * A non-zero filter sum forces the call with a single compare (countdowns
 * stay below 2^38; the slow path adds the sum back). So the common case of
 * sample mode is, per access, a store at a small offset from the
 * guest-state register, a shift, an and, a byte load at a 32-bit
 * displacement (the filter is in the tool's image) and an add; per segment,
 * a load, two subtractions, a store and a compare-and-branch: no call. The
 * countdown and the buffer live in each thread's shadow area (vg-tool.h),
 * so threads need no switching. The slow path replays the segment from the
 * buffer in order (vg-sample.c).
 *
 * Segment descriptors (pc, size, kind of each access) are allocated here and
 * freed when valgrind discards the superblock's translation.
 */
#include "vg-tool.h"

#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"

struct ist {
	IRSB *out;
	ULong pc;
	UInt n, nguarded;
	struct lpvg_acc acc[LPVG_SEG_MAX];
	IRExpr *ndyn; /* I64 atom: guarded accesses done, or NULL */
	IRExpr *hit;  /* I64 atom: OR of filter bytes, or NULL */
	struct lpvg_seg *segs;
};

/* Superblock -> its segments, to free them on discard. */
struct sb_node {
	struct sb_node *next;
	UWord key;
	struct lpvg_seg *segs;
};
static VgHashTable *sb_table;

static IRExpr *tmp(struct ist *s, IRType ty, IRExpr *e)
{
	IRTemp t = newIRTemp(s->out->tyenv, ty);

	addStmtToIRSB(s->out, IRStmt_WrTmp(t, e));
	return IRExpr_RdTmp(t);
}

static IRExpr *u64(ULong v)
{
	return IRExpr_Const(IRConst_U64(v));
}

static void flush(struct ist *s)
{
	struct lpvg_seg *seg;
	IRDirty *di;
	void *fn;
	const HChar *name;

	if (!s->n)
		return;
	seg = VG_(malloc)("lpvg.seg", sizeof(*seg) + s->n * sizeof(seg->acc[0]));
	seg->n = s->n;
	seg->nguarded = s->nguarded;
	VG_(memcpy)(seg->acc, s->acc, s->n * sizeof(seg->acc[0]));
	seg->next = s->segs;
	s->segs = seg;
	if (lpvg_o.mode == LP_MODE_TRACE) {
		fn = lpvg_seg_trace;
		name = "lpvg_seg_trace";
	} else {
		fn = lpvg_seg_sample;
		name = "lpvg_seg_sample";
	}
	di = unsafeIRDirty_0_N(2, name, VG_(fnptr_to_fnentry)(fn),
			       mkIRExprVec_2(IRExpr_GSPTR(), mkIRExpr_HWord((HWord)seg)));
	/* What the helper reads and writes of the shadow area, so that the
	 * optimiser keeps the stores before it. */
	di->nFxState = 2;
	VG_(memset)(&di->fxState, 0, sizeof(di->fxState));
	di->fxState[0].fx = Ifx_Modify;
	di->fxState[0].offset = LPVG_GS + LPVG_SH_CD;
	di->fxState[0].size = 8;
	di->fxState[1].fx = Ifx_Read;
	di->fxState[1].offset = LPVG_GS + LPVG_SH_THREAD;
	di->fxState[1].size = (UShort)(LPVG_SH_ABUF - LPVG_SH_THREAD + 8 * s->n);
	if (lpvg_o.mode == LP_MODE_SAMPLE) {
		IRExpr *cd0, *cnt, *cd1;
		cd0 = tmp(s, Ity_I64, IRExpr_Get(LPVG_GS + LPVG_SH_CD, Ity_I64));
		/* Variable parts first, the constant last: the host code then
		 * adds an immediate. */
		cnt = NULL;
		if (s->hit)
			cnt = tmp(s, Ity_I64, IRExpr_Binop(Iop_Shl64, s->hit,
							   IRExpr_Const(IRConst_U8(LPVG_HIT_SHIFT))));
		if (s->ndyn)
			cnt = cnt ? tmp(s, Ity_I64, IRExpr_Binop(Iop_Add64, cnt, s->ndyn)) : s->ndyn;
		if (!cnt)
			cnt = u64(s->n - s->nguarded);
		else if (s->n > s->nguarded)
			cnt = tmp(s, Ity_I64, IRExpr_Binop(Iop_Add64, cnt, u64(s->n - s->nguarded)));
		cd1 = tmp(s, Ity_I64, IRExpr_Binop(Iop_Sub64, cd0, cnt));
		addStmtToIRSB(s->out, IRStmt_Put(LPVG_GS + LPVG_SH_CD, cd1));
		di->guard = tmp(s, Ity_I1, IRExpr_Binop(Iop_CmpLE64S, cd1, u64(0)));
	}
	addStmtToIRSB(s->out, IRStmt_Dirty(di));
	s->n = 0;
	s->nguarded = 0;
	s->ndyn = NULL;
	s->hit = NULL;
}

/* One access. guard: NULL, or an Ity_I1 atom saying whether it happens. */
static void access(struct ist *s, IRExpr *addr, Int size, UInt kind, IRExpr *guard)
{
	struct lpvg_acc *a;
	UInt i;

	tl_assert(isIRAtom(addr));
	if (guard && guard->tag == Iex_Const && guard->Iex.Const.con->Ico.U1)
		guard = NULL; /* always done */
	if (guard && guard->tag == Iex_Const)
		return; /* never done */
	if (s->n == LPVG_SEG_MAX)
		flush(s);
	i = s->n++;
	a = &s->acc[i];
	a->pc = s->pc;
	a->size = size < 1 ? 1 : size > 65535 ? 65535 : (UShort)size;
	a->kind = (UChar)kind;
	a->guarded = guard != NULL;
	if (guard) {
		IRExpr *g64 = tmp(s, Ity_I64, IRExpr_Unop(Iop_1Uto64, guard));
		addr = tmp(s, Ity_I64, IRExpr_ITE(guard, addr, u64(LPVG_NONE_ADDR)));
		s->nguarded++;
		s->ndyn = s->ndyn ? tmp(s, Ity_I64, IRExpr_Binop(Iop_Add64, s->ndyn, g64)) : g64;
	}
	addStmtToIRSB(s->out, IRStmt_Put(LPVG_GS + LPVG_SH_ABUF + 8 * (Int)i, addr));
	if (lpvg_o.mode == LP_MODE_SAMPLE) {
		IRExpr *l = tmp(s, Ity_I64, IRExpr_Binop(Iop_Shr64, addr,
							 IRExpr_Const(IRConst_U8(lpvg_o.line_shift[0]))));
		IRExpr *m = tmp(s, Ity_I64,
				IRExpr_Binop(Iop_And64, l, u64((1ull << LPVG_FILTER_LOG2) - 1)));
		IRExpr *p = tmp(s, Ity_I64, IRExpr_Binop(Iop_Add64, m, u64((HWord)lpvg_filter)));
		IRExpr *b = tmp(s, Ity_I8, IRExpr_Load(Iend_LE, Ity_I8, p));
		IRExpr *b64 = tmp(s, Ity_I64, IRExpr_Unop(Iop_8Uto64, b));
		s->hit = s->hit ? tmp(s, Ity_I64, IRExpr_Binop(Iop_Add64, s->hit, b64)) : b64;
	}
}

IRSB *lpvg_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
		      const VexGuestExtents *vge, const VexArchInfo *archinfo, IRType gWordTy,
		      IRType hWordTy)
{
	IRTypeEnv *tyenv = in->tyenv;
	struct ist s;
	Int i = 0;

	if (gWordTy != Ity_I64 || hWordTy != Ity_I64)
		VG_(tool_panic)("locprof: only amd64 is supported");
	if (lpvg_o.inert)
		return in;
	tl_assert(layout->total_sizeB == LPVG_GS &&
		  LPVG_SH_ABUF + 8 * LPVG_SEG_MAX <= layout->total_sizeB);
	VG_(memset)(&s, 0, sizeof(s));
	s.out = deepCopyIRSBExceptStmts(in);
	while (i < in->stmts_used && in->stmts[i]->tag != Ist_IMark)
		addStmtToIRSB(s.out, in->stmts[i++]);
	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];
		if (!st || st->tag == Ist_NoOp)
			continue;
		switch (st->tag) {
		case Ist_IMark:
			s.pc = (ULong)st->Ist.IMark.addr + (ULong)(Long)st->Ist.IMark.delta;
			break;
		case Ist_WrTmp: {
			IRExpr *e = st->Ist.WrTmp.data;
			if (e->tag == Iex_Load)
				access(&s, e->Iex.Load.addr, sizeofIRType(e->Iex.Load.ty), LP_REF_READ, NULL);
			break;
		}
		case Ist_Store:
			access(&s, st->Ist.Store.addr,
			       sizeofIRType(typeOfIRExpr(tyenv, st->Ist.Store.data)), LP_REF_WRITE, NULL);
			break;
		case Ist_StoreG: {
			IRStoreG *sg = st->Ist.StoreG.details;
			access(&s, sg->addr, sizeofIRType(typeOfIRExpr(tyenv, sg->data)), LP_REF_WRITE,
			       sg->guard);
			break;
		}
		case Ist_LoadG: {
			IRLoadG *lg = st->Ist.LoadG.details;
			IRType ty = Ity_INVALID, wide = Ity_INVALID;
			typeOfIRLoadGOp(lg->cvt, &wide, &ty);
			access(&s, lg->addr, sizeofIRType(ty), LP_REF_READ, lg->guard);
			break;
		}
		case Ist_Dirty: {
			IRDirty *d = st->Ist.Dirty.details;
			if (d->mFx == Ifx_None)
				break;
			if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
				access(&s, d->mAddr, d->mSize, LP_REF_READ, d->guard);
			if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
				access(&s, d->mAddr, d->mSize, LP_REF_WRITE, d->guard);
			break;
		}
		case Ist_CAS: {
			IRCAS *cas = st->Ist.CAS.details;
			Int size = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo));
			if (cas->dataHi)
				size *= 2; /* double-word CAS */
			access(&s, cas->addr, size, LP_REF_READ, NULL);
			access(&s, cas->addr, size, LP_REF_WRITE, NULL);
			break;
		}
		case Ist_LLSC:
			if (!st->Ist.LLSC.storedata)
				access(&s, st->Ist.LLSC.addr,
				       sizeofIRType(typeOfIRTemp(tyenv, st->Ist.LLSC.result)), LP_REF_READ,
				       NULL);
			else
				access(&s, st->Ist.LLSC.addr,
				       sizeofIRType(typeOfIRExpr(tyenv, st->Ist.LLSC.storedata)),
				       LP_REF_WRITE, NULL);
			break;
		case Ist_Exit:
			flush(&s); /* the exit may be taken: account for what came before */
			break;
		default:
			break;
		}
		addStmtToIRSB(s.out, st);
	}
	flush(&s);
	if (s.segs) {
		struct sb_node *old = VG_(HT_remove)(sb_table, (UWord)vge->base[0]);
		struct sb_node *nd = VG_(malloc)("lpvg.sb", sizeof(*nd));
		/* An entry left for the same address means its translation is
		 * still live somewhere (valgrind discards before retranslating,
		 * so this should not happen): keep its segments, leak them. */
		if (old)
			VG_(free)(old);
		nd->key = (UWord)vge->base[0];
		nd->segs = s.segs;
		VG_(HT_add_node)(sb_table, nd);
	}
	return s.out;
}

void lpvg_discard_sb(Addr orig_addr, VexGuestExtents vge)
{
	struct sb_node *nd = VG_(HT_remove)(sb_table, (UWord)vge.base[0]);

	if (!nd)
		return;
	while (nd->segs) {
		struct lpvg_seg *next = nd->segs->next;
		VG_(free)(nd->segs);
		nd->segs = next;
	}
	VG_(free)(nd);
}

void lpvg_instr_init(void)
{
	sb_table = VG_(HT_construct)("lpvg.sbs");
}
