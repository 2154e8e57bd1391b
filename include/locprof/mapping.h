/* locprof/mapping.h - the executable mappings of a traced process.
 *
 * Traces and profiles carry the mappings (path, build-id, address range,
 * file offset) of the code that issued their references, so that pcs can be
 * symbolised later, on another machine if the same binaries are there. */
#ifndef LOCPROF_MAPPING_H
#define LOCPROF_MAPPING_H

#include <locprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LP_BUILD_ID_MAX 32

struct lp_mapping {
	uint64_t start, end;  /* [start, end) in the process */
	uint64_t file_offset; /* offset in the file mapped at start */
	char *path;           /* owned */
	uint8_t build_id[LP_BUILD_ID_MAX];
	uint8_t build_id_len; /* 0 when unknown */
};

struct lp_mappings {
	struct lp_mapping *v;
	size_t n, cap;
};

/* Append a copy (path is duplicated). build_id may be NULL. */
int lp_mappings_add(struct lp_mappings *m, uint64_t start, uint64_t end, uint64_t file_offset,
		    const char *path, const uint8_t *build_id, size_t build_id_len);

/* The mapping containing addr, or NULL. Linear in the number of mappings
 * (tens); callers that look up millions of pcs cache the answer. */
const struct lp_mapping *lp_mappings_find(const struct lp_mappings *m, uint64_t addr);

/* Free the contents; m itself is embedded in the caller. */
void lp_mappings_release(struct lp_mappings *m);

#ifdef __cplusplus
}
#endif
#endif
