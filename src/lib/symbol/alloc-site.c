/* Naming a heap block by its allocation's call stack (locprof/symbol.h,
 * lp_symbols_alloc_site). A C++ program allocates almost everything
 * through operator new, called from std::allocator inside the container
 * code, so the call site of malloc names one object for the whole heap;
 * the site a person recognises is the first frame of their own code.
 * Which frames are wrappers is decided by the function's readable name
 * (the std and __gnu_cxx namespaces, operator new, the malloc family,
 * the OpenMP runtimes' entry points) and by the library holding the frame
 * (libc, libstdc++, libgomp, libomp...): both, because a library without
 * symbols still has its file name, and inlined std:: code sits in the
 * user's executable. A stripped program's frames have no names: outside
 * those libraries they are taken as the user's, and named by module and
 * address as its pcs are, so that its call sites stay apart.
 *
 * A program's own wrappers (gnulib's xmalloc, glib's g_malloc, Lua's
 * luaM_malloc_) would name every block they serve as one object. They
 * are told by name and by shape: a function whose name holds "alloc",
 * "strdup" or "memdup" is a wrapper where its call into the allocator
 * was reached from two or more call sites among the profile's stacks,
 * or where it is the function's only frame in them; not where it was
 * reached from one call site and the function has other frames (a
 * program's alloc_arrays(), called once, allocating each array on a
 * line of its own: those lines tell the arrays apart, its one caller's
 * would not). The user can name others (lp_symbols_alloc_wrappers());
 * those are wrappers wherever they are, inlined or not. An inlined copy
 * of a wrapper (LTO inlines xz's lzma_alloc_zero into each caller) is one
 * frame per copy: a wrapper where its instance has no other frame, its
 * caller's line naming. A stripped program has no names: there the frame
 * that calls the allocator gives way to its caller where it is reached
 * from several call sites, one level only (past that, every function
 * called from two places would be looked through up to main). */
#include "common/error.h"
#include "symbol/symbol-internal.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The C library's allocator and locprof's own runtime: never a site. */
static int allocator_name(const char *f)
{
	static const char *const exact[] = { "malloc", "calloc", "realloc", "reallocarray", "free",
					     "memalign", "aligned_alloc", "posix_memalign", "valloc",
					     "pvalloc", "strdup", "strndup", "mmap", "mmap64", "munmap" };
	static const char *const prefix[] = { "__libc_", "_int_", "__GI_", "lp_rt_", "__sanitizer_",
					      "__interceptor_", "__tsan_", "_vgr" };

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(f, exact[i]))
			return 1;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (has_prefix(f, prefix[i]))
			return 1;
	return 0;
}

/* Allocator and runtime wrappers: the C++ standard library (operator
 * new, std::allocator, the containers' internals, std::thread's
 * trampolines, the exception runtime) and the OpenMP runtimes. */
static int runtime_wrapper_name(const char *f)
{
	static const char *const prefix[] = { "operator new", "operator delete", "std::", "__gnu_cxx::",
					      "__cxxabiv1::", "__cxa_", "_Unwind_", "__gthread", "GOMP_",
					      "gomp_", "__kmp", "kmp_", "omp_" };

	if (!f)
		return 0;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (has_prefix(f, prefix[i]))
			return 1;
	return allocator_name(f);
}

/* One of the wrappers the user named. */
static int user_wrapper_name(struct lp_symbols *s, const char *f)
{
	const struct lp_alloc_wrappers *w = lp_symbols_wrappers(s);

	for (size_t i = 0; f && i < w->nnames; i++)
		if (!fnmatch(w->names[i], f, 0))
			return 1;
	return 0;
}

/* What an inline chain is looked through for (lp_symbols_inline_first). */
static int wrapper_name(struct lp_symbols *s, const char *f)
{
	return runtime_wrapper_name(f) || user_wrapper_name(s, f);
}

static int contains_nocase(const char *s, const char *part)
{
	size_t n = strlen(part);

	for (; *s; s++)
		if (!strncasecmp(s, part, n))
			return 1;
	return 0;
}

/* Whether the stacks told reach frame pc from several call sites. */
static int many_callers(struct lp_symbols *s, uint64_t pc)
{
	struct lp_alloc_wrappers *w = lp_symbols_wrappers(s);
	uint64_t *caller;

	return w->callers.s && (caller = lp_htab_find(&w->callers, pc)) && *caller == LP_ALLOC_MANY_CALLERS;
}

/* Whether code locations a and b are the same inlined instance of their
 * function: both not inlined, or inlined into one caller at one call line
 * of one file. */
static int same_instance(const struct lp_code_loc *a, const struct lp_code_loc *b)
{
	return !a->caller == !b->caller &&
	       (!a->caller || (!strcmp(a->caller, b->caller) && a->caller_line == b->caller_line &&
			       !a->caller_file == !b->caller_file &&
			       (!a->caller_file || !strcmp(a->caller_file, b->caller_file))));
}

/* Whether the stacks told hold a frame other than pc in the same
 * function as loc (the same inlined instance of it: the same caller and
 * call line): a function that calls toward the allocator from two places
 * or more (alloc_arrays(), one array a line), not a wrapper's one call.
 * Every frame of the stacks is looked up once (lp_symbols_pc()
 * remembers). */
static int same_function_frame(struct lp_symbols *s, uint64_t pc, const struct lp_code_loc *loc)
{
	struct lp_alloc_wrappers *w = lp_symbols_wrappers(s);
	struct lp_code_loc o;

	for (size_t i = 0; w->callers.s && i <= w->callers.mask; i++) {
		uint64_t key = w->callers.s[i].key;
		if (key != LP_HTAB_EMPTY && key != pc && lp_symbols_pc(s, key, &o) && o.function &&
		    !strcmp(o.function, loc->function) && same_instance(&o, loc))
			return 1;
	}
	return 0;
}

/* A program's own wrapper at frame pc (loc: its function, and the one it
 * is inlined into): named so by the user; or named like one, where the
 * profile's stacks were told, and either reached from several call sites
 * (not inlined) or calling toward the allocator from this one place only
 * (then its caller's line says more than its own). */
static int program_wrapper(struct lp_symbols *s, uint64_t pc, const struct lp_code_loc *loc)
{
	const char *f = loc->function;

	if (user_wrapper_name(s, f))
		return 1;
	if (!lp_symbols_wrappers(s)->callers.s ||
	    (!contains_nocase(f, "alloc") && !contains_nocase(f, "strdup") && !contains_nocase(f, "memdup")))
		return 0;
	return (!loc->caller && many_callers(s, pc)) || !same_function_frame(s, pc, loc);
}

void lp_alloc_wrappers_release(struct lp_alloc_wrappers *w)
{
	lp_htab_release(&w->callers);
	lp_htab_release(&w->line_answers);
	lp_htab_release(&w->calls);
	for (size_t i = 0; i < w->nnames; i++)
		free(w->names[i]);
	free(w->names);
	*w = (struct lp_alloc_wrappers){ 0 };
}

/* How site's name tells it from the other calls on its line (its
 * function, file and line) among the frames of the stacks told: bit 0,
 * one at another column (two allocations on one line, `double *r =
 * malloc(n), *p = malloc(n)`: the column tells them apart); bit 1, one
 * at its column in another inlined instance of a template (its name
 * holds <...>: `count_words<std::map<..>>` and `count_words<std::
 * unordered_map<..>>` inlined into main, a tree's nodes and a hash
 * table's, read `count_words<...>` both: the caller's line tells them
 * apart); bits 8 to 31 its rank k and 32 up the number n of the calls at
 * its very column in the same inlined instance when n > 1 (Fortran's
 * `allocate(a(n), b(n))`, a macro: only the order of the calls tells
 * them apart). */
#define ALLOC_OTHER_INSTANCE 2
static int user_frame(struct lp_symbols *s, uint64_t pc, struct lp_alloc_site *out);

static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* ALLOC_OTHER_INSTANCE where a frame of the stacks told is named as site
 * (function, file, line and column) from another caller or call line. */
static uint64_t other_instance(struct lp_symbols *s, const struct lp_alloc_site *site)
{
	struct lp_alloc_wrappers *w = lp_symbols_wrappers(s);
	struct lp_alloc_site f;

	for (size_t i = 0; w->callers.s && i <= w->callers.mask; i++) {
		uint64_t key = w->callers.s[i].key;
		if (key == LP_HTAB_EMPTY || key == site->pc || !user_frame(s, key, &f) || !f.function ||
		    !same_text(f.function, site->function) || !same_text(f.file, site->file) ||
		    f.line != site->line || f.column != site->column)
			continue;
		if (!same_text(f.caller, site->caller) || !same_text(f.caller_file, site->caller_file) ||
		    f.caller_line != site->caller_line)
			return ALLOC_OTHER_INSTANCE;
	}
	return 0;
}

static uint64_t line_answer(struct lp_symbols *s, const struct lp_alloc_site *site)
{
	struct lp_alloc_wrappers *w = lp_symbols_wrappers(s);
	const struct lp_htab *sets[2] = { &w->callers, &w->calls };
	struct lp_code_loc me, o;
	uint64_t column = 0, before = 0, same = 0, instance = 0;
	/* the site named by its own frame (not by the caller of an inlined
	 * wrapper, at another line): its calls can be counted */
	int own = lp_symbols_pc(s, site->pc, &me) && me.function && me.file && me.line == site->line &&
		  me.column == site->column && !strcmp(me.function, site->function) && !strcmp(me.file, site->file);

	for (int t = 0; t < 2; t++)
		for (size_t i = 0; sets[t]->s && i <= sets[t]->mask; i++) {
			uint64_t key = sets[t]->s[i].key;
			/* each pc once: a call told alone may be a stack's frame too */
			if (key == LP_HTAB_EMPTY || key == site->pc || (t && w->callers.s && lp_htab_find(&w->callers, key)) ||
			    !lp_symbols_pc(s, key, &o) || !o.function || !o.file || o.line != site->line ||
			    strcmp(o.function, site->function) || strcmp(o.file, site->file))
				continue;
			if (site->column && o.column && o.column != site->column)
				column = 1;
			else if (own && o.column == site->column && same_instance(&o, &me)) {
				same++;
				before += key < site->pc;
			}
		}
	if (site->caller && strstr(site->function, "<...>"))
		instance = other_instance(s, site);
	return column | instance | (same ? (before + 1) << 8 | (same + 1) << 32 : 0);
}

/* ", in CALLER (FILE:LINE)" of site's inlined instance after buf's name. */
static void append_caller(const struct lp_alloc_site *site, char *buf, size_t len)
{
	size_t n = strlen(buf);

	if (!site->caller || n + 1 >= len)
		return;
	if (site->caller_file)
		snprintf(buf + n, len - n, " in %s (%s:%d)", site->caller, site->caller_file, site->caller_line);
	else
		snprintf(buf + n, len - n, " in %s", site->caller);
}

void lp_symbols_alloc_site_name(struct lp_symbols *s, const struct lp_alloc_site *site, char *buf, size_t len)
{
	struct lp_alloc_wrappers *w;
	uint64_t *v, a = 0;
	size_t n;
	int isnew;

	if (s && site->function && site->file) {
		w = lp_symbols_wrappers(s);
		if ((w->callers.s || w->calls.s) && (w->line_answers.s || lp_htab_init(&w->line_answers, 64) == 0) &&
		    lp_htab_reserve(&w->line_answers, 1) == 0) {
			if ((v = lp_htab_find(&w->line_answers, site->pc)))
				a = *v;
			else
				*lp_htab_get(&w->line_answers, site->pc, &isnew) = a = line_answer(s, site);
		}
	}
	lp_alloc_site_format(site, (int)(a & 1), buf, len);
	n = strlen(buf);
	if (a >> 32 && n && buf[n - 1] == ')')
		snprintf(buf + n - 1, len - (n - 1), ", call %u of %u)", (unsigned)(a >> 8 & 0xffffff),
			 (unsigned)(a >> 32));
	if (a & ALLOC_OTHER_INSTANCE)
		append_caller(site, buf, len);
}

int lp_symbols_alloc_call(struct lp_symbols *s, uint64_t pc)
{
	struct lp_alloc_wrappers *w;
	int isnew;

	if (!s)
		return 0;
	w = lp_symbols_wrappers(s);
	if ((!w->calls.s && lp_htab_init(&w->calls, 64) < 0) || lp_htab_reserve(&w->calls, 1) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	*lp_htab_get(&w->calls, pc, &isnew) = 0;
	lp_htab_release(&w->line_answers); /* the calls change the answers */
	return 0;
}

int lp_symbols_alloc_stack(struct lp_symbols *s, const uint64_t *frames, unsigned n)
{
	struct lp_alloc_wrappers *w;

	if (!s)
		return 0;
	w = lp_symbols_wrappers(s);
	lp_symbols_forget_sites(s);
	lp_htab_release(&w->line_answers); /* the frames change the answers */
	if ((!w->callers.s && lp_htab_init(&w->callers, 64) < 0) || lp_htab_reserve(&w->callers, n) < 0)
		return lp_seterr(LP_ENOMEM, "out of memory");
	for (unsigned f = 0; f < n; f++) {
		uint64_t caller = f + 1 < n ? frames[f + 1] : 0, *v;
		int isnew;

		v = lp_htab_get(&w->callers, frames[f], &isnew);
		if (isnew)
			*v = caller;
		else if (*v != caller)
			*v = LP_ALLOC_MANY_CALLERS;
	}
	return 0;
}

int lp_symbols_alloc_wrappers(struct lp_symbols *s, const char *const *names, size_t n)
{
	struct lp_alloc_wrappers *w;
	char **v;

	if (!s || !n)
		return 0;
	w = lp_symbols_wrappers(s);
	lp_symbols_forget_sites(s);
	if (!(v = realloc(w->names, (w->nnames + n) * sizeof(*v))))
		return lp_seterr(LP_ENOMEM, "out of memory");
	w->names = v;
	for (size_t i = 0; i < n; i++, w->nnames++)
		if (!(w->names[w->nnames] = strdup(names[i])))
			return lp_seterr(LP_ENOMEM, "out of memory");
	return 0;
}

/* Libraries whose own frames are never the site a person looks for. */
static int runtime_library(const char *m)
{
	static const char *const prefix[] = { "libc.so",   "libc-",	      "libstdc++.so", "libgomp.so",
					      "libomp.so", "libiomp5.so", "libgcc_s.so",  "ld-linux",
					      "libc++.so", "libc++abi.so", "libpthread.so", "libtsan.so",
					      "libasan.so", "vgpreload_" };

	if (!m)
		return 0;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (has_prefix(m, prefix[i]))
			return 1;
	return 0;
}

/* The allocator proper (libc, the preloads and runtimes that replace
 * malloc): skipped even when nothing else names the block. */
static int allocator_library(const char *m)
{
	return m && (has_prefix(m, "libc.so") || has_prefix(m, "libc-") || has_prefix(m, "ld-linux") ||
		     has_prefix(m, "vgpreload_") || has_prefix(m, "libtsan.so") || has_prefix(m, "libasan.so"));
}

static int shared_library(const char *m)
{
	return m && strstr(m, ".so") != NULL;
}

/* The frame at pc known by its address alone, for a name that tells it
 * from the program's other frames where it has no function's name. */
static struct lp_alloc_site frame_address(struct lp_symbols *s, uint64_t pc, const char *module)
{
	struct lp_alloc_site f = { .pc = pc, .module = shared_library(module) ? module : NULL };

	lp_symbols_pc_file_address(s, pc, &f.binary, &f.address);
	return f;
}

/* The frame at pc by its function and line (loc, lp_symbols_pc()'s). */
static struct lp_alloc_site frame_named(struct lp_symbols *s, uint64_t pc, const char *module,
					 const struct lp_code_loc *loc)
{
	struct lp_alloc_site f = frame_address(s, pc, module);

	f.function = loc->function;
	f.file = loc->file;
	f.line = loc->line;
	f.column = loc->column;
	f.caller = loc->caller;
	f.caller_file = loc->caller_file;
	f.caller_line = loc->caller_line;
	return f;
}

/* The frame named by the function that loc's code is inlined into, at
 * the line of the call: 1, or 0 where it is not inlined or that function
 * is a wrapper too. */
static int caller_names(struct lp_symbols *s, const struct lp_code_loc *loc, struct lp_alloc_site *out)
{
	if (!loc->caller || wrapper_name(s, loc->caller))
		return 0;
	out->function = loc->caller;
	out->file = loc->caller_file;
	out->line = loc->caller_file ? loc->caller_line : 0;
	return 1;
}

/* Frame pc named as the user's code: 1 and *out, or 0 for a wrapper. */
static int user_frame_uncached(struct lp_symbols *s, uint64_t pc, struct lp_alloc_site *out)
{
	const char *module = lp_symbols_module(s, pc);
	struct lp_code_loc loc;

	*out = frame_address(s, pc, module);
	if (runtime_library(module))
		return 0;
	/* a stripped binary's frame (every Debian program's): no name says
	 * it is a wrapper, so it is the user's code, each call site by its
	 * own address; a pc outside every module is no frame to show */
	if (!lp_symbols_pc(s, pc, &loc) || !loc.function)
		return out->binary != NULL;
	if (!wrapper_name(s, loc.function)) {
		if (!program_wrapper(s, pc, &loc)) {
			*out = frame_named(s, pc, module, &loc);
			return 1;
		}
		/* the program's own wrapper: the whole frame, then the next
		 * frame names the block; inlined, the function it is in, at
		 * the line of the call */
		return caller_names(s, &loc, out);
	}
	/* inlined wrapper code (std::vector's growth inlined into the
	 * user's function): the innermost function of the inline chain that
	 * is not a wrapper, at its call into the wrappers */
	if (lp_symbols_inline_first(s, pc, wrapper_name, out, NULL))
		return 1;
	return caller_names(s, &loc, out);
}

static int user_frame(struct lp_symbols *s, uint64_t pc, struct lp_alloc_site *out)
{
	return lp_symbols_site_cached(s, pc, out, user_frame_uncached);
}

int lp_symbols_alloc_site(struct lp_symbols *s, const uint64_t *frames, unsigned n, struct lp_alloc_site *out)
{
	struct lp_alloc_site f;
	struct lp_code_loc loc;

	*out = (struct lp_alloc_site){ .pc = n ? frames[0] : 0 };
	if (!s)
		return 0;
	/* the frames tried are written to f, not *out: when none is named,
	 * the call site (frames[0]) names the block, not the last one tried */
	for (unsigned i = 0; i < n; i++)
		if (frames[i] && user_frame(s, frames[i], &f)) {
			*out = f;
			/* a stripped program's frame that calls the allocator and
			 * is reached from several call sites (gnulib's xmalloc in
			 * a distribution's binary, or a helper called twice): its
			 * caller names the block, one object per call of it */
			if (!f.function && i + 1 < n && frames[i + 1] && many_callers(s, frames[i]) &&
			    user_frame(s, frames[i + 1], &f))
				*out = f;
			return 1;
		}
	/* all wrappers: the first frame past the allocator, by library and
	 * symbol (a block libgomp allocates for its worker threads) */
	for (unsigned i = 0; i < n; i++) {
		const char *module = lp_symbols_module(s, frames[i]);

		if (!frames[i] || allocator_library(module))
			continue;
		if (!lp_symbols_pc(s, frames[i], &loc) || !loc.function)
			continue;
		if (allocator_name(loc.function) && !loc.caller)
			continue;
		*out = frame_named(s, frames[i], module, &loc);
		return 1;
	}
	/* nothing past the allocator: the call site, by its address in its
	 * module, never by the allocator's function (a block named "malloc"
	 * would look like every block) */
	if (n && frames[0])
		*out = frame_address(s, frames[0], lp_symbols_module(s, frames[0]));
	return 0;
}

void lp_alloc_site_format(const struct lp_alloc_site *site, int with_column, char *buf, size_t len)
{
	if (site->function && site->file && with_column && site->column)
		snprintf(buf, len, "%s (%s:%d:%d)", site->function, site->file, site->line, site->column);
	else if (site->function && site->file)
		snprintf(buf, len, "%s (%s:%d)", site->function, site->file, site->line);
	else if (site->function && site->module)
		snprintf(buf, len, "%s:%s", site->module, site->function);
	else if (site->function)
		snprintf(buf, len, "%s", site->function);
	else if (site->binary)
		snprintf(buf, len, "%s+%#" PRIx64, site->binary, site->address);
	else
		snprintf(buf, len, "%#" PRIx64, site->pc);
}
