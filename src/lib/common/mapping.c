/* The list of executable mappings carried by traces and profiles. */
#include <locprof/mapping.h>
#include "common/array.h"

#include <stdlib.h>
#include <string.h>

int lp_mappings_add(struct lp_mappings *m, uint64_t start, uint64_t end, uint64_t file_offset,
		    const char *path, const uint8_t *build_id, size_t build_id_len)
{
	struct lp_mapping *mp;

	if (build_id_len > LP_BUILD_ID_MAX || end < start)
		return LP_EINVAL;
	if (LP_ARRAY_RESERVE(m->v, m->cap, m->n + 1, 8, "mappings") < 0)
		return LP_ENOMEM;
	mp = &m->v[m->n];
	memset(mp, 0, sizeof(*mp));
	if (!(mp->path = strdup(path ? path : "")))
		return LP_ENOMEM;
	mp->start = start;
	mp->end = end;
	mp->file_offset = file_offset;
	if (build_id && build_id_len)
		memcpy(mp->build_id, build_id, build_id_len);
	mp->build_id_len = (uint8_t)build_id_len;
	m->n++;
	return 0;
}

const struct lp_mapping *lp_mappings_find(const struct lp_mappings *m, uint64_t addr)
{
	for (size_t i = 0; i < m->n; i++)
		if (addr >= m->v[i].start && addr < m->v[i].end)
			return &m->v[i];
	return NULL;
}

void lp_mappings_release(struct lp_mappings *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	memset(m, 0, sizeof(*m));
}
