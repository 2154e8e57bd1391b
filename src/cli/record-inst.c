/* The `inst` backend of locprof record: the program was built with
 * `locprof cc`, so its runtime speaks to the collector by itself. */
#include "cli.h"
#include "record.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 if the ELF file has a symbol (static or dynamic) starting with one of
 * the instrumentation callback names, 0 if not, -1 if it is not readable
 * as ELF (a script, say). */
static int elf_instrumented(const char *path)
{
	static const char *const names[] = { "__sanitizer_cov_load", "__sanitizer_cov_store",
					     "__tsan_read", "__tsan_write" };
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	struct stat st;
	const uint8_t *f;
	const Elf64_Ehdr *eh;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	f = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f == MAP_FAILED)
		return -1;
	eh = (const Elf64_Ehdr *)f;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)st.st_size) {
		munmap((void *)f, (size_t)st.st_size);
		return -1;
	}
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum && !found; i++) {
		if (sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM)
			continue;
		if (sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (sh[i].sh_offset + sh[i].sh_size > (uint64_t)st.st_size ||
		    str->sh_offset + str->sh_size > (uint64_t)st.st_size || !sh[i].sh_entsize)
			continue;
		const char *strs = (const char *)f + str->sh_offset;
		for (uint64_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym) && !found; k++) {
			const Elf64_Sym *s = (const Elf64_Sym *)(f + sh[i].sh_offset) + k;
			if (s->st_name >= str->sh_size)
				continue;
			const char *name = strs + s->st_name;
			size_t max = str->sh_size - s->st_name;
			for (size_t j = 0; j < sizeof(names) / sizeof(names[0]); j++)
				if (strnlen(name, max) < max && !strncmp(name, names[j], strlen(names[j])))
					found = 1;
		}
	}
	munmap((void *)f, (size_t)st.st_size);
	return found;
}

static const char *check(const struct record_request *req)
{
	if (req->counter)
		return "--counter is for --backend pmu";
	if (req->nbackend_opts)
		return "the inst backend takes no -X options";
	if (req->max_skid)
		return "--max-skid is for --backend pmu";
	return NULL;
}

/* --samples N starts at this rate and halves it online (docs/runtime.md). */
#define INST_START_RATE (1.0 / 128)

static int run(const struct record_request *req)
{
	static struct record_request r;
	uint64_t connections;
	int ran, st;

	r = *req;
	if (r.target_samples) {
		r.opts.target_samples = r.target_samples;
		r.opts.rate = INST_START_RATE;
	}
	req = &r;
	st = record_with_collector(req, req->prog, req->argv, NULL, &connections, &ran);

	if (ran && !connections) {
		if (elf_instrumented(req->prog) != 1) {
			cli_error("'%s' is not instrumented: rebuild it with 'locprof cc' "
				  "(e.g. locprof cc -O2 prog.c -o prog), or use --backend valgrind",
				  req->argv[0]);
			return CLI_ERROR;
		}
		if (!req->quiet)
			cli_note("no profile: '%s' made no instrumented memory reference", req->argv[0]);
	}
	return st;
}

const struct record_backend record_backend_inst = {
	.name = "inst",
	.summary = "programs built with `locprof cc` (compiler instrumentation)",
	.check = check,
	.run = run,
};
