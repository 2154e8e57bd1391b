/* Messages, option parsing and number formats shared by all commands. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void vmessage(const char *level, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "locprof: %s", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("error: ", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("warning: ", fmt, ap);
	va_end(ap);
}

void cli_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
}

int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("error: ", fmt, ap);
	va_end(ap);
	fprintf(stderr, "locprof: see 'locprof help %s'\n", cmd->name);
	return CLI_USAGE;
}

int cli_print_usage(const struct cli_command *cmd)
{
	fputs(cmd->usage, stdout);
	return CLI_OK;
}

/* Whether arg is "--NAME" of a long option that takes a value (getopt_long
 * says '?' for both an unknown option and one whose value is missing). */
static int long_needs_value(const char *arg, const struct option *longopts)
{
	if (strncmp(arg, "--", 2) || strchr(arg, '='))
		return 0;
	for (const struct option *o = longopts; o && o->name; o++)
		if (!strcmp(arg + 2, o->name))
			return o->has_arg == required_argument;
	return 0;
}

/* Why cli_getopt() last returned '?', for the command's one error line. */
static char getopt_why[320] = "bad option";

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
	static char **last_argv;
	int c;

	if (argv != last_argv) {
		last_argv = argv;
		optind = 0; /* glibc: full reinitialisation */
	}
	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == '?' || c == ':') {
		const char *arg = argv[optind - 1];
		if (c == ':' || (optopt && strchr(shortopts, optopt)) || long_needs_value(arg, longopts))
			snprintf(getopt_why, sizeof(getopt_why), "option '%s' needs a value", arg);
		else
			snprintf(getopt_why, sizeof(getopt_why), "unknown option '%s'", arg);
		return '?';
	}
	return c;
}

const char *cli_getopt_error(void)
{
	return getopt_why;
}

unsigned cli_default_jobs(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	n = CPU_COUNT(&set);
	return n < 1 ? 1 : n > CLI_MAX_DEFAULT_JOBS ? CLI_MAX_DEFAULT_JOBS : (unsigned)n;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int cli_parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v;
	double mult = 1;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': mult = 1024.0; end++; break;
	case 'm': case 'M': mult = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
	}
	if (mult > 1 && *end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	v *= mult;
	if (v != floor(v) || v >= 18446744073709551616.0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int push(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		uint64_t *nv = realloc(*v, nc * sizeof(**v));
		if (!nv)
			return -1;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = x;
	return 0;
}

int cli_parse_size_list(const char *s, uint64_t **out, size_t *nout)
{
	char *copy = strdup(s), *save = NULL, *tok;
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dots = strstr(tok, "..");
		uint64_t lo, hi;
		if (dots) {
			*dots = '\0';
			if (cli_parse_size(tok, &lo) < 0 || cli_parse_size(dots + 2, &hi) < 0 ||
			    lo == 0 || hi < lo)
				goto fail;
			/* Every power of two from lo up to hi, plus lo and hi. */
			if (push(&v, &n, &cap, lo) < 0 || push(&v, &n, &cap, hi) < 0)
				goto fail;
			for (uint64_t p = 1; p && p <= hi; p <<= 1)
				if (p > lo && push(&v, &n, &cap, p) < 0)
					goto fail;
		} else {
			if (cli_parse_size(tok, &lo) < 0 || lo == 0 || push(&v, &n, &cap, lo) < 0)
				goto fail;
		}
	}
	if (!n)
		goto fail;
	qsort(v, n, sizeof(*v), cmp_u64);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	free(copy);
	*out = v;
	*nout = k;
	return 0;
fail:
	free(copy);
	free(v);
	return -1;
}

const char *cli_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	int u = -1;
	double v = (double)bytes;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else if (v == floor(v))
		snprintf(buf, len, "%.0f%c", v, units[u]);
	else
		snprintf(buf, len, "%.4g%c", v, units[u]);
	return buf;
}

int cli_trace_read_failed(int err, const struct lp_trace_reader *r)
{
	if (err == LP_ETRUNCATED || err == LP_ECORRUPT) {
		cli_warn("%s; results cover the first %llu records", lp_errmsg(),
			 (unsigned long long)lp_trace_reader_count(r));
		return CLI_PARTIAL;
	}
	cli_error("%s", lp_errmsg());
	return CLI_ERROR;
}

void cli_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

const char *cli_csv_field(const char *s, char *buf, size_t len)
{
	size_t k = 0;

	if (!strpbrk(s, ",\""))
		return s;
	buf[k++] = '"';
	for (; *s && k + 3 < len; s++) {
		if (*s == '"')
			buf[k++] = '"';
		buf[k++] = *s;
	}
	buf[k++] = '"';
	buf[k] = '\0';
	return buf;
}

int cli_cache_arg(const struct cli_command *cmd, const char *arg, struct lp_named_cache *out, size_t cap,
		  size_t *n)
{
	int err = lp_cache_arg_parse(arg, NULL, out, cap, n);

	if (err == LP_ELIMIT)
		return cli_usage_error(cmd, "too many caches with '%s' (at most %zu more)", arg, cap);
	if (err < 0)
		return cli_usage_error(cmd, "bad cache '%s': %s", arg, lp_errmsg());
	return 0;
}

static int stdout_tmp_slot = -1; /* lp_tmp_track()'s: a signal removes the file */

int cli_stdout_to(const char *path, char **tmp)
{
	size_t len = strlen(path) + 32;

	fflush(stdout);
	if (!(*tmp = malloc(len))) {
		cli_error("out of memory");
		return -1;
	}
	snprintf(*tmp, len, "%s.tmp.%ld", path, (long)getpid());
	if (!freopen(*tmp, "w", stdout)) {
		cli_error("cannot write '%s': %s", path, strerror(errno));
		free(*tmp);
		*tmp = NULL;
		return -1;
	}
	stdout_tmp_slot = lp_tmp_track(*tmp);
	return 0;
}

int cli_stdout_commit(const char *path, char *tmp, int keep)
{
	int rc = 0;

	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("cannot write '%s': %s", path, strerror(errno));
		keep = 0;
		rc = -1;
	}
	if (keep && rename(tmp, path) < 0) {
		cli_error("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		rc = -1;
	}
	if (!keep || rc < 0)
		remove(tmp);
	if (stdout_tmp_slot >= 0)
		lp_tmp_untrack(stdout_tmp_slot);
	stdout_tmp_slot = -1;
	free(tmp);
	return rc;
}

int cli_has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && !strcmp(s + n - k, suffix) && s[n - k - 1] != '/';
}

int cli_few_samples(size_t samples, uint64_t accesses, double *points, double *rate, double *expect)
{
	if (samples >= CLI_FEW_SAMPLES || !accesses)
		return 0;
	*points = 100 * LP_INTERVAL_Z * sqrt(0.25 / fmax(1.0, (double)samples));
	*rate = fmin(1.0, pow(10, ceil(log10(CLI_ENOUGH_SAMPLES / (double)accesses))));
	*expect = (double)accesses * *rate;
	return 1;
}
