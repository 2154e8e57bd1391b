/* Placeholder until the lackey format lands: refuses clearly. */
#include "trace/trace-format.h"
#include "common/error.h"

static bool lackey_sniff(const uint8_t *head, size_t len) { return false; }
static int lackey_reader_open(struct lp_in *in, void **state)
{
	return lp_seterr(LP_EUNSUPPORTED, "the lackey format is not built yet");
}
static ssize_t lackey_read(void *state, struct lp_ref *buf, size_t cap) { return 0; }
static void lackey_free(void *state) {}
static int lackey_writer_open(struct lp_out *out, void **state)
{
	return lp_seterr(LP_EUNSUPPORTED, "the lackey format is not built yet");
}
static int lackey_write(void *state, const struct lp_ref *refs, size_t n) { return 0; }
static int lackey_finish(void *state) { return 0; }
static const char *const lackey_ext[] = { ".lackey", NULL };
const struct lp_trace_format lp_trace_format_lackey = {
	.name = "lackey", .extensions = lackey_ext, .sniff = lackey_sniff,
	.reader_open = lackey_reader_open, .read = lackey_read, .reader_free = lackey_free,
	.writer_open = lackey_writer_open, .write = lackey_write, .finish = lackey_finish,
	.writer_free = lackey_free,
};
