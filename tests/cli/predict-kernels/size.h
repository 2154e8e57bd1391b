/* The problem size of a kernel: fixed at compile time with -DN=..., one
 * binary per size, or read from argv[1] at run time, one binary for all. */
#ifndef N
static int n_run;
#define NN n_run
#define SIZE_INIT(argc, argv) (n_run = (argc) > 1 ? atoi((argv)[1]) : 0)
#else
#define NN N
#define SIZE_INIT(argc, argv) ((void)(argc), (void)(argv), N)
#endif
