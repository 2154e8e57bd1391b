/* Run files (one collected problem size; docs/formats.md, "Prediction run
 * files"), the words of the text formats, and quantile arithmetic on
 * histograms. */
#include "prediction/prediction-internal.h"

#include "common/array.h"
#include "common/error.h"
#include "common/io.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- words ---------------------------------------------------------------- */

void lp_pred_word_put(struct lp_out *f, const char *s)
{
	if (!s || !*s) {
		lp_out_write(f, "%-", 2);
		return;
	}
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == ' ' || ch == '%' || ch == '\t' || ch == '\n' || ch == '\r')
			lp_out_printf(f, "%%%02X", ch);
		else
			lp_out_write(f, s, 1);
	}
}

static int check_magic(const char *line, const char *kind, const char *what, const char *path)
{
	char want[64];
	int n = snprintf(want, sizeof(want), "# locprof xpred %s v", kind);

	if (!strncmp(line, want, (size_t)n) && !strcmp(line + n, "1"))
		return 0;
	return lp_seterr(!strncmp(line, want, (size_t)n) ? LP_EVERSION : LP_EFORMAT, "'%s' is not a locprof %s (v1)",
			 path, what);
}

int lp_pred_getline(struct lp_in *in, size_t *lineno, char **line, const char *kind, const char *what,
		    const char *path)
{
	int rc;

	while ((rc = (int)lp_in_getline(in, line)) > 0) {
		if (++*lineno > 1)
			return 1;
		if ((rc = check_magic(*line, kind, what, path)) < 0)
			return rc;
	}
	return rc;
}

static int hexv(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

int lp_pred_word_split(char *line, char **w, int max)
{
	int n = 0;
	char *s = line;

	while (*s && n < max) {
		char *d, *start;
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		start = d = s;
		while (*s && *s != ' ') {
			if (s[0] == '%' && s[1] == '-' && (s[2] == ' ' || !s[2]) && s == start) {
				s += 2;
				break;
			}
			if (s[0] == '%' && hexv(s[1]) >= 0 && hexv(s[2]) >= 0) {
				*d++ = (char)(hexv(s[1]) * 16 + hexv(s[2]));
				s += 3;
			} else {
				*d++ = *s++;
			}
		}
		if (*s == ' ')
			s++;
		*d = 0;
		w[n++] = start;
	}
	return n;
}

/* ---- histograms ---------------------------------------------------------------- */

void lp_pred_hist_release(struct lp_pred_hist *h)
{
	free(h->e);
	memset(h, 0, sizeof(*h));
}

double lp_pred_hist_finite(const struct lp_pred_hist *h)
{
	double s = 0;

	for (size_t i = 0; i < h->n; i++)
		s += h->e[i].count;
	return s;
}

int lp_pred_hist_merge(struct lp_pred_hist *dst, const struct lp_pred_hist *src)
{
	struct lp_pred_hent *m = malloc((dst->n + src->n + 1) * sizeof(*m));
	size_t i = 0, j = 0, k = 0;

	if (!m)
		return lp_seterr(LP_ENOMEM, "out of memory");
	while (i < dst->n || j < src->n) {
		const struct lp_pred_hent *x;
		if (j == src->n || (i < dst->n && dst->e[i].lo <= src->e[j].lo))
			x = &dst->e[i++];
		else
			x = &src->e[j++];
		/* bins come from the same fixed grid: equal ranges add */
		if (k && m[k - 1].lo == x->lo && m[k - 1].hi == x->hi)
			m[k - 1].count += x->count;
		else
			m[k++] = *x;
	}
	free(dst->e);
	dst->e = m;
	dst->n = k;
	dst->cold += src->cold;
	return 0;
}

/* ---- quantiles -------------------------------------------------------------------- */
/* A distribution is a list of entries, each uniform over [lo, hi] (a point
 * when lo == hi); u in [0, 1] is the fraction of the mass. */

int lp_pred_quant_init(struct lp_pred_quant *q, const struct lp_pred_hent *e, size_t n)
{
	memset(q, 0, sizeof(*q));
	q->e = e;
	q->n = n;
	if (!(q->cum = malloc((n + 1) * sizeof(*q->cum))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		q->total += e[i].count;
	double s = 0;
	for (size_t i = 0; i < n; i++) {
		q->cum[i] = q->total > 0 ? s / q->total : 0;
		s += e[i].count;
	}
	q->cum[n] = 1;
	return 0;
}

void lp_pred_quant_release(struct lp_pred_quant *q)
{
	free(q->cum);
	memset(q, 0, sizeof(*q));
}

/* Entry holding quantile u: the last i with cum[i] <= u (among entries with mass). */
static size_t entry_of(const struct lp_pred_quant *q, double u)
{
	size_t lo = 0, hi = q->n;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (q->cum[mid] <= u)
			lo = mid;
		else
			hi = mid;
	}
	while (lo + 1 < q->n && q->cum[lo + 1] <= u && q->cum[lo + 1] - q->cum[lo] <= 0)
		lo++;
	return lo;
}

static double at(const struct lp_pred_quant *q, size_t i, double u)
{
	double w = q->cum[i + 1] - q->cum[i], t;

	if (!(w > 0))
		return q->e[i].lo;
	t = (u - q->cum[i]) / w;
	if (t < 0)
		t = 0;
	if (t > 1)
		t = 1;
	return q->e[i].lo + t * (q->e[i].hi - q->e[i].lo);
}

double lp_pred_quant_quantile(const struct lp_pred_quant *q, double u)
{
	if (!q->n)
		return 0;
	return at(q, entry_of(q, u), u);
}

double lp_pred_quant_mean(const struct lp_pred_quant *q, double u0, double u1)
{
	double s = 0;

	if (!q->n)
		return 0;
	if (!(u1 > u0))
		return lp_pred_quant_quantile(q, u0);
	for (size_t i = entry_of(q, u0); i < q->n && q->cum[i] < u1; i++) {
		double a = fmax(u0, q->cum[i]), b = fmin(u1, q->cum[i + 1]);
		if (b > a)
			s += (b - a) * (at(q, i, a) + at(q, i, b)) / 2;
	}
	return s / (u1 - u0);
}

double lp_pred_quant_cdf(const struct lp_pred_quant *q, double d)
{
	double s = 0;

	for (size_t i = 0; i < q->n; i++) {
		double w = q->cum[i + 1] - q->cum[i];
		const struct lp_pred_hent *e = &q->e[i];
		if (e->hi < d)
			s += w;
		else if (e->lo < d && e->hi > e->lo)
			s += w * (d - e->lo) / (e->hi - e->lo);
	}
	return s;
}

/* ---- reading run files ---------------------------------------------------------- */

void lp_pred_run_free(struct lp_pred_run *r)
{
	if (!r)
		return;
	free(r->command);
	free(r->blocks);
	for (size_t i = 0; i < r->nmodules; i++)
		free(r->modules[i]);
	free(r->modules);
	for (size_t i = 0; i < r->nloops; i++) {
		free(r->loops[i].function);
		free(r->loops[i].where);
	}
	free(r->loops);
	for (size_t i = 0; i < r->npcs; i++) {
		free(r->pcs[i].strides);
		free(r->pcs[i].where);
		free(r->pcs[i].function);
		for (size_t b = 0; r->pcs[i].h && b < r->nblocks; b++)
			lp_pred_hist_release(&r->pcs[i].h[b]);
		free(r->pcs[i].h);
	}
	free(r->pcs);
	free(r);
}

double lp_pred_run_size(const struct lp_pred_run *r)
{
	return r->size;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s)
		return -1;
	*v = strtoull(s, &end, 0);
	return *end ? -1 : 0;
}

static int parse_entry(char *s, struct lp_pred_hent *e)
{
	char *colon = strchr(s, ':'), *dash, *end;

	if (!colon)
		return -1;
	*colon = 0;
	dash = strchr(s, '-');
	if (dash)
		*dash = 0;
	e->lo = strtod(s, &end);
	if (*end || end == s)
		return -1;
	e->hi = dash ? strtod(dash + 1, &end) : e->lo;
	if (dash && (*end || end == dash + 1))
		return -1;
	e->count = strtod(colon + 1, &end);
	if (*end || end == colon + 1 || !(e->count >= 0) || !(e->hi >= e->lo) || !(e->lo >= 0))
		return -1;
	return 0;
}

#define MAXW 16

/* What one line of a run file gave. */
enum { LINE_OK = 0, LINE_BAD = 1, LINE_NOMEM = 2 };

/* hist PC BLOCK COLD entries...: the entries may be many, so the line is
 * not split into words first. */
static int read_hist(struct lp_pred_run *r, char *line)
{
	char *tok, *save = NULL, *cend;
	uint64_t pc, block;
	double cold;
	size_t b, cap = 0;
	struct lp_pred_hist *h;

	tok = strtok_r(line + 5, " ", &save);
	if (!tok || parse_u64(tok, &pc) < 0 || pc >= r->npcs)
		return LINE_BAD;
	tok = strtok_r(NULL, " ", &save);
	if (!tok || parse_u64(tok, &block) < 0)
		return LINE_BAD;
	for (b = 0; b < r->nblocks && r->blocks[b] != block; b++)
		;
	if (b == r->nblocks)
		return LINE_BAD;
	/* (counts are means when averaged over page phases) */
	tok = strtok_r(NULL, " ", &save);
	if (!tok)
		return LINE_BAD;
	cold = strtod(tok, &cend);
	if (*cend || cend == tok || !(cold >= 0))
		return LINE_BAD;
	if (!r->pcs[pc].h && !(r->pcs[pc].h = calloc(r->nblocks, sizeof(struct lp_pred_hist))))
		return LINE_NOMEM;
	h = &r->pcs[pc].h[b];
	lp_pred_hist_release(h);
	h->cold = cold;
	while ((tok = strtok_r(NULL, " ", &save))) {
		if (LP_ARRAY_RESERVE(h->e, cap, h->n + 1, 16, "histogram entries") < 0)
			return LINE_NOMEM;
		if (parse_entry(tok, &h->e[h->n]) < 0 || (h->n && h->e[h->n].lo <= h->e[h->n - 1].hi))
			return LINE_BAD;
		h->n++;
	}
	return LINE_OK;
}

static int read_loop(struct lp_pred_run *r, char **w)
{
	struct lp_pred_run_loop *L;
	uint64_t id;

	if (LP_ARRAY_RESERVE(r->loops, r->caploops, r->nloops + 1, 16, "loops") < 0)
		return LINE_NOMEM;
	L = &r->loops[r->nloops];
	memset(L, 0, sizeof(*L));
	if (parse_u64(w[1], &id) < 0 || id != r->nloops)
		return LINE_BAD;
	L->module = atoi(w[2]);
	if (parse_u64(w[3], &L->header) < 0)
		return LINE_BAD;
	L->parent = atoi(w[4]);
	L->depth = atoi(w[5]);
	L->src = atoi(w[6]);
	if (L->parent >= (int)r->nloops + 1 || L->src > (int)r->nloops || L->module < 0 ||
	    (size_t)L->module >= r->nmodules)
		return LINE_BAD;
	if (!(L->function = strdup(w[7])) || !(L->where = strdup(w[8])))
		return LINE_NOMEM;
	r->nloops++;
	return LINE_OK;
}

static int read_pc(struct lp_pred_run *r, char **w, size_t *cappcs)
{
	struct lp_pred_run_pc *p;
	uint64_t id, g;

	if (LP_ARRAY_RESERVE(r->pcs, *cappcs, r->npcs + 1, 64, "pcs") < 0)
		return LINE_NOMEM;
	p = &r->pcs[r->npcs];
	memset(p, 0, sizeof(*p));
	if (parse_u64(w[1], &id) < 0 || id != r->npcs)
		return LINE_BAD;
	p->module = atoi(w[2]);
	if (parse_u64(w[3], &p->vaddr) < 0 || parse_u64(w[4], &p->refs) < 0 || parse_u64(w[5], &g) < 0)
		return LINE_BAD;
	p->group = (int)g;
	p->loop = atoi(w[6]);
	if (p->loop >= (int)r->nloops || p->module >= (int)r->nmodules)
		return LINE_BAD;
	r->npcs++;
	if (!(p->strides = strdup(w[7])) || !(p->where = strdup(w[8])) || !(p->function = strdup(w[9])))
		return LINE_NOMEM;
	return LINE_OK;
}

/* Every line but hist and end. */
static int read_line(struct lp_pred_run *r, char **w, int n, size_t *cappcs)
{
	if (!strcmp(w[0], "size") && n == 2) {
		char *end;
		r->size = strtod(w[1], &end);
		if (*end || !(r->size > 0) || !isfinite(r->size))
			return LINE_BAD;
	} else if (!strcmp(w[0], "command") && n == 2) {
		free(r->command);
		if (!(r->command = strdup(w[1])))
			return LINE_NOMEM;
	} else if (!strcmp(w[0], "references") && n == 2) {
		if (parse_u64(w[1], &r->references) < 0)
			return LINE_BAD;
	} else if (!strcmp(w[0], "blocks") && n >= 2 && !r->blocks) {
		r->nblocks = (size_t)n - 1;
		if (!(r->blocks = malloc(r->nblocks * sizeof(*r->blocks))))
			return LINE_NOMEM;
		for (int i = 1; i < n; i++)
			if (parse_u64(w[i], &r->blocks[i - 1]) < 0 || !r->blocks[i - 1])
				return LINE_BAD;
	} else if (!strcmp(w[0], "bias") && n >= 2) {
		/* informational */
	} else if (!strcmp(w[0], "module") && n == 3) {
		if (LP_ARRAY_RESERVE(r->modules, r->capmodules, r->nmodules + 1, 8, "modules") < 0)
			return LINE_NOMEM;
		if (!(r->modules[r->nmodules++] = strdup(w[2])))
			return LINE_NOMEM;
	} else if (!strcmp(w[0], "loop") && n == 9) {
		return read_loop(r, w);
	} else if (!strcmp(w[0], "pc") && n == 10) {
		return read_pc(r, w, cappcs);
	} else if (!strcmp(w[0], "walk") && n == 5) {
		uint64_t id;
		struct lp_pred_run_pc *p;
		if (parse_u64(w[1], &id) < 0 || id >= r->npcs)
			return LINE_BAD;
		p = &r->pcs[id];
		if (parse_u64(w[2], &p->first) < 0 || parse_u64(w[3], &p->wruns) < 0 ||
		    parse_u64(w[4], &p->wsteps) < 0)
			return LINE_BAD;
		p->has_walk = 1;
	} else {
		return LINE_BAD;
	}
	return LINE_OK;
}

int lp_pred_run_read(struct lp_pred_run **out, const char *path)
{
	struct lp_in *in = NULL;
	struct lp_pred_run *r;
	char *line, *w[MAXW];
	size_t lineno = 0, cappcs = 0;
	int rc, ended = 0;

	*out = NULL;
	if (!(r = calloc(1, sizeof(*r))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	r->size = NAN;
	if ((rc = lp_in_open(&in, path)) < 0)
		goto fail;
	while ((rc = lp_pred_getline(in, &lineno, &line, "run", "prediction run file", path)) > 0) {
		int n;
		if (line[0] == '#' || !line[0])
			continue;
		if (!strncmp(line, "hist ", 5)) {
			rc = read_hist(r, line);
		} else {
			if (!(n = lp_pred_word_split(line, w, MAXW)))
				continue;
			if (!strcmp(w[0], "end") && n == 1) {
				ended = 1;
				break;
			}
			rc = read_line(r, w, n, &cappcs);
		}
		if (rc == LINE_NOMEM)
			goto nomem;
		if (rc == LINE_BAD)
			goto bad;
	}
	if (rc < 0)
		goto fail;
	if (!ended || isnan(r->size) || !r->nblocks) {
		rc = lp_seterr(LP_ETRUNCATED, "'%s': the run file ends early (line %zu)", path, lineno);
		goto fail;
	}
	for (size_t i = 0; i < r->npcs; i++)
		if (!r->pcs[i].h && !(r->pcs[i].h = calloc(r->nblocks, sizeof(struct lp_pred_hist))))
			goto nomem;
	lp_in_free(in);
	*out = r;
	return 0;
nomem:
	rc = lp_seterr(LP_ENOMEM, "out of memory");
	goto fail;
bad:
	rc = lp_seterr(LP_ECORRUPT, "'%s' line %zu: malformed", path, lineno);
fail:
	lp_in_free(in);
	lp_pred_run_free(r);
	return rc;
}
