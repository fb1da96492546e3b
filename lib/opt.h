/* opt.h - each command's options defined once; option values read alike
 *
 * A command lists its options once, in a table of struct art_opt in the
 * order of its man page's OPTIONS.  From that table come getopt_long's
 * struct option[] and short-options string, the "Options:" part of
 * --help, and the lines `BIN --completions` prints for the bash, zsh and
 * fish completions (completions/), so help, manual and completions cannot
 * drift apart (tests/cli/docs.bats checks the manual against --help).
 *
 * The functions here keep no state and allocate nothing: any thread may
 * call them.  Those that write take the stream to write to and return -1
 * when it is in error after writing (errno as the stream left it), else 0.
 */
#ifndef ART_OPT_H
#define ART_OPT_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * A size in bytes with an optional K, M, G or T suffix (powers of 1024),
 * at least 1: 0 with *out set, or -1 when s is not one (nothing set).
 */
int	art_opt_size(const char *s, size_t *out);

/* The message for a bad size, for the commands to print alike. */
#define ART_OPT_SIZE_HINT	"expected a size such as 64M or 1T"
/*
 * For a main: the size s, the value of name (an option or a variable),
 * or a usage error that ends the program: "bad NAME 'S': expected a size
 * such as 64M or 1T" on stderr, exit status 2.
 */
size_t	art_opt_size_arg(const char *name, const char *s);

/*
 * What an option's argument is, for completion.  Each has the word
 * --completions prints for it, in parentheses.
 */
enum art_opt_kind {
	ART_OPT_TEXT,		/* (text) anything: nothing to complete */
	ART_OPT_FILE,		/* (file) a file */
	ART_OPT_DIR,		/* (dir) a directory */
	ART_OPT_JQ_FILE,	/* (jq-file) a file holding a jq program */
	ART_OPT_AT_FILE,	/* (at-file) JSON text, or @FILE, or @- */
	ART_OPT_AGENT,		/* (agent) an agent's name */
	ART_OPT_SESSION,	/* (session) a session id in the store */
	ART_OPT_MODEL,		/* (model) a model: the words, or any */
	ART_OPT_COMMAND,	/* (command) a command line for /bin/sh */
	ART_OPT_URL,		/* (url) an http:// or https:// URL */
	ART_OPT_ENV,		/* (env) an environment variable's name */
	ART_OPT_WORDS		/* (words) one of the words */
};

/* struct art_opt's flags. */
#define ART_OPT_MANY	0x1	/* may be given more than once */
#define ART_OPT_EXITS	0x2	/* does its job and exits (--help) */
#define ART_OPT_HIDDEN	0x4	/* in neither --help nor the completions */

/*
 * One option.  A table of them ends with an entry whose name is NULL.
 *
 * val is what getopt_long returns for it: the short letter when it has
 * one (-d, --db: 'd'), else a value from 256 up.  arg is the argument as
 * --help shows it ("DIR"), or NULL for a flag; an arg of two words outside
 * quotes ("NAME VALUE", but not "'COMMAND ARGS'") means two arguments:
 * getopt_long hands over the first and the command takes the second from
 * argv itself.  kind says what the last argument is (the others are
 * text), and words, for ART_OPT_WORDS and ART_OPT_MODEL, lists the values
 * offered, separated by spaces.
 *
 * cmds, for a command with subcommands (agentrt-session, agentrt-tree),
 * lists the subcommands that take the option, separated by spaces, or is
 * NULL when all of them do and so does the command before any (--db).
 *
 * help is its --help text as one line, wrapped when printed; a command
 * list is shown before it, as in "(new, run) the agent the session runs".
 * Its summary, the short help the completions show, is the text up to the
 * first "; ", ": " or " (" after its first two words, the list left out.
 */
struct art_opt {
	const char		*name;	/* long name, without "--" */
	int			 val;
	const char		*arg;
	enum art_opt_kind	 kind;
	const char		*words;
	const char		*cmds;
	unsigned		 flags;	/* ART_OPT_MANY, ... */
	const char		*help;
};

/*
 * The options every command has, last in its table: -h, --help and
 * -V, --version, and --completions, hidden, which makes the command print
 * the lines of art_opt_complete (and art_opt_complete_cmd) and exit.
 * ART_OPT_COMPLETIONS is --completions' val, above any command's own.
 */
#define ART_OPT_COMPLETIONS	0x1000
#define ART_OPT_STANDARD						\
	{ "help", 'h', NULL, ART_OPT_TEXT, NULL, NULL, ART_OPT_EXITS,	\
	    "print this help and exit" },				\
	{ "version", 'V', NULL, ART_OPT_TEXT, NULL, NULL, ART_OPT_EXITS, \
	    "print the version and exit" },				\
	{ "completions", ART_OPT_COMPLETIONS, NULL, ART_OPT_TEXT, NULL,	\
	    NULL, ART_OPT_EXITS | ART_OPT_HIDDEN,			\
	    "print the options for the shells' completions and exit" }, \
	{ NULL, 0, NULL, ART_OPT_TEXT, NULL, NULL, 0, NULL }

/* The number of options in the table. */
size_t	art_opt_count(const struct art_opt *opts);

/* The option whose val is val, or NULL. */
const struct art_opt *art_opt_find(const struct art_opt *opts, int val);

/*
 * Whether subcommand cmd takes option o: when o->cmds is NULL or names
 * cmd.  A NULL cmd takes every option; an empty one ("", before any
 * subcommand) only those whose cmds is NULL.
 */
bool	art_opt_takes(const struct art_opt *o, const char *cmd);

/*
 * Fills lo, which has room for art_opt_count(opts) + 1 entries, with
 * getopt_long's table of every option (hidden ones too), ending in an
 * entry of zeros.  Its names point into opts.
 */
void	art_opt_longopts(const struct art_opt *opts, struct option *lo);

/*
 * Writes to buf (size bytes) prefix ("+" to stop at the first operand),
 * then the letter of each option cmd takes (as art_opt_takes), followed
 * by ':' when it has an argument: "d:hV".  Returns -1 when buf is too
 * small (3 bytes an option and the prefix are always enough), else 0.
 */
int	art_opt_shortopts(const struct art_opt *opts, const char *prefix,
	    const char *cmd, char *buf, size_t size);

/*
 * Writes the lines of --help's "Options:" part (not that heading), one
 * option after another, the hidden ones left out: "  -d, --db DIR" or
 * "      --id ID", then its text from column col (counted from 0), on the
 * same line when a space is left before col, else on the next; the
 * text is wrapped at spaces so lines stay within ART_OPT_HELP_WIDTH
 * columns (a longer word stands alone), each further line indented to
 * col.
 */
#define ART_OPT_HELP_WIDTH	76
int	art_opt_help(FILE *f, const struct art_opt *opts, int col);

/*
 * Writes one subcommand's entry of a "Commands:" list the same way:
 * "  " and synopsis ("log [--after SEQ] [-f] SESSION"), wrapped at
 * spaces outside brackets with further lines indented by 6, then help
 * from column col, wrapped as art_opt_help's, on the same line when two
 * spaces are left before col.
 */
int	art_opt_help_cmd(FILE *f, const char *synopsis, const char *help,
	    int col);

/*
 * Writes what `BIN --completions` prints for the options cmd takes (as
 * art_opt_takes; NULL: all), the hidden ones left out, one line each,
 * its fields separated by tabs:
 *
 *	--LONG  SHORT  KINDS  WORDS  CMDS  FLAGS  SUMMARY
 *
 * SHORT is "-d", or "-" for none.  KINDS is "-" for a flag, else the kind
 * word of each argument, separated by spaces ("text file" for --slurpfile
 * NAME FILE).  WORDS is the option's words, separated by spaces, or "-".
 * CMDS is its cmds, or "-" for NULL.  FLAGS is "-", or "many" and "exits"
 * as they apply, separated by commas.  SUMMARY is the help's summary.
 */
int	art_opt_complete(FILE *f, const struct art_opt *opts,
	    const char *cmd);

/*
 * Writes a subcommand's line for `BIN --completions`, after the options:
 *
 *	NAME  OPERANDS  SUMMARY
 *
 * tab-separated, never starting with '-'.  OPERANDS is operands (the
 * kind words of its operands, separated by spaces, "..." after one that
 * repeats: "session...", "session node"), or "-" for NULL; SUMMARY is
 * help's summary.
 */
int	art_opt_complete_cmd(FILE *f, const char *name, const char *operands,
	    const char *help);

/*
 * For a main, after it wrote what was asked to stdout: exit 0, or 1 when
 * stdout could not be written (a full disk, a closed pipe).
 */
_Noreturn void	art_opt_exit(void);
/*
 * --version: "PROG VERSION" on stdout, then a line naming the libraries
 * in use as curl does, "libjq/1.6 LMDB/0.9.24", from libs: name, version,
 * name, version, ..., NULL (a NULL version is "unavailable"; libs NULL or
 * empty, no line); then art_opt_exit().
 */
_Noreturn void	art_opt_version(const char *prog, const char *version,
	    const char *const *libs);
/*
 * --completions for a main without commands: the lines of
 * art_opt_complete(), then art_opt_exit(); a context (there are no
 * commands to name) is "--completions: no command 'X'" on stderr, then
 * usage(), which exits 2.
 */
_Noreturn void	art_opt_completions(const struct art_opt *, const char *context,
	    void (*usage)(void));

#endif
