// Check merging (docs/runtime.md, "Check merging"): accesses near one
// pointer share one test of the watch shadow.
#include "locprof-pass.h"

namespace locprof_pass {

// ptr as base + ext(index) * scale + off (AddrKey), off returned apart.
static AddrKey addrKey(Value *ptr, int64_t &off, const DataLayout &DL)
{
	off = 0;
	Value *base = GetPointerBaseWithConstantOffset(ptr, off, DL);
	AddrKey key{ base, nullptr, 0, 0 };
	auto *gep = dyn_cast<GetElementPtrInst>(base);
	if (!gep || gep->getNumIndices() < 1 || isa<Constant>(gep->getOperand(1)))
		return key;
	// The first index variable, every other one constant.
	SmallVector<Value *, 4> rest;
	for (unsigned i = 2; i < gep->getNumOperands(); i++) {
		if (!isa<ConstantInt>(gep->getOperand(i)))
			return key;
		rest.push_back(gep->getOperand(i));
	}
	Type *elem = gep->getSourceElementType();
	if (!elem->isSized() || DL.getTypeAllocSize(elem).isScalable())
		return key;
	uint64_t scale = DL.getTypeAllocSize(elem).getFixedValue();
	int64_t restOff = 0;
	if (!rest.empty()) {
		SmallVector<Value *, 4> idx{ ConstantInt::get(Type::getInt64Ty(ptr->getContext()), 0) };
		idx.append(rest.begin(), rest.end());
		restOff = DL.getIndexedOffsetInType(elem, idx);
	}
	Value *x = gep->getOperand(1);
	unsigned ext = 0;
	if (auto *se = dyn_cast<SExtInst>(x)) {
		ext = 1;
		x = se->getOperand(0);
	} else if (auto *ze = dyn_cast<ZExtInst>(x)) {
		ext = 2;
		x = ze->getOperand(0);
	} else if (x->getType()->getIntegerBitWidth() < 64) {
		ext = 1; // a GEP sign-extends a narrower index
	}
	int64_t c = 0;
	if (auto *bo = dyn_cast<BinaryOperator>(x)) {
		auto *ci = dyn_cast<ConstantInt>(bo->getOperand(1));
		// x + c, and x | c where no bit is shared: an extension of it
		// is that of x plus c only if the addition cannot wrap.
		bool isAdd = bo->getOpcode() == Instruction::Add &&
			     (ext == 0 || (ext == 1 && bo->hasNoSignedWrap()) || (ext == 2 && bo->hasNoUnsignedWrap()));
		bool isOr = bo->getOpcode() == Instruction::Or && ci && haveNoCommonBitsSet(bo->getOperand(0), ci, DL) &&
			    (ext != 1 || ci->getValue().isNonNegative());
		if (ci && ci->getBitWidth() <= 64 && (isAdd || isOr) && std::abs(ci->getSExtValue()) < (1 << 20)) {
			c = ci->getSExtValue();
			x = bo->getOperand(0);
		}
	}
	if (!x->getType()->isIntegerTy() || x->getType()->getIntegerBitWidth() > 64)
		return key;
	off += c * (int64_t)scale + restOff;
	return AddrKey{ gep->getPointerOperand(), x, ext, scale };
}

// The window test of a checker: the shadow bytes of `width` granules from
// that of base + lo, in one load (x86 loads need no alignment; the window
// ends within 448 bytes of an address the access makes, and the kernel
// never maps the last page of the user address space, so the load stays
// inside the shadow).
Value *windowWatched(IRBuilder<> &B, const Check &k, Type *i64)
{
	LLVMContext &C = B.getContext();
	Value *p = B.CreateConstGEP1_64(Type::getInt8Ty(C), B.CreatePointerCast(k.base, Type::getInt8PtrTy(C)), k.lo);
	if (k.index) {
		Value *x = k.ext == 1 ? B.CreateSExtOrTrunc(k.index, i64) : B.CreateZExtOrTrunc(k.index, i64);
		p = B.CreateGEP(Type::getInt8Ty(C), p, B.CreateMul(x, ConstantInt::get(i64, k.scale)));
	}
	Value *g = B.CreateLShr(B.CreatePtrToInt(p, i64), 6);
	Type *w = Type::getIntNTy(C, 8 * k.width);
	Value *at = B.CreateIntToPtr(B.CreateAdd(g, ConstantInt::get(i64, kShadow)), PointerType::getUnqual(w));
	LoadInst *l = B.CreateAlignedLoad(w, at, Align(1), "lp.ww");
	return B.CreateICmpNE(l, ConstantInt::get(w, 0));
}

// Check merging. The watch check of an access can be left to an earlier
// one when nothing can have started a watch of this thread in between:
// a watch starts only in a slow path (a sample), of this function or of a
// callee. So, per function:
//  * clusters: accesses at constant offsets from one base pointer
//    (GetPointerBaseWithConstantOffset) whose start addresses lie within
//    448 bytes of the lowest, base + lo. Their start granules then lie in
//    the `width` granules (2, 4 or 8; 1 when all offsets are equal) from
//    that of base + lo, whatever base's alignment: a window of shadow bytes
//    one load reads.
//  * available windows: a forward must-dataflow over the blocks in reverse
//    post-order: an access whose cluster's window is available is covered;
//    otherwise it is the checker and makes its window available. A program
//    call kills every window; a block reached by a back edge (its
//    predecessor not yet visited) starts with none.
//  * the dirty flag (one per function, in a register after mem2reg): set
//    by every slow path, which every checker whose window is not all zero
//    takes; reset at the entry, after every program call and at the blocks
//    that start with no window (resets, returned in `resets`). A covered
//    access goes to the slow path (the exact table) only when it is set.
// If the flag is clear at a covered access X, then since the last reset
// before X no slow path ran and every checker said no; every path from a
// reset to X passes a checker of X's cluster (the window is available at
// X and none is at a reset), and no call. So that checker's window held no
// watch, no watch started since, and X's own check would have said no
// (other threads' watches only make the shadow say yes where this
// thread's exact table says no). A yes the plain test would not have
// given costs a slow path that finds nothing in the exact table. The
// sampled references are the countdown's, which is untouched; the reuses
// found are the same.
void Instrumenter::planChecks(Function &F, const std::vector<const Access *> &acc, std::vector<BasicBlock *> &resets)
{
	const DataLayout &DL = M.getDataLayout();
	checks.clear();
	resets.clear();
	if (!mergeChecks)
		return;
	struct Ref {
		int64_t off;
		Instruction *inst;
	};
	std::map<AddrKey, std::vector<Ref>> byBase;
	for (const Access *a : acc) {
		int64_t off = 0;
		AddrKey key = addrKey(a->ptr, off, DL);
		byBase[key].push_back({ off, a->inst });
	}
	std::map<Instruction *, int> clusterOf;
	std::vector<Check> windows;
	for (auto &entry : byBase) {
		const AddrKey &key = entry.first;
		std::vector<Ref> &refs = entry.second;
		if (refs.size() < 2)
			continue;
		std::stable_sort(refs.begin(), refs.end(), [](const Ref &x, const Ref &y) { return x.off < y.off; });
		for (size_t i = 0; i < refs.size();) {
			size_t j = i;
			while (j < refs.size() && refs[j].off - refs[i].off <= 448)
				j++;
			if (j - i >= 2) {
				int64_t span = refs[j - 1].off - refs[i].off;
				Check w;
				w.role = kChecker;
				w.base = key.base;
				w.index = key.index;
				w.ext = key.ext;
				w.scale = key.scale;
				w.lo = refs[i].off;
				w.width = span == 0 ? 1 : span <= 64 ? 2 : span <= 192 ? 4 : 8;
				for (size_t m = i; m < j; m++)
					clusterOf[refs[m].inst] = windows.size();
				windows.push_back(w);
			}
			i = j;
		}
	}
	if (windows.empty())
		return;
	std::map<BasicBlock *, BitVector> out;
	ReversePostOrderTraversal<Function *> rpo(&F);
	for (BasicBlock *BB : rpo) {
		BitVector avail(windows.size());
		bool first = true, back = BB == &F.getEntryBlock();
		for (BasicBlock *P : predecessors(BB)) {
			auto it = out.find(P);
			if (it == out.end()) {
				back = true;
				break;
			}
			if (first)
				avail = it->second;
			else
				avail &= it->second;
			first = false;
		}
		if (back) {
			avail.reset();
			if (BB != &F.getEntryBlock())
				resets.push_back(BB);
		}
		for (Instruction &I : *BB) {
			if (isProgramCall(I)) {
				avail.reset();
				continue;
			}
			auto it = clusterOf.find(&I);
			if (it == clusterOf.end())
				continue;
			Check k = windows[it->second];
			if (avail.test(it->second))
				k.role = kCovered;
			avail.set(it->second);
			checks[&I] = k;
		}
		out[BB] = std::move(avail);
	}
}

bool isProgramCall(Instruction &I)
{
	auto *CB = dyn_cast<CallBase>(&I);
	// Intrinsics (memcpy and friends included) and inline asm never run
	// instrumented code; every other call may, except our own range query.
	if (!CB || isa<IntrinsicInst>(CB) || CB->isInlineAsm())
		return false;
	Function *f = CB->getCalledFunction();
	return !(f && f->getName() == "lp_rt_range_watched");
}

} // namespace locprof_pass
