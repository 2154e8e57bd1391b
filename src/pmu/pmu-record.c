/* lp_pmu_record (locprof/pmu.h): the engine's process images, samples and
 * references handed to a recorder (locprof/recorder.h), which writes them
 * through the same sample sinks and trace writer as the other backends'
 * (src/lib/collect). Each image's output is finished when the image ends
 * (exit, crash, kill, or exec into another program), so a target that
 * dies keeps its samples. Clocks are per image (the references of its
 * threads, like a profile of that process alone); unlike the inst backend,
 * a line reused by another thread of the same process ends a sample (a
 * shared-cache view). Allocation events (the preloaded interposer,
 * lp_pmu_options.alloc_preload) go to the profile's events, with their
 * call stacks, or into the trace at their place among the references. */
#include <locprof/pmu.h>
#include <locprof/recorder.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "common/error.h"
#include "pmu-sampler.h"

struct pmu_record {
	const struct lp_pmu_options *o;
	struct lp_recorder *r;
};

/* The whole of a small /proc file (NUL-terminated), or NULL. */
static char *read_proc_file(int pid, const char *what, size_t *len)
{
	char path[64], *buf = NULL;
	size_t n = 0, cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, what);
	if (!(f = fopen(path, "re")))
		return NULL;
	for (;;) {
		if (n + 4097 > cap) {
			char *b = realloc(buf, cap = cap ? 2 * cap : 8192);

			if (!b)
				break;
			buf = b;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		if (!got)
			break;
		n += got;
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	*len = n;
	return buf;
}

static void on_image(void *ctx, const struct lp_pmu_image *img)
{
	struct pmu_record *pr = ctx;
	struct lp_record_image ri = { .pid = (uint32_t)img->pid, .ppid = (uint32_t)img->ppid,
				      .source = "pmu" };
	struct timespec now;
	size_t len = 0;
	char *cmd = read_proc_file(img->pid, "cmdline", &len);
	uint32_t id;

	if (img->id == 0 && pr->o->on_start)
		pr->o->on_start(img->pid);
	/* argv without the empty arguments at its end */
	while (cmd && len && !cmd[len - 1])
		len--;
	clock_gettime(CLOCK_REALTIME, &now);
	ri.start_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	ri.cmdline = cmd ? cmd : "";
	ri.cmdline_len = cmd ? len : 0;
	/* The recorder numbers images as the engine does (in order of
	 * appearance); an error stays with the image's output. */
	lp_recorder_image_begin(pr->r, &ri, &id);
	free(cmd);
}

/* The executable file mappings of /proc/PID/maps not yet known. */
static void on_maps(void *ctx, uint32_t image, int pid)
{
	struct pmu_record *pr = ctx;
	size_t len = 0;
	char *text = read_proc_file(pid, "maps", &len);

	if (text)
		lp_recorder_image_maps(pr->r, image, text, len);
	free(text);
}

static void on_sample(void *ctx, const struct lp_pmu_sample *s)
{
	struct pmu_record *pr = ctx;
	/* The engine's clock is 1-based (the value after the reference); a
	 * profile's time counts the references before it. A hardware clock
	 * that is not exact (compensation off by a few counts) can put the
	 * end at or before the begin: the reuse was then as short as it gets
	 * (distance 0, Eq. 3.4). */
	struct lp_record_sample x = {
		.begin = s->ibegin - 1,
		.end = s->dangling ? LP_RECORD_DANGLING : s->iend > s->ibegin ? s->iend - 1 : s->ibegin,
		.pc = s->pc, .addr = s->addr, .reuse_pc = s->dangling ? 0 : s->end_pc,
		.thread = s->itid, .size = s->size, .kind = s->kind, .line_index = s->line_idx,
	};

	lp_recorder_image_samples(pr->r, s->image, &x, 1);
}

static void on_ref(void *ctx, uint64_t when, uint32_t image, uint32_t itid, const struct lp_ref *ref)
{
	struct pmu_record *pr = ctx;
	struct lp_ref x = *ref;

	x.tid = itid;
	lp_recorder_image_refs(pr->r, image, &x, 1);
}

static void on_alloc(void *ctx, uint32_t image, const struct lp_ref *ev, size_t n)
{
	struct pmu_record *pr = ctx;

	lp_recorder_image_events(pr->r, image, ev, n);
}

static void on_image_end(void *ctx, const struct lp_pmu_image_end *end)
{
	struct pmu_record *pr = ctx;
	struct lp_record_image_end re = {
		.references = end->refs, .threads = end->threads, .thread_refs = end->thread_refs,
		.exec = end->exec,
	};

	if (end->exited)
		re.status = WIFSIGNALED(end->status) ? -WTERMSIG(end->status) : WEXITSTATUS(end->status);
	lp_recorder_image_end(pr->r, end->id, &re);
}

int lp_pmu_record(const struct lp_pmu_options *o, struct lp_recorder *r, char *const argv[],
		  struct lp_pmu_stats *stats, int *status)
{
	struct pmu_record pr = { .o = o, .r = r };
	struct lp_pmu_hooks h = { .ctx = &pr, .on_image = on_image, .on_image_end = on_image_end,
				  .on_maps = on_maps, .on_sample = on_sample,
				  .on_alloc = on_alloc };

	if (lp_recorder_mode(r) == LP_RECORD_TRACE) {
		h.on_ref = on_ref;
		h.on_sample = NULL;
	}
	return lp_pmu_run(o, &h, argv, stats, status);
}
