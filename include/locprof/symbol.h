/* locprof/symbol.h - symbolisation.
 *
 * lp_symbols maps a pc to function + file:line and a data address to the
 * global or static variable (ELF STT_OBJECT symbol with a size) holding it,
 * with elfutils' libdwfl, from the mappings a trace carries or from one
 * non-PIE executable. The MemSpy attribution that uses it (lp_attrib) is
 * in locprof/report.h. */
#ifndef LOCPROF_SYMBOL_H
#define LOCPROF_SYMBOL_H

#include <locprof/common.h>
#include <locprof/mapping.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lp_symbols;

/* maps may be NULL; binary (a non-PIE executable, used at its link
 * addresses) may be NULL. At least one must be given. A mapping with a
 * build-id is skipped when the file at its path has another one (it was
 * rebuilt since the run); LP_EINVAL when no file at all could be used. */
int lp_symbols_new(struct lp_symbols **out, const struct lp_mappings *maps, const char *binary);
void lp_symbols_free(struct lp_symbols *s);
/* A message naming the mapped files skipped because their build-id
 * changed, or NULL. */
const char *lp_symbols_warning(const struct lp_symbols *s);

/* Strings are owned by s and valid until lp_symbols_free(). */
/* Names are as a person reads them: C++ demangled without parameters
 * (`std::vector<...>::push_back`), an outlined OpenMP region named after
 * the function enclosing it (`work [omp region]`). Where pc lies in
 * inlined code, function/file/line are the innermost inlined function and
 * its line, and caller is the function it was inlined into, at the line of
 * the call there; label says both:
 * `std::__cxx11::basic_string<...>::size (basic_string.h:1064) in main (prog.cpp:42)`. */
struct lp_code_loc {
	const char *function; /* NULL when unknown */
	const char *file;     /* NULL when there is no line information */
	const char *path;     /* file's path as the debug info names it (with
			       * the compilation directory when relative);
			       * set with file */
	int line;             /* > 0 where file is set */
	int column;           /* 0 when unknown */
	const char *caller;   /* NULL when pc is not in inlined code */
	const char *caller_file; /* the call site in caller; NULL when unknown */
	int caller_line;
	const char *module;   /* the shared library holding pc, by its soname
			       * ("libgomp.so.1"); NULL in the executable */
	const char *label;    /* "function (file:line)[ in caller (file:line)]", without a line
			       * in a shared library "module:function"; NULL when function is */
};
/* 1 when something was found, 0 when the pc is unknown. Answers are
 * cached per pc. */
int lp_symbols_pc(struct lp_symbols *s, uint64_t pc, struct lp_code_loc *out);

/* A symbol name as a person reads it (a C++ one demangled without its
 * parameters: `typeinfo for std::type_info`, `geo::table`); owned by s. */
const char *lp_symbols_readable(struct lp_symbols *s, const char *name);

/* Where pc's innermost function is the C++ standard library's, inlined
 * into the program's code (std::, __gnu_cxx::): 1, the innermost function
 * of its inline chain that is the program's, and the line (path as
 * lp_code_loc's) of its call into the library; else 0 (pc's own line is
 * the program's, or pc has no DWARF). Owned by s. */
int lp_symbols_own_line(struct lp_symbols *s, uint64_t pc, const char **function, const char **path, int *line);

/* The thread-local variable (ELF STT_TLS symbol) at offset bytes into the
 * TLS segment of the module holding address image: 1 and its readable
 * name, or 0. The symbols are gathered on the first call. */
int lp_symbols_tls(struct lp_symbols *s, uint64_t image, uint64_t offset, const char **name);

/* The name of the module holding pc: a library's soname (DT_SONAME,
 * "libgomp.so.1" where the file is libgomp.so.1.0.0), else its file's
 * base name (the executable's); NULL when none. Owned by s. */
const char *lp_symbols_module(struct lp_symbols *s, uint64_t pc);

/* A pc without a function's name, as a person can look it up: "gzip+0x430e"
 * (the module's name, lp_symbols_module(), and the pc's address in its
 * ELF file, the one addr2line -e and the debug info take) and 1, else
 * the pc in hex ("0x10c30e", also when s is NULL) and 0. Into buf. */
int lp_symbols_pc_address(struct lp_symbols *s, uint64_t pc, char *buf, size_t len);

/* Where a heap block was allocated, as a person names it: the first frame
 * of its allocation's call stack (innermost first) outside the allocator
 * and the runtimes' wrappers (operator new, std::allocator and the other
 * std:: and __gnu_cxx:: code, malloc and its libc relatives, libgomp,
 * libomp, libstdc++, locprof's runtime); in a frame whose innermost
 * inlined function is such a wrapper, the function it was inlined into at
 * the line of the call. A frame without a function's name (a stripped
 * binary's) outside those runtimes' libraries is the user's code: nothing
 * says it is a wrapper, and its address names the call site. When every
 * frame is a wrapper (a block that libgomp allocates for a worker
 * thread), the first frame outside libc's allocator, named by its library
 * and symbol. */
struct lp_alloc_site {
	uint64_t pc;          /* the frame that names it */
	const char *function; /* NULL when unknown */
	const char *file;     /* NULL when there is no line information */
	int line, column;     /* column 0 when unknown */
	const char *caller;   /* the function that one is inlined into (NULL:
			       * not inlined, or not known), called at */
	const char *caller_file; /* caller_file:caller_line (NULL: unknown) */
	int caller_line;
	const char *module;   /* the shared library holding pc ("libgomp.so.1"),
			       * NULL in the executable */
	const char *binary;   /* the module holding pc, the executable included
			       * (lp_symbols_module()); NULL when none does */
	uint64_t address;     /* pc's address in binary's ELF file */
};
/* frames: n >= 1 return addresses, innermost first (a stack of one frame
 * is a block known by its call site alone). 1 when a frame was named, 0
 * when none could be (out is then frames[0], by its address alone). */
int lp_symbols_alloc_site(struct lp_symbols *s, const uint64_t *frames, unsigned n, struct lp_alloc_site *out);
/* The program's own allocation wrappers, which lp_symbols_alloc_site()
 * looks through as it does through malloc's (so that gnulib's xmalloc or
 * Lua's luaM_malloc_ does not name every block it serves as one object).
 * A frame is one when its function (its readable name) matches a pattern
 * the user gave to lp_symbols_alloc_wrappers() (fnmatch(3)), inlined or
 * not; or when its name holds "alloc", "strdup" or "memdup" (any case)
 * and, in the stacks given to lp_symbols_alloc_stack(), its frame is
 * reached from two or more call sites (not inlined) or is the function's
 * only one (inlined: its instance's); a function with two frames or more
 * there and one caller (alloc_arrays(), one array a line) still names
 * each block by its line. Without stacks, only the user's names. Give
 * every stack of the profile and the names before naming sites (each call
 * forgets the sites named). 0, or LP_ENOMEM (then fewer frames are taken
 * for wrappers). */
int lp_symbols_alloc_stack(struct lp_symbols *s, const uint64_t *frames, unsigned n);
int lp_symbols_alloc_wrappers(struct lp_symbols *s, const char *const *names, size_t n);
/* "ns::func (file.cpp:12)", "libgomp.so.1:gomp_malloc", without a function
 * its binary and address as lp_symbols_pc_address() writes a pc
 * ("sort+0x430e"), else the pc in hex ("0x7f3a..."). */
void lp_alloc_site_format(const struct lp_alloc_site *site, int with_column, char *buf, size_t len);
/* site's name as lp_alloc_site_format() gives it, told apart from the
 * other allocation calls on its line among the frames of the stacks told
 * (lp_symbols_alloc_stack()): with its column where one is at another
 * column ("main (cg.c:62:19)"), and with its place among the calls at its
 * very column where there are several ("heat (stencil.f90:7, call 2 of
 * 2)": Fortran's allocate(a(n), b(n)), a macro). Without stacks or calls
 * told (lp_symbols_alloc_call()), the name without either. */
void lp_symbols_alloc_site_name(struct lp_symbols *s, const struct lp_alloc_site *site, char *buf, size_t len);
/* An allocation's call site told without its call stack (a profile or
 * trace without stacks): counted among the calls on its line by
 * lp_symbols_alloc_site_name(), not as a frame of the stacks. */
int lp_symbols_alloc_call(struct lp_symbols *s, uint64_t pc);

struct lp_data_sym {
	const char *name;
	uint64_t start, size;
};
/* 1 when addr lies inside a sized STT_OBJECT symbol, else 0. A binary
 * search in a table of all data symbols, built on the first call. */
int lp_symbols_data(struct lp_symbols *s, uint64_t addr, struct lp_data_sym *out);

/* Whether the ELF file at path was built with `locprof cc`: it carries the
 * runtime's section or names its symbols (a stripped file keeps the
 * section). 1 or 0; LP_EFORMAT when the file is not ELF (a script, say),
 * LP_EIO when it cannot be opened. */
int lp_binary_instrumented(const char *path);

/* Whether the program at path marks its region of interest: it calls
 * locprof_start() of locprof/roi.h somewhere (the note section that
 * leaves). 1 or 0; LP_EFORMAT (not ELF) or LP_EIO. */
int lp_binary_marks_region(const char *path);

/* A function of an ELF file, found by name for record --start-at. */
struct lp_binary_function {
	uint64_t addr;    /* link-time address of its entry */
	int pie;          /* the file is position-independent: add the load bias */
	char symbol[512]; /* its symbol (mangled for C++) */
	char display[512]; /* its name as valgrind prints it: C++ demangled, with parameters */
};
/* Find the function that name names: a symbol of type function, by its
 * own name or, for C++, by its demangled name with or without the
 * parameters ("solve", "ns::solve", "solve(double*, int)"). 0; LP_EINVAL
 * when there is none or several (lp_errmsg() says which); LP_EFORMAT,
 * LP_EIO. */
int lp_binary_function(const char *path, const char *name, struct lp_binary_function *out);

#ifdef __cplusplus
}
#endif
#endif
