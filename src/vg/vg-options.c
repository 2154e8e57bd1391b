/* The valgrind tool's command-line options (docs/valgrind.md), with
 * defaults from the environment that `locprof record` gives every backend:
 * parsed into lpvg_o once valgrind has read them all. */
#include "vg-tool.h"

#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_options.h"
#include "pub_tool_replacemalloc.h"

static const HChar *clo_lines = "64";
static const HChar *clo_mode = "sample";
static const HChar *clo_rate = "1e-4";
static const HChar *clo_seed = "1";
static Long clo_flush_ms = 100;
static const HChar *clo_alloc_events = "touched";

/* A decimal number with an optional exponent ("1e-4", "0.0001",
 * "1.0000000000000001e-05" as locprof's %.17g writes): VG_(strtod) stops at
 * the exponent. The digits become an exact integer (up to 19 significant
 * digits) scaled once by a power of ten, so short inputs are exact to the
 * last bit. Returns False unless the whole string is a number. */
static Bool parse_double(const HChar *s, double *out)
{
	ULong mant = 0;
	Int exp10 = 0, digits = 0, e = 0;
	Bool any = False, neg_e = False;
	double v, p = 1, ten = 10;

	for (; *s >= '0' && *s <= '9'; s++, any = True) {
		if (digits < 19 && (mant || *s != '0'))
			mant = mant * 10 + (ULong)(*s - '0'), digits++;
		else if (mant)
			exp10++;
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, any = True) {
			if (digits < 19 && (mant || *s != '0'))
				mant = mant * 10 + (ULong)(*s - '0'), digits++, exp10--;
			else if (!mant)
				exp10--;
		}
	}
	if (!any)
		return False;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			neg_e = *s++ == '-';
		if (*s < '0' || *s > '9')
			return False;
		for (; *s >= '0' && *s <= '9'; s++)
			if (e < 10000)
				e = e * 10 + (*s - '0');
		exp10 += neg_e ? -e : e;
	}
	if (*s)
		return False;
	v = (double)mant;
	for (Int k = exp10 < 0 ? -exp10 : exp10; k; k >>= 1, ten *= ten)
		if (k & 1)
			p *= ten;
	*out = exp10 < 0 ? v / p : v * p;
	return True;
}

static Bool parse_lines(const HChar *s)
{
	UInt n = 0;

	while (*s) {
		HChar *end;
		ULong v = VG_(strtoull10)(s, &end);
		if (end == s || v < 1 || (v & (v - 1)) || v > (1ull << 20) || n == LP_MAX_LINE_SIZES)
			return False;
		if (n && v <= lpvg_o.line_size[n - 1])
			return False;
		lpvg_o.line_size[n] = (UInt)v;
		lpvg_o.line_shift[n] = (UInt)VG_(log2_64)(v);
		n++;
		if (*end == ',')
			end++;
		else if (*end)
			return False;
		s = end;
	}
	lpvg_o.nlines = n;
	return n > 0;
}

static Bool process_option(const HChar *arg)
{
	const HChar *v;

	if VG_STR_CLO(arg, "--socket", lpvg_o.socket) {}
	else if VG_STR_CLO(arg, "--mode", clo_mode) {
		if (VG_(strcmp)(clo_mode, "sample") && VG_(strcmp)(clo_mode, "trace"))
			VG_(fmsg_bad_option)(arg, "the mode is 'sample' or 'trace'\n");
	}
	else if VG_STR_CLO(arg, "--rate", clo_rate) {
		double r = 0;
		if (!parse_double(clo_rate, &r) || !(r > 0 && r <= 1))
			VG_(fmsg_bad_option)(arg, "the rate is a number in (0, 1]\n");
	}
	else if VG_STR_CLO(arg, "--lines", clo_lines) {
		if (!parse_lines(clo_lines))
			VG_(fmsg_bad_option)(arg, "line sizes are 1 to 4 ascending powers of two "
						  "up to 1M, e.g. 64,128\n");
	}
	else if VG_STR_CLO(arg, "--seed", v) {
		HChar *end;
		(void)VG_(strtoull10)(v, &end);
		if (*end || end == v)
			VG_(fmsg_bad_option)(arg, "the seed is a non-negative integer\n");
		clo_seed = v;
	}
	else if VG_BINT_CLO(arg, "--flush-ms", clo_flush_ms, 1, 3600000) {}
	else if VG_BINT_CLO(arg, "--reserve-fds", lpvg_o.reserve_fds, 0, 1024) {}
	else if VG_BOOL_CLO(arg, "--selfcheck", lpvg_o.selfcheck) {}
	else if VG_STR_CLO(arg, "--alloc-events", clo_alloc_events) {
		if (VG_(strcmp)(clo_alloc_events, "touched") && VG_(strcmp)(clo_alloc_events, "all"))
			VG_(fmsg_bad_option)(arg, "allocation events are 'touched' or 'all'\n");
		lpvg_o.alloc_all = !VG_(strcmp)(clo_alloc_events, "all");
	}
	else
		return VG_(replacement_malloc_process_cmd_line_option)(arg);
	return True;
}

static void print_usage(void)
{
	VG_(printf)(
		"    --socket=PATH          the collector's socket [$LOCPROF_SOCKET]\n"
		"    --mode=sample|trace    StatCache samples or every reference [sample]\n"
		"    --rate=R               sampling rate in (0,1] [1e-4]\n"
		"    --lines=64,128         line sizes, up to 4 [64]\n"
		"    --seed=N               random seed [1]\n"
		"    --flush-ms=MS          send data at least this often [100]\n"
		"    --reserve-fds=N        descriptors kept from the program for the\n"
		"                           per-thread connections [64]\n"
		"    --alloc-events=touched|all  sample mode: allocation events of the\n"
		"                           blocks samples touch, or of every block [touched]\n"
		"  Normally started by 'locprof record --backend valgrind', which sets\n"
		"  all of these from its own options.\n");
}

static void print_debug_usage(void)
{
	VG_(printf)("    --selfcheck=yes        check the fast path at every segment (tests)\n");
}

/* Defaults from the environment `locprof record` gives every backend
 * (protocol.h), so that a child valgrind started by --trace-children gets
 * the same settings even when options were not repeated. */
static void env_defaults(void)
{
	HChar *s;

	if ((s = VG_(getenv)(LP_ENV_SOCKET)) && *s)
		lpvg_o.socket = s;
	if ((s = VG_(getenv)(LP_ENV_MODE)) && *s)
		clo_mode = s;
	if ((s = VG_(getenv)(LP_ENV_RATE)) && *s)
		clo_rate = s;
	if ((s = VG_(getenv)(LP_ENV_LINES)) && *s)
		clo_lines = s;
	if ((s = VG_(getenv)(LP_ENV_SEED)) && *s)
		clo_seed = s;
	if ((s = VG_(getenv)(LP_ENV_FLUSH)) && *s)
		clo_flush_ms = VG_(strtoll10)(s, NULL);
}

void lpvg_options_register(void)
{
	VG_(needs_command_line_options)(process_option, print_usage, print_debug_usage);
	lpvg_o.reserve_fds = 64;
	env_defaults();
}

/* record --phases: its settings come from the environment only, as the
 * runtime's (rt-phase.c); a malformed one leaves the default (none: off). */
static void phase_settings(void)
{
	const HChar *s;
	HChar *end;
	double v;

	lpvg_o.phase_interval = lpvg_o.phase_samples = 0;
	lpvg_o.phase_rate = -1;
	lpvg_o.phase_threshold = LP_PHASE_THRESHOLD;
	if ((s = VG_(getenv)(LP_ENV_PHASES)) && *s) {
		ULong n = VG_(strtoull10)(s, &end);
		lpvg_o.phase_interval = *end ? 0 : n;
	}
	if ((s = VG_(getenv)(LP_ENV_PHASE_SAMPLES)) && *s) {
		ULong n = VG_(strtoull10)(s, &end);
		lpvg_o.phase_samples = *end ? 0 : n;
	}
	if ((s = VG_(getenv)(LP_ENV_PHASE_RATE)) && *s && parse_double(s, &v) && v <= lpvg_o.rate)
		lpvg_o.phase_rate = v;
	if ((s = VG_(getenv)(LP_ENV_PHASE_THRESHOLD)) && *s && parse_double(s, &v))
		lpvg_o.phase_threshold = v;
}

/* After the command line: the options into lpvg_o; a bad one ends the run. */
void lpvg_options_apply(void)
{
	lpvg_o.mode = VG_(strcmp)(clo_mode, "trace") ? LP_MODE_SAMPLE : LP_MODE_TRACE;
	if (!parse_double(clo_rate, &lpvg_o.rate) || !(lpvg_o.rate > 0 && lpvg_o.rate <= 1)) {
		VG_(fmsg)("locprof: bad sampling rate '%s' (0 < R <= 1)\n", clo_rate);
		VG_(exit)(1);
	}
	if (!parse_lines(clo_lines)) {
		VG_(fmsg)("locprof: bad line sizes '%s' (ascending powers of two up to 1M)\n",
			  clo_lines);
		VG_(exit)(1);
	}
	lpvg_o.seed = VG_(strtoull10)(clo_seed, NULL);
	lpvg_o.flush_ms = clo_flush_ms > 0 ? (UInt)clo_flush_ms : 100;
	phase_settings();
}
