/* The byte-level encoding of .lpp chunks (see profile-chunk.h). */
#include "sample/profile-chunk.h"

#include <zlib.h>

/* zlib's CRC-32 is the format's (docs/formats.md) and runs at several GB/s
 * (braided, word at a time); a byte-at-a-time loop here took 10% of all CPU
 * of a valgrind-backend run whose profile is mostly allocation records. */
uint32_t lp_crc32(uint32_t crc, const void *p, size_t n)
{
	return (uint32_t)crc32_z(crc, p, n);
}

void lp_lpp_file_header(uint8_t out[LP_LPP_FILE_HEADER_SIZE], uint32_t version)
{
	static const char magic[8] = LP_LPP_MAGIC;

	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)magic[i];
	lp_put_u32(out + 8, version);
	lp_put_u32(out + 12, 0);
}

void lp_chunk_seal(uint8_t *chunk, uint32_t tag, uint32_t len)
{
	uint32_t crc;

	lp_put_u32(chunk, tag);
	lp_put_u32(chunk + 4, len);
	crc = lp_crc32(0, chunk, 8);
	crc = lp_crc32(crc, chunk + LP_CHUNK_HEADER_SIZE, len);
	lp_put_u32(chunk + 8, crc);
}

int lp_chunk_check(const uint8_t *header, const uint8_t *payload)
{
	uint32_t crc = lp_crc32(0, header, 8);

	crc = lp_crc32(crc, payload, lp_get_u32(header + 4));
	return crc == lp_get_u32(header + 8) ? 0 : -1;
}

void lp_sample_encode(uint8_t out[LP_SAMPLE_RECORD_SIZE], const struct lp_sample *s)
{
	lp_put_u64(out, s->time);
	lp_put_u64(out + 8, s->pc);
	lp_put_u64(out + 16, s->addr);
	lp_put_u64(out + 24, s->reuse);
	lp_put_u64(out + 32, s->reuse_pc);
	lp_put_u32(out + 40, s->tid);
	out[44] = s->kind;
	out[45] = s->line_idx;
	out[46] = s->part;
	out[47] = s->coh; /* 0 in SMPL chunks: coherence comes with shared time */
}

void lp_sample_decode(struct lp_sample *s, const uint8_t in[LP_SAMPLE_RECORD_SIZE])
{
	s->time = lp_get_u64(in);
	s->pc = lp_get_u64(in + 8);
	s->addr = lp_get_u64(in + 16);
	s->reuse = lp_get_u64(in + 24);
	s->reuse_pc = lp_get_u64(in + 32);
	s->tid = lp_get_u32(in + 40);
	s->kind = in[44];
	s->line_idx = in[45];
	s->part = in[46]; /* 0 (unknown) in version 1, where the byte is zero */
	s->coh = in[47];  /* 0 before version 3 */
}

void lp_sample_x_encode(uint8_t *out, const struct lp_sample *s)
{
	lp_put_u64(out, s->stime);
	lp_put_u64(out + 8, s->sreuse);
	lp_put_u64(out + 16, s->sown);
	lp_put_u64(out + 24, s->wpc);
	lp_put_u32(out + 32, s->stid);
	lp_put_u32(out + 36, s->wtid);
}

void lp_sample_x_decode(struct lp_sample *s, const uint8_t *in)
{
	s->stime = lp_get_u64(in);
	s->sreuse = lp_get_u64(in + 8);
	s->sown = lp_get_u64(in + 16);
	s->wpc = lp_get_u64(in + 24);
	s->stid = lp_get_u32(in + 32);
	s->wtid = lp_get_u32(in + 36);
}

void lp_sample_xm_encode(uint8_t *out, const struct lp_sample *s)
{
	lp_put_u64(out, s->touched);
	lp_put_u64(out + 8, s->writers);
}

void lp_sample_xm_decode(struct lp_sample *s, const uint8_t *in)
{
	s->touched = lp_get_u64(in);
	s->writers = lp_get_u64(in + 8);
}

void lp_alloc_encode(uint8_t out[LP_ALLOC_RECORD_SIZE], const struct lp_alloc_event *e)
{
	lp_put_u64(out, e->time);
	lp_put_u64(out + 8, e->addr);
	lp_put_u64(out + 16, e->size);
	lp_put_u64(out + 24, e->pc);
	lp_put_u32(out + 32, e->tid);
	out[36] = e->kind;
	/* the stack id in the bytes that readers before stacks ignore */
	out[37] = (uint8_t)e->stack;
	out[38] = (uint8_t)(e->stack >> 8);
	out[39] = (uint8_t)(e->stack >> 16);
}

void lp_alloc_decode(struct lp_alloc_event *e, const uint8_t in[LP_ALLOC_RECORD_SIZE])
{
	e->time = lp_get_u64(in);
	e->addr = lp_get_u64(in + 8);
	e->size = lp_get_u64(in + 16);
	e->pc = lp_get_u64(in + 24);
	e->tid = lp_get_u32(in + 32);
	e->kind = in[36];
	e->stack = (uint32_t)in[37] | (uint32_t)in[38] << 8 | (uint32_t)in[39] << 16;
}
