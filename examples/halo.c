/* A 2-D Jacobi stencil over MPI ranks: the grid's rows are split into one
 * band per rank, and every sweep each rank swaps its edge rows with its
 * neighbours (a halo exchange) before it averages each point with its four
 * neighbours. Rank 0 gets a band twice as tall as the others, so that the
 * ranks' profiles differ and a report over all of them is not any one's.
 *
 *   mpicc -O2 -g -o halo examples/halo.c
 *   mpirun -np 2 ./halo [COLUMNS [ROWS_PER_RANK [SWEEPS]]]
 *
 * Built for locprof (docs/commands/record.md, "MPI"):
 *   locprof cc -O2 -g -o halo-lp examples/halo.c $(mpicc --showme:compile) $(mpicc --showme:link)
 *   mpirun -np 2 locprof record -o halo.lpp -- ./halo-lp
 * writes halo.rank0.lpp and halo.rank1.lpp. Prints the grid's checksum on
 * rank 0, so that a profiled run can be checked against a plain one. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static long arg(int argc, char **argv, int i, long dflt)
{
	return argc > i ? atol(argv[i]) : dflt;
}

/* One sweep over rows 1..rows of a band of rows+2 rows (the halo rows 0
 * and rows+1 hold the neighbours' edges). */
static void sweep(const double *in, double *out, long rows, long cols)
{
	for (long i = 1; i <= rows; i++)
		for (long j = 1; j < cols - 1; j++)
			out[i * cols + j] = 0.25 * (in[(i - 1) * cols + j] + in[(i + 1) * cols + j] +
						    in[i * cols + j - 1] + in[i * cols + j + 1]);
}

/* Send the band's first and last rows to the neighbours, receive theirs
 * into the halo rows. The grid's top and bottom edges stay fixed. */
static void exchange(double *g, long rows, long cols, int rank, int size)
{
	int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

	MPI_Sendrecv(g + cols, (int)cols, MPI_DOUBLE, up, 0, g + (rows + 1) * cols, (int)cols, MPI_DOUBLE, down, 0,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Sendrecv(g + rows * cols, (int)cols, MPI_DOUBLE, down, 1, g, (int)cols, MPI_DOUBLE, up, 1, MPI_COMM_WORLD,
		     MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
	int rank, size;
	long cols, rows, sweeps;
	double *a, *b, local = 0, total = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	cols = arg(argc, argv, 1, 512);
	rows = arg(argc, argv, 2, 128) * (rank == 0 ? 2 : 1);
	sweeps = arg(argc, argv, 3, 20);
	if (cols < 3 || rows < 1 || sweeps < 1) {
		if (!rank)
			fprintf(stderr, "usage: halo [COLUMNS>=3 [ROWS_PER_RANK>=1 [SWEEPS>=1]]]\n");
		MPI_Finalize();
		return 2;
	}
	a = calloc((size_t)((rows + 2) * cols), sizeof(*a));
	b = calloc((size_t)((rows + 2) * cols), sizeof(*b));
	if (!a || !b) {
		fprintf(stderr, "halo: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	/* a hot left edge: heat flows in from column 0 */
	for (long i = 0; i < rows + 2; i++)
		a[i * cols] = b[i * cols] = 100.0;
	for (long s = 0; s < sweeps; s++) {
		exchange(a, rows, cols, rank, size);
		sweep(a, b, rows, cols);
		double *t = a;
		a = b;
		b = t;
	}
	for (long i = 1; i <= rows; i++)
		for (long j = 0; j < cols; j++)
			local += a[i * cols + j];
	MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (!rank)
		printf("halo: %d ranks, %ld columns, %ld sweeps, checksum %.6f\n", size, cols, sweeps, total);
	free(a);
	free(b);
	MPI_Finalize();
	return 0;
}
