/* opt.c - each command's options defined once; option values read alike */
#include "opt.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

int
art_opt_size(const char *s, size_t *out)
{
	unsigned long long v;
	int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	case 'T': case 't': shift = 40; end++; break;
	}
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v == 0 ||
	    v > (SIZE_MAX >> shift))
		return -1;
	*out = (size_t)v << shift;
	return 0;
}

size_t
art_opt_size_arg(const char *name, const char *s)
{
	size_t v;

	if (art_opt_size(s, &v) == -1)
		art_die(ART_EXIT_USAGE, "bad %s '%s': %s", name, s,
		    ART_OPT_SIZE_HINT);
	return v;
}

static const char *const kind_words[] = {
	[ART_OPT_TEXT] = "text",
	[ART_OPT_FILE] = "file",
	[ART_OPT_DIR] = "dir",
	[ART_OPT_JQ_FILE] = "jq-file",
	[ART_OPT_AT_FILE] = "at-file",
	[ART_OPT_AGENT] = "agent",
	[ART_OPT_SESSION] = "session",
	[ART_OPT_MODEL] = "model",
	[ART_OPT_COMMAND] = "command",
	[ART_OPT_URL] = "url",
	[ART_OPT_ENV] = "env",
	[ART_OPT_WORDS] = "words",
};

size_t
art_opt_count(const struct art_opt *opts)
{
	size_t n = 0;

	while (opts[n].name != NULL)
		n++;
	return n;
}

const struct art_opt *
art_opt_find(const struct art_opt *opts, int val)
{
	for (; opts->name != NULL; opts++)
		if (opts->val == val)
			return opts;
	return NULL;
}

/* Whether the space-separated list has word w. */
static bool
list_has(const char *list, const char *w)
{
	size_t n = strlen(w), k;

	while (*list != '\0') {
		k = strcspn(list, " ");
		if (k == n && strncmp(list, w, n) == 0)
			return true;
		list += k;
		list += strspn(list, " ");
	}
	return false;
}

bool
art_opt_takes(const struct art_opt *o, const char *cmd)
{
	if (cmd == NULL || o->cmds == NULL)
		return true;
	return *cmd != '\0' && list_has(o->cmds, cmd);
}

void
art_opt_longopts(const struct art_opt *opts, struct option *lo)
{
	for (; opts->name != NULL; opts++, lo++) {
		lo->name = opts->name;
		lo->has_arg = opts->arg != NULL ? required_argument :
		    no_argument;
		lo->flag = NULL;
		lo->val = opts->val;
	}
	memset(lo, 0, sizeof(*lo));
}

int
art_opt_shortopts(const struct art_opt *opts, const char *prefix,
    const char *cmd, char *buf, size_t size)
{
	size_t n = strlen(prefix);

	if (n >= size)
		return -1;
	memcpy(buf, prefix, n);
	for (; opts->name != NULL; opts++) {
		if (opts->val >= 256 || !art_opt_takes(opts, cmd))
			continue;
		if (n + 3 > size)
			return -1;
		buf[n++] = (char)opts->val;
		if (opts->arg != NULL)
			buf[n++] = ':';
	}
	buf[n] = '\0';
	return 0;
}

/* --- help ------------------------------------------------------------ */

/*
 * The length of the next word of s: up to a space, or with keep_brackets
 * up to a space outside brackets.
 */
static size_t
word_len(const char *s, bool keep_brackets)
{
	size_t i;
	int depth = 0;

	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] == '[')
			depth++;
		else if (s[i] == ']' && depth > 0)
			depth--;
		else if (s[i] == ' ' && (depth == 0 || !keep_brackets))
			break;
	}
	return i;
}

/*
 * Writes the words of s on a line begun already up to column at, each
 * further line indented to indent; keep_brackets keeps a [...] group on
 * one line.  Returns the column it ended at, the line left open.
 */
static int
wrap(FILE *f, const char *s, int at, int indent, bool keep_brackets)
{
	bool first = true;
	size_t n;

	for (s += strspn(s, " "); *s != '\0'; s += strspn(s, " ")) {
		n = word_len(s, keep_brackets);
		if (!first && at + 1 + (int)n > ART_OPT_HELP_WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			at = indent;
			first = true;
		}
		if (!first) {
			fputc(' ', f);
			at++;
		}
		fwrite(s, 1, n, f);
		at += (int)n;
		s += n;
		first = false;
	}
	return at;
}

/*
 * After a head that ended at column at, goes to column col: on the same
 * line when gap spaces are left before it, else on the next.
 */
static void
go_to(FILE *f, int at, int col, int gap)
{
	if (at + gap > col)
		fprintf(f, "\n%*s", col, "");
	else
		fprintf(f, "%*s", col - at, "");
}

/* Writes "(new, run) " for a cmds of "new run"; the columns written. */
static int
cmds_tag(FILE *f, const char *cmds)
{
	const char *sep = "(";
	int len = 0;
	size_t k;

	if (cmds == NULL)
		return 0;
	for (cmds += strspn(cmds, " "); *cmds != '\0';
	    cmds += strspn(cmds, " ")) {
		k = strcspn(cmds, " ");
		len += fprintf(f, "%s%.*s", sep, (int)k, cmds);
		cmds += k;
		sep = ", ";
	}
	return len + fprintf(f, ") ");
}

static void
help_one(FILE *f, const struct art_opt *o, int col)
{
	int at;

	if (o->val < 256)
		at = fprintf(f, "  -%c, --%s", o->val, o->name);
	else
		at = fprintf(f, "      --%s", o->name);
	if (o->arg != NULL)
		at += fprintf(f, " %s", o->arg);
	go_to(f, at, col, 1);
	wrap(f, o->help, col + cmds_tag(f, o->cmds), col, false);
	fputc('\n', f);
}

int
art_opt_help(FILE *f, const struct art_opt *opts, int col)
{
	for (; opts->name != NULL; opts++)
		if (!(opts->flags & ART_OPT_HIDDEN))
			help_one(f, opts, col);
	return ferror(f) ? -1 : 0;
}

int
art_opt_help_cmd(FILE *f, const char *synopsis, const char *help, int col)
{
	int at;

	fputs("  ", f);
	at = wrap(f, synopsis, 2, 6, true);
	go_to(f, at, col, 2);
	wrap(f, help, col, col, false);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

/* --- completions ----------------------------------------------------- */

/*
 * Writes help's summary: up to the first "; ", ": " or " (" after its
 * first two words.
 */
static void
summary(FILE *f, const char *help)
{
	size_t n = strcspn(help, " "), k;

	if (help[n] == ' ')
		n += 1 + strcspn(help + n + 1, " ");
	while (help[n] != '\0') {
		k = n + strcspn(help + n, ";:(");
		if (help[k] == '\0')
			n = k;
		else if (help[k] == '(' ? help[k - 1] == ' ' :
		    help[k + 1] == ' ') {
			n = help[k] == '(' ? k - 1 : k;
			break;
		} else
			n = k + 1;
	}
	fwrite(help, 1, n, f);
}

/*
 * The number of arguments arg names: its words outside quotes ("NAME
 * VALUE": 2, "'COMMAND ARGS'": 1).
 */
static int
count_args(const char *arg)
{
	char quote = 0;
	int n = 0;
	bool in_word = false;

	for (; *arg != '\0'; arg++) {
		if (quote != 0) {
			if (*arg == quote)
				quote = 0;
		} else if (*arg == '\'' || *arg == '"')
			quote = *arg;
		if (*arg == ' ' && quote == 0) {
			in_word = false;
			continue;
		}
		if (!in_word)
			n++;
		in_word = true;
	}
	return n;
}

static void
complete_one(FILE *f, const struct art_opt *o)
{
	int i, n;

	fprintf(f, "--%s\t", o->name);
	if (o->val < 256)
		fprintf(f, "-%c\t", o->val);
	else
		fputs("-\t", f);
	if (o->arg == NULL)
		fputc('-', f);
	else {
		n = count_args(o->arg);
		for (i = 1; i < n; i++)
			fputs("text ", f);
		fputs(kind_words[o->kind], f);
	}
	fprintf(f, "\t%s\t%s\t", o->words != NULL ? o->words : "-",
	    o->cmds != NULL ? o->cmds : "-");
	if ((o->flags & (ART_OPT_MANY | ART_OPT_EXITS)) == 0)
		fputc('-', f);
	else
		fprintf(f, "%s%s%s", o->flags & ART_OPT_MANY ? "many" : "",
		    (o->flags & ART_OPT_MANY) && (o->flags & ART_OPT_EXITS) ?
		    "," : "", o->flags & ART_OPT_EXITS ? "exits" : "");
	fputc('\t', f);
	summary(f, o->help);
	fputc('\n', f);
}

int
art_opt_complete(FILE *f, const struct art_opt *opts, const char *cmd)
{
	for (; opts->name != NULL; opts++)
		if (!(opts->flags & ART_OPT_HIDDEN) && art_opt_takes(opts, cmd))
			complete_one(f, opts);
	return ferror(f) ? -1 : 0;
}

int
art_opt_complete_cmd(FILE *f, const char *name, const char *operands,
    const char *help)
{
	fprintf(f, "%s\t%s\t", name, operands != NULL ? operands : "-");
	summary(f, help);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

void
art_opt_exit(void)
{
	exit(ferror(stdout) || fflush(stdout) == EOF ? ART_EXIT_FAIL :
	    ART_EXIT_OK);
}

void
art_opt_version(const char *prog, const char *version,
    const char *const *libs)
{
	size_t i;

	printf("%s %s\n", prog, version);
	for (i = 0; libs != NULL && libs[i] != NULL; i += 2)
		printf("%s%s/%s", i > 0 ? " " : "", libs[i], libs[i + 1] != NULL ?
		    libs[i + 1] : "unavailable");
	if (i > 0)
		putchar('\n');
	art_opt_exit();
}

void
art_opt_completions(const struct art_opt *opts, const char *context,
    void (*usage)(void))
{
	if (context != NULL) {
		art_warn("--completions: no command '%s'", context);
		usage();
		exit(ART_EXIT_USAGE);
	}
	art_opt_complete(stdout, opts, NULL);
	art_opt_exit();
}
