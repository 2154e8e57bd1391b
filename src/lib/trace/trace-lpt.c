/* Placeholder until the lpt format lands: refuses clearly. */
#include "trace/trace-format.h"
#include "common/error.h"

static bool lpt_sniff(const uint8_t *head, size_t len) { return false; }
static int lpt_reader_open(struct lp_in *in, void **state)
{
	return lp_seterr(LP_EUNSUPPORTED, "the lpt format is not built yet");
}
static ssize_t lpt_read(void *state, struct lp_ref *buf, size_t cap) { return 0; }
static void lpt_free(void *state) {}
static int lpt_writer_open(struct lp_out *out, void **state)
{
	return lp_seterr(LP_EUNSUPPORTED, "the lpt format is not built yet");
}
static int lpt_write(void *state, const struct lp_ref *refs, size_t n) { return 0; }
static int lpt_finish(void *state) { return 0; }
static const char *const lpt_ext[] = { ".lpt", NULL };
const struct lp_trace_format lp_trace_format_lpt = {
	.name = "lpt", .extensions = lpt_ext, .sniff = lpt_sniff,
	.reader_open = lpt_reader_open, .read = lpt_read, .reader_free = lpt_free,
	.writer_open = lpt_writer_open, .write = lpt_write, .finish = lpt_finish,
	.writer_free = lpt_free,
};
