/* Static analysis of the binary: functions, control-flow graphs, natural
 * loops and their nesting, for the pcs of a trace.
 *
 * Assumptions (docs/prediction.md, "Loops from the binary"):
 * - Functions are the sized STT_FUNC symbols of .symtab (or .dynsym); a
 *   stripped binary gives no loops, and its pcs are grouped per pc.
 * - Code is decoded linearly from each function's start with Zydis.
 *   Direct jumps and conditional branches give edges; calls fall through;
 *   an indirect jump (a switch) or a jump out of the function ends a path,
 *   so loops whose back edge is an indirect jump are not seen.
 * - Blocks unreachable from the entry (switch cases) become extra roots
 *   under a virtual entry, so that their loops are still found.
 * - Loops are natural loops of back edges u -> h with h dominating u
 *   (Cooper, Harvey & Kennedy's dominators); loops with one header are
 *   merged; irreducible cycles are not loops.
 * - Each loop's body with its back edges removed and its inner loops
 *   collapsed is acyclic; reverse postorder is a topological order of it,
 *   and `reach` answers "can control go from node a to node b without
 *   starting a new iteration of this loop".
 * - Without mappings in the trace, the binary is placed by its load bias:
 *   a multiple of 4096 under which every sampled pc is an instruction
 *   boundary (for a PIE; 0 for a fixed-address executable).
 */
#include "prediction/prediction-code.h"

#include "common/array.h"
#include "common/error.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int lp_pred_code_new(struct lp_pred_code **out, const struct lp_mappings *maps, const char *binary)
{
	struct lp_pred_code *c = calloc(1, sizeof(*c));
	int rc = 0;

	*out = NULL;
	if (!c)
		return lp_seterr(LP_ENOMEM, "out of memory");
	elf_version(EV_CURRENT);
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&c->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64))) {
		free(c);
		return lp_seterr(LP_EUNSUPPORTED, "cannot start the Zydis decoder");
	}
	/* one module per distinct path of the mappings, and the binary */
	for (size_t i = 0; maps && i < maps->n && !rc; i++) {
		const struct lp_mapping *mp = &maps->v[i];
		size_t k;
		uint64_t bias;
		if (!mp->path || mp->path[0] != '/')
			continue;
		for (k = 0; k < c->nmods; k++)
			if (!strcmp(c->mods[k].path, mp->path))
				break;
		if (k == c->nmods) {
			if (LP_ARRAY_RESERVE(c->mods, c->capmods, c->nmods + 1, 8, "modules") < 0) {
				rc = lp_seterr(LP_ENOMEM, "out of memory");
				break;
			}
			if (lp_pred_mod_open(&c->mods[k], mp->path) < 0) {
				lp_pred_mod_close(&c->mods[k]); /* an unreadable library only loses its loops */
				continue;
			}
			lp_pred_mod_sort(&c->mods[k]);
			c->nmods++;
		}
		if (lp_pred_mod_bias(&c->mods[k], mp->start, mp->file_offset, &bias) < 0)
			continue;
		if (LP_ARRAY_RESERVE(c->ranges, c->capranges, c->nranges + 1, 8, "mappings") < 0) {
			rc = lp_seterr(LP_ENOMEM, "out of memory");
			break;
		}
		c->ranges[c->nranges++] = (struct xrange){ mp->start, mp->end, (int)k, bias };
	}
	if (!rc && c->nranges) {
		c->placed = 1;
	} else if (!rc && binary) {
		if (LP_ARRAY_RESERVE(c->mods, c->capmods, c->nmods + 1, 8, "modules") < 0) {
			rc = lp_seterr(LP_ENOMEM, "out of memory");
		} else {
			if ((rc = lp_pred_mod_open(&c->mods[c->nmods], binary)) < 0) {
				lp_pred_mod_close(&c->mods[c->nmods]);
			} else {
				lp_pred_mod_sort(&c->mods[c->nmods]);
				c->nmods++;
				if (!c->mods[0].is_dyn) { /* fixed addresses */
					c->placed = 1;
					c->bias = 0;
					rc = lp_pred_code_place(c, NULL, 0, 0);
				}
			}
		}
	}
	if (rc < 0) {
		lp_pred_code_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

static void func_release(struct xfunc *f)
{
	free(f->bstart);
	free(f->bend);
	free(f->succ);
	free(f->nsucc);
	free(f->inner);
	free(f->ins_addr);
	free(f->ins_len);
	free(f->ins_kind);
}

void lp_pred_code_free(struct lp_pred_code *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nmods; i++)
		lp_pred_mod_close(&c->mods[i]);
	for (size_t i = 0; i < c->nfuncs; i++)
		func_release(&c->funcs[i]);
	for (size_t i = 0; i < c->nloops; i++) {
		free(c->loops[i].block_node);
		free(c->loops[i].reach);
	}
	free(c->mods);
	free(c->ranges);
	free(c->funcs);
	free(c->loops);
	free(c);
}

int lp_pred_code_placed(const struct lp_pred_code *c)
{
	return c->placed;
}

uint64_t lp_pred_code_bias(const struct lp_pred_code *c, int *inferred)
{
	if (inferred)
		*inferred = c->inferred;
	return c->nranges ? c->ranges[0].bias : c->bias;
}

size_t lp_pred_code_nloops(const struct lp_pred_code *c)
{
	return c->nloops;
}

const struct lp_pred_loop *lp_pred_code_loop(const struct lp_pred_code *c, int id)
{
	return &c->loops[id];
}

size_t lp_pred_code_nmodules(const struct lp_pred_code *c)
{
	return c->nmods;
}

const char *lp_pred_code_module_path(const struct lp_pred_code *c, int m)
{
	return c->mods[m].path;
}

const char *lp_pred_code_func_name(const struct lp_pred_code *c, int f)
{
	return f >= 0 ? c->funcs[f].name : NULL;
}

static int analyse(struct lp_pred_code *c, int fid)
{
	struct xfunc *f = &c->funcs[fid];

	if (f->state)
		return f->state;
	f->state = -1;
	if (lp_pred_func_decode(c, f) < 0 || lp_pred_func_cfg(c, f) < 0 || lp_pred_func_loops(c, f, fid) < 0)
		return -1;
	f->state = 1;
	return 1;
}

static int func_of(struct lp_pred_code *c, int module, uint64_t vaddr)
{
	struct xmod *m = &c->mods[module];
	struct xsym *s = lp_pred_mod_sym(m, vaddr);

	if (!s)
		return -1;
	if (s->func < 0) {
		if (LP_ARRAY_RESERVE(c->funcs, c->capfuncs, c->nfuncs + 1, 16, "functions") < 0)
			return -1;
		memset(&c->funcs[c->nfuncs], 0, sizeof(c->funcs[0]));
		c->funcs[c->nfuncs].module = module;
		c->funcs[c->nfuncs].start = s->start;
		c->funcs[c->nfuncs].size = s->size;
		c->funcs[c->nfuncs].name = s->name;
		s->func = (int)c->nfuncs++;
	}
	return s->func;
}

/* 1 if vaddr is an instruction boundary of module m's code. */
static int is_boundary(struct lp_pred_code *c, int module, uint64_t vaddr)
{
	int f = func_of(c, module, vaddr);

	if (f < 0)
		return lp_pred_mod_sec(&c->mods[module], vaddr) != NULL; /* code without symbols */
	if (!c->funcs[f].nins && lp_pred_func_decode(c, &c->funcs[f]) < 0)
		return 0;
	return lp_pred_ins_at(&c->funcs[f], vaddr) >= 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* First index of sorted v[0..n) with v[i] >= x. */
static size_t lower(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* How well a bias places the pcs: those that land on an instruction
 * boundary of a function of the binary, less twice those that land inside
 * a function but between instructions (under the true bias there are none
 * of those; under a wrong one, most). */
static long place_score(struct lp_pred_code *c, const uint64_t *pcs, size_t n, uint64_t bias, long *okp)
{
	long ok = 0, bad = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t v = pcs[i] - bias;
		if (!lp_pred_mod_sec(&c->mods[0], v) || func_of(c, 0, v) < 0)
			continue;
		if (is_boundary(c, 0, v))
			ok++;
		else
			bad++;
	}
	*okp = ok;
	return ok - 2 * bad;
}

int lp_pred_code_place(struct lp_pred_code *c, const uint64_t *pcs_in, size_t n, size_t min_pcs)
{
	struct xmod *m;
	uint64_t *pcs = NULL, *cand = NULL, best_bias = 0, lo = UINT64_MAX, hi = 0;
	size_t ncand = 0, capc = 0, step, k = 0;
	long best = 0, second = 0, best_ok = 0;
	int rc = 0;

	if (!c->nmods)
		return lp_seterr(LP_EINVAL, "no binary to place");
	m = &c->mods[0];
	if (!m->is_dyn || !n) {
		c->bias = 0;
		c->placed = 1;
		return 0;
	}
	if (!(pcs = malloc(n * sizeof(*pcs))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	memcpy(pcs, pcs_in, n * sizeof(*pcs));
	qsort(pcs, n, sizeof(*pcs), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!k || pcs[i] != pcs[k - 1])
			pcs[k++] = pcs[i];
	n = k;
	for (size_t s2 = 0; s2 < m->nsecs; s2++) {
		lo = m->secs[s2].addr < lo ? m->secs[s2].addr : lo;
		hi = m->secs[s2].addr + m->secs[s2].size > hi ? m->secs[s2].addr + m->secs[s2].size : hi;
	}
	/* candidates: a pc (of a sample of them: the trace may hold pcs of
	 * other code, the loader and libc under valgrind) read as an address
	 * of the binary's code with the same offset in a page */
	step = n > 512 ? n / 512 : 1;
	for (size_t i = 0; i < n; i += step)
		for (size_t s2 = 0; s2 < m->nsecs; s2++) {
			uint64_t off = pcs[i] & 4095, a = (m->secs[s2].addr & ~4095ull) + off;
			for (; a < m->secs[s2].addr + m->secs[s2].size; a += 4096) {
				if (a < m->secs[s2].addr || ((pcs[i] - a) & 4095))
					continue;
				if (LP_ARRAY_RESERVE(cand, capc, ncand + 1, 256, "bias candidates") < 0) {
					rc = lp_seterr(LP_ENOMEM, "out of memory");
					goto out;
				}
				cand[ncand++] = pcs[i] - a;
			}
		}
	qsort(cand, ncand, sizeof(*cand), cmp_u64);
	/* the true bias puts every pc of the binary's functions on an
	 * instruction boundary; a wrong one few, by chance */
	for (size_t i = 0, tried = 0; i < ncand && tried < 4096; i++) {
		size_t a, b;
		long sc, ok;
		if (i && cand[i] == cand[i - 1])
			continue;
		tried++;
		a = lower(pcs, n, cand[i] + lo);
		b = lower(pcs, n, cand[i] + hi);
		sc = place_score(c, pcs + a, b - a, cand[i], &ok);
		if (sc > best) {
			second = best;
			best = sc;
			best_ok = ok;
			best_bias = cand[i];
		} else if (sc > second) {
			second = sc;
		}
	}
	/* enough pcs on the binary's instructions, nearly none between them,
	 * and clearly better than any other bias */
	if (best < 2 || best < 2 * second || (size_t)best_ok < min_pcs || best < best_ok * 3 / 4) {
		rc = lp_seterr(LP_EINVAL, "the pcs of the trace are not in '%s' (wrong binary?)", m->path);
		goto out;
	}
	c->bias = best_bias;
	c->inferred = 1;
	c->placed = 1;
out:
	free(pcs);
	free(cand);
	return rc;
}

int lp_pred_code_lookup(struct lp_pred_code *c, uint64_t pc, struct lp_pred_pc *out)
{
	int module = -1, f, b, l;
	uint64_t v = 0;

	memset(out, 0, sizeof(*out));
	out->module = -1;
	out->func = -1;
	if (!c->placed)
		return 0;
	if (c->nranges) {
		for (size_t i = 0; i < c->nranges; i++)
			if (pc >= c->ranges[i].start && pc < c->ranges[i].end) {
				module = c->ranges[i].module;
				v = pc - c->ranges[i].bias;
				break;
			}
	} else if (c->nmods) {
		v = pc - c->bias;
		if (lp_pred_mod_sec(&c->mods[0], v))
			module = 0;
	}
	if (module < 0)
		return 0;
	out->module = module;
	out->vaddr = v;
	out->line_addr = v;
	if ((f = func_of(c, module, v)) < 0)
		return 1;
	out->func = f;
	if (analyse(c, f) < 0)
		return 1;
	struct xfunc *fn = &c->funcs[f];
	long i = lp_pred_ins_at(fn, v);
	if (i > 0 && fn->ins_kind[i - 1] == K_CALL)
		out->line_addr = fn->ins_addr[i - 1]; /* a return address: the call's line */
	if ((b = lp_pred_block_of(fn, v)) < 0)
		return 1;
	for (l = fn->inner[b]; l >= 0 && out->depth < XMAX_DEPTH; l = c->loops[l].parent) {
		const struct lp_pred_loop *L = &c->loops[l];
		int k = out->depth++;
		out->loop[k] = l;
		if (k == 0) {
			out->node[k] = L->block_node[b];
			out->isblock[k] = 1;
		} else {
			out->node[k] = c->loops[out->loop[k - 1]].node_in_parent;
			out->isblock[k] = 0;
		}
	}
	return 1;
}

int lp_pred_code_reach(const struct lp_pred_code *c, int loop, int a, int b)
{
	const struct lp_pred_loop *L = &c->loops[loop];

	if (a < 0 || b < 0 || a >= L->nnodes || b >= L->nnodes)
		return 1;
	return (L->reach[(size_t)a * L->words + (size_t)b / 64] >> (b % 64)) & 1;
}

static char *debuginfo_path;
static const Dwfl_Callbacks dwfl_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Open module m's DWARF (once); 0 if it has none. */
static int mod_dwarf(struct xmod *md)
{
	if (!md->dwfl && !md->lines_failed) {
		if (!(md->dwfl = dwfl_begin(&dwfl_cb))) {
			md->lines_failed = 1;
			return 0;
		}
		dwfl_report_begin(md->dwfl);
		md->dmod = dwfl_report_elf(md->dwfl, md->path, md->path, -1, 0, false);
		dwfl_report_end(md->dwfl, NULL, NULL);
		if (!md->dmod)
			md->lines_failed = 1;
	}
	return md->dmod != NULL;
}

int lp_pred_code_srcline(struct lp_pred_code *c, const struct lp_pred_pc *p, struct lp_pred_srcloc *loc)
{
	struct xmod *md;

	memset(loc, 0, sizeof(*loc));
	if (p->module < 0)
		return 0;
	md = &c->mods[p->module];
	if (!mod_dwarf(md))
		return 0;
	if (lp_pred_mod_line(md, p->line_addr, loc) || lp_pred_mod_line(md, p->vaddr, loc))
		goto found;
	/* an out-of-line slow path of the instrumentation (its lines are the
	 * runtime's): follow it back to the access it instruments */
	if (p->func >= 0 && c->funcs[p->func].nins) {
		const struct xfunc *f = &c->funcs[p->func];
		long i = lp_pred_ins_at(f, p->vaddr);
		for (int steps = 0; i >= 0 && (size_t)i < f->nins && steps < 48; steps++) {
			if (lp_pred_mod_line(md, f->ins_addr[i], loc))
				goto found;
			if (f->ins_kind[i] == K_JMP) {
				i = lp_pred_ins_at(f, lp_pred_ins_target(c, f, (size_t)i));
			} else if (f->ins_kind[i] == K_JMPI || f->ins_kind[i] == K_END) {
				break;
			} else {
				i++;
			}
		}
	}
	memset(loc, 0, sizeof(*loc));
	return 0;
found:
	loc->file = strrchr(loc->file, '/') ? strrchr(loc->file, '/') + 1 : loc->file;
	return 1;
}

void lp_pred_code_module_id(struct lp_pred_code *c, int m, char *buf, size_t len)
{
	struct xmod *md = &c->mods[m];
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n;

	if (mod_dwarf(md) && (n = dwfl_module_build_id(md->dmod, &bits, &vaddr)) > 0) {
		size_t k = 0;
		for (int i = 0; i < n && k + 3 <= len; i++)
			k += (size_t)snprintf(buf + k, len - k, "%02x", bits[i]);
		return;
	}
	/* no build-id: FNV-1a over the file's bytes (binaries are small) */
	{
		size_t size = 0;
		const unsigned char *p = (const unsigned char *)elf_rawfile(md->elf, &size);
		uint64_t h = 0xcbf29ce484222325ull;
		if (!p) {
			snprintf(buf, len, "-");
			return;
		}
		for (size_t i = 0; i < size; i++)
			h = (h ^ p[i]) * 0x100000001b3ull;
		snprintf(buf, len, "fnv-%016" PRIx64, h);
	}
}
