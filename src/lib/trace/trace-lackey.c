/* The lackey trace format: what valgrind --tool=lackey --trace-mem=yes
 * prints (valgrind's lackey/lk_main.c):
 *
 *     I  04001b60,3       an instruction: address, length
 *      L 1ffefffc40,8     a load: address, size
 *      S 1ffefffc48,8     a store
 *      M 0060104c,4       a modify: a load then a store of the same bytes
 *     ==1234== ...        valgrind's own messages
 *
 * Addresses are hex without 0x, sizes decimal. Lackey does not give the pc
 * of a data reference; the instruction line before it is the instruction
 * that made it, so that address becomes the pc. Threads, allocations and
 * frees cannot be represented: the writer drops allocation events and
 * thread ids. See docs/formats.md. */
#include "trace/trace-format.h"
#include "common/error.h"
#include "common/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lackey_reader {
	struct lp_in *in;
	uint64_t lineno;
	uint64_t pc;          /* address of the last instruction line */
	struct lp_ref pending; /* the write half of an M split across batches */
	bool has_pending;
	int pending_err;
};

static bool is_valgrind_message(const uint8_t *s, size_t len)
{
	size_t i = 2;

	if (len < 2 || s[0] != '=' || s[1] != '=')
		return false;
	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++;
	return i > 2 && i + 1 < len && s[i] == '=' && s[i + 1] == '=';
}

static bool lackey_sniff(const uint8_t *head, size_t len)
{
	if (is_valgrind_message(head, len))
		return true;
	if (len >= 4 && head[0] == 'I' && head[1] == ' ' && head[2] == ' ')
		return true;
	return len >= 4 && head[0] == ' ' && strchr("LSM", head[1]) && head[1] && head[2] == ' ';
}

static int lackey_reader_open(struct lp_in *in, void **state)
{
	struct lackey_reader *t = calloc(1, sizeof(*t));

	if (!t)
		return LP_ENOMEM;
	t->in = in;
	*state = t;
	return 0;
}

static int bad(struct lackey_reader *t, const char *what, const char *at)
{
	return lp_trace_bad_line(lp_in_name(t->in), t->lineno, what, at, " 	");
}

/* "ADDR,SIZE" then the end of the line. Returns 0 or LP_EPARSE. */
static int parse_addr_size(struct lackey_reader *t, char *s, uint64_t *addr, uint64_t *size)
{
	char *start = s;
	uint64_t a = 0, n = 0;
	int digits = 0, d;

	while (*s == ' ')
		s++;
	start = s;
	for (; (d = lp_trace_hexval(*s)) >= 0; s++, digits++) {
		if (a >> 60)
			return bad(t, "bad address", start);
		a = a << 4 | (uint64_t)d;
	}
	if (!digits || *s != ',')
		return bad(t, digits ? "bad address" : "missing address", start);
	start = ++s;
	for (digits = 0; *s >= '0' && *s <= '9'; s++, digits++) {
		if (n > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return bad(t, "bad size", start);
		n = n * 10 + (uint64_t)(*s - '0');
	}
	if (!digits)
		return bad(t, *s ? "bad size" : "missing size", start);
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s)
		return bad(t, "unexpected text", s);
	*addr = a;
	*size = n;
	return 0;
}

static ssize_t lackey_read(void *state, struct lp_ref *buf, size_t cap)
{
	struct lackey_reader *t = state;
	size_t n = 0;
	char *line;
	ssize_t rc;
	int err;

	if (t->pending_err)
		return t->pending_err;
	if (t->has_pending) {
		buf[n++] = t->pending;
		t->has_pending = false;
	}
	while (n < cap) {
		uint64_t addr, size;
		uint8_t kind;

		rc = lp_in_getline(t->in, &line);
		if (rc < 0) {
			err = (int)rc;
			goto fail;
		}
		if (rc == 0)
			break;
		t->lineno++;
		if (line[0] == '\0' || (line[0] == '=' && line[1] == '='))
			continue;
		if (line[0] == 'I' && line[1] == ' ') {
			if ((err = parse_addr_size(t, line + 1, &addr, &size)) < 0)
				goto fail;
			t->pc = addr;
			continue;
		}
		if (line[0] != ' ' || !line[1] || !strchr("LSM", line[1]) || line[2] != ' ') {
			err = bad(t, "not a lackey line (expected I, L, S or M)", line);
			goto fail;
		}
		kind = line[1] == 'S' ? LP_REF_WRITE : LP_REF_READ;
		if ((err = parse_addr_size(t, line + 2, &addr, &size)) < 0)
			goto fail;
		if (size == 0) {
			err = bad(t, "size 0 for a reference", "");
			goto fail;
		}
		if (size > LP_REF_SIZE_MAX) {
			err = lp_trace_too_large(lp_in_name(t->in), "line", t->lineno, size);
			goto fail;
		}
		buf[n++] = (struct lp_ref){ .addr = addr, .pc = t->pc, .size = size, .kind = kind };
		if (line[1] == 'M') {
			struct lp_ref w = buf[n - 1];
			w.kind = LP_REF_WRITE;
			if (n < cap) {
				buf[n++] = w;
			} else {
				t->pending = w;
				t->has_pending = true;
			}
		}
	}
	return (ssize_t)n;
fail:
	/* Deliver what came before the bad line first. */
	t->pending_err = err;
	return n ? (ssize_t)n : err;
}

struct lackey_writer {
	struct lp_out *out;
	uint64_t pc; /* of the last I line written; 0 before any, as in the reader */
};

static int lackey_writer_open(struct lp_out *out, void **state)
{
	struct lackey_writer *t = calloc(1, sizeof(*t));

	if (!t)
		return LP_ENOMEM;
	t->out = out;
	*state = t;
	return 0;
}

static int lackey_write(void *state, const struct lp_ref *refs, size_t n)
{
	struct lackey_writer *t = state;

	for (size_t i = 0; i < n; i++) {
		const struct lp_ref *r = &refs[i];
		char *dst;
		int len = 0;

		if (!lp_ref_is_access(r))
			continue; /* lackey has no allocation events */
		if (!(dst = lp_out_reserve(t->out, 96)))
			return lp_seterr(LP_EIO, "cannot write '%s'", lp_out_name(t->out));
		/* The instruction length is unknown; 0 says so, and readers
		 * (ours, and the usual lackey scripts) only use the address. */
		if (r->pc != t->pc) {
			len = sprintf(dst, "I  %08llx,0\n", (unsigned long long)r->pc);
			t->pc = r->pc;
		}
		len += sprintf(dst + len, " %c %08llx,%llu\n", r->kind == LP_REF_WRITE ? 'S' : 'L',
			       (unsigned long long)r->addr, (unsigned long long)r->size);
		lp_out_commit(t->out, (size_t)len);
	}
	return 0;
}

static const char *const lackey_extensions[] = { ".lackey", NULL };

const struct lp_trace_format lp_trace_format_lackey = {
	.name = "lackey",
	.extensions = lackey_extensions,
	.sniff = lackey_sniff,
	.reader_open = lackey_reader_open,
	.read = lackey_read,
	.reader_free = free,
	.writer_open = lackey_writer_open,
	.write = lackey_write,
	.writer_free = free,
};
