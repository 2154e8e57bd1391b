/* Internal: the byte-level encoding of .lpp profiles (docs/formats.md).
 *
 * No allocation and no I/O: the reader and the writer (profile.c) and the
 * collector's sinks share this code, so the encodings cannot drift apart.
 *
 * A chunk is a 12-byte header (tag, payload length, CRC-32 of tag, length
 * and payload) followed by the payload. Integers are little-endian. */
#ifndef LP_SAMPLE_PROFILE_CHUNK_H
#define LP_SAMPLE_PROFILE_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#include <locprof/profile.h>

#define LP_LPP_MAGIC "LOCPROFP"
#define LP_LPP_FILE_HEADER_SIZE 16u
#define LP_CHUNK_HEADER_SIZE 12u
/* Longest payload a reader accepts: a bit flip in a length field must not
 * make it allocate gigabytes. Writers split sample chunks well below this. */
#define LP_CHUNK_MAX_PAYLOAD (64u << 20)
/* SMPL chunks: u32 count, count records of LP_SAMPLE_RECORD_SIZE bytes;
 * from version 4 each is followed by the u64 reuse address
 * (LP_SAMPLE_RECORD_SIZE_V4 in all). */
#define LP_SAMPLE_RECORD_SIZE 48u
#define LP_SAMPLE_REUSE_ADDR_SIZE 8u
#define LP_SAMPLE_RECORD_SIZE_V4 (LP_SAMPLE_RECORD_SIZE + LP_SAMPLE_REUSE_ADDR_SIZE)
/* SMPX chunks (version 3, profiles with shared time): u32 record size
 * (at least an SMPL record and the shared-time fields; a reader skips the
 * bytes of a longer record, which a later version may write), u32 count,
 * count records: an SMPL record (with its reuse address from version 4),
 * then the shared-time fields (LP_SAMPLE_X_FIELDS bytes), then the thread
 * masks (lp_sample.touched, writers: LP_SAMPLE_XM_FIELDS bytes) where the
 * record is long enough. */
#define LP_SAMPLE_X_FIELDS 40u
#define LP_SAMPLE_XM_FIELDS 16u
/* ALOC chunks: u32 chunk version, u32 count, count records. */
#define LP_ALLOC_CHUNK_VERSION 1u
#define LP_ALLOC_RECORD_SIZE 40u
#define LP_ALLOCS_PER_CHUNK 50000u
/* ASTK: u32 chunk version, u32 id of its first stack, u32 count, then per
 * stack u32 n and n u64 frames. */
#define LP_STACK_CHUNK_VERSION 1u
#define LP_STACKS_PER_CHUNK 20000u
/* TLSB: u32 chunk version, u32 count, then per segment u64 start, u64
 * size, u64 image, u32 thread, u32 0. */
#define LP_TLS_CHUNK_VERSION 1u
/* ALSM: u32 chunk version, u32 flags, u64 allocations, u64 frees, u64 bytes. */
#define LP_ALLOC_SUMMARY_VERSION 1u
/* REGN: u32 version, str region, u64 skipped, u64 entries */
#define LP_REGION_VERSION 1u
/* PHAS: u32 section version, u32 n line sizes, u64 references per
 * interval asked, u32 count, then count records of 24 + 16 n bytes. */
#define LP_PHASE_CHUNK_VERSION 1u
#define LP_PHASES_PER_CHUNK 20000u
/* RANK: u32 chunk version, u32 rank, u32 world size (0: unknown); written
 * only for an MPI rank (readers without it skip the chunk as any unknown
 * one). */
#define LP_RANK_CHUNK_VERSION 1u
/* Samples per chunk the library writer uses (1.9 MB chunks). */
#define LP_SAMPLES_PER_CHUNK 40000u

#define LP_TAG(a, b, c, d) \
	((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
enum {
	LP_CHUNK_META = LP_TAG('M', 'E', 'T', 'A'),
	LP_CHUNK_SAMPLES = LP_TAG('S', 'M', 'P', 'L'),
	LP_CHUNK_SAMPLES_X = LP_TAG('S', 'M', 'P', 'X'),
	LP_CHUNK_COUNTS = LP_TAG('C', 'N', 'T', 'S'),
	LP_CHUNK_WINDOWS = LP_TAG('W', 'N', 'D', 'W'),
	LP_CHUNK_MAPPINGS = LP_TAG('M', 'A', 'P', 'S'),
	LP_CHUNK_ALLOCS = LP_TAG('A', 'L', 'O', 'C'),
	LP_CHUNK_ALLOC_SUMMARY = LP_TAG('A', 'L', 'S', 'M'),
	LP_CHUNK_ALLOC_STACKS = LP_TAG('A', 'S', 'T', 'K'),
	LP_CHUNK_TLS = LP_TAG('T', 'L', 'S', 'B'),
	LP_CHUNK_REGION = LP_TAG('R', 'E', 'G', 'N'),
	LP_CHUNK_PHASES = LP_TAG('P', 'H', 'A', 'S'),
	LP_CHUNK_RANK = LP_TAG('R', 'A', 'N', 'K'),
	LP_CHUNK_END = LP_TAG('E', 'N', 'D', ' '),
};

/* CRC-32 (IEEE 802.3, the zlib one); start with crc = 0. */
uint32_t lp_crc32(uint32_t crc, const void *p, size_t n);

static inline void lp_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void lp_put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t lp_get_u32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static inline uint64_t lp_get_u64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The 16-byte file header: magic, version, flags (0). */
void lp_lpp_file_header(uint8_t out[LP_LPP_FILE_HEADER_SIZE], uint32_t version);

/* chunk points at LP_CHUNK_HEADER_SIZE bytes of room followed by a payload
 * of len bytes already in place; fill in the header. The chunk is then
 * LP_CHUNK_HEADER_SIZE + len bytes long, ready to write(). */
void lp_chunk_seal(uint8_t *chunk, uint32_t tag, uint32_t len);

/* Check a chunk header and its payload; 0 when intact. */
int lp_chunk_check(const uint8_t *header, const uint8_t *payload);

void lp_sample_encode(uint8_t out[LP_SAMPLE_RECORD_SIZE], const struct lp_sample *s);
void lp_sample_decode(struct lp_sample *s, const uint8_t in[LP_SAMPLE_RECORD_SIZE]);
/* The shared-time fields after the first LP_SAMPLE_RECORD_SIZE bytes of an
 * SMPX record (40 bytes). */
void lp_sample_x_encode(uint8_t *out, const struct lp_sample *s);
void lp_sample_x_decode(struct lp_sample *s, const uint8_t *in);
/* The masks, after the shared-time fields (the record's byte 88). */
void lp_sample_xm_encode(uint8_t *out, const struct lp_sample *s);
void lp_sample_xm_decode(struct lp_sample *s, const uint8_t *in);

void lp_alloc_encode(uint8_t out[LP_ALLOC_RECORD_SIZE], const struct lp_alloc_event *e);
void lp_alloc_decode(struct lp_alloc_event *e, const uint8_t in[LP_ALLOC_RECORD_SIZE]);

#endif
