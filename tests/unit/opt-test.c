/* opt-test - option tables: getopt's, --help's and the completions' */
#include "opt.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

enum { OPT_ID = 256, OPT_SLURP, OPT_FORMAT, OPT_LONGNAME };

static const struct art_opt table[] = {
	{ "db", 'd', "DIR", ART_OPT_DIR, NULL, NULL, 0,
	    "use the store in DIR (default: $AGENTRT_DB, else "
	    "$XDG_DATA_HOME/agentrt)" },
	{ "agent", 'a', "AGENT", ART_OPT_AGENT, NULL, "new run", ART_OPT_MANY,
	    "the agent the session runs" },
	{ "id", OPT_ID, "ID", ART_OPT_TEXT, NULL, "new", 0,
	    "the session's id" },
	{ "quiet", 'q', NULL, ART_OPT_TEXT, NULL, "ls", 0,
	    "print only the ids" },
	{ "slurpfile", OPT_SLURP, "NAME FILE", ART_OPT_FILE, NULL, "run", 0,
	    "set $NAME to an array of the JSON values in FILE" },
	{ "format", OPT_FORMAT, "FORMAT", ART_OPT_WORDS, "ndjson markdown",
	    "export", 0, "ndjson (default) or markdown" },
	{ "a-rather-long-name", OPT_LONGNAME, "'COMMAND ARGS'", ART_OPT_COMMAND,
	    NULL, NULL, 0, "run COMMAND ARGS: a command line with one "
	    "argument in quotes, its help long enough to wrap twice over, "
	    "and a word too long for any line: "
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaa" },
	ART_OPT_STANDARD
};

/* What fn wrote to a memory stream, as a string the caller frees. */
static char *
capture(int (*fn)(FILE *, const void *), const void *arg, int *rc)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	if (f == NULL)
		abort();
	*rc = fn(f, arg);
	fclose(f);
	return s;
}

static int
help_at_22(FILE *f, const void *arg)
{
	return art_opt_help(f, arg, 22);
}

static int
complete_all(FILE *f, const void *arg)
{
	return art_opt_complete(f, arg, NULL);
}

static int
complete_new(FILE *f, const void *arg)
{
	return art_opt_complete(f, arg, "new");
}

static int
help_cmds(FILE *f, const void *arg)
{
	(void)arg;
	art_opt_help_cmd(f, "ls [-q]", "list sessions", 22);
	art_opt_help_cmd(f, "checkout SESSION NODE", "move the head", 24);
	art_opt_help_cmd(f, "run [-a AGENT | -s SESSION] [-m TEXT] "
	    "[--turn-id ID] [--input JSON] [--events FILE] [--resume ID "
	    "[--payload JSON]]", "drive a session on a ring of filters "
	    "(stdin and stdout are the ring)", 22);
	return 0;
}

static int
complete_cmds(FILE *f, const void *arg)
{
	(void)arg;
	art_opt_complete_cmd(f, "rm", "session...", "delete sessions and "
	    "everything recorded of them; their running sub-agents are "
	    "cancelled first");
	return art_opt_complete_cmd(f, "ls", NULL, "list sessions");
}

static void
test_sizes(void)
{
	size_t v = 0;

	ok(art_opt_size("64M", &v) == 0 && v == 64u << 20, "64M is 64 MiB");
	ok(art_opt_size("1k", &v) == 0 && v == 1024, "1k is 1024");
	v = 7;
	ok(art_opt_size("0", &v) == -1 && art_opt_size("12Q", &v) == -1 &&
	    art_opt_size("-1", &v) == -1 && art_opt_size("", &v) == -1 &&
	    v == 7, "0, 12Q, -1 and \"\" are no size, and set nothing");
}

static void
test_getopt_table_is_built_from_the_options(void)
{
	struct option lo[sizeof(table) / sizeof(table[0])];
	size_t n = art_opt_count(table), i;
	int good = 1;

	ok(n == 10, "the table has 10 options, the standard three with them "
	    "(%zu)", n);
	art_opt_longopts(table, lo);
	for (i = 0; i < n; i++)
		good &= strcmp(lo[i].name, table[i].name) == 0 &&
		    lo[i].has_arg == (table[i].arg != NULL ? required_argument :
		    no_argument) && lo[i].flag == NULL &&
		    lo[i].val == table[i].val;
	ok(good, "each entry has the option's name, argument and val");
	ok(lo[n].name == NULL && lo[n].has_arg == 0 && lo[n].flag == NULL &&
	    lo[n].val == 0, "the table ends in an entry of zeros");
	ok(strcmp(lo[9].name, "completions") == 0 &&
	    lo[9].val == ART_OPT_COMPLETIONS, "--completions, hidden, is "
	    "there for getopt_long");
	ok(art_opt_find(table, OPT_FORMAT) == &table[5] &&
	    art_opt_find(table, 'x') == NULL, "options are found by val");
}

static void
test_short_options_follow_the_commands(void)
{
	char buf[64];

	ok(art_opt_shortopts(table, "", NULL, buf, sizeof(buf)) == 0 &&
	    strcmp(buf, "d:a:qhV") == 0, "every short option: \"%s\"", buf);
	ok(art_opt_shortopts(table, "+", "", buf, sizeof(buf)) == 0 &&
	    strcmp(buf, "+d:hV") == 0, "before any command, those of every "
	    "command, after the prefix: \"%s\"", buf);
	ok(art_opt_shortopts(table, "", "ls", buf, sizeof(buf)) == 0 &&
	    strcmp(buf, "d:qhV") == 0, "after ls, its own too: \"%s\"", buf);
	ok(art_opt_shortopts(table, "", NULL, buf, 5) == -1,
	    "a buffer too small is refused");
	ok(art_opt_takes(&table[1], "run") && art_opt_takes(&table[1], NULL) &&
	    !art_opt_takes(&table[1], "ls") && !art_opt_takes(&table[1], "") &&
	    !art_opt_takes(&table[1], "ru") && art_opt_takes(&table[0], "ls") &&
	    art_opt_takes(&table[0], ""), "takes: by the words of cmds, "
	    "whole; NULL cmds is every command and none");
}

static void
test_help_is_wrapped_at_76_columns(void)
{
	static const char want[] =
"  -d, --db DIR        use the store in DIR (default: $AGENTRT_DB, else\n"
"                      $XDG_DATA_HOME/agentrt)\n"
"  -a, --agent AGENT   (new, run) the agent the session runs\n"
"      --id ID         (new) the session's id\n"
"  -q, --quiet         (ls) print only the ids\n"
"      --slurpfile NAME FILE\n"
"                      (run) set $NAME to an array of the JSON values in FILE\n"
"      --format FORMAT (export) ndjson (default) or markdown\n"
"      --a-rather-long-name 'COMMAND ARGS'\n"
"                      run COMMAND ARGS: a command line with one argument in\n"
"                      quotes, its help long enough to wrap twice over, and a\n"
"                      word too long for any line:\n"
"                      aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
"aaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
"  -h, --help          print this help and exit\n"
"  -V, --version       print the version and exit\n";
	char *got;
	int rc;

	got = capture(help_at_22, table, &rc);
	ok(rc == 0 && strcmp(got, want) == 0, "--help's options: names, "
	    "commands, text wrapped to lines of 76 at most, --completions "
	    "left out");
	if (strcmp(got, want) != 0)
		printf("# got:\n%s", got);
	free(got);
}

static void
test_commands_help_keeps_brackets_together(void)
{
	static const char want[] =
"  ls [-q]             list sessions\n"
"  checkout SESSION NODE\n"
"                        move the head\n"
"  run [-a AGENT | -s SESSION] [-m TEXT] [--turn-id ID] [--input JSON]\n"
"      [--events FILE] [--resume ID [--payload JSON]]\n"
"                      drive a session on a ring of filters (stdin and stdout\n"
"                      are the ring)\n";
	char *got;
	int rc;

	got = capture(help_cmds, NULL, &rc);
	ok(strcmp(got, want) == 0, "a command's synopsis wraps outside "
	    "brackets; its text starts two spaces after it at least");
	if (strcmp(got, want) != 0)
		printf("# got:\n%s", got);
	free(got);
}

static void
test_completion_lines(void)
{
	static const char want[] =
"--db\t-d\tdir\t-\t-\t-\tuse the store in DIR\n"
"--agent\t-a\tagent\t-\tnew run\tmany\tthe agent the session runs\n"
"--id\t-\ttext\t-\tnew\t-\tthe session's id\n"
"--quiet\t-q\t-\t-\tls\t-\tprint only the ids\n"
"--slurpfile\t-\ttext file\t-\trun\t-\t"
    "set $NAME to an array of the JSON values in FILE\n"
"--format\t-\twords\tndjson markdown\texport\t-\t"
    "ndjson (default) or markdown\n"
"--a-rather-long-name\t-\tcommand\t-\t-\t-\trun COMMAND ARGS\n"
"--help\t-h\t-\t-\t-\texits\tprint this help and exit\n"
"--version\t-V\t-\t-\t-\texits\tprint the version and exit\n";
	static const char want_new[] =
"--db\t-d\tdir\t-\t-\t-\tuse the store in DIR\n"
"--agent\t-a\tagent\t-\tnew run\tmany\tthe agent the session runs\n"
"--id\t-\ttext\t-\tnew\t-\tthe session's id\n"
"--a-rather-long-name\t-\tcommand\t-\t-\t-\trun COMMAND ARGS\n"
"--help\t-h\t-\t-\t-\texits\tprint this help and exit\n"
"--version\t-V\t-\t-\t-\texits\tprint the version and exit\n";
	static const char want_cmds[] =
"rm\tsession...\tdelete sessions and everything recorded of them\n"
"ls\t-\tlist sessions\n";
	char *got;
	int rc;

	got = capture(complete_all, table, &rc);
	ok(rc == 0 && strcmp(got, want) == 0, "one line an option: names, "
	    "kinds (two for NAME FILE, not for 'COMMAND ARGS'), words, "
	    "commands, flags, summary; --completions left out");
	if (strcmp(got, want) != 0)
		printf("# got:\n%s", got);
	free(got);
	got = capture(complete_new, table, &rc);
	ok(rc == 0 && strcmp(got, want_new) == 0, "for a command, only the "
	    "options it takes");
	free(got);
	got = capture(complete_cmds, NULL, &rc);
	ok(rc == 0 && strcmp(got, want_cmds) == 0, "one line a command: "
	    "name, operands, summary");
	free(got);
}

static void
test_a_failed_write_is_said(void)
{
	FILE *f = fopen("/dev/full", "w");

	if (f == NULL) {
		tap_skip("no /dev/full");
		return;
	}
	setvbuf(f, NULL, _IONBF, 0);
	ok(art_opt_help(f, table, 22) == -1 &&
	    art_opt_complete(f, table, NULL) == -1,
	    "writing to a full device returns -1");
	fclose(f);
}

int
main(void)
{
	test_sizes();
	test_getopt_table_is_built_from_the_options();
	test_short_options_follow_the_commands();
	test_help_is_wrapped_at_76_columns();
	test_commands_help_keeps_brackets_together();
	test_completion_lines();
	test_a_failed_write_is_said();
	return tap_done();
}
