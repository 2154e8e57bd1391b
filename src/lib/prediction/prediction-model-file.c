/* Model files (docs/formats.md): written through lp_out, read back with
 * every line checked. */
#include "prediction/prediction-model.h"

#include "common/array.h"
#include "common/error.h"

#include <locprof/model.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/io.h"

#include <sys/stat.h>


static void put_fit(struct lp_out *f, const struct lp_pred_model *m, const struct lp_pred_fit *x)
{
	lp_out_printf(f, " %x", x->used);
	for (size_t j = 0; j < m->basis.n; j++)
		lp_out_printf(f, "%s%.17g", j ? "," : ":", x->coef[j]);
}

int lp_pred_model_write(const struct lp_pred_model *m, const char *path)
{
	char buf[512];
	struct lp_out *f;
	int rc;

	if ((rc = lp_out_open(&f, path)) < 0)
		return rc;
	lp_out_printf(f, "# locprof xpred model v1\ncommand ");
	lp_pred_word_put(f, m->command);
	lp_out_printf(f, "\nbasis ");
	lp_pred_word_put(f, lp_pred_basis_text(&m->basis, buf, sizeof(buf)));
	lp_out_printf(f, "\nrange %.17g\ntolerance %.17g\ndepth %u\nsizes", m->range, m->tolerance, m->max_depth);
	for (size_t r = 0; r < m->nsizes; r++)
		lp_out_printf(f, " %.17g", m->sizes[r]);
	lp_out_printf(f, "\nblocks");
	for (size_t b = 0; b < m->nblocks; b++)
		lp_out_printf(f, " %" PRIu64, m->blocks[b]);
	lp_out_printf(f, "\ntotal");
	for (size_t r = 0; r < m->nsizes; r++)
		lp_out_printf(f, " %.17g", m->total[r]);
	lp_out_printf(f, "\nrefs");
	put_fit(f, m, &m->refs);
	lp_out_write(f, "\n", 1);
	for (size_t l = 0; l < m->nloops; l++) {
		lp_out_printf(f, "loop %zu %d %d ", l, m->loops[l].parent, m->loops[l].depth);
		lp_pred_word_put(f, m->loops[l].function);
		lp_out_write(f, " ", 1);
		lp_pred_word_put(f, m->loops[l].where);
		lp_out_write(f, "\n", 1);
	}
	for (size_t k = 0; k < m->ngroups; k++) {
		const struct xgroup *g = &m->g[k];
		lp_out_printf(f, "group %zu %d %zu ", k, g->loop, g->npcs);
		lp_pred_word_put(f, g->function);
		lp_out_write(f, " ", 1);
		lp_pred_word_put(f, g->where);
		lp_out_write(f, " ", 1);
		lp_pred_word_put(f, g->strides);
		lp_out_printf(f, "\ngrefs %zu", k);
		put_fit(f, m, &g->refs);
		lp_out_write(f, "\n", 1);
		for (size_t r = 0; r < m->nsizes && g->mwstride; r++)
			if (g->mwstride[r] > 0)
				lp_out_printf(f, "mwalk %zu %zu %.17g %.17g %.17g\n", k, r, g->mwstride[r], g->mwlen[r],
					g->mwstride1[r]);
		if (g->walk) {
			lp_out_printf(f, "walk %zu", k);
			put_fit(f, m, &g->wstride);
			put_fit(f, m, &g->wlen);
			if (g->walk1)
				put_fit(f, m, &g->wstride1);
			lp_out_write(f, "\n", 1);
		}
		for (size_t r = 0; r < m->nsizes; r++) {
			lp_out_printf(f, "mrefs %zu %zu %.17g\n", k, r, g->mrefs[r]);
			for (size_t b = 0; b < m->nblocks; b++) {
				const struct lp_pred_hist *h = &g->mh[r * m->nblocks + b];
				lp_out_printf(f, "mhist %zu %zu %" PRIu64 " %.17g", k, r, m->blocks[b], h->cold);
				for (size_t i = 0; i < h->n; i++) {
					if (h->e[i].lo == h->e[i].hi)
						lp_out_printf(f, " %.17g:%.17g", h->e[i].lo, h->e[i].count);
					else
						lp_out_printf(f, " %.17g-%.17g:%.17g", h->e[i].lo, h->e[i].hi, h->e[i].count);
				}
				lp_out_write(f, "\n", 1);
			}
		}
		for (size_t b = 0; b < m->nblocks; b++) {
			const struct xbm *bm = &g->bm[b];
			if (!bm->valid)
				continue;
			lp_out_printf(f, "bm %zu %" PRIu64 " acc", k, m->blocks[b]);
			put_fit(f, m, &bm->acc);
			lp_out_printf(f, " cold");
			put_fit(f, m, &bm->cold);
			lp_out_printf(f, " rest");
			put_fit(f, m, &bm->rest);
			lp_out_write(f, "\n", 1);
			for (size_t i = 0; i < bm->nconst; i++) {
				lp_out_printf(f, "bconst %zu %" PRIu64 " %.17g", k, m->blocks[b], bm->cd[i]);
				put_fit(f, m, &bm->ck[i]);
				lp_out_write(f, "\n", 1);
			}
			for (size_t i = 0; i < bm->nbins; i++) {
				lp_out_printf(f, "bbin %zu %" PRIu64, k, m->blocks[b]);
				put_fit(f, m, &bm->cnt[i]);
				put_fit(f, m, &bm->dist[i]);
				lp_out_write(f, "\n", 1);
			}
		}
	}
	lp_out_printf(f, "end\n");
	return lp_out_close(f);
}

static int get_fit(const struct lp_pred_model *m, const char *s, struct lp_pred_fit *x)
{
	char *end;
	unsigned long used = strtoul(s, &end, 16);

	memset(x, 0, sizeof(*x));
	if (*end != ':' || used >= (1ul << m->basis.n))
		return -1;
	x->used = (uint32_t)used;
	for (size_t j = 0; j < m->basis.n; j++) {
		s = end + 1;
		x->coef[j] = strtod(s, &end);
		if (end == s || !isfinite(x->coef[j]) || *end != (j + 1 < m->basis.n ? ',' : 0))
			return -1;
	}
	return 0;
}

static int parse_hist(char **w, int n, struct lp_pred_hist *h)
{
	size_t cap = h->n; /* h->e holds at least its n entries */

	for (int i = 0; i < n; i++) {
		struct lp_pred_hent e;
		char *colon = strchr(w[i], ':'), *dash, *end;
		if (!colon)
			return -1;
		*colon = 0;
		dash = strchr(w[i] + 1, '-');
		if (dash)
			*dash = 0;
		e.lo = strtod(w[i], &end);
		if (*end)
			return -1;
		e.hi = dash ? strtod(dash + 1, &end) : e.lo;
		if (*end)
			return -1;
		e.count = strtod(colon + 1, &end);
		if (*end || !(e.count >= 0) || !(e.hi >= e.lo) || (h->n && e.lo <= h->e[h->n - 1].hi))
			return -1;
		if (LP_ARRAY_RESERVE(h->e, cap, h->n + 1, 16, "histogram entries") < 0)
			return -2;
		h->e[h->n++] = e;
	}
	return 0;
}

#define MW 8192

char *lp_pred_model_path(const char *path)
{
	struct stat st;
	char *p = NULL;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (asprintf(&p, "%s/model.xmodel", path) < 0)
			return NULL;
		return p;
	}
	return strdup(path);
}

/* What one line of a model file gave: read, malformed, out of memory, or
 * a keyword the handler does not know (a negative value is an LP_E* error
 * already set). */
enum { LINE_OK = 0, LINE_BAD = 1, LINE_NOMEM = 2, LINE_OTHER = 3 };

/* The model's header lines, and its loops. */
static int read_head(struct lp_pred_model *m, char **w, int n)
{
	if (!strcmp(w[0], "command") && n == 2) {
		free(m->command);
		return (m->command = strdup(w[1])) ? LINE_OK : LINE_NOMEM;
	} else if (!strcmp(w[0], "basis") && n == 2 && !m->basis.n) {
		return lp_pred_basis_parse(&m->basis, w[1]);
	} else if (!strcmp(w[0], "range") && n == 2) {
		m->range = strtod(w[1], NULL);
	} else if (!strcmp(w[0], "tolerance") && n == 2) {
		m->tolerance = strtod(w[1], NULL);
	} else if (!strcmp(w[0], "depth") && n == 2) {
		m->max_depth = (unsigned)strtoul(w[1], NULL, 10);
	} else if (!strcmp(w[0], "sizes") && n >= 2 && !m->sizes) {
		m->nsizes = (size_t)n - 1;
		if (!(m->sizes = malloc(m->nsizes * sizeof(*m->sizes))))
			return LINE_NOMEM;
		for (size_t r = 0; r < m->nsizes; r++)
			if (!((m->sizes[r] = strtod(w[r + 1], NULL)) > 0))
				return LINE_BAD;
	} else if (!strcmp(w[0], "blocks") && n >= 2 && !m->blocks) {
		m->nblocks = (size_t)n - 1;
		if (!(m->blocks = malloc(m->nblocks * sizeof(*m->blocks))))
			return LINE_NOMEM;
		for (size_t b = 0; b < m->nblocks; b++)
			if (!(m->blocks[b] = strtoull(w[b + 1], NULL, 10)))
				return LINE_BAD;
	} else if (!strcmp(w[0], "total") && m->sizes && (size_t)n == m->nsizes + 1 && !m->total) {
		if (!(m->total = malloc(m->nsizes * sizeof(*m->total))))
			return LINE_NOMEM;
		for (size_t r = 0; r < m->nsizes; r++)
			m->total[r] = strtod(w[r + 1], NULL);
	} else if (!strcmp(w[0], "refs") && n == 2 && m->basis.n) {
		return get_fit(m, w[1], &m->refs) < 0 ? LINE_BAD : LINE_OK;
	} else if (!strcmp(w[0], "loop") && n == 6) {
		struct xmloop *L;
		if (LP_ARRAY_RESERVE(m->loops, m->loops_cap, m->nloops + 1, 16, "loops") < 0)
			return LINE_NOMEM;
		L = &m->loops[m->nloops];
		memset(L, 0, sizeof(*L));
		if (strtoul(w[1], NULL, 10) != m->nloops)
			return LINE_BAD;
		L->parent = atoi(w[2]);
		L->depth = atoi(w[3]);
		if (L->parent < -1)
			return LINE_BAD;
		m->nloops++;
		if (!(L->function = strdup(w[4])) || !(L->where = strdup(w[5])))
			return LINE_NOMEM;
	} else {
		return LINE_OTHER;
	}
	return LINE_OK;
}

/* A new group. */
static int read_group(struct lp_pred_model *m, char **w)
{
	struct xgroup *g;

	if (LP_ARRAY_RESERVE(m->g, m->groups_cap, m->ngroups + 1, 16, "reference groups") < 0)
		return LINE_NOMEM;
	g = &m->g[m->ngroups];
	memset(g, 0, sizeof(*g));
	if (strtoul(w[1], NULL, 10) != m->ngroups)
		return LINE_BAD;
	m->ngroups++;
	g->loop = atoi(w[2]);
	g->npcs = strtoul(w[3], NULL, 10);
	g->bm = calloc(m->nblocks, sizeof(*g->bm));
	g->mrefs = calloc(m->nsizes, sizeof(*g->mrefs));
	g->mh = calloc(m->nsizes * m->nblocks, sizeof(*g->mh));
	g->mwstride = calloc(m->nsizes, sizeof(*g->mwstride));
	g->mwlen = calloc(m->nsizes, sizeof(*g->mwlen));
	g->mwstride1 = calloc(m->nsizes, sizeof(*g->mwstride1));
	if (!g->bm || !g->mrefs || !g->mh || !g->mwstride || !g->mwlen || !g->mwstride1 ||
	    !(g->function = strdup(w[4])) || !(g->where = strdup(w[5])) || !(g->strides = strdup(w[6])))
		return LINE_NOMEM;
	return LINE_OK;
}

/* The group a line is about: the last one read, which w[1] must name. */
static struct xgroup *line_group(const struct lp_pred_model *m, char **w)
{
	return m->ngroups && strtoul(w[1], NULL, 10) == m->ngroups - 1 ? &m->g[m->ngroups - 1] : NULL;
}

/* The lines of a group: references, walks, measured histograms. */
static int read_group_line(struct lp_pred_model *m, char **w, int n)
{
	struct xgroup *g;
	size_t k;

	if (!strcmp(w[0], "group") && n == 7 && m->sizes && m->blocks && m->basis.n)
		return read_group(m, w);
	if (n < 2 || !(g = line_group(m, w)))
		return LINE_OTHER;
	if (!strcmp(w[0], "grefs") && n == 3) {
		return get_fit(m, w[2], &g->refs) < 0 ? LINE_BAD : LINE_OK;
	} else if (!strcmp(w[0], "mwalk") && (n == 5 || n == 6)) {
		if ((k = strtoul(w[2], NULL, 10)) >= m->nsizes)
			return LINE_BAD;
		g->mwstride[k] = strtod(w[3], NULL);
		g->mwlen[k] = strtod(w[4], NULL);
		g->mwstride1[k] = n == 6 ? strtod(w[5], NULL) : -1;
		if (!(g->mwstride[k] > 0) || !(g->mwlen[k] >= 0))
			return LINE_BAD;
	} else if (!strcmp(w[0], "walk") && (n == 4 || n == 5)) {
		if (get_fit(m, w[2], &g->wstride) < 0 || get_fit(m, w[3], &g->wlen) < 0 ||
		    (n == 5 && get_fit(m, w[4], &g->wstride1) < 0))
			return LINE_BAD;
		g->walk = 1;
		g->walk1 = n == 5;
	} else if (!strcmp(w[0], "mrefs") && n == 4) {
		if ((k = strtoul(w[2], NULL, 10)) >= m->nsizes)
			return LINE_BAD;
		g->mrefs[k] = strtod(w[3], NULL);
	} else if (!strcmp(w[0], "mhist") && n >= 5) {
		size_t r = strtoul(w[2], NULL, 10);
		long b = lp_pred_model_block_index(m, strtoull(w[3], NULL, 10));
		struct lp_pred_hist *h;
		int rc;
		if (r >= m->nsizes || b < 0)
			return LINE_BAD;
		h = &g->mh[r * m->nblocks + (size_t)b];
		lp_pred_hist_release(h);
		h->cold = strtod(w[4], NULL);
		if ((rc = parse_hist(w + 5, n - 5, h)) < 0)
			return rc == -2 ? LINE_NOMEM : LINE_BAD;
	} else {
		return LINE_OTHER;
	}
	return LINE_OK;
}

/* The fitted model of a group at a block size: bm, then its constant bins
 * (bconst) and the bins of the rest (bbin). */
static int read_bins_line(struct lp_pred_model *m, char **w, int n)
{
	struct xgroup *g = n >= 3 ? line_group(m, w) : NULL;
	long b = g ? lp_pred_model_block_index(m, strtoull(w[2], NULL, 10)) : -1;
	struct xbm *bm = b >= 0 ? &g->bm[b] : NULL;

	if (!g || (strcmp(w[0], "bm") && strcmp(w[0], "bconst") && strcmp(w[0], "bbin")))
		return LINE_OTHER;
	if (!strcmp(w[0], "bm") && n == 9) {
		if (!bm || strcmp(w[3], "acc") || strcmp(w[5], "cold") || strcmp(w[7], "rest"))
			return LINE_BAD;
		if (get_fit(m, w[4], &bm->acc) < 0 || get_fit(m, w[6], &bm->cold) < 0 ||
		    get_fit(m, w[8], &bm->rest) < 0)
			return LINE_BAD;
		bm->valid = 1;
	} else if (!strcmp(w[0], "bconst") && n == 5) {
		struct lp_pred_fit fit;
		double v = strtod(w[3], NULL);
		if (!bm || get_fit(m, w[4], &fit) < 0 || !(v >= 0) || !bm->valid)
			return LINE_BAD;
		if (LP_ARRAY_RESERVE(bm->cd, bm->cd_cap, bm->nconst + 1, 8, "constant bins") < 0 ||
		    LP_ARRAY_RESERVE(bm->ck, bm->ck_cap, bm->nconst + 1, 8, "constant bins") < 0)
			return LINE_NOMEM;
		bm->cd[bm->nconst] = v;
		bm->ck[bm->nconst++] = fit;
	} else if (!strcmp(w[0], "bbin") && n == 5) {
		struct lp_pred_fit cf, df;
		if (!bm || get_fit(m, w[3], &cf) < 0 || get_fit(m, w[4], &df) < 0 || !bm->valid)
			return LINE_BAD;
		if (LP_ARRAY_RESERVE(bm->cnt, bm->cnt_cap, bm->nbins + 1, 8, "distance bins") < 0 ||
		    LP_ARRAY_RESERVE(bm->dist, bm->dist_cap, bm->nbins + 1, 8, "distance bins") < 0)
			return LINE_NOMEM;
		bm->cnt[bm->nbins] = cf;
		bm->dist[bm->nbins++] = df;
	} else {
		return LINE_BAD;
	}
	return LINE_OK;
}

/* After the last line: everything needed was there, and the loops and
 * groups refer to loops that exist. */
static int read_check(const struct lp_pred_model *m, int ended, const char *path, size_t lineno)
{
	if (!ended || !m->sizes || !m->blocks || !m->basis.n || !m->total)
		return lp_seterr(LP_ETRUNCATED, "'%s': the model file ends early (line %zu)", path, lineno);
	for (size_t l = 0; l < m->nloops; l++)
		if (m->loops[l].parent >= (int)m->nloops)
			return lp_seterr(LP_ECORRUPT, "'%s' line %zu: malformed", path, lineno);
	for (size_t k = 0; k < m->ngroups; k++)
		if (m->g[k].loop >= (int)m->nloops)
			return lp_seterr(LP_ECORRUPT, "'%s' line %zu: malformed", path, lineno);
	return 0;
}

int lp_pred_model_read(struct lp_pred_model **out, const char *path)
{
	struct lp_in *in = NULL;
	struct lp_pred_model *m;
	char *line, **w = malloc(MW * sizeof(*w));
	size_t lineno = 0;
	int rc, ended = 0;

	*out = NULL;
	if (!w || !(m = calloc(1, sizeof(*m)))) {
		free(w);
		return lp_seterr(LP_ENOMEM, "out of memory");
	}
	if ((rc = lp_in_open(&in, path)) < 0)
		goto fail;
	while ((rc = lp_pred_getline(in, &lineno, &line, "model", "prediction model", path)) > 0) {
		int n;
		n = lp_pred_word_split(line, w, MW);
		if (!n || w[0][0] == '#')
			continue;
		if (n == MW) {
			rc = LINE_BAD;
		} else if (!strcmp(w[0], "end") && n == 1) {
			ended = 1;
			break;
		} else if ((rc = read_head(m, w, n)) == LINE_OTHER &&
			   (rc = read_group_line(m, w, n)) == LINE_OTHER) {
			rc = read_bins_line(m, w, n);
		}
		if (rc == LINE_NOMEM)
			rc = lp_seterr(LP_ENOMEM, "out of memory");
		else if (rc == LINE_BAD || rc == LINE_OTHER)
			rc = lp_seterr(LP_ECORRUPT, "'%s' line %zu: malformed", path, lineno);
		if (rc < 0)
			goto fail;
	}
	if (rc < 0 || (rc = read_check(m, ended, path, lineno)) < 0 ||
	    (rc = lp_pred_model_calibrate(m, LP_PRED_PLACE_DEFAULT, 0)) < 0)
		goto fail;
	lp_in_free(in);
	free(w);
	*out = m;
	return 0;
fail:
	lp_in_free(in);
	free(w);
	lp_pred_model_free(m);
	return rc;
}
