/* Thread-local storage under the valgrind tool: each thread's instance of
 * every module's static TLS block (the executable's _Thread_local and
 * __thread variables, OpenMP threadprivate ones, a library's own), sent
 * once per thread as the runtime of `locprof cc` sends them (rt-tls.c),
 * so that `report` names a sampled address in it by the module's TLS
 * symbol (docs/valgrind.md, "Thread-local storage").
 * The preload measures, in the thread that loads it, how far below the
 * thread pointer each block starts (the same in every thread: static TLS
 * of x86-64's variant II) and registers the distances with its hooks
 * (vg-preload.c); a thread's blocks then lie below its own thread
 * pointer, the guest's %fs base. A thread is sent its blocks when it
 * first runs with a thread pointer after the registration; the thread
 * that registers, at once. Without the preload (-X --allocs=no or
 * replace) nothing is sent. */
#include "vg-tool.h"
#include "vg-preload.h"

static struct {
	ULong below, size, image;
} segs[LPVG_TLS_MAX];
static UInt nsegs;

void lpvg_tls_register(const struct lpvg_hooks *h)
{
	nsegs = 0;
	for (UWord i = 0; i < h->ntls && i < LPVG_TLS_MAX; i++) {
		if (!h->tls_size[i] || h->tls_below[i] < h->tls_size[i])
			continue; /* not wholly below the thread pointer */
		segs[nsegs].below = h->tls_below[i];
		segs[nsegs].size = h->tls_size[i];
		segs[nsegs++].image = h->tls_image[i];
	}
}

void lpvg_tls_thread(struct lpvg_thread *t, const UChar *gsp)
{
	ULong tp;

	if (!nsegs || !t || t->tls_sent || t->dead)
		return;
	tp = *(const ULong *)(gsp + offsetof(VexGuestAMD64State, guest_FS_CONST));
	if (!tp)
		return; /* no thread pointer yet */
	t->tls_sent = True;
	for (UInt i = 0; i < nsegs; i++)
		if (segs[i].below <= tp)
			lpvg_event(t, tp - segs[i].below, segs[i].size, LP_MSG_EV_TLS, segs[i].image);
}
