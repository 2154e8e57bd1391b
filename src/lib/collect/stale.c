/* Clearing what killed recordings left behind: the temporary files
 * (NAME.tmp.PID, common/io.c) of a recorder's outputs whose process is
 * gone. A recorder killed by SIGKILL, or by a crash of the machine, cannot
 * remove its own; the next recording to the same output does. */
#include <locprof/recorder.h>

#include "common/error.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

struct output_names {
	const char *base; /* OUT without its directory */
	size_t stem;      /* base's length without its extension */
};

static const char *skip_digits(const char *p)
{
	const char *start = p;

	while (*p >= '0' && *p <= '9')
		p++;
	return p > start ? p : NULL;
}

/* OUT itself, or a name the recorder gives another process's output:
 * stem.PID.ext or stem.PID-K.ext (collect.c, output_name()). */
static int is_output_name(const char *name, void *ctx)
{
	const struct output_names *o = ctx;
	const char *p;

	if (!strcmp(name, o->base))
		return 1;
	if (strncmp(name, o->base, o->stem) || name[o->stem] != '.')
		return 0;
	if (!(p = skip_digits(name + o->stem + 1)))
		return 0;
	if (*p == '-' && !(p = skip_digits(p + 1)))
		return 0;
	return !strcmp(p, o->base + o->stem);
}

int lp_recorder_remove_stale(const char *output)
{
	const char *slash = strrchr(output, '/'), *dot;
	char dir[PATH_MAX];
	struct output_names o;

	if (!strcmp(output, "-"))
		return 0;
	o.base = slash ? slash + 1 : output;
	if (!*o.base)
		return lp_seterr(LP_EINVAL, "output '%s' names a directory", output);
	if (slash && (size_t)(slash - output) >= sizeof(dir))
		return lp_seterr(LP_EINVAL, "output directory too long");
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", slash == output ? 1 : (int)(slash - output), output);
	else
		snprintf(dir, sizeof(dir), ".");
	dot = strrchr(o.base, '.');
	o.stem = dot && dot != o.base ? (size_t)(dot - o.base) : strlen(o.base);
	return lp_tmp_remove_stale(dir, is_output_name, &o);
}
