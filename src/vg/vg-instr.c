/* Instrumentation: every data access of the guest (loads, stores, guarded
 * loads and stores, memory touched by dirty helpers, CAS, LL/SC; the set
 * lackey traces) with the address of its guest instruction.
 *
 * A superblock is cut into segments at its side exits (and every
 * LPVG_SEG_MAX accesses): inside a segment every access happens, except
 * guarded ones whose guard is known only at run time. The exits of an
 * unrolled string-instruction loop (rep stos/movs) do not cut it: a call
 * guarded by the exit's condition accounts for the accesses before it
 * when it is taken (loop_exit, exit_call).
 *
 * Bases and offsets. The IR is flat and in SSA form, so the address of an
 * access is a temporary whose definition can be followed through additions
 * of constants (and of multiples of the direction flag: string
 * instructions) back to a root value: push, pop, spills and reloads are
 * all %rsp + constant, the fields of a structure p + constant. Within a
 * segment, accesses with the same root share one slot of the thread's
 * shadow buffer abuf: the code stores the root once and the segment's
 * descriptor keeps each access's constant offset (vg-tool.h); constant
 * addresses need no store at all, nor roots that a guest integer register
 * holds (plus a constant) at the segment's end: the slow path reads the
 * register. A guarded access has its own slot (LPVG_NONE_ADDR when it is
 * not done).
 *
 * The filter (sample mode). The accesses of one root are cut into clusters
 * whose offsets span at most 6 lines (floor(off / line)): every access of
 * a cluster then lies on one of the 8 lines from the root's line plus
 * floor(lo / line), and one load of 2, 4 or 8 filter bytes there reads
 * them all; the root's filter slot is computed once per segment and
 * the constant goes in the load's displacement (the filter has copies of
 * its ends around it). The check may read bytes of lines no access
 * touches (a false alarm that costs a table lookup), never too few. The
 * loads of a segment are ORed. At the end of the segment (before the
 * exit):
 *
 *   sample mode:  cd -= references done;
 *                 if ((cd >> 63) != filter OR) lpvg_seg_sample(seg)
 *   trace mode:   lpvg_seg_trace(seg)
 *
 * Straddling references (sample mode): each access of 2 bytes or more
 * adds its extra lines of the smallest line size, ((addr & (line - 1)) +
 * size - 1) >> shift, to the segment's count, which goes into the
 * thread's LPVG_SH_EXTRA at the segment's end; with several line sizes a
 * non-zero count also calls the slow path, which counts the others
 * (vg-sample.c). The filter loads cover each access's last byte.
 *
 * So the common case of sample mode is, per root not in a register, a
 * store at a small offset from the guest-state register; per root, a copy,
 * a shift and an and; per cluster a load at a 32-bit displacement (the
 * filter is in the tool's image) and an or; per segment, a load, a
 * subtraction, a store, a shift, a compare, the descriptor's
 * address and a conditional call. The countdown and the buffer live in
 * each thread's shadow area (vg-tool.h), so threads need no switching. The
 * slow path rebuilds every address from the slots and registers and
 * replays the segment in order (vg-sample.c).
 *
 * --selfcheck=yes (tests) also stores every access's own address in the
 * second shadow area and calls lpvg_seg_check at every segment's end, which
 * compares the rebuilt addresses with them and checks that the fast path
 * called whenever the countdown expired or a line of the segment is
 * watched.
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

/* One access, planned by the first pass over the superblock. */
struct plan {
	IRExpr *addr;    /* atom */
	IRExpr *guard;   /* NULL, or an Ity_I1 atom saying whether it happens */
	IRExpr *root;    /* the address is root + off (Const root: absolute) */
	Long off;
	ULong pc;
	UInt seg;
	UShort size;
	UChar kind;
	UChar slot;      /* in its segment's abuf, LPVG_SLOT_REG + r, or LPVG_SLOT_ABS */
	Bool store;      /* first access of its abuf slot: store the root */
	Long regd;       /* LPVG_SLOT_REG: the register holds root + regd */
	Long dfm, regdfm; /* multiples of DF - 1 in off and regd (resolve) */
	Bool check;      /* first access of its cluster: read the filter ... */
	IRType check_ty; /* ... this wide (Ity_I8..I64: 1, 2, 4, 8 lines) at root + check_off */
	Long check_off;
	Bool check_near; /* ... at the line of root, plus check_off lines */
};

enum { LPVG_NFSLOT = 32 };

struct ist {
	IRSB *out;
	UInt n, nguarded, nslots, nshared;
	Bool regs; /* some access's root is read from a guest register */
	Bool df;   /* some access's address depends on the direction flag */
	Bool dfcheck; /* ... as seen from its root: the filter loads assumed DF = 1 */
	UInt segno; /* segments flushed so far: must match the plan's */
	IRExpr *ndyn; /* I64 atom: guarded accesses done, or NULL */
	IRExpr *hit;  /* I64 atom: OR of filter loads, or NULL */
	IRExpr *extra; /* I64 atom: the segment's extra line accesses (smallest size), or NULL */
	Bool wide;    /* an access wider than a line: the filter cannot cover it */
	struct lpvg_seg *segs;
	struct { IRTemp root; IRExpr *slot; } fslot[LPVG_NFSLOT]; /* filter_slot's */
	UInt nfslot;
	IRExpr **defs; /* of the input's temporaries */
	UInt ndefs;
	struct lpvg_acc acc[LPVG_SEG_MAX]; /* last: not cleared */
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

/* The accesses of one statement, in order (at most 2). */
struct sacc {
	IRExpr *addr, *guard;
	Int size;
	UInt kind;
};

static UInt add_acc(struct sacc *a, UInt n, IRExpr *addr, Int size, UInt kind, IRExpr *guard)
{
	tl_assert(isIRAtom(addr));
	if (guard && guard->tag == Iex_Const && guard->Iex.Const.con->Ico.U1)
		guard = NULL; /* always done */
	if (guard && guard->tag == Iex_Const)
		return n; /* never done */
	a[n].addr = addr;
	a[n].guard = guard;
	a[n].size = size;
	a[n].kind = kind;
	return n + 1;
}

static UInt stmt_accesses(IRTypeEnv *tyenv, IRStmt *st, struct sacc *a)
{
	switch (st->tag) {
	case Ist_WrTmp: {
		IRExpr *e = st->Ist.WrTmp.data;
		if (e->tag == Iex_Load)
			return add_acc(a, 0, e->Iex.Load.addr, sizeofIRType(e->Iex.Load.ty), LP_REF_READ,
				       NULL);
		return 0;
	}
	case Ist_Store:
		return add_acc(a, 0, st->Ist.Store.addr,
			       sizeofIRType(typeOfIRExpr(tyenv, st->Ist.Store.data)), LP_REF_WRITE, NULL);
	case Ist_StoreG: {
		IRStoreG *sg = st->Ist.StoreG.details;
		return add_acc(a, 0, sg->addr, sizeofIRType(typeOfIRExpr(tyenv, sg->data)),
			       LP_REF_WRITE, sg->guard);
	}
	case Ist_LoadG: {
		IRLoadG *lg = st->Ist.LoadG.details;
		IRType ty = Ity_INVALID, wide = Ity_INVALID;
		typeOfIRLoadGOp(lg->cvt, &wide, &ty);
		return add_acc(a, 0, lg->addr, sizeofIRType(ty), LP_REF_READ, lg->guard);
	}
	case Ist_Dirty: {
		IRDirty *d = st->Ist.Dirty.details;
		UInt n = 0;
		if (d->mFx == Ifx_None)
			return 0;
		if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
			n = add_acc(a, n, d->mAddr, d->mSize, LP_REF_READ, d->guard);
		if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
			n = add_acc(a, n, d->mAddr, d->mSize, LP_REF_WRITE, d->guard);
		return n;
	}
	case Ist_CAS: {
		IRCAS *cas = st->Ist.CAS.details;
		Int size = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo));
		if (cas->dataHi)
			size *= 2; /* double-word CAS */
		add_acc(a, 0, cas->addr, size, LP_REF_READ, NULL);
		return add_acc(a, 1, cas->addr, size, LP_REF_WRITE, NULL);
	}
	case Ist_LLSC:
		if (!st->Ist.LLSC.storedata)
			return add_acc(a, 0, st->Ist.LLSC.addr,
				       sizeofIRType(typeOfIRTemp(tyenv, st->Ist.LLSC.result)),
				       LP_REF_READ, NULL);
		return add_acc(a, 0, st->Ist.LLSC.addr,
			       sizeofIRType(typeOfIRExpr(tyenv, st->Ist.LLSC.storedata)), LP_REF_WRITE,
			       NULL);
	default:
		return 0;
	}
}

/* e is the direction flag times a power of two (the step of a string
 * instruction: GET(DFLAG), or that shifted left by a constant): the
 * multiple, or 0. */
static Long df_multiple(IRExpr **defs, UInt ndefs, const IRExpr *e)
{
	const IRExpr *d = e->tag == Iex_RdTmp && e->Iex.RdTmp.tmp < ndefs ? defs[e->Iex.RdTmp.tmp] : NULL;
	Long k = 1;

	if (d && d->tag == Iex_Binop && d->Iex.Binop.op == Iop_Shl64 &&
	    d->Iex.Binop.arg2->tag == Iex_Const && d->Iex.Binop.arg2->Iex.Const.con->Ico.U8 < 8) {
		k = 1 << d->Iex.Binop.arg2->Iex.Const.con->Ico.U8;
		e = d->Iex.Binop.arg1;
		d = e->tag == Iex_RdTmp && e->Iex.RdTmp.tmp < ndefs ? defs[e->Iex.RdTmp.tmp] : NULL;
	}
	if (d && d->tag == Iex_Get && d->Iex.Get.ty == Ity_I64 &&
	    d->Iex.Get.offset == (Int)offsetof(VexGuestAMD64State, guest_DFLAG))
		return k;
	return 0;
}

/* addr = root + *off + *dfm * (DF - 1), following the definitions
 * (defs[temp]) of additions and subtractions of constants and of
 * multiples of the direction flag DF (+1 or -1: string instructions step
 * by it), counted as +1 in *off. The root is a Const (absolute address)
 * or a RdTmp. */
static IRExpr *resolve(IRExpr **defs, UInt ndefs, IRExpr *e, Long *off, Long *dfm)
{
	ULong o = 0;
	Long m = 0, k;

	for (UInt depth = 0; depth < 256 && e->tag == Iex_RdTmp; depth++) {
		IRTemp t = e->Iex.RdTmp.tmp;
		IRExpr *d = t < ndefs ? defs[t] : NULL, *a1, *a2;
		if (!d || d->tag != Iex_Binop)
			break;
		a1 = d->Iex.Binop.arg1;
		a2 = d->Iex.Binop.arg2;
		if (d->Iex.Binop.op == Iop_Add64 && a2->tag == Iex_Const) {
			o += a2->Iex.Const.con->Ico.U64;
			e = a1;
		} else if (d->Iex.Binop.op == Iop_Add64 && a1->tag == Iex_Const) {
			o += a1->Iex.Const.con->Ico.U64;
			e = a2;
		} else if (d->Iex.Binop.op == Iop_Sub64 && a2->tag == Iex_Const) {
			o -= a2->Iex.Const.con->Ico.U64;
			e = a1;
		} else if (d->Iex.Binop.op == Iop_Add64 && (k = df_multiple(defs, ndefs, a2)) && m < 4096) {
			o += (ULong)k;
			m += k;
			e = a1;
		} else if (d->Iex.Binop.op == Iop_Sub64 && (k = df_multiple(defs, ndefs, a2)) && m > -4096) {
			o -= (ULong)k;
			m -= k;
			e = a1;
		} else {
			break;
		}
	}
	if (e->tag == Iex_Const)
		o += e->Iex.Const.con->Ico.U64;
	*off = (Long)o;
	*dfm = m;
	return e;
}

static Bool same_root(const IRExpr *a, const IRExpr *b)
{
	if (a->tag == Iex_Const || b->tag == Iex_Const)
		return a->tag == b->tag;
	return a->Iex.RdTmp.tmp == b->Iex.RdTmp.tmp;
}

/* What each guest integer register holds at the current point of the
 * superblock (pass 1 follows the statements): an atom of the input IR (the
 * last value PUT there, or the temporary a GET of it was read into), or
 * NULL when that is not known (not read nor written yet, written in part,
 * or by a dirty helper). At a segment's end every register is in the guest
 * state (the exit, or the end of the superblock, needs it; the slow path's
 * call declares it reads them), so an access whose root is a register's
 * value there plus a constant needs no store: the slow path reads the
 * register. */
static void reg_kill(IRExpr **rv, Int off, Int size)
{
	for (UInt r = 0; r < LPVG_NREGS; r++) {
		Int lo = LPVG_REG0 + 8 * (Int)r;
		if (off < lo + 8 && lo < off + size)
			rv[r] = NULL;
	}
}

static void reg_track(IRTypeEnv *tyenv, IRStmt *st, IRExpr **rv)
{
	switch (st->tag) {
	case Ist_WrTmp: {
		IRExpr *e = st->Ist.WrTmp.data;
		Int off = e->tag == Iex_Get ? e->Iex.Get.offset - LPVG_REG0 : -1;
		if (e->tag == Iex_Get && e->Iex.Get.ty == Ity_I64 && off >= 0 && off % 8 == 0 &&
		    off < 8 * LPVG_NREGS)
			rv[off / 8] = IRExpr_RdTmp(st->Ist.WrTmp.tmp);
		break;
	}
	case Ist_Put: {
		IRExpr *e = st->Ist.Put.data;
		Int off = st->Ist.Put.offset, r = off - LPVG_REG0;
		IRType ty = typeOfIRExpr(tyenv, e);
		reg_kill(rv, off, sizeofIRType(ty));
		if (ty == Ity_I64 && r >= 0 && r % 8 == 0 && r < 8 * LPVG_NREGS)
			rv[r / 8] = e;
		break;
	}
	case Ist_PutI: {
		IRRegArray *d = st->Ist.PutI.details->descr;
		reg_kill(rv, d->base, d->nElems * sizeofIRType(d->elemTy));
		break;
	}
	case Ist_Dirty: {
		IRDirty *d = st->Ist.Dirty.details;
		for (Int k = 0; k < d->nFxState; k++)
			if (d->fxState[k].fx != Ifx_Read)
				reg_kill(rv, d->fxState[k].offset,
					 d->fxState[k].size + d->fxState[k].nRepeats * d->fxState[k].repeatLen);
		break;
	}
	default:
		break;
	}
}

/* The offset of the last byte of a planned access (one that is wider than
 * a line taken as one byte). */
static Long plan_last(const struct plan *p, ULong span)
{
	return p->off + (p->size <= span ? (Long)p->size - 1 : 0);
}

/* Slots and filter clusters of the planned accesses p[a..b) (one segment;
 * rv: the registers at its end). */
static void plan_segment(struct plan *p, UInt a, UInt b, IRExpr **defs, UInt ndefs, IRExpr **rv,
			 Bool noregs)
{
	UInt nslots = 0, idx[LPVG_SEG_MAX];
	ULong span = 1ull << lpvg_o.line_shift[0];
	IRExpr *rroot[LPVG_NREGS];
	Long rd[LPVG_NREGS], rdfm[LPVG_NREGS];

	tl_assert(b - a <= LPVG_SEG_MAX);
	for (UInt r = 0; r < LPVG_NREGS; r++)
		rroot[r] = rv[r] && !noregs ? resolve(defs, ndefs, rv[r], &rd[r], &rdfm[r]) : NULL;
	for (UInt i = a; i < b; i++) {
		p[i].store = p[i].check = p[i].check_near = False;
		p[i].check_ty = Ity_I8;
		p[i].check_off = 0;
		p[i].regd = p[i].regdfm = 0;
		if (p[i].guard) {
			p[i].slot = (UChar)nslots++;
			p[i].store = p[i].check = True;
			continue;
		}
		if (p[i].root->tag == Iex_Const) {
			p[i].slot = LPVG_SLOT_ABS;
			continue;
		}
		p[i].store = True;
		for (UInt j = a; j < i; j++) {
			if (!p[j].guard && same_root(p[j].root, p[i].root)) {
				p[i].slot = p[j].slot;
				p[i].regd = p[j].regd;
				p[i].regdfm = p[j].regdfm;
				p[i].store = False;
				break;
			}
		}
		if (!p[i].store)
			continue;
		for (UInt r = 0; r < LPVG_NREGS; r++) {
			if (rroot[r] && rroot[r]->tag == Iex_RdTmp && same_root(rroot[r], p[i].root)) {
				p[i].slot = (UChar)(LPVG_SLOT_REG + r);
				p[i].regd = rd[r];
				p[i].regdfm = rdfm[r];
				p[i].store = False;
				break;
			}
		}
		if (p[i].store)
			p[i].slot = (UChar)nslots++;
	}
	/* Clusters: for each root (a slot, or all absolute addresses), the
	 * accesses sorted by offset, cut where floor(last / line) would
	 * grow by more than 6 over floor(lo / line) (last: the offset of an
	 * access's last byte, hi the largest): then they lie on at most 8
	 * consecutive lines, from that of root + lo (the smallest offset) or
	 * from root's line plus floor(lo / line) (the byte at root + off is on
	 * root's line + floor(off / line), or the next one). The second
	 * ("near") costs no addition: the root's line is shared by its
	 * clusters (and the filter's copies around the table take the
	 * constant in the load's displacement), but reads one more line; it
	 * is used unless the cluster is one byte at offset 0 (one line, no
	 * addition either way) or the root is a constant or lo is far. The
	 * check goes with the cluster's first access in program order. */
	for (UInt i = a, abs_seen = 0; i < b; i++) {
		UInt n = 0, k = 0;
		if (p[i].guard)
			continue;
		if (p[i].slot == LPVG_SLOT_ABS) {
			if (abs_seen++)
				continue;
		} else {
			UInt j = a;
			while (j < i && (p[j].guard || p[j].slot != p[i].slot))
				j++;
			if (j < i)
				continue; /* not the first access of its root */
		}
		for (UInt j = i; j < b; j++)
			if (!p[j].guard && p[j].slot == p[i].slot)
				idx[n++] = j;
		for (UInt x = 1; x < n; x++) /* insertion sort by offset, stable */
			for (UInt y = x; y > 0 && p[idx[y - 1]].off > p[idx[y]].off; y--) {
				UInt t = idx[y];
				idx[y] = idx[y - 1];
				idx[y - 1] = t;
			}
		while (k < n) {
			Long lo = p[idx[k]].off, hi = lo;
			UInt first = idx[k];
			ULong w;
			Long lol = lo >> lpvg_o.line_shift[0], nl;
			/* hi: the last byte of the cluster's accesses (a straddling
			 * access's next line has a watch to end too); one wider
			 * than a line calls the slow path anyway (access()) */
			for (; k < n && (plan_last(&p[idx[k]], span) >> lpvg_o.line_shift[0]) - lol <= 6; k++) {
				if (plan_last(&p[idx[k]], span) > hi)
					hi = plan_last(&p[idx[k]], span);
				if (idx[k] < first)
					first = idx[k];
			}
			w = (ULong)hi - (ULong)lo;
			nl = (hi >> lpvg_o.line_shift[0]) - lol + 2;
			p[first].check = True;
			p[first].check_near = p[i].root->tag == Iex_RdTmp && (lo || hi) &&
					      lol >= -LPVG_FILTER_NEAR && lol <= LPVG_FILTER_NEAR;
			if (p[first].check_near) {
				p[first].check_ty = nl <= 2 ? Ity_I16 : nl <= 4 ? Ity_I32 : Ity_I64;
				p[first].check_off = lol;
			} else {
				p[first].check_ty = w == 0 ? Ity_I8 : w < span ? Ity_I16
						  : w < 3 * span ? Ity_I32 : Ity_I64;
				p[first].check_off = lo;
			}
		}
	}
}

/* Sample mode, at a segment's end: its extra line accesses into the
 * thread's count; the slow path is due when larger line sizes are
 * recorded and one of its accesses straddles (it counts them), or an
 * access is wider than a line (the filter loads may miss its lines). */
static void add_extra(struct ist *s)
{
	if (s->extra) {
		IRExpr *e0 = tmp(s, Ity_I64, IRExpr_Get(LPVG_GS + LPVG_SH_EXTRA, Ity_I64));
		IRExpr *e1 = tmp(s, Ity_I64, IRExpr_Binop(Iop_Add64, e0, s->extra));
		addStmtToIRSB(s->out, IRStmt_Put(LPVG_GS + LPVG_SH_EXTRA, e1));
		/* hit's top bit stays clear: at most 64 accesses of 512 bytes */
		if (lpvg_o.nlines > 1)
			s->hit = s->hit ? tmp(s, Ity_I64, IRExpr_Binop(Iop_Or64, s->hit, s->extra)) : s->extra;
	}
	if (s->wide)
		s->hit = s->hit ? tmp(s, Ity_I64, IRExpr_Binop(Iop_Or64, s->hit, u64(1))) : u64(1);
}

/* The extra line accesses of the smallest line size of the access p,
 * ((addr & (line - 1)) + size - 1) >> shift (0 if a guarded access is
 * not done), added to the segment's (docs/valgrind.md, "Straddling
 * references"). */
static void count_extra(struct ist *s, const struct plan *p)
{
	UInt sh = lpvg_o.line_shift[0];
	ULong line = 1ull << sh;
	IRExpr *e;

	if (p->size > line)
		s->wide = True;
	if (p->addr->tag == Iex_Const) {
		ULong x = lpvg_extra_lines(p->addr->Iex.Const.con->Ico.U64, p->size, sh);
		if (!x)
			return;
		e = u64(x);
	} else {
		IRExpr *m = tmp(s, Ity_I64, IRExpr_Binop(Iop_And64, p->addr, u64(line - 1)));
		IRExpr *l = tmp(s, Ity_I64, IRExpr_Binop(Iop_Add64, m, u64((ULong)p->size - 1)));
		e = tmp(s, Ity_I64, IRExpr_Binop(Iop_Shr64, l, IRExpr_Const(IRConst_U8((UChar)sh))));
	}
	if (p->guard)
		e = tmp(s, Ity_I64, IRExpr_ITE(p->guard, e, u64(0)));
	s->extra = s->extra ? tmp(s, Ity_I64, IRExpr_Binop(Iop_Add64, s->extra, e)) : e;
}

/* Declare that a dirty helper reads or writes `size` bytes of the guest
 * state at `offset` (after its other declarations). */
static void fx_add(IRDirty *di, IREffect fx, Int offset, Int size)
{
	tl_assert(di->nFxState < VEX_N_FXSTATE);
	di->fxState[di->nFxState].fx = fx;
	di->fxState[di->nFxState].offset = (UShort)offset;
	di->fxState[di->nFxState].size = (UShort)size;
	di->fxState[di->nFxState].nRepeats = 0;
	di->fxState[di->nFxState].repeatLen = 0;
	di->nFxState++;
}

/* The descriptor of the segment so far (kept with the superblock's), and
 * a dirty call of fn with it that declares what the helper reads and
 * writes of the shadow area, so that the optimiser keeps the stores before
 * it. */
static IRDirty *segment_call(struct ist *s, const HChar *name, void *fn, struct lpvg_seg **out)
{
	struct lpvg_seg *seg = VG_(malloc)("lpvg.seg", sizeof(*seg) + s->n * sizeof(seg->acc[0]));
	IRDirty *di;

	seg->n = s->n;
	seg->nguarded = s->nguarded;
	seg->nslots = s->nslots;
	seg->nshared = s->nshared;
	VG_(memcpy)(seg->acc, s->acc, s->n * sizeof(seg->acc[0]));
	seg->next = s->segs;
	s->segs = seg;
	di = unsafeIRDirty_0_N(1, name, VG_(fnptr_to_fnentry)(fn), mkIRExprVec_1(mkIRExpr_HWord((HWord)seg)));
	fx_add(di, Ifx_Modify, LPVG_GS + LPVG_SH_CD, 8);
	fx_add(di, Ifx_Read, LPVG_GS + LPVG_SH_THREAD, LPVG_SH_ABUF - LPVG_SH_THREAD + 8 * s->nslots);
	fx_add(di, Ifx_Modify, LPVG_GS + LPVG_SH_EXTRA, 8);
	*out = seg;
	return di;
}

static void flush(struct ist *s)
{
	struct lpvg_seg *seg;
	IRDirty *di;
	void *fn;
	const HChar *name;

	if (!s->n)
		return;
	if (lpvg_o.selfcheck) {
		fn = lpvg_seg_check;
		name = "lpvg_seg_check";
	} else if (lpvg_o.mode == LP_MODE_TRACE) {
		fn = lpvg_seg_trace;
		name = "lpvg_seg_trace";
	} else {
		fn = lpvg_seg_sample;
		name = "lpvg_seg_sample";
	}
	di = segment_call(s, name, fn, &seg);
	if (s->dfcheck && lpvg_o.mode == LP_MODE_SAMPLE) {
		/* The filter loads took DF as +1 (string instructions step
		 * forward but after a rare `std`): call whenever it is not. */
		IRExpr *df = tmp(s, Ity_I64, IRExpr_Get(LPVG_DF, Ity_I64));
		IRExpr *x = tmp(s, Ity_I64, IRExpr_Binop(Iop_And64, df, u64(2))); /* +1: 0, -1: 2 */
		s->hit = s->hit ? tmp(s, Ity_I64, IRExpr_Binop(Iop_Or64, s->hit, x)) : x;
	}
	if (s->df) {
		fx_add(di, Ifx_Read, LPVG_DF, 8);
	}
	if (lpvg_o.mode == LP_MODE_SAMPLE)
		add_extra(s);
	if (s->regs) {
		/* the roots it reads from the integer registers (all in the
		 * guest state here anyway: an exit or the superblock's end
		 * follows) */
		fx_add(di, Ifx_Read, LPVG_REG0, 8 * LPVG_NREGS);
	}
	if (lpvg_o.selfcheck) {
		fx_add(di, Ifx_Read, LPVG_SH2_HIT, 8 + 8 * s->n);
		addStmtToIRSB(s->out, IRStmt_Put(LPVG_SH2_HIT, s->hit ? s->hit : u64(0)));
	}
	if (lpvg_o.mode == LP_MODE_SAMPLE) {
		IRExpr *cd0, *cnt, *cd1, *g;
		cd0 = tmp(s, Ity_I64, IRExpr_Get(LPVG_GS + LPVG_SH_CD, Ity_I64));
		cnt = u64(s->n - s->nguarded);
		if (s->ndyn)
			cnt = s->n > s->nguarded ? tmp(s, Ity_I64, IRExpr_Binop(Iop_Add64, s->ndyn, cnt))
						 : s->ndyn;
		cd1 = tmp(s, Ity_I64, IRExpr_Binop(Iop_Sub64, cd0, cnt));
		addStmtToIRSB(s->out, IRStmt_Put(LPVG_GS + LPVG_SH_CD, cd1));
		/* The countdown goes below 0 when the sampled reference is
		 * done (vg-sample.c), so its sign bit says a sample is due. */
		if (s->hit) {
			/* cd1 < 0 || hit != 0, as one test: cd1 >> 63
			 * (arithmetic) is all ones when cd1 < 0, else 0; hit
			 * is never all ones (its top bit is clear: filter
			 * counts stop at 127, the DF term is 0 or 2), so the
			 * two differ exactly when a call is due. One compare
			 * (two comparisons and an Or1 cost VEX a setcc each,
			 * an or and a test more). */
			IRExpr *sgn = tmp(s, Ity_I64, IRExpr_Binop(Iop_Sar64, cd1,
								   IRExpr_Const(IRConst_U8(63))));
			g = tmp(s, Ity_I1, IRExpr_Binop(Iop_CmpNE64, sgn, s->hit));
		} else {
			g = tmp(s, Ity_I1, IRExpr_Binop(Iop_CmpLT64S, cd1, u64(0)));
		}
		if (!lpvg_o.selfcheck)
			di->guard = g;
	}
	addStmtToIRSB(s->out, IRStmt_Dirty(di));
	s->n = 0;
	s->segno++;
	s->nguarded = 0;
	s->nslots = 0;
	s->nshared = 0;
	s->regs = False;
	s->df = s->dfcheck = False;
	s->nfslot = 0; /* a root's filter slot lives in one segment: shorter live ranges */
	s->ndyn = NULL;
	s->hit = NULL;
	s->extra = NULL;
	s->wide = False;
}

/* The filter slot of a's line: (a >> line shift) mod 2^LPVG_FILTER_LOG2;
 * for a root, computed once in the segment. */
static IRExpr *filter_slot(struct ist *s, IRExpr *a, Bool root)
{
	IRExpr *l, *m;

	if (root && a->tag == Iex_RdTmp)
		for (UInt k = 0; k < s->nfslot; k++)
			if (s->fslot[k].root == a->Iex.RdTmp.tmp)
				return s->fslot[k].slot;
	l = tmp(s, Ity_I64, IRExpr_Binop(Iop_Shr64, a, IRExpr_Const(IRConst_U8(lpvg_o.line_shift[0]))));
	m = tmp(s, Ity_I64, IRExpr_Binop(Iop_And64, l, u64((1ull << LPVG_FILTER_LOG2) - 1)));
	if (root && a->tag == Iex_RdTmp && s->nfslot < LPVG_NFSLOT) {
		s->fslot[s->nfslot].root = a->Iex.RdTmp.tmp;
		s->fslot[s->nfslot++].slot = m;
	}
	return m;
}

/* The filter bytes of the line of a (+ k lines) and the next ones (1, 2,
 * 4 or 8: ty), ORed into the segment's hit. */
static void filter_check(struct ist *s, IRExpr *a, Bool root, Long k, IRType ty)
{
	IRExpr *m = filter_slot(s, a, root);
	IRExpr *q = tmp(s, Ity_I64, IRExpr_Binop(Iop_Add64, m, u64((HWord)lpvg_filter + (ULong)k)));
	IRExpr *b = tmp(s, ty, IRExpr_Load(Iend_LE, ty, q));
	IROp widen = ty == Ity_I8 ? Iop_8Uto64 : ty == Ity_I16 ? Iop_16Uto64 : Iop_32Uto64;
	IRExpr *b64 = ty == Ity_I64 ? b : tmp(s, Ity_I64, IRExpr_Unop(widen, b));

	s->hit = s->hit ? tmp(s, Ity_I64, IRExpr_Binop(Iop_Or64, s->hit, b64)) : b64;
}

/* An exit to the next instruction of a repeated string instruction (rep
 * stos, rep movs...: VEX unrolls the loop, one exit per iteration, taken
 * when the count runs out, once per instruction executed). Such an exit
 * does not end the segment: a call guarded by the exit's own condition
 * accounts for the accesses before it when it is taken, and the segment
 * goes on to the next real exit. In a loop copying n bytes that is one
 * countdown update, one test and one filter load per 8 iterations instead
 * of per iteration. Not with guarded accesses before it (their count is
 * known only at run time). */
/* Both passes over a superblock (planning, then instrumenting) follow the
 * instruction marks: *im is the index of the last one, *prev_im the address
 * of the one before it (what loop_exit compares a branch's target with). */
static void follow_imark(const IRSB *in, Int i, Int *im, Addr *prev_im)
{
	*prev_im = *im >= 0 ? (Addr)in->stmts[*im]->Ist.IMark.addr : 0;
	*im = i;
}

static Bool loop_exit(const IRSB *in, const IRStmt *st, Int im, Addr prev_im, Bool guarded)
{
	const IRConst *dst = st->Ist.Exit.dst;
	Addr a;

	if (guarded || st->Ist.Exit.guard->tag != Iex_RdTmp || dst->tag != Ico_U64 ||
	    st->Ist.Exit.jk != Ijk_Boring || im < 0)
		return False;
	a = (Addr)in->stmts[im]->Ist.IMark.addr;
	if (dst->Ico.U64 != (ULong)a + in->stmts[im]->Ist.IMark.len)
		return False;
	/* unrolled: the IMark before it or the next one has the same address */
	if (a == prev_im)
		return True;
	for (Int k = im + 1; k < in->stmts_used; k++)
		if (in->stmts[k] && in->stmts[k]->tag == Ist_IMark)
			return (Addr)in->stmts[k]->Ist.IMark.addr == a;
	return False;
}

/* The accesses of the segment so far (no guarded ones), if the exit st
 * is taken: lpvg_seg_exit accounts for them and calls the slow path when
 * it is due. */
static void exit_call(struct ist *s, const IRStmt *st)
{
	struct lpvg_seg *seg;
	IRDirty *di;
	IRExpr *g;
	IRTemp t;

	tl_assert(s->nguarded == 0 && !s->regs);
	di = segment_call(s, "lpvg_seg_exit", lpvg_seg_exit, &seg);
	if (s->df) {
		fx_add(di, Ifx_Read, LPVG_DF, 8);
	}
	if (lpvg_o.selfcheck) {
		fx_add(di, Ifx_Read, LPVG_SH2_ADDR, 8 * s->n);
	}
	/* The exit's condition, computed again: one use each, so that VEX
	 * tests the flags twice instead of keeping a boolean across the
	 * call. */
	g = st->Ist.Exit.guard;
	t = g->Iex.RdTmp.tmp;
	if (t < s->ndefs && s->defs[t] && s->defs[t]->tag == Iex_Binop)
		g = tmp(s, Ity_I1, deepCopyIRExpr(s->defs[t]));
	di->guard = g;
	addStmtToIRSB(s->out, IRStmt_Dirty(di));
}

/* Emit the code of one planned access. */
static void access(struct ist *s, const struct plan *p)
{
	struct lpvg_acc *a;
	IRExpr *addr = p->addr;
	UInt i;

	if (s->n == LPVG_SEG_MAX)
		flush(s);
	tl_assert(p->seg == s->segno);
	i = s->n++;
	a = &s->acc[i];
	a->pc = p->pc;
	a->size = p->size;
	a->kind = p->kind;
	a->guarded = p->guard != NULL;
	a->slot = p->slot;
	a->off = p->guard ? 0 : p->off - p->regd;
	a->dfm = p->guard ? 0 : (Short)(p->dfm - p->regdfm);
	if (a->dfm)
		s->df = True;
	if (!p->guard && p->dfm)
		s->dfcheck = True;
	if (p->slot == LPVG_SLOT_ABS)
		;
	else if (p->slot & LPVG_SLOT_REG)
		s->regs = True;
	else if (p->slot >= s->nslots)
		s->nslots = p->slot + 1u;
	if (!p->store)
		s->nshared++;
	if (p->guard) {
		IRExpr *g64 = tmp(s, Ity_I64, IRExpr_Unop(Iop_1Uto64, p->guard));
		addr = tmp(s, Ity_I64, IRExpr_ITE(p->guard, addr, u64(LPVG_NONE_ADDR)));
		s->nguarded++;
		s->ndyn = s->ndyn ? tmp(s, Ity_I64, IRExpr_Binop(Iop_Add64, s->ndyn, g64)) : g64;
		addStmtToIRSB(s->out, IRStmt_Put(LPVG_GS + LPVG_SH_ABUF + 8 * (Int)p->slot, addr));
		if (lpvg_o.mode == LP_MODE_SAMPLE) /* two lines: it may straddle */
			filter_check(s, addr, False, 0, p->size > 1 ? Ity_I16 : Ity_I8);
	} else {
		if (p->store)
			addStmtToIRSB(s->out,
				      IRStmt_Put(LPVG_GS + LPVG_SH_ABUF + 8 * (Int)p->slot, p->root));
		if (p->check && lpvg_o.mode == LP_MODE_SAMPLE) {
			IRExpr *c;
			if (p->check_near)
				filter_check(s, p->root, True, p->check_off, (IRType)p->check_ty);
			else if (p->root->tag == Iex_Const)
				filter_check(s, u64((ULong)p->check_off), False, 0, (IRType)p->check_ty);
			else if (p->check_off) {
				c = tmp(s, Ity_I64, IRExpr_Binop(Iop_Add64, p->root, u64((ULong)p->check_off)));
				filter_check(s, c, False, 0, (IRType)p->check_ty);
			} else {
				filter_check(s, p->root, True, 0, (IRType)p->check_ty);
			}
		}
	}
	if (lpvg_o.mode == LP_MODE_SAMPLE && p->size > 1)
		count_extra(s, p);
	if (lpvg_o.selfcheck)
		addStmtToIRSB(s->out, IRStmt_Put(LPVG_SH2_ADDR + 8 * (Int)i, addr));
}

Addr lpvg_marker, lpvg_pre_lo, lpvg_pre_hi;

/* locprof_vg_ret(result, slot) of the preload: a call to lpvg_ret_hook at
 * its entry, which reads the arguments from the guest registers (and the
 * countdown, for the time) and writes the return address into the slot. */
static IRSB *hook_ret(IRSB *in)
{
	IRSB *out = deepCopyIRSBExceptStmts(in);

	/* anywhere in the superblock: VEX may follow the trampoline's call */
	for (Int i = 0; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];
		IRDirty *di;
		IRTemp slot;
		addStmtToIRSB(out, st);
		if (st->tag != Ist_IMark || (Addr)st->Ist.IMark.addr != lpvg_marker)
			continue;
		slot = newIRTemp(out->tyenv, Ity_I64);
		addStmtToIRSB(out, IRStmt_WrTmp(slot, IRExpr_Get(offsetof(VexGuestAMD64State, guest_RSI), Ity_I64)));
		di = unsafeIRDirty_0_N(1, "lpvg_ret_hook", VG_(fnptr_to_fnentry)(lpvg_ret_hook),
				       mkIRExprVec_1(IRExpr_GSPTR()));
		di->mFx = Ifx_Write; /* the return address, into the trampoline's slot */
		di->mAddr = IRExpr_RdTmp(slot);
		di->mSize = 8;
		fx_add(di, Ifx_Read, offsetof(VexGuestAMD64State, guest_RSI), 16); /* rsi, rdi */
		fx_add(di, Ifx_Read, LPVG_GS + LPVG_SH_CD, 16); /* the countdown and the thread */
		addStmtToIRSB(out, IRStmt_Dirty(di));
	}
	return out;
}

/* The entry of a watched allocation function: lpvg_entry_hook reads its
 * arguments and return address and may replace the latter. */
static void hook_entry(IRSB *out, UInt kind, Addr fn)
{
	IRDirty *di = unsafeIRDirty_0_N(2, "lpvg_entry_hook", VG_(fnptr_to_fnentry)(lpvg_entry_hook),
					mkIRExprVec_2(IRExpr_GSPTR(), mkIRExpr_HWord(kind)));
	IRTemp sp = newIRTemp(out->tyenv, Ity_I64);

	addStmtToIRSB(out, IRStmt_WrTmp(sp, IRExpr_Get(offsetof(VexGuestAMD64State, guest_RSP), Ity_I64)));
	/* the unwinder starts from the guest's pc: the function's entry */
	addStmtToIRSB(out, IRStmt_Put(offsetof(VexGuestAMD64State, guest_RIP), IRExpr_Const(IRConst_U64(fn))));
	fx_add(di, Ifx_Read, offsetof(VexGuestAMD64State, guest_RIP), 8); /* rip */
	fx_add(di, Ifx_Read, offsetof(VexGuestAMD64State, guest_RBP), 8); /* rbp */
	fx_add(di, Ifx_Read, offsetof(VexGuestAMD64State, guest_RDX), 8); /* rdx */
	fx_add(di, Ifx_Read, offsetof(VexGuestAMD64State, guest_RSP), 8); /* rsp */
	fx_add(di, Ifx_Read, offsetof(VexGuestAMD64State, guest_RSI), 16); /* rsi, rdi */
	fx_add(di, Ifx_Read, LPVG_GS + LPVG_SH_CD, 16); /* the countdown and the thread */
	di->mFx = Ifx_Modify; /* the return address */
	di->mAddr = IRExpr_RdTmp(sp);
	di->mSize = 8;
	addStmtToIRSB(out, IRStmt_Dirty(di));
}

/* The entry of a --start-at/--stop-at function (vg-roi.c): what 1 or 2. */
static void hook_roi(IRSB *out, UInt what)
{
	IRDirty *di = unsafeIRDirty_0_N(2, "lpvg_roi_hook", VG_(fnptr_to_fnentry)(lpvg_roi_hook),
					mkIRExprVec_2(IRExpr_GSPTR(), mkIRExpr_HWord(what)));

	fx_add(di, Ifx_Modify, LPVG_GS + LPVG_SH_CD, 16); /* the countdown and the thread */
	addStmtToIRSB(out, IRStmt_Dirty(di));
}

/* Whether the instruction at a gets a call: an allocation function's
 * entry (the preload's table) or a region's start or stop. */
static Bool hooked_at(Addr a, Bool nhooked)
{
	return (nhooked && lpvg_hook_kind(a)) || (lpvg_roi_set && lpvg_roi_at(a));
}

/* Pass 2 of lpvg_instrument: the instrumented copy of in, into s->out,
 * with the planned accesses p[0..np) (pass 1) in statement order; in's
 * statements before index first (before its first IMark) are copied as
 * they are. */
static void emit_superblock(struct ist *s, IRSB *in, struct plan *p, UInt np, Int first)
{
	IRTypeEnv *tyenv = in->tyenv;
	Bool nhooked = lpvg_marker != 0;
	Addr prev_im = 0;
	Int im = -1, i;
	UInt j = 0, hk;

	s->out = deepCopyIRSBExceptStmts(in);
	for (i = 0; i < first; i++)
		addStmtToIRSB(s->out, in->stmts[i]);
	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];
		struct sacc a[2];
		UInt na;
		if (!st || st->tag == Ist_NoOp)
			continue;
		if (st->tag == Ist_IMark)
			follow_imark(in, i, &im, &prev_im);
		if (st->tag == Ist_Exit && s->n && loop_exit(in, st, im, prev_im, s->nguarded > 0))
			exit_call(s, st);
		else if (st->tag == Ist_Exit)
			flush(s); /* the exit may be taken: account for what came before */
		if (st->tag == Ist_IMark && hooked_at((Addr)st->Ist.IMark.addr, nhooked)) {
			Addr a = (Addr)st->Ist.IMark.addr;
			UInt what = lpvg_roi_set ? lpvg_roi_at(a) : 0;
			flush(s); /* the hook reads the clock */
			addStmtToIRSB(s->out, st);
			if (what)
				hook_roi(s->out, what);
			if (nhooked && (hk = lpvg_hook_kind(a)))
				hook_entry(s->out, hk, a);
			continue;
		}
		na = st->tag == Ist_IMark || st->tag == Ist_Exit ? 0 : stmt_accesses(tyenv, st, a);
		for (UInt k = 0; k < na; k++) {
			tl_assert(j < np && p[j].addr == a[k].addr);
			access(s, &p[j++]);
		}
		addStmtToIRSB(s->out, st);
	}
	tl_assert(j == np);
	flush(s);
}

IRSB *lpvg_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
		      const VexGuestExtents *vge, const VexArchInfo *archinfo, IRType gWordTy,
		      IRType hWordTy)
{
	IRTypeEnv *tyenv = in->tyenv;
	struct ist s;
	struct plan *p;
	IRExpr **defs;
	UInt ndefs = (UInt)tyenv->types_used, np = 0, nseg = 0, seg = 0, segstart = 0;
	IRExpr *rv[LPVG_NREGS];
	Bool merged = False; /* the segment goes on past a loop exit */
	Int im = -1;          /* the current instruction's IMark */
	Addr prev_im = 0;     /* the address of the one before */
	Bool nhooked = lpvg_marker != 0;
	ULong pc = 0;
	Int i = 0, first;

	if (gWordTy != Ity_I64 || hWordTy != Ity_I64)
		VG_(tool_panic)("locprof: only amd64 is supported");
	if (lpvg_o.inert)
		return in;
	lpvg_omp_check(vge->base[0]);
	/* The preload's wrappers (vg-preload.c) are not the program: no
	 * references traced there; its event function calls the tool. */
	if (vge->base[0] >= lpvg_pre_lo && vge->base[0] < lpvg_pre_hi)
		return hook_ret(in);
	tl_assert(layout->total_sizeB == LPVG_GS && LPVG_SH_EXTRA + 8 <= layout->total_sizeB);

	/* Pass 1: the accesses, their segments (cut exactly where pass 2
	 * flushes), roots and offsets; then slots and clusters. */
	p = VG_(malloc)("lpvg.plan", (2 * (SizeT)in->stmts_used + 1) * sizeof(*p));
	defs = VG_(calloc)("lpvg.defs", ndefs + 1, sizeof(*defs));
	for (Int k = 0; k < in->stmts_used; k++) {
		IRStmt *st = in->stmts[k];
		if (st && st->tag == Ist_WrTmp)
			defs[st->Ist.WrTmp.tmp] = st->Ist.WrTmp.data;
	}
	VG_(memset)(rv, 0, sizeof(rv));
	while (i < in->stmts_used && in->stmts[i]->tag != Ist_IMark)
		reg_track(tyenv, in->stmts[i++], rv);
	first = i;
	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];
		struct sacc a[2];
		UInt na;
		if (!st || st->tag == Ist_NoOp)
			continue;
		if (st->tag == Ist_IMark) {
			pc = (ULong)st->Ist.IMark.addr + (ULong)(Long)st->Ist.IMark.delta;
			follow_imark(in, i, &im, &prev_im);
			if (!hooked_at((Addr)st->Ist.IMark.addr, nhooked))
				continue;
		}
		if (st->tag == Ist_Exit && nseg) {
			Bool guarded = False;
			for (UInt k = segstart; k < np; k++)
				guarded |= p[k].guard != NULL;
			if (loop_exit(in, st, im, prev_im, guarded)) {
				merged = True;
				continue;
			}
		}
		if (st->tag == Ist_Exit || st->tag == Ist_IMark) { /* an exit, or a hook */
			if (nseg) {
				plan_segment(p, segstart, np, defs, ndefs, rv, merged);
				seg++;
				segstart = np;
				nseg = 0;
				merged = False;
			}
			continue;
		}
		na = stmt_accesses(tyenv, st, a);
		for (UInt k = 0; k < na; k++) {
			struct plan *q = &p[np];
			if (nseg == LPVG_SEG_MAX) {
				plan_segment(p, segstart, np, defs, ndefs, rv, merged);
				seg++;
				segstart = np;
				nseg = 0;
				merged = False;
			}
			q->addr = a[k].addr;
			q->guard = a[k].guard;
			q->root = resolve(defs, ndefs, a[k].addr, &q->off, &q->dfm);
			q->pc = pc;
			q->seg = seg;
			q->size = a[k].size < 1 ? 1 : a[k].size > 65535 ? 65535 : (UShort)a[k].size;
			q->kind = (UChar)a[k].kind;
			np++;
			nseg++;
		}
		reg_track(tyenv, st, rv);
	}
	if (nseg)
		plan_segment(p, segstart, np, defs, ndefs, rv, merged);

	/* Pass 2: the instrumented superblock. */
	VG_(memset)(&s, 0, offsetof(struct ist, acc)); /* not the accesses' buffer */
	s.defs = defs;
	s.ndefs = ndefs;
	emit_superblock(&s, in, p, np, first);
	VG_(free)(p);
	VG_(free)(defs);
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
