/* Model files (docs/formats.md): written through lp_out, read back with
 * every line checked. */
#include "prediction/prediction-model.h"

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
		struct lp_pred_hent *ne = realloc(h->e, (h->n + 1) * sizeof(*ne));
		if (!ne)
			return -2;
		h->e = ne;
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
	while ((rc = (int)lp_in_getline(in, &line)) > 0) {
		int n;
		size_t k;
		lineno++;
		if (lineno == 1) {
			if (strcmp(line, "# locprof xpred model v1")) {
				rc = lp_seterr(!strncmp(line, "# locprof xpred model v", 23) ? LP_EVERSION : LP_EFORMAT,
					       "'%s' is not a locprof prediction model (v1)", path);
				goto fail;
			}
			continue;
		}
		n = lp_pred_word_split(line, w, MW);
		if (!n || w[0][0] == '#')
			continue;
		if (n == MW)
			goto bad;
		if (!strcmp(w[0], "command") && n == 2) {
			free(m->command);
			if (!(m->command = strdup(w[1])))
				goto nomem;
		} else if (!strcmp(w[0], "basis") && n == 2 && !m->basis.n) {
			if ((rc = lp_pred_basis_parse(&m->basis, w[1])) < 0)
				goto fail;
		} else if (!strcmp(w[0], "range") && n == 2) {
			m->range = strtod(w[1], NULL);
		} else if (!strcmp(w[0], "tolerance") && n == 2) {
			m->tolerance = strtod(w[1], NULL);
		} else if (!strcmp(w[0], "depth") && n == 2) {
			m->max_depth = (unsigned)strtoul(w[1], NULL, 10);
		} else if (!strcmp(w[0], "sizes") && n >= 2 && !m->sizes) {
			m->nsizes = (size_t)n - 1;
			if (!(m->sizes = malloc(m->nsizes * sizeof(*m->sizes))))
				goto nomem;
			for (size_t r = 0; r < m->nsizes; r++)
				if (!((m->sizes[r] = strtod(w[r + 1], NULL)) > 0))
					goto bad;
		} else if (!strcmp(w[0], "blocks") && n >= 2 && !m->blocks) {
			m->nblocks = (size_t)n - 1;
			if (!(m->blocks = malloc(m->nblocks * sizeof(*m->blocks))))
				goto nomem;
			for (size_t b = 0; b < m->nblocks; b++)
				if (!(m->blocks[b] = strtoull(w[b + 1], NULL, 10)))
					goto bad;
		} else if (!strcmp(w[0], "total") && m->sizes && (size_t)n == m->nsizes + 1 && !m->total) {
			if (!(m->total = malloc(m->nsizes * sizeof(*m->total))))
				goto nomem;
			for (size_t r = 0; r < m->nsizes; r++)
				m->total[r] = strtod(w[r + 1], NULL);
		} else if (!strcmp(w[0], "refs") && n == 2 && m->basis.n) {
			if (get_fit(m, w[1], &m->refs) < 0)
				goto bad;
		} else if (!strcmp(w[0], "loop") && n == 6) {
			struct xmloop *nl = realloc(m->loops, (m->nloops + 1) * sizeof(*nl)), *L;
			if (!nl)
				goto nomem;
			m->loops = nl;
			L = &m->loops[m->nloops];
			memset(L, 0, sizeof(*L));
			if (strtoul(w[1], NULL, 10) != m->nloops)
				goto bad;
			L->parent = atoi(w[2]);
			L->depth = atoi(w[3]);
			if (L->parent < -1)
				goto bad;
			m->nloops++;
			if (!(L->function = strdup(w[4])) || !(L->where = strdup(w[5])))
				goto nomem;
		} else if (!strcmp(w[0], "group") && n == 7 && m->sizes && m->blocks && m->basis.n) {
			struct xgroup *ng = realloc(m->g, (m->ngroups + 1) * sizeof(*ng)), *g;
			if (!ng)
				goto nomem;
			m->g = ng;
			g = &m->g[m->ngroups];
			memset(g, 0, sizeof(*g));
			if (strtoul(w[1], NULL, 10) != m->ngroups)
				goto bad;
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
			    !(g->function = strdup(w[4])) ||
			    !(g->where = strdup(w[5])) || !(g->strides = strdup(w[6])))
				goto nomem;
		} else if (!strcmp(w[0], "grefs") && n == 3 && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			if (get_fit(m, w[2], &m->g[m->ngroups - 1].refs) < 0)
				goto bad;
		} else if (!strcmp(w[0], "mwalk") && (n == 5 || n == 6) && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			struct xgroup *g = &m->g[m->ngroups - 1];
			k = strtoul(w[2], NULL, 10);
			if (k >= m->nsizes)
				goto bad;
			g->mwstride[k] = strtod(w[3], NULL);
			g->mwlen[k] = strtod(w[4], NULL);
			g->mwstride1[k] = n == 6 ? strtod(w[5], NULL) : -1;
			if (!(g->mwstride[k] > 0) || !(g->mwlen[k] >= 0))
				goto bad;
		} else if (!strcmp(w[0], "walk") && (n == 4 || n == 5) && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			struct xgroup *g = &m->g[m->ngroups - 1];
			if (get_fit(m, w[2], &g->wstride) < 0 || get_fit(m, w[3], &g->wlen) < 0 ||
			    (n == 5 && get_fit(m, w[4], &g->wstride1) < 0))
				goto bad;
			g->walk = 1;
			g->walk1 = n == 5;
		} else if (!strcmp(w[0], "mrefs") && n == 4 && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			k = strtoul(w[2], NULL, 10);
			if (k >= m->nsizes)
				goto bad;
			m->g[m->ngroups - 1].mrefs[k] = strtod(w[3], NULL);
		} else if (!strcmp(w[0], "mhist") && n >= 5 && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			size_t r = strtoul(w[2], NULL, 10);
			long b = lp_pred_model_block_index(m, strtoull(w[3], NULL, 10));
			struct lp_pred_hist *h;
			if (r >= m->nsizes || b < 0)
				goto bad;
			h = &m->g[m->ngroups - 1].mh[r * m->nblocks + (size_t)b];
			lp_pred_hist_release(h);
			h->cold = strtod(w[4], NULL);
			if ((rc = parse_hist(w + 5, n - 5, h)) < 0) {
				if (rc == -2)
					goto nomem;
				goto bad;
			}
		} else if (!strcmp(w[0], "bm") && n == 9 && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			long b = lp_pred_model_block_index(m, strtoull(w[2], NULL, 10));
			struct xbm *bm;
			if (b < 0 || strcmp(w[3], "acc") || strcmp(w[5], "cold") || strcmp(w[7], "rest"))
				goto bad;
			bm = &m->g[m->ngroups - 1].bm[b];
			if (get_fit(m, w[4], &bm->acc) < 0 || get_fit(m, w[6], &bm->cold) < 0 ||
			    get_fit(m, w[8], &bm->rest) < 0)
				goto bad;
			bm->valid = 1;
		} else if (!strcmp(w[0], "bconst") && n == 5 && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			long b = lp_pred_model_block_index(m, strtoull(w[2], NULL, 10));
			struct xbm *bm;
			struct lp_pred_fit fit;
			double v = strtod(w[3], NULL);
			if (b < 0 || get_fit(m, w[4], &fit) < 0 || !(v >= 0))
				goto bad;
			bm = &m->g[m->ngroups - 1].bm[b];
			if (!bm->valid)
				goto bad;
			double *a = realloc(bm->cd, (bm->nconst + 1) * sizeof(*a));
			if (a)
				bm->cd = a;
			struct lp_pred_fit *c = a ? realloc(bm->ck, (bm->nconst + 1) * sizeof(*c)) : NULL;
			if (!c)
				goto nomem;
			bm->ck = c;
			bm->cd[bm->nconst] = v;
			bm->ck[bm->nconst++] = fit;
		} else if (!strcmp(w[0], "bbin") && n == 5 && m->ngroups &&
			   strtoul(w[1], NULL, 10) == m->ngroups - 1) {
			long b = lp_pred_model_block_index(m, strtoull(w[2], NULL, 10));
			struct xbm *bm;
			struct lp_pred_fit cf, df;
			if (b < 0 || get_fit(m, w[3], &cf) < 0 || get_fit(m, w[4], &df) < 0)
				goto bad;
			bm = &m->g[m->ngroups - 1].bm[b];
			if (!bm->valid)
				goto bad;
			struct lp_pred_fit *a = realloc(bm->cnt, (bm->nbins + 1) * sizeof(*a));
			if (a)
				bm->cnt = a;
			struct lp_pred_fit *c = a ? realloc(bm->dist, (bm->nbins + 1) * sizeof(*c)) : NULL;
			if (!c)
				goto nomem;
			bm->dist = c;
			bm->cnt[bm->nbins] = cf;
			bm->dist[bm->nbins++] = df;
		} else if (!strcmp(w[0], "end") && n == 1) {
			ended = 1;
			break;
		} else {
			goto bad;
		}
	}
	if (rc < 0)
		goto fail;
	if (!ended || !m->sizes || !m->blocks || !m->basis.n || !m->total) {
		rc = lp_seterr(LP_ETRUNCATED, "'%s': the model file ends early (line %zu)", path, lineno);
		goto fail;
	}
	for (size_t l = 0; l < m->nloops; l++)
		if (m->loops[l].parent >= (int)m->nloops)
			goto bad;
	for (size_t k = 0; k < m->ngroups; k++)
		if (m->g[k].loop >= (int)m->nloops)
			goto bad;
	if ((rc = lp_pred_model_calibrate(m, LP_PRED_PLACE_DEFAULT, 0)) < 0)
		goto fail;
	lp_in_free(in);
	free(w);
	*out = m;
	return 0;
nomem:
	rc = lp_seterr(LP_ENOMEM, "out of memory");
	goto fail;
bad:
	rc = lp_seterr(LP_ECORRUPT, "'%s' line %zu: malformed", path, lineno);
fail:
	lp_in_free(in);
	free(w);
	lp_pred_model_free(m);
	return rc;
}
