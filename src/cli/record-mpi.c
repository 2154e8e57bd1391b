/* locprof record under an MPI launcher: `mpirun -np N locprof record -o
 * prof.lpp -- ./app` starts N locprofs, one per rank, each with the same
 * -o. Each takes its rank from the launcher's environment and writes
 * prof.rank<R>.lpp, so that the ranks neither overwrite each other's
 * profile nor keep one another's as .old; the rank and the world's size
 * go into the profile (docs/formats.md, RANK). */
#include "cli.h"
#include "record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The variables of Open MPI, of MPICH and Intel MPI (Hydra's PMI), and of
 * PMIx launchers (Slurm's srun --mpi=pmix), in that order. */
static const char *const rank_vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK" };
static const char *const size_vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE" };

static int env_u32(const char *name, uint32_t *out)
{
	const char *s = getenv(name);
	uint64_t v;

	if (!s || !*s || cli_parse_u64(s, &v) < 0 || v > UINT32_MAX)
		return 0;
	*out = (uint32_t)v;
	return 1;
}

int record_mpi_rank(uint32_t *rank, uint32_t *size)
{
	size_t i;

	*rank = *size = 0;
	for (i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++)
		if (env_u32(rank_vars[i], rank))
			break;
	if (i == sizeof(rank_vars) / sizeof(rank_vars[0]))
		return 0;
	/* PMIx alone gives no size variable: the size is then unknown (0). */
	for (i = 0; i < sizeof(size_vars) / sizeof(size_vars[0]); i++)
		if (env_u32(size_vars[i], size) && *size > *rank)
			return 1;
	*size = 0;
	return 1;
}

/* prof.lpp -> prof.rank3.lpp: before the name's last extension, as the
 * other processes' pid is (prof.rank3.1234.lpp for a child of rank 3). */
char *record_rank_output(const char *out, uint32_t rank)
{
	const char *slash = strrchr(out, '/'), *dot = strrchr(out, '.');
	char *p;

	if (!dot || (slash && dot < slash) || dot == out || (slash && dot == slash + 1))
		dot = out + strlen(out);
	if (asprintf(&p, "%.*s.rank%u%s", (int)(dot - out), out, rank, dot) < 0)
		return NULL;
	return p;
}
