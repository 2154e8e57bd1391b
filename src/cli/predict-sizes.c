/* locprof predict collect --sizes: several sizes in one command, and
 * --sizes auto, which chooses them where the checks `crosses` and `few`
 * ask for (docs/prediction.md, "Choosing the sizes"). Each size is one run
 * of `locprof predict collect --size P` with the same options; '{}' in the
 * program, its arguments and --build is the size. */
#include "predict-cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SIZES 16
#define MAX_ROUNDS 4

struct sizes_opts {
	const char *sizes, *dir, *machine, *build;
	double start, span, factor, budget, multiple;
	int count, quiet;
	char **pass;   /* options forwarded to each collect */
	int npass;
	char **prog;   /* PROGRAM ARGS, with '{}' */
	int nprog;
};

/* s with each "{}" replaced by the size p (malloc'ed). */
static char *subst(const char *s, double p)
{
	char num[32], *out, *o;
	size_t n = 0, len = strlen(s);

	snprintf(num, sizeof(num), "%.15g", p);
	for (const char *q = s; (q = strstr(q, "{}")); q += 2)
		n++;
	if (!(out = o = malloc(len + n * strlen(num) + 1)))
		return NULL;
	while (*s) {
		if (s[0] == '{' && s[1] == '}') {
			o = stpcpy(o, num);
			s += 2;
		} else {
			*o++ = *s++;
		}
	}
	*o = 0;
	return out;
}

/* Run argv (argv[0] "/proc/self/exe" for locprof itself, or "/bin/sh"),
 * waiting for it; its exit status, or -1. Its output goes to stderr:
 * stdout is the sizes collected, for scripts. */
static int run_child(char **argv)
{
	int status;
	pid_t pid;

	fflush(NULL);
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		dup2(2, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Build (--build) and collect size p into the directory. */
static int collect_one(const struct sizes_opts *o, double p)
{
	char size[32], **av = calloc((size_t)(o->npass + o->nprog) + 8, sizeof(*av));
	int k = 0, rc = -1;

	if (!av)
		return -1;
	snprintf(size, sizeof(size), "%.15g", p);
	if (o->build) {
		char *cmd = subst(o->build, p), *sh[] = { "/bin/sh", "-c", cmd, NULL };
		if (!cmd || (rc = run_child(sh)) != 0) {
			if (cmd)
				cli_error("--build for size %s failed (status %d): %s", size, rc, cmd);
			free(cmd);
			free(av);
			return -1;
		}
		free(cmd);
	}
	av[k++] = "/proc/self/exe";
	av[k++] = "predict";
	av[k++] = "collect";
	av[k++] = "--size";
	av[k++] = size;
	for (int i = 0; i < o->npass; i++)
		av[k++] = o->pass[i];
	av[k++] = "--";
	for (int i = 0; i < o->nprog; i++)
		av[k + i] = subst(o->prog[i], p);
	for (int i = 0; i < o->nprog; i++)
		if (!av[k + i])
			goto out;
	if ((rc = run_child(av)) != 0)
		cli_error("collecting size %s failed (status %d)", size, rc);
out:
	for (int i = 0; i < o->nprog; i++)
		free(av[k + i]);
	free(av);
	return rc == 0 ? 0 : -1;
}

static int parse_num(const char *opt, const char *v, double *out, double min)
{
	if (cli_parse_double(v, out) < 0 || !(*out >= min) || *out > 1e15)
		return cli_usage_error(&cmd_predict_collect, "bad %s '%s'", opt, v);
	return -1;
}

/* The options: ours into o, the others kept in o->pass for each collect.
 * Returns -1 to go on, or the exit status. */
static int sizes_options(int argc, char **argv, struct sizes_opts *o)
{
	int i, st;

	if (!(o->pass = calloc((size_t)argc, sizeof(*o->pass))))
		return CLI_ERROR;
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int ours = 1;
		if (!strcmp(a, "--sizes") && v)
			o->sizes = v;
		else if (!strcmp(a, "--start") && v) {
			if ((st = parse_num(a, v, &o->start, 1e-300)) >= 0)
				return st;
		} else if (!strcmp(a, "--span") && v) {
			if ((st = parse_num(a, v, &o->span, 1.01)) >= 0)
				return st;
		} else if (!strcmp(a, "--count") && v) {
			double c;
			if ((st = parse_num(a, v, &c, 3)) >= 0)
				return st;
			if (c > MAX_SIZES || c != floor(c))
				return cli_usage_error(&cmd_predict_collect, "bad --count '%s' (3 to %d)", v, MAX_SIZES);
			o->count = (int)c;
		} else if (!strcmp(a, "--multiple") && v) {
			if ((st = parse_num(a, v, &o->multiple, 1e-300)) >= 0)
				return st;
		} else if (!strcmp(a, "--factor") && v) {
			if ((st = parse_num(a, v, &o->factor, 1)) >= 0)
				return st;
		} else if (!strcmp(a, "--budget") && v) {
			if ((st = parse_num(a, v, &o->budget, 1)) >= 0)
				return st;
		} else if (!strcmp(a, "--build") && v)
			o->build = v;
		else
			ours = 0;
		if (ours) {
			i++;
			continue;
		}
		if (!strcmp(a, "-s") || !strcmp(a, "--size"))
			return cli_usage_error(&cmd_predict_collect, "give --size or --sizes, not both");
		if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && v)
			o->dir = v;
		if ((!strcmp(a, "-m") || !strcmp(a, "--machine")) && v)
			o->machine = v;
		if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
			o->quiet = 1;
		o->pass[o->npass++] = argv[i];
		/* an option's value travels with it */
		if (a[0] == '-' && v && strchr("olpSmfbP", a[1]) && a[2] == 0)
			o->pass[o->npass++] = argv[++i];
		else if (a[0] == '-' && a[1] == '-' && !strchr(a, '=') && v &&
			 (!strcmp(a, "--output") || !strcmp(a, "--line") || !strcmp(a, "--page") ||
			  !strcmp(a, "--sets") || !strcmp(a, "--machine") || !strcmp(a, "--phase") ||
			  !strcmp(a, "--from") || !strcmp(a, "--binary") || !strcmp(a, "--trace")))
			o->pass[o->npass++] = argv[++i];
	}
	if (!o->dir)
		return cli_usage_error(&cmd_predict_collect, "collect needs -o DIR");
	if (i >= argc - 1)
		return cli_usage_error(&cmd_predict_collect, "--sizes needs a program to run (after --)");
	o->prog = argv + i + 1;
	o->nprog = argc - i - 1;
	if (strcmp(o->sizes, "auto") == 0 && !(o->start > 0))
		return cli_usage_error(&cmd_predict_collect, "--sizes auto needs --start P (the smallest size to try)");
	return -1;
}

/* count sizes over span up to top (rounded up to multiples of --multiple,
 * so that the largest reaches top); ascending, distinct. Returns how many. */
static int geometric(const struct sizes_opts *o, double top, double *s)
{
	int n = 0;

	for (int i = 0; i < o->count; i++) {
		double p = top * pow(o->span, (double)(i - (o->count - 1)) / (o->count - 1));
		p = o->multiple > 0 ? ceil(p / o->multiple - 1e-9) * o->multiple : ceil(p - 1e-9);
		if (!n || p > s[n - 1])
			s[n++] = p;
	}
	return n;
}

/* The model of the runs of sizes s[0..n) in the directory. */
static int fit_sizes(const struct sizes_opts *o, const double *s, int n, struct lp_pred_model **m)
{
	struct lp_pred_run *runs[MAX_SIZES] = { 0 };
	int rc = 0;

	for (int i = 0; i < n && rc == 0; i++) {
		char *path;
		if (asprintf(&path, "%s/size-%.15g.xrun", o->dir, s[i]) < 0)
			return -1;
		rc = lp_pred_run_read(&runs[i], path);
		free(path);
	}
	if (rc == 0)
		rc = lp_pred_model_fit(m, runs, (size_t)n, NULL);
	if (rc < 0)
		cli_error("cannot fit the runs: %s", lp_errmsg());
	for (int i = 0; i < n; i++)
		lp_pred_run_free(runs[i]);
	return rc;
}

/* The largest size at most hi whose predicted references are within the
 * budget (bisection from lo, where they are). */
static double within_budget(const struct lp_pred_model *m, double lo, double hi, double budget)
{
	if (lp_pred_model_references(m, hi) <= budget)
		return hi;
	for (int it = 0; it < 60 && hi - lo > 1e-6 * hi; it++) {
		double mid = (lo + hi) / 2;
		if (lp_pred_model_references(m, mid) <= budget)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* One line per round: the sizes, and each flagged level's flags at P. */
static void say_round(const struct lp_machine *mc, const struct lp_pred_plan *pl, const double *s, int n, double P)
{
	char line[1024], name[128];
	size_t k = 0;

	for (size_t l = 0; l < pl->nlevels && k < sizeof(line); l++)
		if (pl->flags[l] && pl->need[l] > 0)
			k += (size_t)snprintf(line + k, sizeof(line) - k, " %s %s (collect up to P = %g)",
					      mc->level[l].name, lp_pred_check_name(pl->flags[l], name, sizeof(name)),
					      pl->need[l]);
		else if (pl->flags[l])
			k += (size_t)snprintf(line + k, sizeof(line) - k, " %s %s", mc->level[l].name,
					      lp_pred_check_name(pl->flags[l], name, sizeof(name)));
	cli_note("sizes %g .. %g (%d): at P = %g,%s", s[0], s[n - 1], n, P, k ? line : " every level ok");
}

/* Collect, fit, and move the sizes up until crosses and few pass at
 * factor times the largest size, or the budget stops it. */
static int sizes_auto(const struct sizes_opts *o, double *s, int *n)
{
	struct lp_machine mc;
	double top = o->start * o->span, done[MAX_SIZES * MAX_ROUNDS];
	int ndone = 0, status = CLI_ERROR;

	if (lp_machine_get(&mc, o->machine ? o->machine : "host") < 0) {
		cli_error("%s", lp_errmsg());
		return CLI_USAGE;
	}
	for (int round = 0; round < MAX_ROUNDS; round++) {
		struct lp_pred_model *m = NULL;
		struct lp_pred_plan pl;
		double P;

		*n = geometric(o, top, s);
		for (int i = 0; i < *n; i++) {
			char *path;
			int have;
			if (asprintf(&path, "%s/size-%.15g.xrun", o->dir, s[i]) < 0)
				return CLI_ERROR;
			have = access(path, R_OK) == 0;
			free(path);
			if (have)
				continue;
			if (collect_one(o, s[i]) < 0)
				goto out;
			done[ndone++] = s[i];
		}
		if (fit_sizes(o, s, *n, &m) < 0)
			goto out;
		P = o->factor * s[*n - 1];
		if (lp_pred_model_plan(m, mc.level, mc.n, P, &pl) < 0) {
			cli_error("%s", lp_errmsg());
			lp_pred_model_free(m);
			goto out;
		}
		if (!o->quiet)
			say_round(&mc, &pl, s, *n, P);
		status = CLI_OK;
		if (!(pl.need_max > s[*n - 1])) {
			lp_pred_model_free(m);
			break;
		}
		top = within_budget(m, s[*n - 1], pl.need_max, o->budget);
		lp_pred_model_free(m);
		if (top < pl.need_max && !o->quiet)
			cli_note("the checks ask for sizes up to P = %g; the budget of %g references a run "
				 "allows P = %g", pl.need_max, o->budget, top);
		if (!(top > s[*n - 1]))
			break;
		status = CLI_ERROR;
	}
out:
	/* the runs of earlier rounds that the final sizes do not use */
	for (int i = 0; i < ndone; i++) {
		int keep = 0;
		for (int j = 0; j < *n; j++)
			keep |= done[i] == s[j];
		if (!keep) {
			char *path;
			if (asprintf(&path, "%s/size-%.15g.xrun", o->dir, done[i]) >= 0) {
				unlink(path);
				free(path);
			}
		}
	}
	return status;
}

int predict_collect_sizes(int argc, char **argv)
{
	struct sizes_opts o = { .span = 2.5, .count = 5, .factor = 8, .budget = 1e8 };
	double s[MAX_SIZES];
	int n = 0, status;

	if ((status = sizes_options(argc, argv, &o)) >= 0)
		goto done;
	if (strcmp(o.sizes, "auto") == 0) {
		status = sizes_auto(&o, s, &n);
	} else {
		char *copy = strdup(o.sizes), *save = NULL, *tok;
		status = copy ? CLI_OK : CLI_ERROR;
		/* every size is checked before any is collected */
		for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && status == CLI_OK;
		     tok = strtok_r(NULL, ",", &save))
			if (n == MAX_SIZES || cli_parse_double(tok, &s[n++]) < 0 || !(s[n - 1] > 0))
				status = cli_usage_error(&cmd_predict_collect, "bad --sizes '%s' (auto, or at most %d "
						   "sizes: P,P,...)", o.sizes, MAX_SIZES);
		for (int i = 0; i < n && status == CLI_OK; i++)
			if (collect_one(&o, s[i]) < 0)
				status = CLI_ERROR;
		free(copy);
	}
	if (status == CLI_OK) {
		/* the sizes collected, for scripts and for `predict fit` */
		for (int i = 0; i < n; i++)
			printf("%s%.15g", i ? " " : "", s[i]);
		printf("\n");
	}
done:
	free(o.pass);
	return status;
}
