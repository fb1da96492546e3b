/* agentrt-shell - talk to an agent: a REPL, or one turn with a PROMPT
 *
 * Each turn is the ring a user would type in bash (decide | llm | tool |
 * session run, closed on itself), run by shell-proc.c; shell-render.c
 * shows its client events, shell-cmds.c holds the slash commands and the
 * interrupts a person answers, and shell-edit.c the line editor.
 */
#include <config.h>

#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "agent.h"
#include "buf.h"
#include "diag.h"
#include "err.h"
#include "json.h"
#include "mdterm.h"
#include "opt.h"
#include "ring.h"
#include "spell.h"
#include "tools.h"
#include "userconf.h"

volatile sig_atomic_t shell_sigint;
volatile sig_atomic_t shell_sigwinch;

enum { OPT_AGENTS = 256, OPT_TOOLS, OPT_MCP, OPT_TOOL_ENV, OPT_DECIDE_JQ,
    OPT_EXEC, OPT_URL, OPT_RECORD, OPT_REPLAY, OPT_EVENTS,
    OPT_EVENTS_FORMAT, OPT_LINES, OPT_COLOR };

/* The models completion offers: those built in, and the providers. */
#define MODELS	"mock/echo mock/script openai/ anthropic/"

static const struct art_opt options[] = {
	{ "db", 'd', "DIR", ART_OPT_DIR, NULL, NULL, 0,
	    "use the store in DIR (default: $AGENTRT_DB, else "
	    "$XDG_DATA_HOME/agentrt)" },
	{ "agent", 'a', "AGENT", ART_OPT_AGENT, NULL, NULL, 0,
	    "start a new session of AGENT" },
	{ "session", 's', "SESSION", ART_OPT_SESSION, NULL, NULL, 0,
	    "continue SESSION (an id or a prefix of one)" },
	{ "continue", 'C', NULL, ART_OPT_TEXT, NULL, NULL, 0,
	    "continue the most recent session" },
	{ "command", 'c', "TEXT", ART_OPT_TEXT, NULL, NULL, 0,
	    "send TEXT as a PROMPT is sent; with no -a, -s, -C or -m, to "
	    "the most recent session" },
	{ "lines", OPT_LINES, NULL, ART_OPT_TEXT, NULL, NULL, 0,
	    "with no PROMPT, one turn for each line of the standard input, "
	    "not one for all of it" },
	{ "system", 'S', "TEXT", ART_OPT_TEXT, NULL, NULL, 0,
	    "start a new session whose system prompt is TEXT, not its "
	    "agent's" },
	{ "agents", OPT_AGENTS, "DIR", ART_OPT_DIR, NULL, NULL, ART_OPT_MANY,
	    "look for NAME.json in DIR first" },
	{ "tools", OPT_TOOLS, "DIR", ART_OPT_DIR, NULL, NULL, ART_OPT_MANY,
	    "look for tools in DIR too (agentrt-tool's); repeatable" },
	{ "mcp", OPT_MCP, "'COMMAND ARGS'", ART_OPT_TEXT, NULL, NULL,
	    ART_OPT_MANY,
	    "serve the tools of an MCP server (agentrt-tool's); repeatable" },
	{ "tool-env", OPT_TOOL_ENV, "VAR", ART_OPT_ENV, NULL, NULL,
	    ART_OPT_MANY,
	    "pass the variable VAR to the tools and MCP servers "
	    "(agentrt-tool's); repeatable" },
	{ "decide-jq", OPT_DECIDE_JQ, "PROGRAM", ART_OPT_TEXT, NULL, NULL, 0,
	    "decide with a jq program (agentrt-decide's)" },
	{ "exec", OPT_EXEC, "'COMMAND'", ART_OPT_COMMAND, NULL, NULL, 0,
	    "decide with a worker process (agentrt-decide's)" },
	{ "url", OPT_URL, "URL", ART_OPT_URL, NULL, NULL, 0,
	    "decide with an HTTP worker (agentrt-decide's)" },
	{ "model", 'm', "MODEL", ART_OPT_MODEL, MODELS, NULL, 0,
	    "answer every model call with MODEL; with no -a, -s or -C, a "
	    "new session of the built-in chat agent on MODEL" },
	{ "record", OPT_RECORD, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "keep every model exchange in the cassette FILE" },
	{ "replay", OPT_REPLAY, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "answer model calls from the cassette FILE" },
	{ "events", OPT_EVENTS, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "append each turn's client events to FILE too" },
	{ "color", OPT_COLOR, "WHEN", ART_OPT_WORDS, "auto always never", NULL,
	    0, "colour, and replies drawn from their Markdown: auto (on a "
	    "terminal, without NO_COLOR; the default), always, never" },
	{ "events-format", OPT_EVENTS_FORMAT, "FORMAT", ART_OPT_WORDS,
	    "ndjson ag-ui", NULL, 0,
	    "how --events writes them: ndjson (default) or ag-ui, AG-UI's "
	    "events" },
	ART_OPT_STANDARD
};

static _Noreturn void
help(void)
{
	fputs(
"Usage: agentrt-shell [OPTIONS] [-a AGENT | -s SESSION | -C] [PROMPT]\n"
"\n"
"Talk to an agent.  With a PROMPT, one turn whose reply is printed, in a\n"
"new session unless -s or -C says which; text piped in goes before the\n"
"PROMPT, as llm(1) sends it.  With no PROMPT and the standard input not\n"
"a terminal, what it holds is the one message (--lines: one turn a\n"
"line).  On a terminal, a REPL with line editing, history and\n"
"completion.  -m MODEL with no agent named talks to MODEL plainly, with\n"
"the --tools tools.  Each turn runs the ring agentrt-decide |\n"
"agentrt-llm | agentrt-tool | agentrt-session run.\n"
"\n"
"Options:\n", stdout);
	art_opt_help(stdout, options, 24);
	fputs(
"\n"
"Commands (in the REPL):\n",
	    stdout);
	shell_slash_help(stdout, "  ");
	fputs(
"\n"
"A line ending in \\ goes on on the next.  Ctrl-C stops a turn or clears\n"
"the line; Ctrl-D leaves.  History: $XDG_STATE_HOME/agentrt/history.\n"
"Exit status: 0 success, 1 failure, 2 usage error, 3 the turn is waiting\n"
"for an answer (an approval, a question), 130 the turn was stopped.\n",
	    stdout);
	art_opt_exit();
}

/* The version, and those of the libraries this program links. */
static _Noreturn void
version(void)
{
	const char *const libs[] = { "libjq", ART_JQ_VERSION, "libedit",
	    ART_EDIT_VERSION, NULL };

	art_opt_version("agentrt-shell", PACKAGE_VERSION, libs);
}

static _Noreturn void
usage(void)
{
	fprintf(stderr, "usage: agentrt-shell [OPTIONS] "
	    "[-a AGENT | -s SESSION | -C] [PROMPT]\n"
	    "Try 'agentrt-shell --help' for more information.\n");
	exit(ART_EXIT_USAGE);
}

/* --completions: the options, for the shells; no command to name. */
static _Noreturn void
completions(const char *context)
{
	art_opt_completions(options, context, usage);
}

static void
add_dir(const char **v, int *n, const char *s)
{
	if (*n == SHELL_MAX_DIRS)
		usage();
	v[(*n)++] = s;
}

/* A --tool-env name, refused here as agentrt-tool --env would refuse it. */
static void
add_tool_env(struct opts *o, const char *name)
{
	struct art_err err;

	if (art_tools_env_check(name, &err) == -1)
		art_die(ART_EXIT_USAGE, "bad --tool-env: %s", err.msg);
	add_dir(o->tool_envs, &o->ntool_envs, name);
}

/* The words of a PROMPT given as several arguments, joined by spaces. */
static char *
join_words(char **w, int n)
{
	struct art_buf b = ART_BUF_INIT;
	char *s;
	int i;

	for (i = 0; i < n; i++)
		if ((i > 0 && art_buf_addstr(&b, " ") == -1) ||
		    art_buf_addstr(&b, w[i]) == -1)
			art_die(ART_EXIT_FAIL, "out of memory");
	if ((s = art_buf_detach(&b, NULL)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	return s;
}

static void
parse(int argc, char **argv, struct opts *o)
{
	struct option longopts[sizeof(options) / sizeof(options[0])];
	char shortopts[3 * sizeof(options) / sizeof(options[0])];
	int c;

	art_opt_longopts(options, longopts);
	art_opt_shortopts(options, "", NULL, shortopts, sizeof(shortopts));
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) !=
	    -1) {
		switch (c) {
		case 'd': o->db = optarg; break;
		case 'a': o->agent = optarg; break;
		case 's': o->session = optarg; break;
		case 'C': o->cont = true; break;
		case OPT_LINES: o->lines = true; break;
		case 'c': o->command = optarg; break;
		case 'S': o->system = optarg; break;
		case 'm': o->model = optarg; break;
		case OPT_AGENTS:
			add_dir(o->agent_dirs, &o->nagent_dirs, optarg);
			break;
		case OPT_TOOLS:
			add_dir(o->tool_dirs, &o->ntool_dirs, optarg);
			break;
		case OPT_MCP: add_dir(o->mcps, &o->nmcps, optarg); break;
		case OPT_TOOL_ENV: add_tool_env(o, optarg); break;
		case OPT_DECIDE_JQ: o->decide_jq = optarg; break;
		case OPT_EXEC: o->exec = optarg; break;
		case OPT_URL: o->url = optarg; break;
		case OPT_RECORD: o->record = optarg; break;
		case OPT_REPLAY: o->replay = optarg; break;
		case OPT_EVENTS: o->events = optarg; break;
		case OPT_EVENTS_FORMAT: o->events_format = optarg; break;
		case OPT_COLOR:
			if (strcmp(optarg, "auto") != 0 &&
			    strcmp(optarg, "always") != 0 &&
			    strcmp(optarg, "never") != 0)
				art_die(ART_EXIT_USAGE, "bad --color '%s': use "
				    "auto, always or never", optarg);
			o->color = optarg;
			break;
		case 'h': help();
		case 'V': version();
		case ART_OPT_COMPLETIONS: completions(argv[optind]);
		default: usage();
		}
	}
	if (optind < argc)
		o->prompt = join_words(argv + optind, argc - optind);
	if (o->prompt != NULL && o->command != NULL) {
		art_warn("-c TEXT and a PROMPT: give one");
		usage();
	}
	if ((o->prompt != NULL || o->command != NULL) && o->lines)
		art_die(ART_EXIT_USAGE, "--lines reads the turns from the "
		    "standard input: give no PROMPT or -c");
	if ((o->agent != NULL) + (o->session != NULL) + o->cont > 1) {
		art_warn("-a, -s and -C: give one");
		usage();
	}
	if (o->system != NULL && (o->session != NULL || o->cont)) {
		art_warn("-S and %s: -S starts a new session; a session keeps "
		    "the system prompt it began with", o->cont ? "-C" : "-s");
		usage();
	}
	if (o->events_format != NULL && strcmp(o->events_format, "ndjson") !=
	    0 && strcmp(o->events_format, "ag-ui") != 0)
		art_die(ART_EXIT_USAGE, "bad --events-format '%s': use ndjson "
		    "or ag-ui", o->events_format);
	if (o->events_format != NULL && o->events == NULL)
		art_die(ART_EXIT_USAGE, "--events-format goes with --events "
		    "FILE");
	if ((o->decide_jq != NULL) + (o->exec != NULL) + (o->url != NULL) > 1) {
		art_warn("--decide-jq, --exec and --url: give one");
		usage();
	}
}

/* --- setting up ---------------------------------------------------------- */

/* Fds 0-2 open, so no pipe of ours lands on one and gets dup2'd away. */
static void
std_fds(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= 2)
		;
	if (fd > 2)
		close(fd);
}

/* --agents, then the environment: as agentrt-session run looks. */
static void
agent_dirs(struct shell *sh)
{
	struct art_err err;

	sh->dirs = art_agent_dirs(sh->o->agent_dirs,
	    (size_t)sh->o->nagent_dirs, getenv("AGENTRT_AGENTS"),
	    getenv("XDG_CONFIG_HOME"), getenv("HOME"), &sh->ndirs, &err);
	if (sh->dirs == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
}

static void
on_signal(int sig)
{
	if (sig == SIGINT)
		shell_sigint = 1;
	else
		shell_sigwinch = 1;
}

/* No SA_RESTART: a read or poll that Ctrl-C interrupts must return. */
static void
signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The newest session that is not a sub-agent's; false when none. */
static bool
most_recent(struct shell *sh)
{
	struct art_strvec a = ART_STRVEC_INIT;
	const char *id;
	jv all = shell_sessions(sh), keys = jv_array(), s, show, anc;
	int i;
	bool found = false;

	jv_array_foreach(all, j, x) {
		keys = jv_array_append(keys, art_json_field(&x, "created"));
		jv_free(x);
	}
	all = jv_sort(all, keys);
	for (i = jv_array_length(jv_copy(all)) - 1; i >= 0 && !found; i--) {
		s = jv_array_get(jv_copy(all), i);
		if ((id = art_json_str(&s, "id")) == NULL) {
			jv_free(s);
			continue;
		}
		args_add(&a, "agentrt-session"), args_add(&a, "show");
		args_add(&a, id);
		show = shell_json(sh, &a, true);
		show = jv_is_valid(show) ? jv_array_get(show, 0) : show;
		anc = jv_is_valid(show) ? art_json_field(&show, "ancestry") :
		    jv_null();
		if (jv_get_kind(anc) != JV_KIND_ARRAY ||
		    jv_array_length(jv_copy(anc)) == 0)
			found = shell_switch(sh, art_json_str(&s, "id")) == 0;
		jv_free(anc);
		jv_free(show);
		jv_free(s);
	}
	jv_free(all);
	return found;
}

/* A new session of the built-in chat agent on sh->model. */
static void
chat(struct shell *sh)
{
	struct art_err err;
	jv v = shell_builtin_config(sh, &err);

	if (!jv_is_valid(v))
		art_die(ART_EXIT_USAGE, "model %s: %s", sh->model, err.msg);
	jv_free(v);
	snprintf(sh->agent, sizeof(sh->agent), "chat");
	sh->builtin = true;
}

/* The user's settings, or a one-line error naming the file. */
static jv
settings(void)
{
	char path[4096];
	struct art_err err;
	jv conf;

	if (art_userconf_path(getenv("XDG_CONFIG_HOME"), getenv("HOME"), path,
	    sizeof(path)) == -1)
		return jv_object();
	conf = art_userconf_load(path, &err);
	if (!jv_is_valid(conf))
		art_die(ART_EXIT_FAIL, "%s", err.msg);
	return conf;
}

/* What a turn with nothing to talk to says. */
#define NOTHING_NAMED	"no agent: name one with -a AGENT, or a model " \
	"with -m MODEL (-m mock/echo needs no key; a default \"model\" goes " \
	"in $XDG_CONFIG_HOME/agentrt/config.json), or continue the most " \
	"recent session with -C"

/*
 * The session to talk to: -s, -C (the newest), -a (a new session), -m (a
 * new session of the built-in chat agent); else, for -c, piped lines and
 * the REPL, the newest session.  A PROMPT never goes to a session it did
 * not name, and no agent is ever picked for the user.
 */
static void
choose(struct shell *sh)
{
	struct art_err err;
	const char *def;
	jv v;

	if (sh->o->session != NULL) {
		if (shell_switch(sh, sh->o->session) == -1)
			exit(ART_EXIT_FAIL);
		return;
	}
	if (sh->o->cont) {
		if (!most_recent(sh))
			art_die(ART_EXIT_FAIL, "no session to continue (-C): "
			    "start one with -a AGENT or -m MODEL");
		return;
	}
	if (sh->o->agent != NULL) {
		v = art_agent_load(sh->dirs, sh->ndirs, sh->o->agent, &err);
		/* As agentrt-session run: a name that is no agent is a
		 * usage error, a file that is no agent a failure. */
		if (!jv_is_valid(v))
			art_die(art_err_is(&err, "no_agent") ? ART_EXIT_USAGE :
			    ART_EXIT_FAIL, "%s", err.msg);
		jv_free(v);
		snprintf(sh->agent, sizeof(sh->agent), "%s", sh->o->agent);
		return;
	}
	if (sh->o->model != NULL) {
		chat(sh);
		return;
	}
	if (sh->o->prompt == NULL && most_recent(sh))
		return;
	/* Nothing named, nothing to go on with: the user's default model. */
	if ((def = art_userconf_default(&sh->conf)) != NULL) {
		snprintf(sh->model, sizeof(sh->model), "%s", def);
		chat(sh);
		return;
	}
	if (sh->o->prompt != NULL)
		art_die(ART_EXIT_USAGE, NOTHING_NAMED);
}

/* --- the three ways to run ------------------------------------------------ */

/* A reply printed whole: drawn from its Markdown with colour, else raw. */
static void
print_reply(const struct shell *sh, const char *text)
{
	struct art_buf b = ART_BUF_INIT;

	if (!sh->color) {
		printf("%s\n", text);
		return;
	}
	if (art_mdterm_render(text, strlen(text), render_columns() > 0 ?
	    render_columns() : 80, &b) == -1)
		art_die(ART_EXIT_FAIL, "out of memory");
	fwrite(b.p != NULL ? b.p : "", 1, b.len, stdout);
	art_buf_release(&b);
}

static int
one_turn(struct shell *sh, const char *text)
{
	struct turn t = { .message = text };
	jv reply = jv_null();
	int st;

	if (sh->agent[0] == '\0' && sh->sid[0] == '\0')
		art_die(ART_EXIT_USAGE, NOTHING_NAMED);
	st = shell_send(sh, &t, &reply);
	/* On a terminal the reply was drawn as it came. */
	if (st == ART_EXIT_OK && jv_get_kind(reply) == JV_KIND_STRING &&
	    !render_streams(sh))
		print_reply(sh, jv_string_value(reply));
	jv_free(reply);
	if (fflush(stdout) == EOF || ferror(stdout))
		art_die(ART_EXIT_FAIL, "write: %s", strerror(errno));
	return st;
}

/* The most one argument to exec(2) may hold (Linux's MAX_ARG_STRLEN). */
#define MAX_MESSAGE	(128 * 1024 - 1)

/*
 * A one-shot turn's message: when the standard input is no terminal and
 * gives any text, that text (its last newlines cut), then, when there is
 * a command (-c TEXT or the PROMPT, named by what), a blank line and it,
 * so `cat notes.md | agentrt-shell -m MODEL 'sum up'` sends both in the
 * order llm(1) does.  With no command, the text alone, which must not be
 * empty.  The caller frees it.
 */
static char *
command_text(const char *what, const char *command)
{
	const char *from = what != NULL ? what : "the standard input";

	struct art_buf in = ART_BUF_INIT, msg = ART_BUF_INIT;
	struct art_err err;
	char *out;

	if (!isatty(STDIN_FILENO) &&
	    art_buf_read_fd(&in, STDIN_FILENO, MAX_MESSAGE, "stdin", &err)
	    == -1) {
		if (art_err_is(&err, "too_big"))
			art_die(ART_EXIT_USAGE, "the text piped to %s is too "
			    "long: more than %d bytes", from, MAX_MESSAGE);
		art_die(ART_EXIT_FAIL, "read the standard input: %s",
		    err.msg);
	}
	while (in.len > 0 && (in.p[in.len - 1] == '\n' ||
	    in.p[in.len - 1] == '\r'))
		in.len--;
	if (in.len > 0 && memchr(in.p, '\0', in.len) != NULL)
		art_die(ART_EXIT_USAGE, "the text piped to %s holds a NUL "
		    "byte: send text, not a binary file", from);
	if (command == NULL && in.len == 0)
		art_die(ART_EXIT_USAGE, "nothing to send: the standard input "
		    "is empty (give a PROMPT)");
	if (command != NULL && command[strspn(command, " \t\r\n")] == '\0' &&
	    in.len == 0)
		art_die(ART_EXIT_USAGE, "nothing to send: %s is empty", from);
	if ((in.len > 0 && (art_buf_add(&msg, in.p, in.len) == -1 ||
	    (command != NULL && art_buf_addstr(&msg, "\n\n") == -1))) ||
	    (command != NULL && art_buf_addstr(&msg, command) == -1))
		art_die(ART_EXIT_FAIL, "out of memory");
	art_buf_release(&in);
	if (msg.len > MAX_MESSAGE)
		art_die(ART_EXIT_USAGE, "%s%s and the text piped to it are "
		    "too long: %zu bytes, at most %d", from,
		    command != NULL && what[0] == '-' ? " TEXT" : "", msg.len,
		    MAX_MESSAGE);
	if ((out = art_buf_detach(&msg, NULL)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	return out;
}

/* One turn per line of stdin, all in one session. */
static int
lines(struct shell *sh)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int st, worst = ART_EXIT_OK;

	while ((n = getline(&line, &cap, stdin)) > 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0)
			continue;
		st = one_turn(sh, line);
		if (st != ART_EXIT_OK)
			worst = st;
		if (st == 3 || st == SHELL_STOPPED)
			break;
	}
	free(line);
	return worst;
}

static void
set_prompt(struct shell *sh, char *buf, size_t n)
{
	if (sh->agent[0] == '\0')
		snprintf(buf, n, "agentrt> ");
	else if (sh->sid[0] == '\0')
		snprintf(buf, n, "%s (new)> ", sh->agent);
	else
		snprintf(buf, n, "%s %.8s> ", sh->agent, sh->sid);
}

/* A message or command; lines ending in '\' go on.  NULL at EOF. */
static char *
read_input(struct shell *sh)
{
	struct art_buf b = ART_BUF_INIT;
	char p[512], *text, *more;

	set_prompt(sh, p, sizeof(p));
	if ((text = edit_line(sh, p, NULL)) == NULL)
		return NULL;
	if (art_buf_addstr(&b, text) == -1)
		art_die(ART_EXIT_FAIL, "out of memory");
	free(text);
	while (!sh->interrupted && b.len > 0 && b.p[b.len - 1] == '\\') {
		b.p[b.len - 1] = '\n';
		if ((more = edit_line(sh, "... ", NULL)) == NULL ||
		    sh->interrupted) {
			free(more);
			break;
		}
		if (art_buf_addstr(&b, more) == -1)
			art_die(ART_EXIT_FAIL, "out of memory");
		free(more);
	}
	if ((text = art_buf_detach(&b, NULL)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	return text;
}

/* The terminal's width, else 80. */
static size_t
columns(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

/* "agents: a, b, …", wrapped between names to the terminal's width. */
static int
list_agents(const jv *names)
{
	const char *head = "agents: ";
	size_t width = columns() - 1, col = 0, len;
	int n = 0, last = jv_array_length(jv_copy(*names)) - 1;

	jv_array_foreach(*names, i, name) {
		/* The name and its comma stay together. */
		len = strlen(jv_string_value(name)) + (i < last);
		if (n++ == 0)
			col = (size_t)printf("%s", head);
		else if (col + 1 + len > width)
			col = (size_t)printf("\n%*s", (int)strlen(head), "") - 1;
		else
			col += (size_t)printf(" ");
		col += (size_t)printf("%s%s", jv_string_value(name),
		    i < last ? "," : "");
		jv_free(name);
	}
	return n;
}

static void
greet(struct shell *sh)
{
	jv names = shell_agents(sh);
	int n;

	printf("agentrt-shell %s; /help lists the commands\n", PACKAGE_VERSION);
	n = list_agents(&names);
	jv_free(names);
	printf("%s", n > 0 ? "\n" : "no agents found (--agents DIR, "
	    "$AGENTRT_AGENTS)\n");
	if (sh->sid[0] != '\0')
		printf("session %s (%s)\n", sh->sid, sh->agent);
	else if (sh->agent[0] != '\0')
		printf("new session of %s\n", sh->agent);
	else
		printf("start a session with /new AGENT\n");
}

/*
 * A line that is one of the words a person types to a terminal to leave,
 * get help or clear it (exit, quit, help, clear, alone but for blanks):
 * the slash command that does it, else NULL.  Sent to a model, such a
 * word would only puzzle it.
 */
static const char *
bare_word(const char *text)
{
	static const char *const words[][2] = { { "exit", "/quit" },
	    { "quit", "/quit" }, { "help", "/help" }, { "clear", "/clear" } };
	size_t i, skip = strspn(text, " \t"), n = strcspn(text + skip, " \t");

	if (text[skip + n + strspn(text + skip + n, " \t")] != '\0')
		return NULL;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i][0]) == n &&
		    strncmp(text + skip, words[i][0], n) == 0)
			return words[i][1];
	return NULL;
}

static void
dispatch(struct shell *sh, char *text)
{
	struct turn t = { .message = text };
	char word[64], cmd[16];
	const char *near, *as = bare_word(text);
	size_t n;

	if (as != NULL) {
		snprintf(cmd, sizeof(cmd), "%s", as);
		shell_slash(sh, cmd);
		return;
	}
	if (text[0] != '/') {
		shell_send(sh, &t, NULL);
		return;
	}
	if (!shell_slash(sh, text)) {
		n = strcspn(text, " \t");
		snprintf(word, sizeof(word), "%.*s", (int)(n - 1), text + 1);
		near = art_spell_nearest(word, shell_slash_names(), 2);
		if (near != NULL)
			render_error(sh, "unknown command '%.*s': did you mean "
			    "/%s?", (int)n, text, near);
		else
			render_error(sh, "unknown command '%.*s': /help lists "
			    "them", (int)n, text);
	}
}

static int
repl(struct shell *sh)
{
	char *text;

	edit_init(sh);
	greet(sh);
	while (!sh->quit && (text = read_input(sh)) != NULL) {
		if (!sh->interrupted && text[strspn(text, " \t")] != '\0') {
			edit_remember(sh, text);
			dispatch(sh, text);
		}
		free(text);
	}
	if (!sh->quit)
		putchar('\n');
	edit_end(sh);
	return fflush(stdout) == EOF ? ART_EXIT_FAIL : ART_EXIT_OK;
}

int
main(int argc, char *argv[])
{
	struct opts o = { .db = NULL };
	struct shell sh = { .o = &o };
	const char *nc;
	char *text;
	int status;

	/* Only the shell sets a locale: libedit needs it for wide input. */
	setlocale(LC_CTYPE, "");
	art_diag_init(argv[0]);
	parse(argc, argv, &o);
	std_fds();
	if (o.db != NULL && setenv("AGENTRT_DB", o.db, 1) == -1)
		art_die(ART_EXIT_FAIL, "setenv: %s", strerror(errno));
	sh.conf = settings();
	if (o.model != NULL)
		snprintf(sh.model, sizeof(sh.model), "%s",
		    art_userconf_model(&sh.conf, o.model));
	/* The siblings live where we do: a build tree, or the install's bin. */
	art_ring_bindir(sh.bindir, sizeof(sh.bindir));
	agent_dirs(&sh);
	if (o.events != NULL && (sh.events = fopen(o.events, "a")) == NULL)
		art_die(ART_EXIT_FAIL, "open events '%s': %s", o.events,
		    strerror(errno));
	signals();
	nc = getenv("NO_COLOR");
	sh.color = o.color != NULL && strcmp(o.color, "always") == 0 ? true :
	    o.color != NULL && strcmp(o.color, "never") == 0 ? false :
	    isatty(STDOUT_FILENO) && (nc == NULL || *nc == '\0');
	sh.tty = o.command == NULL && o.prompt == NULL && !o.lines &&
	    isatty(STDIN_FILENO);
	choose(&sh);
	/* -S makes a session: not the newest, which has its own prompt. */
	if (o.system != NULL)
		sh.sid[0] = '\0';
	if (o.command != NULL || o.prompt != NULL || (!sh.tty && !o.lines)) {
		text = o.command != NULL ? command_text("-c", o.command) :
		    o.prompt != NULL ? command_text("the PROMPT", o.prompt) :
		    command_text(NULL, NULL);
		status = one_turn(&sh, text);
		free(text);
	} else if (o.lines)
		status = lines(&sh);
	else
		status = repl(&sh);
	free(o.prompt);
	free(sh.dirs);
	jv_free(sh.conf);
	if (sh.events != NULL && fclose(sh.events) == EOF)
		art_warn("write events '%s': %s", o.events, strerror(errno));
	return status;
}
