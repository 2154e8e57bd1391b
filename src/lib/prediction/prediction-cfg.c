/* Decoding a function's code (Zydis) and its control-flow graph: direct
 * jumps and conditional branches give edges, calls fall through, returns,
 * hlt, ud2, int3, indirect jumps and jumps out of the function end a path
 * (the assumptions are at the top of prediction-code.c). */
#include "prediction/prediction-code.h"

#include "common/array.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

/* What an instruction does to control flow (K_*), and for a direct jump,
 * call or branch its target (*target). */
static int ins_kind(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *op, uint64_t addr,
		    uint64_t *target)
{
	int direct = in->operand_count_visible == 1 && op[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
	ZyanU64 t = 0;

	*target = 0;
	if (direct && ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(in, &op[0], addr, &t)))
		*target = t;
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_HLT:
	case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ: return K_END;
	default: break;
	}
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_RET: return K_END;
	case ZYDIS_CATEGORY_CALL: return K_CALL;
	case ZYDIS_CATEGORY_UNCOND_BR: return direct ? K_JMP : K_JMPI;
	case ZYDIS_CATEGORY_COND_BR: return direct ? K_JCC : K_NORMAL;
	default: return K_NORMAL;
	}
}

/* Decode instruction at addr (bytes p, at most left of them): its length
 * and kind, or 0 when the bytes are not an instruction. */
static unsigned decode_one(const struct lp_pred_code *c, const uint8_t *p, size_t left, uint64_t addr,
			   int *kind, uint64_t *target)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];

	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&c->dec, p, left, &in, op)))
		return 0;
	*kind = ins_kind(&in, op, addr, target);
	return in.length;
}

int lp_pred_func_decode(struct lp_pred_code *c, struct xfunc *f)
{
	struct xmod *m = &c->mods[f->module];
	const struct xsec *s = lp_pred_mod_sec(m, f->start);
	uint64_t end, addr, target;
	const uint8_t *p;
	size_t left, cap = 0;

	if (f->nins)
		return 0; /* decoded already (while placing the binary) */
	if (!s)
		return -1;
	end = f->start + f->size;
	if (end > s->addr + s->size)
		end = s->addr + s->size;
	addr = f->start;
	p = s->data + (f->start - s->addr);
	left = (size_t)(end - f->start);
	while (left) {
		int kind = K_NORMAL;
		unsigned len;
		/* the three arrays grow together: all follow cap */
		size_t cap_len = cap, cap_kind = cap;
		if (LP_ARRAY_RESERVE(f->ins_len, cap_len, f->nins + 1, 256, "instructions") < 0 ||
		    LP_ARRAY_RESERVE(f->ins_kind, cap_kind, f->nins + 1, 256, "instructions") < 0 ||
		    LP_ARRAY_RESERVE(f->ins_addr, cap, f->nins + 1, 256, "instructions") < 0)
			return -1;
		if (!(len = decode_one(c, p, left, addr, &kind, &target))) {
			/* not code: one byte, ending the path */
			len = 1;
			kind = K_END;
		}
		f->ins_addr[f->nins] = addr;
		f->ins_len[f->nins] = (unsigned char)len;
		f->ins_kind[f->nins++] = (unsigned char)kind;
		p += len;
		left -= len;
		addr += len;
	}
	return 0;
}

/* Index of the instruction starting at a, or -1. */
long lp_pred_ins_at(const struct xfunc *f, uint64_t a)
{
	size_t lo = 0, hi = f->nins;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (f->ins_addr[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->nins && f->ins_addr[lo] == a ? (long)lo : -1;
}

/* The jump target of instruction i (direct jumps only). */
uint64_t lp_pred_ins_target(struct lp_pred_code *c, const struct xfunc *f, size_t i)
{
	const struct xsec *s = lp_pred_mod_sec(&c->mods[f->module], f->ins_addr[i]);
	uint64_t t = 0;
	int kind;

	if (!s || !decode_one(c, s->data + (f->ins_addr[i] - s->addr), f->ins_len[i], f->ins_addr[i], &kind, &t))
		return 0;
	return t;
}

int lp_pred_block_of(const struct xfunc *f, uint64_t a)
{
	int lo = 0, hi = f->nb;

	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (f->bstart[mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || a >= f->bend[lo - 1])
		return -1;
	return lo - 1;
}

int lp_pred_func_cfg(struct lp_pred_code *c, struct xfunc *f)
{
	unsigned char *leader = calloc(f->nins + 1, 1);
	uint64_t *target = calloc(f->nins + 1, sizeof(*target));
	size_t *blast = NULL;
	int nb = 0, rc = -1;

	if (!leader || !target)
		goto out;
	leader[0] = 1;
	for (size_t i = 0; i < f->nins; i++) {
		int k = f->ins_kind[i];
		if (k == K_JMP || k == K_JCC) {
			long t;
			target[i] = lp_pred_ins_target(c, f, i);
			if ((t = lp_pred_ins_at(f, target[i])) >= 0)
				leader[t] = 1;
		}
		if ((k == K_JMP || k == K_JMPI || k == K_JCC || k == K_END) && i + 1 < f->nins)
			leader[i + 1] = 1;
	}
	for (size_t i = 0; i < f->nins; i++)
		nb += leader[i];
	f->nb = nb;
	f->bstart = calloc((size_t)nb, sizeof(*f->bstart));
	f->bend = calloc((size_t)nb, sizeof(*f->bend));
	f->succ = calloc((size_t)nb, sizeof(*f->succ));
	f->nsucc = calloc((size_t)nb, 1);
	f->inner = malloc((size_t)nb * sizeof(*f->inner));
	if (!f->bstart || !f->bend || !f->succ || !f->nsucc || !f->inner)
		goto out;
	if (!(blast = malloc((size_t)nb * sizeof(*blast))))
		goto out;
	for (size_t i = 0, b = (size_t)-1; i < f->nins; i++) {
		if (leader[i])
			f->bstart[++b] = f->ins_addr[i];
		f->bend[b] = f->ins_addr[i] + f->ins_len[i];
		blast[b] = i;
	}
	for (int b = 0; b < nb; b++) {
		size_t last = blast[b];
		int k, t;
		f->inner[b] = -1;
		k = f->ins_kind[last];
		if ((k == K_JMP || k == K_JCC) && (t = lp_pred_block_of(f, target[last])) >= 0 &&
		    f->bstart[t] == target[last])
			f->succ[b][f->nsucc[b]++] = t;
		if (k != K_JMP && k != K_JMPI && k != K_END && b + 1 < nb &&
		    f->bstart[b + 1] == f->bend[b])
			if (!(f->nsucc[b] == 1 && f->succ[b][0] == b + 1))
				f->succ[b][f->nsucc[b]++] = b + 1;
	}
	rc = 0;
out:
	free(leader);
	free(target);
	free(blast);
	return rc;
}
