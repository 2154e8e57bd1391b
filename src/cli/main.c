/* locprof: git-style dispatch to one subcommand per file. */
#include "cli.h"

#include <string.h>

/* The commands, one line each, in the order `locprof help` lists them.
 * Each is defined in src/cli/cmd-<name>.c and declared in cli.h. */
static const struct cli_command *const commands[] = {
	&cmd_cc,        /* cmd-cc.c */
	&cmd_convert,   /* cmd-convert.c */
	&cmd_cxx,       /* cmd-cc.c: c++ */
	&cmd_dump,      /* cmd-dump.c */
	&cmd_predict,   /* cmd-predict.c (also: model) */
	&cmd_record,    /* cmd-record.c */
	&cmd_report,    /* cmd-report.c */
	&cmd_reusedist, /* cmd-reusedist.c */
	&cmd_sample,    /* cmd-sample.c */
	&cmd_simulate,  /* cmd-simulate.c */
	&cmd_stackdist, /* cmd-stackdist.c */
	&cmd_synth,     /* cmd-synth.c */
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct cli_command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i]->name, name) ||
		    (commands[i]->alias && !strcmp(commands[i]->alias, name)))
			return commands[i];
	return NULL;
}

static void overview(FILE *f)
{
	fprintf(f, "usage: locprof <command> [options] [args]\n\n"
		   "locprof measures the data locality of a program: working-set graphs,\n"
		   "stack and reuse distances, cache simulation, and the code and data\n"
		   "behind the misses.\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-11s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f, "  %-11s %s\n", "help", "show help for a command");
	fprintf(f, "\n  %-11s %s\n", "--version", "print locprof's version");
	fprintf(f, "\n'locprof help <command>' or 'locprof <command> --help' for details.\n");
}

int main(int argc, char **argv)
{
	const struct cli_command *cmd;

	if (argc < 2) {
		overview(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("locprof %s\n", lp_version());
		return CLI_OK;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		if (argc < 3 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			overview(stdout);
			return CLI_OK;
		}
		if (!(cmd = find(argv[2]))) {
			cli_error("no such command '%s'; see 'locprof help'", argv[2]);
			return CLI_USAGE;
		}
		return cli_print_usage(cmd);
	}
	if (!(cmd = find(argv[1]))) {
		cli_error("no such command '%s'; see 'locprof help'", argv[1]);
		return CLI_USAGE;
	}
	cli_remove_temporaries_on_exit();
	return cmd->run(argc - 1, argv + 1);
}
