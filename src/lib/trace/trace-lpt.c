/* The lpt trace format: locprof's own compressed binary traces.
 *
 * A 16-byte file header (magic, version), then blocks, each a 32-byte
 * header followed by one zstd frame. Record blocks hold up to
 * LPT_BLOCK_RECORDS delta-encoded references; a mappings block may come
 * first; an end block closes the trace, so that a file cut short at a block
 * boundary is still recognised as truncated. Byte-level specification:
 * docs/formats.md. Everything is little-endian.
 *
 * Why blocks of 64K records: zstd needs some tens of kilobytes of input to
 * reach its ratio (measured on uniform random traces: 16K-record blocks
 * were 4% larger than 64K, 256K saved under 1%), the per-block overhead
 * (32 + ~12 bytes) is then below 0.001 byte/record, the decoded payload
 * (typically 100-600 KB) stays in L2/L3 while it is decoded, and damage
 * loses at most 64K records. Each block is decoded from a fresh delta
 * state, so a block stands alone.
 *
 * Damage: every header carries a checksum of itself and the index of its
 * first record; every payload carries zstd's XXH64 of its content and its
 * exact size. Truncation (end of input anywhere before the end block) is
 * LP_ETRUNCATED, anything inconsistent is LP_ECORRUPT; in both cases the
 * complete blocks before have been delivered. The decoder reads a payload
 * padded with zeros so that a varint can never run past the buffer. */
#include "trace/trace-format.h"
#include "common/error.h"
#include "common/io.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* Version 2 added frame records (EXTRA_FRAME); version 1 files, which
 * have none, are read as ever. */
#define LPT_VERSION 2
#define LPT_VERSION_MIN 1
#define LPT_FILE_HEADER 16
#define LPT_BLOCK_HEADER 32
#define LPT_BLOCK_RECORDS 65536u
/* Readers accept blocks up to this many records (a later writer may use
 * bigger blocks), and refuse more as corrupt rather than allocate wildly. */
#define LPT_MAX_BLOCK_RECORDS (1u << 20)
/* tag + 8-byte address delta + pc varint (10) + extra flags + tid
 * varint (5) + size varint (10). */
#define LPT_MAX_RECORD_BYTES 35u
/* Zeros after every decoded payload: more than one record can read. */
#define LPT_PAD 64u
#define LPT_MAX_MAPPINGS_BYTES (64u << 20)
#define LPT_ZSTD_LEVEL 1

static const uint8_t lpt_magic[8] = { 0x89, 'L', 'P', 'T', '\r', '\n', 0x1a, '\n' };

enum { BLK_RECORDS = 'R', BLK_MAPPINGS = 'M', BLK_END = 'E' };

/* A record payload is three streams, so that the decoder never chases a
 * pointer through variable-length fields:
 *     u32 addr_bytes | tags[count] | address deltas[addr_bytes] | extras
 * Each record has one tag byte: */
#define TAG_KIND 0x03u    /* enum lp_ref_kind */
#define TAG_SIZE(t) (((t) >> 2) & 3u) /* size 1, 2, 4, 8 (unless an extra size) */
#define TAG_STEP(t) (((t) >> 4) & 3u) /* address delta: see step_width[] */
#define TAG_PC 0x40u      /* pc changed: zigzag varint of its delta in extras */
#define TAG_EXTRA 0x80u   /* a flags byte (EXTRA_*) and its fields in extras */
#define EXTRA_TID 0x01u   /* varint thread id follows */
#define EXTRA_SIZE 0x02u  /* varint size follows, replacing the size code */
/* Version 2: the record is an allocation's call-stack frame (LP_EV_FRAME):
 * only its pc (and thread) are stored; kind, size code and address delta
 * bits are 0, and the address state is left as it was, so the references
 * around an allocation's frames still share their deltas. */
#define EXTRA_FRAME 0x04u
/* The address delta (zigzag, little-endian) takes 0 bytes when it equals
 * the previous delta (sweeps, strides), else 2, 4 or 8. Its width depends
 * on the tag alone, so the decoder finds every field with an addition:
 * a varint stream made each record wait for the previous one's length
 * (about 17 cycles) and decoded 100M refs/s on uniform random traces. */
static const unsigned step_width[4] = { 0, 2, 4, 8 };
static const uint64_t step_mask[4] = { 0, 0xffff, 0xffffffffULL, ~0ULL };

struct blk_header {
	uint8_t type;
	uint32_t count, csize, rsize;
	uint64_t first;
};

static inline void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* FNV-1a: a header is 28 bytes, so speed does not matter, and this is
 * easy to restate in the format documentation. */
static uint32_t header_sum(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static inline uint64_t zigzag(uint64_t delta)
{
	return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the lpt decoder loads varints as little-endian words"
#endif

/* At most 10 bytes; the zero padding after a payload ends any run of
 * continuation bytes, so this never reads past payload + LPT_PAD.
 *
 * Varints of up to 8 bytes are decoded without a data-dependent branch:
 * one unaligned load, the length from the first clear stop bit, then the
 * 7-bit groups squeezed together in three SWAR steps, because pc deltas
 * of mixed lengths made a byte loop mispredict. */
static inline const uint8_t *get_varint(const uint8_t *p, uint64_t *v)
{
	uint64_t x, stops;
	unsigned len;

	memcpy(&x, p, 8);
	stops = ~x & 0x8080808080808080ULL;
	if (__builtin_expect(stops == 0, 0)) {
		uint64_t b;
		x &= 0x7f7f7f7f7f7f7f7fULL;
		x = ((x & 0x7f007f007f007f00ULL) >> 1) | (x & 0x007f007f007f007fULL);
		x = ((x & 0x3fff00003fff0000ULL) >> 2) | (x & 0x00003fff00003fffULL);
		x = ((x & 0x0fffffff00000000ULL) >> 4) | (x & 0x000000000fffffffULL);
		p += 8;
		b = *p++;
		x |= (b & 0x7f) << 56;
		if (b & 0x80)
			x |= (uint64_t)(*p++ & 0x7f) << 63;
		*v = x;
		return p;
	}
	len = ((unsigned)__builtin_ctzll(stops) >> 3) + 1;
	x &= ~0ULL >> (64 - 8 * len);
	x &= 0x7f7f7f7f7f7f7f7fULL;
	x = ((x & 0x7f007f007f007f00ULL) >> 1) | (x & 0x007f007f007f007fULL);
	x = ((x & 0x3fff00003fff0000ULL) >> 2) | (x & 0x00003fff00003fffULL);
	x = ((x & 0x0fffffff00000000ULL) >> 4) | (x & 0x000000000fffffffULL);
	*v = x;
	return p + len;
}

static const uint64_t size_of_code[4] = { 1, 2, 4, 8 };

/* Code of a size, or -1 when it needs an extra field. */
static inline int size_code(uint64_t size)
{
	switch (size) {
	case 1: return 0;
	case 2: return 1;
	case 4: return 2;
	case 8: return 3;
	default: return -1;
	}
}

/* The delta state, reset at every block. */
struct delta {
	uint64_t addr, pc, step;
	uint32_t tid;
};

/* ---- reading ---------------------------------------------------------- */

struct lpt_reader {
	struct lp_in *in;
	ZSTD_DCtx *dctx;
	uint8_t *raw;
	size_t rcap;
	const uint8_t *tags;    /* next tag */
	const uint8_t *a, *aend; /* address deltas */
	const uint8_t *e, *end;  /* extras; end of the payload */
	uint32_t left;          /* records left in the current block */
	struct delta d;
	uint64_t blocks;        /* record blocks loaded */
	uint64_t records;       /* records in the blocks loaded */
	uint64_t delivered;
	unsigned extra_flags;   /* the EXTRA_* bits its version has */
	struct lp_mappings maps;
	int pending_err;
	bool done;
};

static int truncated(struct lpt_reader *t, const char *where)
{
	return lp_seterr(LP_ETRUNCATED, "'%s': trace truncated %s (%llu complete blocks, "
			 "%llu records read)", lp_in_name(t->in), where,
			 (unsigned long long)t->blocks, (unsigned long long)t->delivered);
}

static int corrupt(struct lpt_reader *t, const char *what)
{
	return lp_seterr(LP_ECORRUPT, "'%s': corrupt block after %llu complete blocks "
			 "(%llu records read): %s", lp_in_name(t->in),
			 (unsigned long long)t->blocks, (unsigned long long)t->delivered, what);
}

static bool lpt_sniff(const uint8_t *head, size_t len)
{
	return len >= sizeof(lpt_magic) && !memcmp(head, lpt_magic, sizeof(lpt_magic));
}

static int grow(uint8_t **buf, size_t *cap, size_t want)
{
	uint8_t *nb;

	if (*cap >= want)
		return 0;
	if (!(nb = realloc(*buf, want)))
		return lp_seterr(LP_ENOMEM, "out of memory for a trace block of %zu bytes", want);
	*buf = nb;
	*cap = want;
	return 0;
}

/* Decompress the payload into t->raw (padded) straight from the input
 * buffer: copying it out first was 5-7% of the decoding time (perf, bench
 * trace-throughput, uniform). */
static int load_payload(struct lpt_reader *t, const struct blk_header *h)
{
	unsigned long long fcs;
	const uint8_t *src;
	size_t got;
	ssize_t n;
	int err;

	if ((err = grow(&t->raw, &t->rcap, (size_t)h->rsize + LPT_PAD)) < 0)
		return err;
	n = lp_in_peek(t->in, &src, h->csize);
	if (n < 0)
		return (int)n;
	if ((size_t)n < h->csize) {
		lp_in_consume(t->in, (size_t)n);
		return truncated(t, "inside a block");
	}
	fcs = ZSTD_getFrameContentSize(src, h->csize);
	if (fcs != h->rsize)
		return corrupt(t, "compressed frame does not match the block header");
	got = ZSTD_decompressDCtx(t->dctx, t->raw, h->rsize, src, h->csize);
	lp_in_consume(t->in, h->csize);
	if (ZSTD_isError(got))
		return corrupt(t, ZSTD_getErrorName(got));
	if (got != h->rsize)
		return corrupt(t, "payload shorter than its header says");
	memset(t->raw + h->rsize, 0, LPT_PAD);
	return 0;
}

static int load_mappings(struct lpt_reader *t, const struct blk_header *h)
{
	const uint8_t *p = t->raw, *end = t->raw + h->rsize;
	struct lp_mappings m = { 0 };
	int err;

	for (uint32_t i = 0; i < h->count; i++) {
		uint64_t start, stop, off, plen;
		const uint8_t *bid;
		char *path;
		uint8_t blen;

		p = get_varint(p, &start);
		p = get_varint(p, &stop);
		p = get_varint(p, &off);
		if (p >= end || (blen = *p++) > LP_BUILD_ID_MAX || (size_t)(end - p) < blen)
			goto bad;
		bid = p;
		p += blen;
		p = get_varint(p, &plen);
		if (p > end || plen > (uint64_t)(end - p) || stop < start)
			goto bad;
		if (!(path = strndup((const char *)p, (size_t)plen))) {
			err = LP_ENOMEM;
			goto out_free;
		}
		err = lp_mappings_add(&m, start, stop, off, path, bid, blen);
		free(path);
		if (err < 0)
			goto out_free;
		p += plen;
	}
	if (p != end)
		goto bad;
	lp_mappings_release(&t->maps);
	t->maps = m;
	return 0;
bad:
	err = corrupt(t, "malformed mappings");
out_free:
	lp_mappings_release(&m);
	return err;
}

enum { GOT_RECORDS, GOT_MAPPINGS, GOT_END };

/* Read the next block. Returns GOT_* or a negative code. */
static int next_block(struct lpt_reader *t)
{
	uint8_t raw[LPT_BLOCK_HEADER];
	struct blk_header h;
	ssize_t n;
	int err;

	n = lp_in_read(t->in, raw, sizeof(raw));
	if (n < 0)
		return (int)n;
	if (n == 0)
		return truncated(t, "(no end-of-trace block)");
	if ((size_t)n < sizeof(raw))
		return truncated(t, "inside a block header");
	if (header_sum(raw, 28) != get32(raw + 28))
		return corrupt(t, "bad block header checksum");
	h.type = raw[0];
	h.count = get32(raw + 4);
	h.csize = get32(raw + 8);
	h.rsize = get32(raw + 12);
	h.first = get64(raw + 16);
	if (raw[1] || raw[2] || raw[3] || get32(raw + 24))
		return corrupt(t, "reserved header bytes are not zero");

	switch (h.type) {
	case BLK_END:
		if (h.count != (uint32_t)t->blocks || h.first != t->records || h.csize || h.rsize)
			return corrupt(t, "end-of-trace block does not match the blocks read");
		t->done = true;
		/* two traces concatenated, or junk: say so rather than stop
		 * in silence at the first end block */
		const uint8_t *rest;
		if ((n = lp_in_peek(t->in, &rest, 1)) < 0)
			return (int)n;
		if (n > 0)
			return lp_seterr(LP_ECORRUPT, "'%s': data after the end-of-trace block at byte "
					 "%llu (%llu records read)", lp_in_name(t->in),
					 (unsigned long long)lp_in_offset(t->in),
					 (unsigned long long)t->delivered);
		return GOT_END;
	case BLK_MAPPINGS:
		if (h.rsize > LPT_MAX_MAPPINGS_BYTES || h.csize > ZSTD_compressBound(h.rsize) ||
		    h.count > h.rsize || h.first)
			return corrupt(t, "impossible sizes in a mappings block header");
		if ((err = load_payload(t, &h)) < 0)
			return err;
		if ((err = load_mappings(t, &h)) < 0)
			return err;
		return GOT_MAPPINGS;
	case BLK_RECORDS:
		if (h.count == 0 || h.count > LPT_MAX_BLOCK_RECORDS || h.rsize < h.count ||
		    h.rsize > (uint64_t)h.count * LPT_MAX_RECORD_BYTES ||
		    h.csize > ZSTD_compressBound(h.rsize))
			return corrupt(t, "impossible sizes in a block header");
		if (h.first != t->records)
			return corrupt(t, "block out of sequence");
		if ((err = load_payload(t, &h)) < 0)
			return err;
		uint32_t abytes = get32(t->raw);
		if ((uint64_t)4 + h.count + abytes > h.rsize)
			return corrupt(t, "record streams larger than the block");
		t->tags = t->raw + 4;
		t->a = t->tags + h.count;
		t->aend = t->a + abytes;
		t->e = t->aend;
		t->end = t->raw + h.rsize;
		t->left = h.count;
		memset(&t->d, 0, sizeof(t->d));
		t->blocks++;
		t->records += h.count;
		return GOT_RECORDS;
	default:
		return corrupt(t, "unknown block type");
	}
}

static int lpt_reader_open(struct lp_in *in, void **state)
{
	uint8_t hdr[LPT_FILE_HEADER];
	struct lpt_reader *t;
	ssize_t n;
	uint32_t version;
	int err;

	n = lp_in_read(in, hdr, sizeof(hdr));
	if (n < 0)
		return (int)n;
	if ((size_t)n < sizeof(lpt_magic) || memcmp(hdr, lpt_magic, sizeof(lpt_magic)))
		return lp_seterr(LP_EFORMAT, "'%s': not a locprof trace (bad magic)", lp_in_name(in));
	if ((size_t)n < sizeof(hdr))
		return lp_seterr(LP_ETRUNCATED, "'%s': trace truncated inside the file header "
				 "(0 records read)", lp_in_name(in));
	version = get32(hdr + 8);
	if (version < LPT_VERSION_MIN || version > LPT_VERSION)
		return lp_seterr(LP_EVERSION, "'%s': lpt version %u is not supported (this locprof "
				 "reads versions %u to %u)", lp_in_name(in), version, LPT_VERSION_MIN, LPT_VERSION);
	if (get32(hdr + 12))
		return lp_seterr(LP_ECORRUPT, "'%s': unknown flags 0x%x in the file header",
				 lp_in_name(in), get32(hdr + 12));

	if (!(t = calloc(1, sizeof(*t))))
		return LP_ENOMEM;
	t->in = in;
	t->extra_flags = EXTRA_TID | EXTRA_SIZE | (version >= 2 ? EXTRA_FRAME : 0);
	if (!(t->dctx = ZSTD_createDCtx())) {
		free(t);
		return LP_ENOMEM;
	}
	/* Look at the first block now, so that the mappings it may hold are
	 * there before the first read. Damage is reported by that read. */
	err = next_block(t);
	if (err < 0)
		t->pending_err = err;
	*state = t;
	return 0;
}

/* Decode up to want records of the current block into buf; *got says how
 * many. Returns 0, or LP_ECORRUPT when the payload does not hold what its
 * header promised (possible only in a file not written by locprof, as the
 * checksum matched); the records before the inconsistency are in buf. */
static int decode(struct lpt_reader *t, struct lp_ref *buf, size_t want, size_t *got)
{
	const uint8_t *tags = t->tags, *a = t->a, *e = t->e;
	const uint8_t *aend = t->aend, *end = t->end;
	struct delta d = t->d;
	uint64_t too_large = 0;
	unsigned allowed = t->extra_flags;
	size_t i;

	for (i = 0; i < want; i++) {
		unsigned tag = tags[i], cls = TAG_STEP(tag);
		uint64_t x, size = size_of_code[TAG_SIZE(tag)];

		if (cls) {
			memcpy(&x, a, 8);
			d.step = unzigzag(x & step_mask[cls]);
			a += step_width[cls];
		}
		d.addr += d.step;
		if (tag & (TAG_PC | TAG_EXTRA)) {
			if (tag & TAG_PC) {
				e = get_varint(e, &x);
				d.pc += unzigzag(x);
			}
			if (tag & TAG_EXTRA) {
				unsigned flags = *e++;
				if (flags & ~allowed)
					break;
				if (flags & EXTRA_TID) {
					e = get_varint(e, &x);
					if (x > UINT32_MAX)
						break;
					d.tid = (uint32_t)x;
				}
				if (flags & EXTRA_FRAME) {
					/* no address, kind or size of its own: written
					 * here, off the references' path */
					if (cls || (tag & (TAG_KIND | 0x0cu)) || (flags & EXTRA_SIZE) || e > end)
						break;
					d.addr -= d.step;
					buf[i] = (struct lp_ref){ .pc = d.pc, .tid = d.tid, .kind = LP_EV_FRAME };
					continue;
				}
				if (flags & EXTRA_SIZE) {
					e = get_varint(e, &size);
					if (size > LP_REF_SIZE_MAX && (tag & TAG_KIND) <= LP_REF_WRITE) {
						too_large = size;
						break;
					}
				}
			}
			if (e > end)
				break;
		}
		if (a > aend)
			break;
		buf[i].addr = d.addr;
		buf[i].pc = d.pc;
		buf[i].size = size;
		buf[i].tid = d.tid;
		buf[i].kind = (uint8_t)(tag & TAG_KIND);
	}
	t->tags = tags + i;
	t->a = a;
	t->e = e;
	t->d = d;
	t->left -= (uint32_t)i;
	t->delivered += i;
	*got = i;
	if (too_large) {
		t->left = 0;
		return lp_trace_too_large(lp_in_name(t->in), "record", t->delivered + 1, too_large);
	}
	if (i < want || (t->left == 0 && (a != aend || e != end))) {
		t->left = 0;
		return corrupt(t, "payload does not decode to its record count");
	}
	return 0;
}

static ssize_t lpt_read(void *state, struct lp_ref *buf, size_t cap)
{
	struct lpt_reader *t = state;
	size_t n = 0, got;
	int err;

	if (t->pending_err)
		return t->pending_err;
	while (n < cap) {
		if (t->left == 0) {
			if (t->done)
				break;
			err = next_block(t);
			if (err < 0)
				goto fail;
			continue;
		}
		err = decode(t, buf + n, cap - n < t->left ? cap - n : t->left, &got);
		n += got;
		if (err < 0)
			goto fail;
	}
	return (ssize_t)n;
fail:
	/* Deliver what came before the damage first. */
	t->pending_err = err;
	return n ? (ssize_t)n : err;
}

static const struct lp_mappings *lpt_mappings(void *state)
{
	return &((struct lpt_reader *)state)->maps;
}

static void lpt_reader_free(void *state)
{
	struct lpt_reader *t = state;

	if (!t)
		return;
	ZSTD_freeDCtx(t->dctx);
	lp_mappings_release(&t->maps);
	free(t->raw);
	free(t);
}

/* ---- writing ---------------------------------------------------------- */

struct lpt_writer {
	struct lp_out *out;
	ZSTD_CCtx *cctx;
	uint8_t *tags, *addrs, *extras; /* the three streams of a payload */
	uint8_t *ap, *ep;               /* ends of addrs, extras */
	uint8_t *raw, *cbuf;            /* the payload assembled, compressed */
	size_t ccap;
	uint32_t nrec;     /* records in the payload */
	struct delta d;
	uint64_t blocks, records;
};

static int write_block(struct lpt_writer *w, uint8_t type, uint32_t count, const uint8_t *payload,
		       size_t rsize, uint64_t first)
{
	uint8_t hdr[LPT_BLOCK_HEADER] = { 0 };
	size_t csize = 0;
	int err;

	if (rsize) {
		size_t bound = ZSTD_compressBound(rsize);
		if ((err = grow(&w->cbuf, &w->ccap, bound)) < 0)
			return err;
		csize = ZSTD_compress2(w->cctx, w->cbuf, w->ccap, payload, rsize);
		if (ZSTD_isError(csize))
			return lp_seterr(LP_EIO, "'%s': zstd: %s", lp_out_name(w->out),
					 ZSTD_getErrorName(csize));
	}
	hdr[0] = type;
	put32(hdr + 4, count);
	put32(hdr + 8, (uint32_t)csize);
	put32(hdr + 12, (uint32_t)rsize);
	put64(hdr + 16, first);
	put32(hdr + 28, header_sum(hdr, 28));
	if ((err = lp_out_write(w->out, hdr, sizeof(hdr))) < 0 ||
	    (csize && (err = lp_out_write(w->out, w->cbuf, csize)) < 0))
		return err;
	return 0;
}

static int flush_records(struct lpt_writer *w)
{
	int err;

	if (!w->nrec)
		return 0;
	size_t abytes = (size_t)(w->ap - w->addrs), ebytes = (size_t)(w->ep - w->extras);
	uint8_t *p = w->raw;

	put32(p, (uint32_t)abytes);
	p += 4;
	memcpy(p, w->tags, w->nrec);
	p += w->nrec;
	memcpy(p, w->addrs, abytes);
	p += abytes;
	memcpy(p, w->extras, ebytes);
	p += ebytes;
	err = write_block(w, BLK_RECORDS, w->nrec, w->raw, (size_t)(p - w->raw), w->records);
	if (err < 0)
		return err;
	w->blocks++;
	w->records += w->nrec;
	w->nrec = 0;
	w->ap = w->addrs;
	w->ep = w->extras;
	memset(&w->d, 0, sizeof(w->d));
	return 0;
}

static int lpt_writer_open(struct lp_out *out, void **state)
{
	uint8_t hdr[LPT_FILE_HEADER] = { 0 };
	struct lpt_writer *w;
	int err;

	if (!(w = calloc(1, sizeof(*w))))
		return LP_ENOMEM;
	w->out = out;
	w->tags = malloc(LPT_BLOCK_RECORDS);
	w->addrs = w->ap = malloc((size_t)LPT_BLOCK_RECORDS * 8);
	w->extras = w->ep = malloc((size_t)LPT_BLOCK_RECORDS * (LPT_MAX_RECORD_BYTES - 9));
	w->raw = malloc(4 + (size_t)LPT_BLOCK_RECORDS * LPT_MAX_RECORD_BYTES);
	w->cctx = ZSTD_createCCtx();
	if (!w->tags || !w->addrs || !w->extras || !w->raw || !w->cctx) {
		err = LP_ENOMEM;
		goto out_free;
	}
	/* The frame checksum (XXH64 of the content) is what detects a
	 * damaged payload; the content size lets the reader check a frame
	 * against its block header before decompressing. */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, LPT_ZSTD_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1))) {
		err = lp_seterr(LP_EUNSUPPORTED, "zstd refuses the lpt compression parameters");
		goto out_free;
	}
	memcpy(hdr, lpt_magic, sizeof(lpt_magic));
	put32(hdr + 8, LPT_VERSION);
	if ((err = lp_out_write(out, hdr, sizeof(hdr))) < 0)
		goto out_free;
	*state = w;
	return 0;

out_free:
	ZSTD_freeCCtx(w->cctx);
	free(w->tags);
	free(w->addrs);
	free(w->extras);
	free(w->raw);
	free(w);
	return err;
}

static int lpt_set_mappings(void *state, const struct lp_mappings *m)
{
	struct lpt_writer *w = state;
	uint8_t *buf, *p;
	size_t cap = 0;
	int err;

	if (!m || !m->n)
		return 0;
	for (size_t i = 0; i < m->n; i++)
		cap += 3 * 10 + 1 + m->v[i].build_id_len + 10 + strlen(m->v[i].path);
	if (cap > LPT_MAX_MAPPINGS_BYTES || m->n > UINT32_MAX)
		return lp_seterr(LP_ELIMIT, "'%s': too many mappings for one trace",
				 lp_out_name(w->out));
	if (!(buf = p = malloc(cap)))
		return LP_ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		const struct lp_mapping *mp = &m->v[i];
		size_t plen = strlen(mp->path);

		p = put_varint(p, mp->start);
		p = put_varint(p, mp->end);
		p = put_varint(p, mp->file_offset);
		*p++ = mp->build_id_len;
		memcpy(p, mp->build_id, mp->build_id_len);
		p += mp->build_id_len;
		p = put_varint(p, plen);
		memcpy(p, mp->path, plen);
		p += plen;
	}
	err = write_block(w, BLK_MAPPINGS, (uint32_t)m->n, buf, (size_t)(p - buf), 0);
	free(buf);
	return err;
}

static int lpt_write(void *state, const struct lp_ref *refs, size_t n)
{
	struct lpt_writer *w = state;

	for (size_t i = 0; i < n; i++) {
		const struct lp_ref *r = &refs[i];
		uint64_t step = r->addr - w->d.addr, z;
		int frame = r->kind == LP_EV_FRAME, code = frame ? 0 : size_code(r->size);
		unsigned tag, extra = frame ? EXTRA_FRAME : 0;

		if (r->kind > LP_EV_FRAME)
			return lp_seterr(LP_EINVAL, "'%s': record %llu has unknown kind %u",
					 lp_out_name(w->out),
					 (unsigned long long)(w->records + w->nrec), r->kind);
		tag = frame ? 0 : r->kind | (unsigned)(code < 0 ? 0 : code) << 2;
		if (!frame && step != w->d.step) {
			unsigned cls;
			z = zigzag(step);
			cls = z <= 0xffff ? 1 : z <= 0xffffffffULL ? 2 : 3;
			memcpy(w->ap, &z, 8);
			w->ap += step_width[cls];
			tag |= cls << 4;
			w->d.step = step;
		}
		if (r->pc != w->d.pc) {
			tag |= TAG_PC;
			w->ep = put_varint(w->ep, zigzag(r->pc - w->d.pc));
			w->d.pc = r->pc;
		}
		if (r->tid != w->d.tid)
			extra |= EXTRA_TID;
		if (code < 0)
			extra |= EXTRA_SIZE;
		if (extra) {
			tag |= TAG_EXTRA;
			*w->ep++ = (uint8_t)extra;
			if (extra & EXTRA_TID)
				w->ep = put_varint(w->ep, r->tid);
			if (extra & EXTRA_SIZE)
				w->ep = put_varint(w->ep, r->size);
			w->d.tid = r->tid;
		}
		w->tags[w->nrec] = (uint8_t)tag;
		if (!frame)
			w->d.addr = r->addr;
		if (++w->nrec == LPT_BLOCK_RECORDS) {
			int err = flush_records(w);
			if (err < 0)
				return err;
		}
	}
	return 0;
}

static int lpt_finish(void *state)
{
	struct lpt_writer *w = state;
	int err = flush_records(w);

	if (err < 0)
		return err;
	return write_block(w, BLK_END, (uint32_t)w->blocks, NULL, 0, w->records);
}

static void lpt_writer_free(void *state)
{
	struct lpt_writer *w = state;

	if (!w)
		return;
	ZSTD_freeCCtx(w->cctx);
	free(w->tags);
	free(w->addrs);
	free(w->extras);
	free(w->raw);
	free(w->cbuf);
	free(w);
}

static const char *const lpt_extensions[] = { ".lpt", NULL };

const struct lp_trace_format lp_trace_format_lpt = {
	.name = "lpt",
	.extensions = lpt_extensions,
	.sniff = lpt_sniff,
	.reader_open = lpt_reader_open,
	.read = lpt_read,
	.reader_free = lpt_reader_free,
	.writer_open = lpt_writer_open,
	.write = lpt_write,
	.finish = lpt_finish,
	.writer_free = lpt_writer_free,
	.set_mappings = lpt_set_mappings,
	.mappings = lpt_mappings,
};
