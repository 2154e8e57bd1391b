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
#include "prediction/prediction-internal.h"

#include "common/error.h"

#include <Zydis/Zydis.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { K_NORMAL, K_CALL, K_JMP, K_JMPI, K_JCC, K_END };

struct xsec {
	uint64_t addr, size;
	const uint8_t *data;
};

struct xsym {
	uint64_t start, size;
	const char *name;
	int func; /* global function id, -1 until first used */
};

struct xmod {
	char *path;
	int fd;
	Elf *elf;
	int is_dyn;
	struct xsec *secs;
	size_t nsecs;
	struct xsym *syms;
	size_t nsyms;
	Dwfl *dwfl;
	Dwfl_Module *dmod;
	int lines_failed;
};

struct xrange {
	uint64_t start, end; /* runtime [start, end) */
	int module;
	uint64_t bias;
};

struct xfunc {
	int module;
	uint64_t start, size;
	const char *name;
	int state; /* 0 not analysed, 1 done, -1 failed */
	int nb;
	uint64_t *bstart, *bend;
	int (*succ)[2];
	unsigned char *nsucc;
	int *inner; /* innermost global loop of each block, -1 */
	size_t nins;
	uint64_t *ins_addr;
	unsigned char *ins_len, *ins_kind;
};

struct lp_pred_code {
	ZydisDecoder dec;
	struct xmod *mods;
	size_t nmods;
	struct xrange *ranges;
	size_t nranges;
	int placed, inferred;
	uint64_t bias;
	struct xfunc *funcs;
	size_t nfuncs, capfuncs;
	struct lp_pred_loop *loops;
	size_t nloops, caploops;
};

static int mod_open(struct xmod *m, const char *path)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shstr;
	int have_symtab = 0;

	memset(m, 0, sizeof(*m));
	m->fd = -1;
	if (!(m->path = strdup(path)))
		return lp_seterr(LP_ENOMEM, "out of memory");
	if ((m->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return lp_seterr_errno("cannot open binary '%s'", path);
	if (!(m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL)) || elf_kind(m->elf) != ELF_K_ELF ||
	    !gelf_getehdr(m->elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		return lp_seterr(LP_EFORMAT, "'%s' is not an x86-64 ELF file", path);
	m->is_dyn = eh.e_type == ET_DYN;
	if (elf_getshdrstrndx(m->elf, &shstr) < 0)
		return lp_seterr(LP_EFORMAT, "'%s': no section names", path);
	/* executable sections, then symbols (.symtab, else .dynsym) */
	while ((scn = elf_nextscn(m->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			have_symtab = 1;
		if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size) {
			Elf_Data *d = elf_getdata(scn, NULL);
			struct xsec *ns;
			if (!d || !d->d_buf || d->d_size < sh.sh_size)
				continue;
			if (!(ns = realloc(m->secs, (m->nsecs + 1) * sizeof(*ns))))
				return lp_seterr(LP_ENOMEM, "out of memory");
			m->secs = ns;
			m->secs[m->nsecs++] = (struct xsec){ sh.sh_addr, sh.sh_size, d->d_buf };
		}
	}
	scn = NULL;
	while ((scn = elf_nextscn(m->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != (have_symtab ? SHT_SYMTAB : SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			const char *name;
			struct xsym *ns;
			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_size || s.st_shndx == SHN_UNDEF)
				continue;
			if (!(name = elf_strptr(m->elf, sh.sh_link, s.st_name)))
				name = "?";
			if (!(ns = realloc(m->syms, (m->nsyms + 1) * sizeof(*ns))))
				return lp_seterr(LP_ENOMEM, "out of memory");
			m->syms = ns;
			m->syms[m->nsyms++] = (struct xsym){ s.st_value, s.st_size, name, -1 };
		}
	}
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct xsym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->size > y->size ? -1 : x->size < y->size; /* larger first */
}

static void mod_sort(struct xmod *m)
{
	size_t k = 0;

	qsort(m->syms, m->nsyms, sizeof(*m->syms), cmp_sym);
	for (size_t i = 0; i < m->nsyms; i++)
		if (!k || m->syms[i].start != m->syms[k - 1].start)
			m->syms[k++] = m->syms[i];
	m->nsyms = k;
}

static void mod_close(struct xmod *m)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	if (m->elf)
		elf_end(m->elf);
	if (m->fd >= 0)
		close(m->fd);
	free(m->secs);
	free(m->syms);
	free(m->path);
}

static const struct xsec *mod_sec(const struct xmod *m, uint64_t vaddr)
{
	for (size_t i = 0; i < m->nsecs; i++)
		if (vaddr >= m->secs[i].addr && vaddr - m->secs[i].addr < m->secs[i].size)
			return &m->secs[i];
	return NULL;
}

static struct xsym *mod_sym(struct xmod *m, uint64_t vaddr)
{
	size_t lo = 0, hi = m->nsyms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* syms[lo-1] starts at or before vaddr; an earlier, larger symbol may
	 * still contain it (nested local symbols) */
	for (size_t i = lo; i-- > 0 && lo - i <= 4;)
		if (vaddr - m->syms[i].start < m->syms[i].size)
			return &m->syms[i];
	return NULL;
}

/* Load bias of module m from a mapping of file offset `off` at `start`. */
static int mod_bias(const struct xmod *m, uint64_t start, uint64_t off, uint64_t *bias)
{
	size_t n;

	if (elf_getphdrnum(m->elf, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(m->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t a = ph.p_align > 1 ? ph.p_align : 4096;
		if ((ph.p_offset & ~(a - 1)) <= off && off < ph.p_offset + ph.p_filesz) {
			*bias = start - off + ph.p_offset - ph.p_vaddr;
			return 0;
		}
	}
	return -1;
}

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
			struct xmod *nm = realloc(c->mods, (c->nmods + 1) * sizeof(*nm));
			if (!nm) {
				rc = lp_seterr(LP_ENOMEM, "out of memory");
				break;
			}
			c->mods = nm;
			if (mod_open(&c->mods[k], mp->path) < 0) {
				mod_close(&c->mods[k]); /* an unreadable library only loses its loops */
				continue;
			}
			mod_sort(&c->mods[k]);
			c->nmods++;
		}
		if (mod_bias(&c->mods[k], mp->start, mp->file_offset, &bias) < 0)
			continue;
		struct xrange *nr = realloc(c->ranges, (c->nranges + 1) * sizeof(*nr));
		if (!nr) {
			rc = lp_seterr(LP_ENOMEM, "out of memory");
			break;
		}
		c->ranges = nr;
		c->ranges[c->nranges++] = (struct xrange){ mp->start, mp->end, (int)k, bias };
	}
	if (!rc && c->nranges) {
		c->placed = 1;
	} else if (!rc && binary) {
		struct xmod *nm = realloc(c->mods, (c->nmods + 1) * sizeof(*nm));
		if (!nm) {
			rc = lp_seterr(LP_ENOMEM, "out of memory");
		} else {
			c->mods = nm;
			if ((rc = mod_open(&c->mods[c->nmods], binary)) < 0) {
				mod_close(&c->mods[c->nmods]);
			} else {
				mod_sort(&c->mods[c->nmods]);
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
		mod_close(&c->mods[i]);
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

/* ---- decoding and the CFG ---------------------------------------------------- */

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

static int decode_func(struct lp_pred_code *c, struct xfunc *f)
{
	struct xmod *m = &c->mods[f->module];
	const struct xsec *s = mod_sec(m, f->start);
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
		if (f->nins == cap) {
			cap = cap ? cap * 2 : 256;
			uint64_t *a = realloc(f->ins_addr, cap * sizeof(*a));
			unsigned char *l = a ? realloc(f->ins_len, cap) : NULL;
			unsigned char *k = l ? realloc(f->ins_kind, cap) : NULL;
			if (a)
				f->ins_addr = a;
			if (l)
				f->ins_len = l;
			if (k)
				f->ins_kind = k;
			if (!a || !l || !k)
				return -1;
		}
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
static long ins_at(const struct xfunc *f, uint64_t a)
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
static uint64_t ins_target(struct lp_pred_code *c, const struct xfunc *f, size_t i)
{
	const struct xsec *s = mod_sec(&c->mods[f->module], f->ins_addr[i]);
	uint64_t t = 0;
	int kind;

	if (!s || !decode_one(c, s->data + (f->ins_addr[i] - s->addr), f->ins_len[i], f->ins_addr[i], &kind, &t))
		return 0;
	return t;
}

static int block_of(const struct xfunc *f, uint64_t a)
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

static int build_cfg(struct lp_pred_code *c, struct xfunc *f)
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
			target[i] = ins_target(c, f, i);
			if ((t = ins_at(f, target[i])) >= 0)
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
		if ((k == K_JMP || k == K_JCC) && (t = block_of(f, target[last])) >= 0 &&
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

static int dom_intersect(const int *idom, const int *po, int a, int b)
{
	while (a != b) {
		while (po[a] < po[b])
			a = idom[a];
		while (po[b] < po[a])
			b = idom[b];
	}
	return a;
}

static int cmp_int_desc_size(const void *a, const void *b, void *arg)
{
	const size_t *sz = arg;
	int x = *(const int *)a, y = *(const int *)b;
	return sz[x] < sz[y] ? -1 : sz[x] > sz[y];
}

/* Find the loops of f and register them globally. */
static int find_loops(struct lp_pred_code *c, struct xfunc *f, int fid)
{
	int nb = f->nb, root = nb, rc = -1, nl = 0;
	int *po = NULL, *order = NULL, *idom = NULL, *stack = NULL, *sidx = NULL, *npred = NULL;
	int *pred = NULL, *poff = NULL, *hdr = NULL, *lid = NULL, *work = NULL, *tree = NULL;
	unsigned char *seen = NULL, **body = NULL;
	size_t *bsize = NULL;
	int npo = 0;

	po = malloc((size_t)(nb + 1) * sizeof(*po));
	order = malloc((size_t)(nb + 1) * sizeof(*order));
	idom = malloc((size_t)(nb + 1) * sizeof(*idom));
	stack = malloc((size_t)(nb + 1) * sizeof(*stack));
	sidx = malloc((size_t)(nb + 1) * sizeof(*sidx));
	npred = calloc((size_t)(nb + 2), sizeof(*npred));
	poff = calloc((size_t)(nb + 2), sizeof(*poff));
	pred = malloc((size_t)(2 * nb + nb + 1) * sizeof(*pred));
	seen = calloc((size_t)(nb + 1), 1);
	work = malloc((size_t)(nb + 1) * sizeof(*work));
	tree = malloc((size_t)(nb + 1) * sizeof(*tree));
	if (!po || !order || !idom || !stack || !sidx || !npred || !poff || !pred || !seen || !work || !tree)
		goto out;
	/* depth-first search from the entry, then from every block not yet
	 * reached (all children of the virtual root) */
	for (int r = 0; r < nb; r++) {
		int sp = 0;
		if (seen[r])
			continue;
		seen[r] = 1;
		tree[r] = r;
		stack[sp] = r;
		sidx[sp++] = 0;
		while (sp) {
			int b = stack[sp - 1];
			if (sidx[sp - 1] < f->nsucc[b]) {
				int s = f->succ[b][sidx[sp - 1]++];
				if (!seen[s]) {
					seen[s] = 1;
					tree[s] = r;
					stack[sp] = s;
					sidx[sp++] = 0;
				}
			} else {
				po[b] = npo;
				order[npo++] = b;
				sp--;
			}
		}
		/* the virtual root's edge to r */
		npred[r]++;
	}
	po[root] = npo;
	/* predecessors (the root counts as a predecessor of each DFS root).
	 * Edges between trees are left out: a tree that starts at a block
	 * the entry does not reach (a switch case, or the nop padding after a
	 * jump) must not change the dominators of the code the entry reaches */
	for (int b = 0; b < nb; b++)
		for (int k = 0; k < f->nsucc[b]; k++)
			if (tree[f->succ[b][k]] == tree[b])
				npred[f->succ[b][k]]++;
	for (int b = 0; b < nb; b++)
		poff[b + 1] = poff[b] + npred[b];
	memset(npred, 0, (size_t)(nb + 2) * sizeof(*npred));
	memset(seen, 0, (size_t)(nb + 1));
	for (int r = 0; r < nb; r++)
		if (tree[r] == r)
			pred[poff[r] + npred[r]++] = root;
	for (int b = 0; b < nb; b++)
		for (int k = 0; k < f->nsucc[b]; k++) {
			int s = f->succ[b][k];
			if (tree[s] == tree[b])
				pred[poff[s] + npred[s]++] = b;
		}
	/* dominators, in reverse postorder */
	for (int b = 0; b <= nb; b++)
		idom[b] = -1;
	idom[root] = root;
	for (int changed = 1; changed;) {
		changed = 0;
		for (int i = npo - 1; i >= 0; i--) {
			int b = order[i], nd = -1;
			for (int k = poff[b]; k < poff[b] + npred[b]; k++) {
				int p = pred[k];
				if (idom[p] < 0)
					continue;
				nd = nd < 0 ? p : dom_intersect(idom, po, p, nd);
			}
			if (nd >= 0 && idom[b] != nd) {
				idom[b] = nd;
				changed = 1;
			}
		}
	}
	/* back edges u -> h (h dominates u), one loop per header */
	hdr = malloc((size_t)(nb + 1) * sizeof(*hdr));
	lid = malloc((size_t)(nb + 1) * sizeof(*lid));
	body = calloc((size_t)(nb + 1), sizeof(*body));
	if (!hdr || !lid || !body)
		goto out;
	for (int b = 0; b < nb; b++)
		lid[b] = -1;
	for (int u = 0; u < nb; u++)
		for (int k = 0; k < f->nsucc[u]; k++) {
			int h = f->succ[u][k], d = u, sp = 0;
			while (d != h && d != root && d >= 0 && idom[d] != d)
				d = idom[d];
			if (d != h)
				continue;
			if (lid[h] < 0) {
				if (!(body[nl] = calloc((size_t)nb, 1)))
					goto out;
				hdr[nl] = h;
				lid[h] = nl++;
				body[lid[h]][h] = 1;
			}
			unsigned char *bd = body[lid[h]];
			if (!bd[u]) {
				bd[u] = 1;
				work[sp++] = u;
			}
			while (sp) {
				int x = work[--sp];
				for (int q = poff[x]; q < poff[x] + npred[x]; q++) {
					int p = pred[q];
					if (p != root && !bd[p]) {
						bd[p] = 1;
						work[sp++] = p;
					}
				}
			}
		}
	if (!nl) {
		rc = 0;
		goto out;
	}
	/* nesting: by body size; a loop's parent is the smallest larger loop
	 * holding its header */
	bsize = calloc((size_t)nl, sizeof(*bsize));
	int *ord = malloc((size_t)nl * sizeof(*ord)), *par = malloc((size_t)nl * sizeof(*par));
	if (!bsize || !ord || !par) {
		free(ord);
		free(par);
		goto out;
	}
	for (int l = 0; l < nl; l++) {
		for (int b = 0; b < nb; b++)
			bsize[l] += body[l][b];
		ord[l] = l;
	}
	qsort_r(ord, (size_t)nl, sizeof(*ord), cmp_int_desc_size, bsize);
	for (int i = 0; i < nl; i++) {
		int l = ord[i];
		par[l] = -1;
		for (int j = i + 1; j < nl; j++)
			if (body[ord[j]][hdr[l]] && bsize[ord[j]] > bsize[l]) {
				par[l] = ord[j];
				break;
			}
	}
	/* innermost loop of each block: the smallest holding it */
	for (int i = nl - 1; i >= 0; i--)
		for (int b = 0; b < nb; b++)
			if (body[ord[i]][b])
				f->inner[b] = ord[i]; /* local id for now */
	/* register globally: parents before children (largest first) */
	if (c->nloops + (size_t)nl > c->caploops) {
		size_t cap = c->caploops ? c->caploops : 16;
		while (cap < c->nloops + (size_t)nl)
			cap *= 2;
		struct lp_pred_loop *nl2 = realloc(c->loops, cap * sizeof(*nl2));
		if (!nl2) {
			free(ord);
			free(par);
			goto out;
		}
		c->loops = nl2;
		c->caploops = cap;
	}
	int base = (int)c->nloops, *gid = malloc((size_t)nl * sizeof(*gid));
	if (!gid) {
		free(ord);
		free(par);
		goto out;
	}
	for (int i = nl - 1, k = 0; i >= 0; i--, k++)
		gid[ord[i]] = base + k;
	for (int i = nl - 1; i >= 0; i--) {
		int l = ord[i];
		struct lp_pred_loop *L = &c->loops[gid[l]];
		memset(L, 0, sizeof(*L));
		L->module = f->module;
		L->func = fid;
		L->header = f->bstart[hdr[l]];
		L->parent = par[l] >= 0 ? gid[par[l]] : -1;
		L->depth = L->parent >= 0 ? c->loops[L->parent].depth + 1 : 1;
		L->node_in_parent = -1;
	}
	c->nloops += (size_t)nl;
	for (int b = 0; b < nb; b++)
		if (f->inner[b] >= 0)
			f->inner[b] = gid[f->inner[b]];
	/* each loop's acyclic body: nodes are its own blocks and its child
	 * loops, in reverse postorder of the block or the child's header */
	for (int l = 0; l < nl; l++) {
		struct lp_pred_loop *L = &c->loops[gid[l]];
		int nn = 0, *key, *nodeblk;
		int g = gid[l];
		key = malloc((size_t)(nb + nl + 1) * sizeof(*key));
		nodeblk = malloc((size_t)(nb + nl) * sizeof(*nodeblk));
		L->block_node = malloc((size_t)nb * sizeof(*L->block_node));
		if (!key || !nodeblk || !L->block_node) {
			free(key);
			free(nodeblk);
			free(ord);
			free(par);
			free(gid);
			goto out;
		}
		for (int b = 0; b < nb; b++) {
			L->block_node[b] = -1;
			if (f->inner[b] == g)
				nodeblk[nn++] = b; /* a block node */
		}
		for (int m2 = 0; m2 < nl; m2++)
			if (par[m2] == l)
				nodeblk[nn++] = -1 - m2; /* a child loop node */
		/* sort nodes by reverse postorder (descending po) */
		for (int i = 0; i < nn; i++)
			key[i] = nodeblk[i] >= 0 ? po[nodeblk[i]] : po[hdr[-1 - nodeblk[i]]];
		for (int i = 1; i < nn; i++)
			for (int j = i; j > 0 && key[j] > key[j - 1]; j--) {
				int t = key[j];
				key[j] = key[j - 1];
				key[j - 1] = t;
				t = nodeblk[j];
				nodeblk[j] = nodeblk[j - 1];
				nodeblk[j - 1] = t;
			}
		for (int i = 0; i < nn; i++) {
			if (nodeblk[i] >= 0)
				L->block_node[nodeblk[i]] = i;
			else
				c->loops[gid[-1 - nodeblk[i]]].node_in_parent = i;
		}
		L->nnodes = nn;
		L->words = ((size_t)nn + 63) / 64;
		if (!(L->reach = calloc((size_t)nn * L->words, sizeof(*L->reach)))) {
			free(key);
			free(nodeblk);
			free(ord);
			free(par);
			free(gid);
			goto out;
		}
		/* node of each block of the body at this loop's level, and the
		 * blocks bucketed by node (key[] and nodeblk[] are reused) */
		int *bn = L->block_node, *cnt = key, *lst = nodeblk;
		int *tmpn = malloc((size_t)nb * sizeof(*tmpn));
		if (!tmpn) {
			free(key);
			free(nodeblk);
			free(ord);
			free(par);
			free(gid);
			goto out;
		}
		for (int b = 0; b < nb; b++) {
			tmpn[b] = -1;
			if (!body[l][b])
				continue;
			if (bn[b] >= 0) {
				tmpn[b] = bn[b];
			} else {
				int x = f->inner[b];
				while (x >= 0 && c->loops[x].parent != g)
					x = c->loops[x].parent;
				tmpn[b] = x >= 0 ? c->loops[x].node_in_parent : -1;
			}
		}
		for (int i = 0; i <= nn; i++)
			cnt[i] = 0;
		for (int b = 0; b < nb; b++)
			if (tmpn[b] >= 0)
				cnt[tmpn[b] + 1]++;
		for (int i = 0; i < nn; i++)
			cnt[i + 1] += cnt[i];
		for (int b = 0; b < nb; b++)
			if (tmpn[b] >= 0)
				lst[cnt[tmpn[b]]++] = b;
		/* cnt[i] is now the end of node i's blocks; node i starts at
		 * cnt[i-1] (0 for i = 0) */
		for (int i = nn - 1; i >= 0; i--) {
			uint64_t *ri = L->reach + (size_t)i * L->words;
			ri[i / 64] |= 1ull << (i % 64);
			for (int q = i ? cnt[i - 1] : 0; q < cnt[i]; q++) {
				int b = lst[q];
				for (int k = 0; k < f->nsucc[b]; k++) {
					int s = f->succ[b][k], ns;
					if (!body[l][s] || s == hdr[l])
						continue;
					ns = tmpn[s];
					if (ns < 0 || ns == i)
						continue;
					const uint64_t *rs = L->reach + (size_t)ns * L->words;
					for (size_t w = 0; w < L->words; w++)
						ri[w] |= rs[w];
				}
			}
		}
		free(tmpn);
		free(key);
		free(nodeblk);
	}
	free(ord);
	free(par);
	free(gid);
	rc = 0;
out:
	if (body)
		for (int l = 0; l <= nb; l++)
			free(body[l]);
	free(body);
	free(bsize);
	free(hdr);
	free(lid);
	free(po);
	free(order);
	free(idom);
	free(stack);
	free(sidx);
	free(npred);
	free(poff);
	free(pred);
	free(seen);
	free(work);
	free(tree);
	return rc;
}

static int analyse(struct lp_pred_code *c, int fid)
{
	struct xfunc *f = &c->funcs[fid];

	if (f->state)
		return f->state;
	f->state = -1;
	if (decode_func(c, f) < 0 || build_cfg(c, f) < 0 || find_loops(c, f, fid) < 0)
		return -1;
	f->state = 1;
	return 1;
}

static int func_of(struct lp_pred_code *c, int module, uint64_t vaddr)
{
	struct xmod *m = &c->mods[module];
	struct xsym *s = mod_sym(m, vaddr);

	if (!s)
		return -1;
	if (s->func < 0) {
		if (c->nfuncs == c->capfuncs) {
			size_t cap = c->capfuncs ? c->capfuncs * 2 : 16;
			struct xfunc *nf = realloc(c->funcs, cap * sizeof(*nf));
			if (!nf)
				return -1;
			c->funcs = nf;
			c->capfuncs = cap;
		}
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
		return mod_sec(&c->mods[module], vaddr) != NULL; /* code without symbols */
	if (!c->funcs[f].nins && decode_func(c, &c->funcs[f]) < 0)
		return 0;
	return ins_at(&c->funcs[f], vaddr) >= 0;
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
		if (!mod_sec(&c->mods[0], v) || func_of(c, 0, v) < 0)
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
				if (ncand == capc) {
					uint64_t *nc = realloc(cand, (capc = capc ? 2 * capc : 256) * sizeof(*nc));
					if (!nc) {
						rc = lp_seterr(LP_ENOMEM, "out of memory");
						goto out;
					}
					cand = nc;
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
		if (mod_sec(&c->mods[0], v))
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
	long i = ins_at(fn, v);
	if (i > 0 && fn->ins_kind[i - 1] == K_CALL)
		out->line_addr = fn->ins_addr[i - 1]; /* a return address: the call's line */
	if ((b = block_of(fn, v)) < 0)
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

/* An instrumentation callback, whose call site is the access's line. */
static int is_callback(const char *name)
{
	return name && (!strncmp(name, "__sanitizer_cov_load", 20) || !strncmp(name, "__sanitizer_cov_store", 21) ||
			!strncmp(name, "__tsan_read", 11) || !strncmp(name, "__tsan_write", 12) ||
			!strncmp(name, "__tsan_unaligned", 16));
}

/* A source file of locprof's runtime (inlined into instrumented code). */
static int is_runtime_file(const char *f)
{
	const char *base = strrchr(f, '/') ? strrchr(f, '/') + 1 : f;
	size_t n = strlen(base);

	return strstr(f, "src/rt/") || !strcmp(base, "rt.h") ||
	       (!strncmp(base, "rt-", 3) && n > 2 && !strcmp(base + n - 2, ".c"));
}

/* The compile unit holding addr. libdw finds it through .debug_aranges,
 * which clang does not emit; so the units are searched with dwarf_haspc. */
static Dwarf_Die *cu_of(struct xmod *md, uint64_t addr, Dwarf_Die *out)
{
	Dwarf_Addr bias = 0;
	Dwarf *dw;
	Dwarf_Die *cu;
	Dwarf_Off off = 0, next;
	size_t hsize;

	if ((cu = dwfl_module_addrdie(md->dmod, addr, &bias))) {
		*out = *cu;
		return out;
	}
	if (!(dw = dwfl_module_getdwarf(md->dmod, &bias)))
		return NULL;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, out) && dwarf_haspc(out, addr - bias) == 1)
			return out;
		off = next;
	}
	return NULL;
}

/* Line of addr: the call site of an inlined instrumentation callback
 * around it, else the line table's. 1 if found outside the runtime. */
static int line_at(struct xmod *md, uint64_t addr, const char **file, int *line)
{
	Dwarf_Die cubuf, *cu, *scopes = NULL;
	Dwarf_Line *dl;
	int n;

	if (!(cu = cu_of(md, addr, &cubuf)))
		return 0;
	if ((n = dwarf_getscopes(cu, addr, &scopes)) > 0) {
		for (int i = 0; i < n; i++) {
			Dwarf_Attribute a;
			Dwarf_Word fidx, ln;
			Dwarf_Files *files;
			size_t nfiles;
			const char *f;
			if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine || !is_callback(dwarf_diename(&scopes[i])))
				continue;
			if (!dwarf_attr(&scopes[i], DW_AT_call_file, &a) || dwarf_formudata(&a, &fidx) != 0 ||
			    !dwarf_attr(&scopes[i], DW_AT_call_line, &a) || dwarf_formudata(&a, &ln) != 0 ||
			    dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || fidx >= nfiles ||
			    !(f = dwarf_filesrc(files, fidx, NULL, NULL)) || !ln)
				break;
			free(scopes);
			*file = f;
			*line = (int)ln;
			return !is_runtime_file(f);
		}
		free(scopes);
	}
	if ((dl = dwarf_getsrc_die(cu, addr))) {
		const char *f = dwarf_linesrc(dl, NULL, NULL);
		if (f && dwarf_lineno(dl, line) == 0 && *line > 0) {
			*file = f;
			return !is_runtime_file(f);
		}
	}
	return 0;
}

int lp_pred_code_srcline(struct lp_pred_code *c, const struct lp_pred_pc *p, const char **file, int *line)
{
	struct xmod *md;

	*file = NULL;
	*line = 0;
	if (p->module < 0)
		return 0;
	md = &c->mods[p->module];
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
	if (!md->dmod)
		return 0;
	if (line_at(md, p->line_addr, file, line) || line_at(md, p->vaddr, file, line))
		goto found;
	/* an out-of-line slow path of the instrumentation (its lines are the
	 * runtime's): follow it back to the access it instruments */
	if (p->func >= 0 && c->funcs[p->func].nins) {
		const struct xfunc *f = &c->funcs[p->func];
		long i = ins_at(f, p->vaddr);
		for (int steps = 0; i >= 0 && (size_t)i < f->nins && steps < 48; steps++) {
			if (line_at(md, f->ins_addr[i], file, line))
				goto found;
			if (f->ins_kind[i] == K_JMP) {
				i = ins_at(f, ins_target(c, f, (size_t)i));
			} else if (f->ins_kind[i] == K_JMPI || f->ins_kind[i] == K_END) {
				break;
			} else {
				i++;
			}
		}
	}
	*file = NULL;
	*line = 0;
	return 0;
found:
	*file = strrchr(*file, '/') ? strrchr(*file, '/') + 1 : *file;
	return 1;
}
