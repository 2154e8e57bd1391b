/* The text trace format: one record per line,
 *
 *     KIND ADDRESS SIZE [PC [THREAD]]     # comment
 *
 * KIND is R (read), W (write), A (allocation: ADDRESS is the block, SIZE its
 * length, PC the call site) or F (free: SIZE is 0). ADDRESS and PC are hex,
 * with or without 0x; SIZE and THREAD are decimal (or hex with 0x). Blank
 * lines and everything after '#' are ignored. See docs/formats.md. */
#include "trace/trace-format.h"
#include "common/error.h"
#include "common/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct text_reader {
	struct lp_in *in;
	uint64_t lineno;
	int pending_err; /* raised after a partial batch; returned next call */
};

static bool text_sniff(const uint8_t *head, size_t len)
{
	/* First non-comment, non-blank line starts with a kind letter and a
	 * space. Comments may fill the whole head; accept that too. */
	size_t i = 0;

	while (i < len) {
		while (i < len && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
			i++;
		if (i < len && head[i] == '#') {
			while (i < len && head[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	if (i >= len)
		return len > 0;
	return i + 1 < len && strchr("RWAF", head[i]) && (head[i + 1] == ' ' || head[i + 1] == '\t');
}

static int text_reader_open(struct lp_in *in, void **state)
{
	struct text_reader *t = calloc(1, sizeof(*t));

	if (!t)
		return LP_ENOMEM;
	t->in = in;
	*state = t;
	return 0;
}

/* Parse a number at *p; hex if forced or with 0x. Returns 0 or -1. */
static int parse_u64(char **p, int hex, uint64_t *v)
{
	char *s = *p;
	uint64_t x = 0;
	int digits = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		hex = 1;
		s += 2;
	}
	for (;; s++, digits++) {
		int d = hex ? lp_trace_hexval(*s) : (*s >= '0' && *s <= '9' ? *s - '0' : -1);
		if (d < 0)
			break;
		uint64_t base = hex ? 16 : 10;
		if (x > (UINT64_MAX - (uint64_t)d) / base)
			return -1; /* overflow */
		x = x * base + (uint64_t)d;
	}
	if (!digits || (*s && *s != ' ' && *s != '\t' && *s != '#'))
		return -1;
	*p = s;
	*v = x;
	return 0;
}

static char *skip_blanks(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static int bad(struct text_reader *t, const char *what, const char *at)
{
	return lp_trace_bad_line(lp_in_name(t->in), t->lineno, what, at, " 	#");
}

static int parse_line(struct text_reader *t, char *s, struct lp_ref *r)
{
	uint64_t v;

	memset(r, 0, sizeof(*r));
	switch (*s) {
	case 'R': r->kind = LP_REF_READ; break;
	case 'W': r->kind = LP_REF_WRITE; break;
	case 'A': r->kind = LP_EV_ALLOC; break;
	case 'F': r->kind = LP_EV_FREE; break;
	case 'S': r->kind = LP_EV_FRAME; break;
	default: return bad(t, "unknown kind (expected R, W, A, F or S)", s);
	}
	if (s[1] != ' ' && s[1] != '\t')
		return bad(t, "unknown kind (expected R, W, A, F or S)", s);
	s = skip_blanks(s + 1);
	if (parse_u64(&s, 1, &r->addr) < 0)
		return bad(t, *s ? "bad address" : "missing address", s);
	s = skip_blanks(s);
	if (parse_u64(&s, 0, &r->size) < 0)
		return bad(t, *s ? "bad size" : "missing size", s);
	if (r->size == 0 && lp_ref_is_access(r))
		return bad(t, "size 0 for a reference", "");
	if (r->size > LP_REF_SIZE_MAX && lp_ref_is_access(r))
		return lp_trace_too_large(lp_in_name(t->in), "line", t->lineno, r->size);
	s = skip_blanks(s);
	if (*s && *s != '#') {
		if (parse_u64(&s, 1, &r->pc) < 0)
			return bad(t, "bad pc", s);
		s = skip_blanks(s);
		if (*s && *s != '#') {
			if (parse_u64(&s, 0, &v) < 0 || v > UINT32_MAX)
				return bad(t, "bad thread", s);
			r->tid = (uint32_t)v;
			s = skip_blanks(s);
		}
	}
	if (*s && *s != '#')
		return bad(t, "unexpected text", s);
	if (r->kind == LP_EV_FRAME && (r->addr || r->size))
		return bad(t, "a frame (S) has address and size 0", "");
	return 0;
}

static ssize_t text_read(void *state, struct lp_ref *buf, size_t cap)
{
	struct text_reader *t = state;
	size_t n = 0;
	char *line;
	ssize_t rc;

	if (t->pending_err)
		return t->pending_err;
	while (n < cap) {
		rc = lp_in_getline(t->in, &line);
		if (rc < 0) {
			t->pending_err = (int)rc;
			return n ? (ssize_t)n : rc;
		}
		if (rc == 0)
			break;
		t->lineno++;
		char *s = skip_blanks(line);
		if (!*s || *s == '#')
			continue;
		int err = parse_line(t, s, &buf[n]);
		if (err < 0) {
			/* Deliver what came before the bad line first. */
			t->pending_err = err;
			return n ? (ssize_t)n : err;
		}
		n++;
	}
	return (ssize_t)n;
}

struct text_writer {
	struct lp_out *out;
};

static int text_writer_open(struct lp_out *out, void **state)
{
	struct text_writer *t = calloc(1, sizeof(*t));

	if (!t)
		return LP_ENOMEM;
	t->out = out;
	*state = t;
	return 0;
}

static const char kind_letter[8] = { 'R', 'W', 'A', 'F', 'S', '?', '?', '?' };

static int text_write(void *state, const struct lp_ref *refs, size_t n)
{
	struct text_writer *t = state;

	for (size_t i = 0; i < n; i++) {
		const struct lp_ref *r = &refs[i];
		char *dst = lp_out_reserve(t->out, 96);
		int len;

		if (!dst)
			return lp_seterr(LP_EIO, "cannot write '%s'", lp_out_name(t->out));
		if (r->tid)
			len = sprintf(dst, "%c 0x%llx %llu 0x%llx %u\n", kind_letter[r->kind & 7],
				      (unsigned long long)r->addr, (unsigned long long)r->size,
				      (unsigned long long)r->pc, r->tid);
		else if (r->pc)
			len = sprintf(dst, "%c 0x%llx %llu 0x%llx\n", kind_letter[r->kind & 7],
				      (unsigned long long)r->addr, (unsigned long long)r->size,
				      (unsigned long long)r->pc);
		else
			len = sprintf(dst, "%c 0x%llx %llu\n", kind_letter[r->kind & 7],
				      (unsigned long long)r->addr, (unsigned long long)r->size);
		lp_out_commit(t->out, (size_t)len);
	}
	return 0;
}

static const char *const text_extensions[] = { ".txt", ".trace", NULL };

const struct lp_trace_format lp_trace_format_text = {
	.name = "text",
	.extensions = text_extensions,
	.sniff = text_sniff,
	.reader_open = text_reader_open,
	.read = text_read,
	.reader_free = free,
	.writer_open = text_writer_open,
	.write = text_write,
	.writer_free = free,
};
