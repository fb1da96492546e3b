/* agentrt-tool - answer tool.execute decisions by running tools
 *
 * One poll loop moves everything at once: the input, the output queue
 * (never blocked on, so a ring cannot deadlock), every running tool's
 * pipes, and a self-pipe the SIGCHLD handler writes to, with a timeout to
 * the nearest deadline.  An executable tool's decision is answered at
 * once with no actions, and its settle line follows when it ends; a jq
 * tool runs here and is answered in the decision itself.  With every job
 * slot (-j) taken, an executable tool's call is answered all the same and
 * waits in a queue, in arrival order, for a slot; one whose deadline
 * passes while it waits is settled without running.
 *
 * Lines that are not ours are passed on byte for byte: the input is split
 * here, and each line handed whole to an ndjson reader fed by us, so the
 * raw line is still at hand when the reader has parsed it.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jv.h>

#include "bus.h"
#include "clock.h"
#include "diag.h"
#include "err.h"
#include "json.h"
#include "mcp.h"
#include "ndjson.h"
#include "opt.h"
#include "tools.h"
#include "tooltape.h"

extern char **environ;

#define READ_CHUNK	65536
#define READS_PER_TURN	16	/* input chunks read before tools move on */
#define MAX_OUTPUT_MAX	((size_t)1 << 30)
#define JOBS_PER_CPU	4	/* the default -j: tools mostly wait on I/O */
#define JOBS_MAX	1000000
#define CPU_MAX		1000000000	/* seconds, as --timeout */
#define FILES_MAX	(1 << 20)	/* Linux's default fs.nr_open */

struct opts {
	char		**dirs;		/* NULL-terminated, searched in order */
	const char	 *cwd;
	int64_t		  timeout_ms;
	int64_t		  kill_grace_ms;
	size_t		  jobs;		/* tools running at most; 0: any */
	struct art_tools_limits limits;
	size_t		  max_output;
	size_t		  max_line;
	bool		  list;
	char		**files;	/* operands; NULL-terminated */
	const char	**mcp;		/* --mcp specs; NULL-terminated */
	size_t		  nmcp;
	const char	 *record;	/* --record FILE */
	const char	 *replay;	/* --replay FILE */
};

/* An MCP server whose tools this stage serves. */
struct server {
	char		*spec;		/* as given, for messages */
	char		*prefix;	/* NAME of NAME=; NULL: none */
	struct art_mcp	*m;
	jv		 names;		/* served name -> the server's */
	size_t		 nfds;		/* pollfds filled last */
};

/* An MCP call in flight: where its settle goes. */
struct mcp_call {
	struct stage	*st;
	char		*session_id, *call_id;
	int64_t		 attempt;
	jv		 asked;		/* for --record; see asked_of() */
};

/* The input: files in turn, split into lines here (see the top). */
struct input {
	char *const		 *files;	/* what is left to read */
	const char		 *name;		/* the current one */
	int			  fd;		/* -1: all read */
	struct art_ndjson_reader *rd;		/* fd -1: we feed it */
	char			 *line;		/* the line so far */
	size_t			  len, cap;
	bool			  skipping;	/* in a line over max_line */
	bool			  failed;	/* a file could not be read */
};

/* A call answered and waiting for a job slot; it owns its strings. */
struct waiting {
	char		*session_id, *call_id, *name, *path, *input;
	size_t		 input_len;
	int64_t		 attempt;
	int64_t		 due_ms;	/* mono time; INT64_MAX: none */
	jv		 asked;		/* for --record; see asked_of() */
};

struct stage {
	const struct opts	 *o;
	struct art_clock	  clock;
	struct art_outq		 *out;
	struct input		  in;
	struct art_tools_jq	 *jq;
	struct art_tools_call	**calls;	/* running, in start order */
	jv			 *asked;	/* each call's, for --record */
	size_t			  ncalls, cap;
	struct waiting		**waiting;	/* for a slot, in order */
	size_t			  nwaiting, wcap;
	struct pollfd		 *pfds;
	size_t			  npfds;
	int			  wake[2];	/* the SIGCHLD self-pipe */
	struct server		 *servers;	/* --mcp, in order */
	size_t			  nservers;
	struct art_tooltape	 *tape;		/* --replay's; NULL: none */
	int			  record_fd;	/* --record's; -1: none */
};

/*
 * Set by the signal handlers: the write end of the self-pipe (written once
 * before the handlers are installed) and the signal that asks us to stop.
 */
static volatile sig_atomic_t wake_fd = -1;
static volatile sig_atomic_t stop_signal;

enum { OPT_CWD = 256, OPT_TIMEOUT, OPT_KILL_GRACE, OPT_CPU, OPT_MEMORY,
	OPT_FILES, OPT_MAX_OUTPUT, OPT_MAX_LINE, OPT_MCP, OPT_RECORD,
	OPT_REPLAY };

static const struct option longopts[] = {
	{ "tools",	required_argument,	NULL, 't' },
	{ "mcp",	required_argument,	NULL, OPT_MCP },
	{ "record",	required_argument,	NULL, OPT_RECORD },
	{ "replay",	required_argument,	NULL, OPT_REPLAY },
	{ "cwd",	required_argument,	NULL, OPT_CWD },
	{ "jobs",	required_argument,	NULL, 'j' },
	{ "timeout",	required_argument,	NULL, OPT_TIMEOUT },
	{ "kill-grace",	required_argument,	NULL, OPT_KILL_GRACE },
	{ "cpu",	required_argument,	NULL, OPT_CPU },
	{ "memory",	required_argument,	NULL, OPT_MEMORY },
	{ "files",	required_argument,	NULL, OPT_FILES },
	{ "max-output",	required_argument,	NULL, OPT_MAX_OUTPUT },
	{ "max-line",	required_argument,	NULL, OPT_MAX_LINE },
	{ "list",	no_argument,		NULL, 'l' },
	{ "help",	no_argument,		NULL, 'h' },
	{ "version",	no_argument,		NULL, 'V' },
	{ NULL,		0,			NULL, 0 }
};

static _Noreturn void
help(void)
{
	fputs(
"Usage: agentrt-tool [-t DIR]... [OPTIONS] [FILE...]\n"
"       agentrt-tool [-t DIR]... --list\n"
"\n"
"Answer tool.execute decision requests by running the named tool: an\n"
"executable NAME or a jq program NAME.jq in the tools directories, or a\n"
"tool of an MCP server.\n"
"Other lines pass through unchanged.\n"
"\n"
"Options:\n"
"  -t, --tools DIR       look for tools in DIR; repeat to search several\n"
"                        in order (default: $AGENTRT_TOOLS, else ./tools)\n"
"      --mcp '[NAME=]COMMAND ARG...'\n"
"                        start an MCP server over stdio and serve its\n"
"                        tools, as NAME__TOOL with NAME=; repeatable\n"
"      --record FILE     append each call's name, arguments and result or\n"
"                        error to the tape FILE\n"
"      --replay FILE     answer each call from the tape FILE, matched by\n"
"                        name and arguments, running no tool\n"
"      --cwd DIR         run tools in DIR (default: the current directory)\n"
"  -j, --jobs N          run at most N executable tools at once, the other\n"
"                        calls waiting in turn; 0: no limit (default: 4 per\n"
"                        CPU)\n"
"      --timeout SECS    time limit of a call whose trigger has no deadline\n"
"                        (default: 120)\n"
"      --kill-grace MS   wait MS milliseconds between SIGTERM and SIGKILL\n"
"                        (default: 2000)\n"
"      --cpu SECS        limit each tool process to SECS seconds of CPU\n"
"                        time (default: inherited)\n"
"      --memory BYTES    limit each tool process's address space to BYTES,\n"
"                        K, M or G allowed (default: inherited)\n"
"      --files N         limit each tool process to N open files\n"
"                        (default: inherited)\n"
"      --max-output BYTES\n"
"                        keep at most BYTES of a tool's output\n"
"                        (default: 1048576)\n"
"      --max-line BYTES  longest input line (default: 67108864)\n"
"  -l, --list            print the tools' declarations and exit\n"
"  -h, --help            print this help and exit\n"
"  -V, --version         print the version and exit\n"
"\n"
"Exit status: 0 end of input, 1 failure, 2 usage error.\n", stdout);
	exit(ferror(stdout) || fflush(stdout) == EOF ? ART_EXIT_FAIL :
	    ART_EXIT_OK);
}

static _Noreturn void
version(void)
{
	printf("agentrt-tool %s\n", PACKAGE_VERSION);
	exit(ferror(stdout) || fflush(stdout) == EOF ? ART_EXIT_FAIL :
	    ART_EXIT_OK);
}

static _Noreturn void
usage(void)
{
	fputs("usage: agentrt-tool [-t DIR]... [OPTIONS] [FILE...]\n"
	    "Try 'agentrt-tool --help' for more information.\n", stderr);
	exit(ART_EXIT_USAGE);
}

/* --- options ---------------------------------------------------------- */

static void
check_dir(const char *opt, const char *dir)
{
	struct stat sb;

	if (stat(dir, &sb) == -1)
		art_die(ART_EXIT_USAGE, "bad %s '%s': %s", opt, dir,
		    strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		art_die(ART_EXIT_USAGE, "bad %s '%s': not a directory", opt,
		    dir);
}

/* A whole number in [min, max], or a usage error. */
static unsigned long long
parse_count(const char *opt, const char *s, unsigned long long min,
    unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v < min ||
	    v > max)
		art_die(ART_EXIT_USAGE, "bad %s '%s': expected a whole number "
		    "from %llu to %llu", opt, s, min, max);
	return v;
}

/* Seconds, fractions allowed, as milliseconds: at least 1, at most 1e9 s. */
static int64_t
parse_secs(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 ||
	    !isfinite(v) || v * 1000 < 1 || v > 1e9)
		art_die(ART_EXIT_USAGE, "bad --timeout '%s': expected seconds "
		    "from 0.001 to 1000000000", s);
	return (int64_t)(v * 1000 + 0.5);
}

/* A size with an optional K, M, G or T suffix, or a usage error. */
static uint64_t
parse_size(const char *opt, const char *s)
{
	size_t v;

	if (art_opt_size(s, &v) == -1)
		art_die(ART_EXIT_USAGE, "bad %s '%s': %s", opt, s,
		    ART_OPT_SIZE_HINT);
	return (uint64_t)v;
}

/* JOBS_PER_CPU for each processor online, or for one if that is unknown. */
static size_t
default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 1 ? (size_t)n * JOBS_PER_CPU : JOBS_PER_CPU;
}

/* An --mcp spec, checked now so a bad one reads nothing. */
static void
add_mcp(struct opts *o, const char *spec)
{
	struct art_err err;
	char *prefix, **argv = art_mcp_argv(spec, &prefix, &err);
	const char **nm;

	if (argv == NULL) {
		art_warn("%s", err.msg);
		usage();
	}
	art_mcp_argv_free(argv);
	free(prefix);
	if ((nm = realloc(o->mcp, (o->nmcp + 2) * sizeof(*nm))) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	o->mcp = nm;
	o->mcp[o->nmcp++] = spec;
	o->mcp[o->nmcp] = NULL;
}

static void
add_dir(char ***dirs, size_t *n, const char *dir)
{
	char **nd;

	if ((nd = realloc(*dirs, (*n + 2) * sizeof(**dirs))) == NULL ||
	    (nd[*n] = strdup(dir)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	nd[++*n] = NULL;
	*dirs = nd;
}

/* $AGENTRT_TOOLS, colon-separated (empty entries skipped), else ./tools. */
static void
default_dirs(char ***dirs, size_t *n)
{
	const char *env = getenv("AGENTRT_TOOLS"), *p, *colon;
	char *one;

	for (p = env; p != NULL && *p != '\0'; p = *colon ? colon + 1 : colon) {
		colon = p + strcspn(p, ":");
		if (colon == p)
			continue;
		if ((one = strndup(p, (size_t)(colon - p))) == NULL)
			art_die(ART_EXIT_FAIL, "out of memory");
		add_dir(dirs, n, one);
		free(one);
	}
	if (*n == 0)
		add_dir(dirs, n, "./tools");
}

static void
free_dirs(char **dirs)
{
	size_t i;

	for (i = 0; dirs != NULL && dirs[i] != NULL; i++)
		free(dirs[i]);
	free(dirs);
}

/* --- output ----------------------------------------------------------- */

static void stop_calls(struct stage *);

/* A failed write (the reader gone) ends the run, and the tools with it. */
static _Noreturn void
fatal(struct stage *st, const struct art_err *err)
{
	stop_calls(st);
	art_die(ART_EXIT_FAIL, "%s", art_err_is(err, "nomem") ?
	    "out of memory" : err->msg);
}

static void
emit(struct stage *st, jv line)
{
	struct art_err err;

	if (art_outq_push(st->out, line, &err) == -1)
		fatal(st, &err);
}

static void
emit_raw(struct stage *st, const char *p, size_t n)
{
	struct art_err err;

	if (art_outq_push_raw(st->out, p, n, &err) == -1 ||
	    (n > 0 && p[n - 1] != '\n' &&
	    art_outq_push_raw(st->out, "\n", 1, &err) == -1))
		fatal(st, &err);
}

static void
respond(struct stage *st, const char *sid, const char *did, jv actions)
{
	jv r = jv_object();

	r = jv_object_set(r, jv_string("type"), jv_string("decision.response"));
	r = jv_object_set(r, jv_string("session_id"), jv_string(sid));
	r = jv_object_set(r, jv_string("decision_id"), jv_string(did));
	r = jv_object_set(r, jv_string("actions"), actions);
	emit(st, r);
}

static jv
tool_error(const char *msg, bool retryable)
{
	jv a = jv_object();

	a = jv_object_set(a, jv_string("type"), jv_string("tool.error"));
	a = jv_object_set(a, jv_string("error"), jv_string(msg));
	return jv_object_set(a, jv_string("retryable"), jv_bool(retryable));
}

/*
 * What --record keeps of a call: [name, arguments], or null when not
 * recording.  A call carries it from its request to its answer.
 */
static jv
asked_of(const struct stage *st, const char *name, const jv *trig)
{
	if (st->record_fd == -1)
		return jv_null();
	return jv_array_append(jv_array_append(jv_array(), jv_string(name)),
	    art_tooltape_args(trig));
}

/*
 * Appends the answer (borrowed), a tool.result or tool.error, to the tape
 * of --record for the call asked (consumed; null: not recording).  A
 * failed write is an error line, and the run goes on.
 */
static void
tape_answer(struct stage *st, jv asked, const jv *answer)
{
	struct art_err err;
	jv name, args, line;

	if (jv_get_kind(asked) != JV_KIND_ARRAY) {
		jv_free(asked);
		return;
	}
	name = jv_array_get(jv_copy(asked), 0);
	args = jv_array_get(asked, 1);
	line = art_tooltape_line(jv_string_value(name), &args, answer);
	if (jv_is_valid(line) &&
	    art_tooltape_append(st->record_fd, &line, &err) == -1) {
		if (art_err_is(&err, "nomem"))
			fatal(st, &err);
		art_warn("--record '%s': %s", st->o->record, err.msg);
		emit(st, art_ndjson_error("record_failed", err.msg, NULL, 0));
	}
	jv_free(line);
	jv_free(name);
	jv_free(args);
}

/* Answers the decision with action (consumed), taped for the call asked. */
static void
respond_one(struct stage *st, const char *sid, const char *did, jv asked,
    jv action)
{
	tape_answer(st, asked, &action);
	respond(st, sid, did, jv_array_append(jv_array(), action));
}

/* A request we own but cannot answer: an error line and a stderr line. */
static void
bad_request(struct stage *st, const jv *rec, const struct art_err *err,
    const char *what, const char *raw, size_t len)
{
	const char *sid = art_json_str(rec, "session_id");
	char msg[512];
	jv e;

	snprintf(msg, sizeof(msg), "%s:%zu: %s%s", st->in.name,
	    art_ndjson_lineno(st->in.rd), what, err->msg);
	art_warn("%s", msg);
	if (len > 0 && raw[len - 1] == '\r')
		len--;
	e = art_ndjson_error(err->code, msg, raw, len);
	if (sid != NULL)
		e = jv_object_set(e, jv_string("session_id"), jv_string(sid));
	emit(st, e);
}

/* --- running tools ---------------------------------------------------- */

/* Adds a running call and what --record keeps of it (consumed). */
static void
add_call(struct stage *st, struct art_tools_call *c, jv asked)
{
	struct art_tools_call **nc;
	size_t ncap;
	jv *na;

	if (st->ncalls == st->cap) {
		ncap = st->cap > 0 ? st->cap * 2 : 8;
		if ((nc = realloc(st->calls, ncap * sizeof(*nc))) == NULL)
			art_die(ART_EXIT_FAIL, "out of memory");
		st->calls = nc;
		if ((na = realloc(st->asked, ncap * sizeof(*na))) == NULL)
			art_die(ART_EXIT_FAIL, "out of memory");
		st->asked = na;
		st->cap = ncap;
	}
	st->asked[st->ncalls] = asked;
	st->calls[st->ncalls++] = c;
}

/* Whether another executable tool may start now (-j). */
static bool
has_slot(const struct stage *st)
{
	return st->o->jobs == 0 || st->ncalls < st->o->jobs;
}

/*
 * Starts an executable tool whose spec names the call, the tool and its
 * input; the rest comes from the options, and the time limit from the
 * deadline (due_ms, mono time; INT64_MAX: none), else --timeout.  The
 * call takes *asked (for --record), leaving null.  NULL with err, and
 * *asked as it was, when it could not start.
 */
static struct art_tools_call *
launch(struct stage *st, struct art_tools_spec *spec, int64_t due_ms,
    jv *asked, struct art_err *err)
{
	struct art_tools_call *c;
	int64_t now = art_tools_mono_ms();
	char **env;

	if ((env = art_tools_env(environ, spec->session_id, spec->call_id,
	    spec->attempt)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	spec->env = env;
	spec->cwd = st->o->cwd;
	spec->max_output = st->o->max_output;
	spec->kill_grace_ms = st->o->kill_grace_ms;
	spec->limits = st->o->limits;
	spec->timeout_ms = due_ms == INT64_MAX ? st->o->timeout_ms :
	    due_ms - now;
	c = art_tools_call_start(spec, now, err);
	art_tools_env_free(env);
	if (c != NULL) {
		add_call(st, c, *asked);  /* now, so a failed write kills it */
		*asked = jv_null();
	}
	return c;
}

/*
 * Starts an executable tool and answers the decision: at once with no
 * actions, or with a tool.error when the tool cannot start.
 */
static void
start_call(struct stage *st, const char *sid, const char *did,
    struct art_tools_spec *spec, int64_t due_ms, jv asked)
{
	struct art_err err;

	if (launch(st, spec, due_ms, &asked, &err) == NULL) {
		art_warn("%s", err.msg);
		respond_one(st, sid, did, asked, tool_error(err.msg,
		    art_err_is(&err, "tool_busy")));
		return;
	}
	respond(st, sid, did, jv_array());
}

/* --- waiting for a job slot ------------------------------------------ */

static void
waiting_free(struct waiting *w)
{
	if (w == NULL)
		return;
	free(w->session_id), free(w->call_id), free(w->name);
	free(w->path), free(w->input);
	jv_free(w->asked);
	free(w);
}

/*
 * Queues spec's call, copying what it borrows and taking asked, and
 * answers the decision.
 */
static void
wait_for_slot(struct stage *st, const char *did,
    const struct art_tools_spec *spec, int64_t due_ms, jv asked)
{
	struct waiting *w, **nw;
	size_t ncap;

	if (st->nwaiting == st->wcap) {
		ncap = st->wcap > 0 ? st->wcap * 2 : 8;
		if ((nw = realloc(st->waiting, ncap * sizeof(*nw))) == NULL)
			art_die(ART_EXIT_FAIL, "out of memory");
		st->waiting = nw;
		st->wcap = ncap;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->session_id = strdup(spec->session_id)) == NULL ||
	    (w->call_id = strdup(spec->call_id)) == NULL ||
	    (w->name = strdup(spec->name)) == NULL ||
	    (w->path = strdup(spec->path)) == NULL ||
	    (w->input = malloc(spec->input_len + 1)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	memcpy(w->input, spec->input, spec->input_len);
	w->input[spec->input_len] = '\0';
	w->input_len = spec->input_len;
	w->attempt = spec->attempt;
	w->due_ms = due_ms;
	w->asked = asked;
	st->waiting[st->nwaiting++] = w;
	respond(st, spec->session_id, did, jv_array());
}

/* The settle line of a waiting call that fails without running. */
static void
settle_waiting(struct stage *st, struct waiting *w, const char *msg,
    bool retryable)
{
	jv line = jv_object();

	line = jv_object_set(line, jv_string("type"), jv_string("tool.error"));
	line = jv_object_set(line, jv_string("session_id"),
	    jv_string(w->session_id));
	line = jv_object_set(line, jv_string("id"), jv_string(w->call_id));
	line = jv_object_set(line, jv_string("attempt"),
	    jv_number((double)w->attempt));
	line = jv_object_set(line, jv_string("error"), jv_string(msg));
	line = jv_object_set(line, jv_string("retryable"), jv_bool(retryable));
	tape_answer(st, w->asked, &line);
	w->asked = jv_null();
	emit(st, line);
}

/* Settles the waiting calls whose deadline has passed, keeping the order. */
static void
expire_waiting(struct stage *st, int64_t now)
{
	size_t i, j;

	for (i = 0, j = 0; i < st->nwaiting; i++) {
		if (st->waiting[i]->due_ms <= now) {
			settle_waiting(st, st->waiting[i], "deadline exceeded",
			    true);
			waiting_free(st->waiting[i]);
		} else
			st->waiting[j++] = st->waiting[i];
	}
	st->nwaiting = j;
}

/* Starts waiting calls, first come first, while there are slots. */
static void
start_waiting(struct stage *st)
{
	struct art_tools_spec spec = { 0 };
	struct art_err err;
	struct waiting *w;

	expire_waiting(st, art_tools_mono_ms());
	while (st->nwaiting > 0 && has_slot(st)) {
		w = st->waiting[0];
		memmove(st->waiting, st->waiting + 1,
		    --st->nwaiting * sizeof(*st->waiting));
		spec.name = w->name;
		spec.path = w->path;
		spec.input = w->input;
		spec.input_len = w->input_len;
		spec.session_id = w->session_id;
		spec.call_id = w->call_id;
		spec.attempt = w->attempt;
		if (launch(st, &spec, w->due_ms, &w->asked, &err) == NULL) {
			art_warn("%s", err.msg);
			settle_waiting(st, w, err.msg,
			    art_err_is(&err, "tool_busy"));
		}
		waiting_free(w);
	}
}

/* The nearest deadline of a waiting call, mono time; INT64_MAX: none. */
static int64_t
waiting_due_ms(const struct stage *st)
{
	int64_t due = INT64_MAX;
	size_t i;

	for (i = 0; i < st->nwaiting; i++)
		if (st->waiting[i]->due_ms < due)
			due = st->waiting[i]->due_ms;
	return due;
}

/* --- answering --------------------------------------------------------- */

/*
 * The call's deadline in art_tools_mono_ms() time, INT64_MAX when the
 * trigger has none: the time it has left on our clock, from now.
 */
static int
call_due(struct stage *st, const jv *trig, int64_t *due_ms,
    struct art_err *err)
{
	const char *deadline = NULL;
	int64_t at;

	*due_ms = INT64_MAX;
	if (art_json_get_str(trig, "deadline", 0, &deadline, err) == -1)
		return -1;
	if (deadline == NULL)
		return 0;
	if (art_clock_parse(deadline, &at, err) == -1)
		return art_err_prefix(err, "field 'deadline'");
	*due_ms = art_tools_mono_ms() + (at - art_clock_now_ms(&st->clock));
	return 0;
}

/* A tool.execute for a tool we have (path, kind); asked is taken. */
static void
run_tool(struct stage *st, const jv *rec, const jv *trig, const char *path,
    int kind, jv asked, const char *raw, size_t len)
{
	struct art_tools_spec spec = { 0 };
	const char *sid = art_json_str(rec, "session_id");
	const char *did = art_json_str(rec, "decision_id");
	struct art_err err;
	int64_t due;
	jv args = jv_null();

	if (art_json_get_str(trig, "id", 1, &spec.call_id, &err) == -1 ||
	    art_json_get_int(trig, "attempt", 1, &spec.attempt, &err) == -1 ||
	    art_json_get_kind(trig, "arguments", JV_KIND_STRING, 1, &args,
	    &err) == -1 ||
	    call_due(st, trig, &due, &err) == -1) {
		jv_free(args);
		jv_free(asked);
		bad_request(st, rec, &err, "trigger: ", raw, len);
		return;
	}
	spec.name = art_json_str(trig, "name");
	spec.input = jv_string_value(args);
	spec.input_len = (size_t)jv_string_length_bytes(jv_copy(args));
	spec.path = path;
	spec.session_id = sid;
	if (due <= art_tools_mono_ms())
		respond_one(st, sid, did, asked,
		    tool_error("deadline exceeded", true));
	else if (kind == ART_TOOLS_JQ)
		respond_one(st, sid, did, asked, art_tools_jq_run(st->jq, path,
		    spec.input, spec.input_len, st->o->max_output));
	else if (st->nwaiting == 0 && has_slot(st))
		start_call(st, sid, did, &spec, due, asked);
	else
		wait_for_slot(st, did, &spec, due, asked);
	jv_free(args);
}

/* --- MCP servers ------------------------------------------------------ */

extern char **environ;

/* How long a server may take from its start to its tool list. */
#define MCP_START_MS	30000

/*
 * Starts every --mcp server and waits for its tools, in the given order;
 * a server that cannot start is fatal, before any line is read.
 */
static struct server *
open_servers(const struct opts *o, size_t *nout)
{
	struct server *sv = calloc(o->nmcp + 1, sizeof(*sv));
	struct art_err err;
	char **argv, **env;
	jv tools;
	size_t i;

	if (sv == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	for (i = 0; i < o->nmcp; i++) {
		sv[i].spec = (char *)o->mcp[i];
		sv[i].names = jv_object();
		if ((argv = art_mcp_argv(o->mcp[i], &sv[i].prefix, &err)) ==
		    NULL)
			art_die(ART_EXIT_USAGE, "%s", err.msg);
		/* The server's environment is a tool's: no provider key. */
		if ((env = art_tools_env(environ, "", "", 0)) == NULL)
			art_die(ART_EXIT_FAIL, "out of memory");
		sv[i].m = art_mcp_start((const char *const *)argv,
		    (const char *const *)env, o->cwd, MCP_START_MS, &err);
		art_tools_env_free(env);
		art_mcp_argv_free(argv);
		if (sv[i].m == NULL || art_mcp_wait_ready(sv[i].m, &err) == -1)
			art_die(ART_EXIT_FAIL, "--mcp '%s': %s", o->mcp[i],
			    err.msg);
		tools = art_mcp_tools(sv[i].m);
		jv_array_foreach(tools, k, t) {
			const char *name = art_json_str(&t, "name");

			if (name != NULL)
				sv[i].names = jv_object_set(sv[i].names,
				    sv[i].prefix != NULL ? jv_string_fmt(
				    "%s__%s", sv[i].prefix, name) :
				    jv_string(name), jv_string(name));
			jv_free(t);
			(void)k;
		}
		jv_free(tools);
	}
	*nout = o->nmcp;
	return sv;
}

static void
close_servers(struct server *sv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		art_mcp_free(sv[i].m);
		jv_free(sv[i].names);
		free(sv[i].prefix);
	}
	free(sv);
}

/* The server serving name, and the name it knows the tool by. */
static struct server *
find_server(struct stage *st, const char *name, jv *tool)
{
	size_t i;

	for (i = 0; i < st->nservers; i++) {
		*tool = jv_object_get(jv_copy(st->servers[i].names),
		    jv_string(name));
		if (jv_is_valid(*tool))
			return &st->servers[i];
		jv_free(*tool);
	}
	*tool = jv_invalid();
	return NULL;
}

static size_t
mcp_pending(const struct stage *st)
{
	size_t i, n = 0;

	for (i = 0; i < st->nservers; i++)
		n += art_mcp_pending(st->servers[i].m);
	return n;
}

/* The settle of an MCP call, as an executable's would be. */
static void
mcp_done(void *ctx, const struct art_mcp_done *d)
{
	struct mcp_call *mc = ctx;
	struct stage *st = mc->st;
	size_t max = st->o->max_output, len = d->len;
	jv line = jv_object(), text;

	line = jv_object_set(line, jv_string("type"), jv_string(d->ok ?
	    "tool.result" : "tool.error"));
	line = jv_object_set(line, jv_string("session_id"),
	    jv_string(mc->session_id));
	line = jv_object_set(line, jv_string("id"), jv_string(mc->call_id));
	line = jv_object_set(line, jv_string("attempt"),
	    jv_number((double)mc->attempt));
	if (len > max) {
		/* Cut at a character, and say so, as for an executable. */
		for (len = max; len > 0 &&
		    ((unsigned char)d->text[len] & 0xc0) == 0x80; len--)
			;
		text = jv_string_fmt("%.*s\n[output truncated at %zu bytes]",
		    (int)len, d->text, max);
	} else
		text = jv_string_sized(d->text, (int)len);
	if (d->ok)
		line = jv_object_set(line, jv_string("result"), text);
	else {
		line = jv_object_set(line, jv_string("error"), text);
		line = jv_object_set(line, jv_string("retryable"),
		    jv_bool(d->retryable));
	}
	tape_answer(st, mc->asked, &line);
	emit(st, line);
	free(mc->session_id);
	free(mc->call_id);
	free(mc);
}

/*
 * A tool.execute for an MCP server's tool: answered now, settled later;
 * asked is taken.
 */
static void
run_mcp(struct stage *st, const jv *rec, const jv *trig,
    struct server *sv, const char *tool, jv asked, const char *raw,
    size_t len)
{
	const char *sid = art_json_str(rec, "session_id");
	const char *did = art_json_str(rec, "decision_id");
	const char *id, *text;
	struct mcp_call *mc;
	struct art_err err;
	int64_t attempt = 1, due, wait;
	jv input, args;

	if (art_json_get_str(trig, "id", 1, &id, &err) == -1 ||
	    art_json_get_int(trig, "attempt", 0, &attempt, &err) == -1 ||
	    art_json_get_str(trig, "arguments", 0, &text, &err) == -1 ||
	    call_due(st, trig, &due, &err) == -1) {
		jv_free(asked);
		bad_request(st, rec, &err, "trigger: ", raw, len);
		return;
	}
	input = art_json_field(trig, "input");
	args = art_json_field(&input, "value");
	jv_free(input);
	if (jv_get_kind(args) != JV_KIND_OBJECT) {
		jv_free(args);
		args = text != NULL && *text != '\0' ?
		    art_json_parse_str(text, NULL) : jv_object();
	}
	if (jv_get_kind(args) != JV_KIND_OBJECT) {
		jv_free(args);
		respond_one(st, sid, did, asked,
		    tool_error("arguments are not a JSON object", false));
		return;
	}
	wait = due == INT64_MAX ? st->o->timeout_ms : due -
	    art_tools_mono_ms();
	if (wait <= 0) {
		jv_free(args);
		respond_one(st, sid, did, asked,
		    tool_error("deadline exceeded", true));
		return;
	}
	if ((mc = calloc(1, sizeof(*mc))) == NULL ||
	    (mc->session_id = strdup(sid)) == NULL ||
	    (mc->call_id = strdup(id)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	mc->st = st;
	mc->attempt = attempt;
	mc->asked = asked;
	if (art_mcp_call(sv->m, tool, args, wait, mcp_done, mc, &err) == -1) {
		respond_one(st, sid, did, mc->asked, tool_error(err.msg,
		    false));
		free(mc->session_id);
		free(mc->call_id);
		free(mc);
		return;
	}
	respond(st, sid, did, jv_array());
}

/*
 * --replay: the call's answer is the tape's, and no tool runs.  A call
 * the tape lacks is an error, not a tool run for real: a replay that
 * quietly ran tools would not be one.  That error is not taped again.
 */
static void
replay(struct stage *st, const jv *trig, const char *sid, const char *did,
    const char *name)
{
	jv args = art_tooltape_args(trig);
	jv ex = art_tooltape_next(st->tape, name, &args);
	char msg[256];

	jv_free(args);
	if (!jv_is_valid(ex)) {
		jv_free(ex);
		snprintf(msg, sizeof(msg), "no recorded answer for tool '%s' "
		    "with these arguments (replay)", name);
		art_warn("%s:%zu: %s", st->in.name,
		    art_ndjson_lineno(st->in.rd), msg);
		respond(st, sid, did, jv_array_append(jv_array(),
		    tool_error(msg, false)));
		return;
	}
	respond_one(st, sid, did, asked_of(st, name, trig),
	    art_tooltape_action(&ex));
	jv_free(ex);
}

/* A decision.request whose trigger is tool.execute. */
static void
answer(struct stage *st, const jv *rec, const jv *trig, const char *raw,
    size_t len)
{
	const char *sid, *did, *name = art_json_str(trig, "name");
	struct art_err err;
	char *path;
	int kind;

	if (art_json_get_str(rec, "session_id", 1, &sid, &err) == -1 ||
	    art_json_get_str(rec, "decision_id", 1, &did, &err) == -1) {
		bad_request(st, rec, &err, "", raw, len);
		return;
	}
	if (!art_tools_name_is_valid(name)) {
		respond(st, sid, did, jv_array_append(jv_array(),
		    tool_error("bad tool name", false)));
		return;
	}
	if (st->tape != NULL) {
		replay(st, trig, sid, did, name);
		return;
	}
	if ((kind = art_tools_find(st->o->dirs, name, &path, &err)) == -1)
		fatal(st, &err);
	if (kind == ART_TOOLS_NONE) {
		struct server *sv;
		jv tool;

		/* The tools directories first, then the MCP servers. */
		if ((sv = find_server(st, name, &tool)) != NULL)
			run_mcp(st, rec, trig, sv, jv_string_value(tool),
			    asked_of(st, name, trig), raw, len);
		else
			emit_raw(st, raw, len);	/* another stage may own it */
		jv_free(tool);
		return;
	}
	run_tool(st, rec, trig, path, kind, asked_of(st, name, trig), raw, len);
	free(path);
}

/* The lines this stage answers; the rest pass by unparsed. */
static int
wanted(const char *type, const char *trigger, void *ctx)
{
	(void)ctx;
	return strcmp(type, "decision.request") == 0 &&
	    strcmp(trigger, "tool.execute") == 0;
}

static void
handle(struct stage *st, jv rec, const char *raw, size_t len)
{
	jv trig = art_json_field(&rec, "trigger");

	if (strcmp(art_bus_type(&rec), "decision.request") == 0 &&
	    jv_get_kind(trig) == JV_KIND_OBJECT &&
	    strcmp(art_bus_type(&trig), "tool.execute") == 0)
		answer(st, &rec, &trig, raw, len);
	else
		emit_raw(st, raw, len);
	jv_free(trig);
	jv_free(rec);
}

/* --- input ------------------------------------------------------------ */

/* Takes every line the reader has; raw is the line it was fed. */
static void
drain(struct stage *st, const char *raw, size_t len)
{
	enum art_ndjson_status s;
	struct art_err err;
	jv rec;

	while ((s = art_ndjson_next(st->in.rd, &rec, &err)) !=
	    ART_NDJSON_AGAIN && s != ART_NDJSON_EOF) {
		if (s == ART_NDJSON_OK) {
			handle(st, rec, raw, len);
			continue;
		}
		if (s == ART_NDJSON_RAW) {	/* not a tool.execute */
			emit_raw(st, raw, len);
			continue;
		}
		art_warn("%s:%zu: %s", st->in.name,
		    art_ndjson_lineno(st->in.rd), err.msg);
		emit(st, art_ndjson_bad_line(st->in.rd, &err));
	}
}

static void
feed(struct stage *st, const char *p, size_t n)
{
	struct art_err err;

	if (art_ndjson_feed(st->in.rd, p, n, &err) == -1)
		fatal(st, &err);
}

/* Keeps p[0..n) in the line buffer. */
static void
keep(struct stage *st, const char *p, size_t n)
{
	struct input *in = &st->in;
	size_t ncap;
	char *nl;

	if (in->len + n > in->cap) {
		ncap = in->cap > 0 ? in->cap : READ_CHUNK;
		while (ncap < in->len + n)
			ncap *= 2;
		if ((nl = realloc(in->line, ncap)) == NULL)
			art_die(ART_EXIT_FAIL, "out of memory");
		in->line = nl;
		in->cap = ncap;
	}
	memcpy(in->line + in->len, p, n);
	in->len += n;
}

/*
 * Splits bytes into lines.  A line over --max-line is fed to the reader
 * as it comes and never kept: the reader reports it and keeps an excerpt.
 */
static void
take_bytes(struct stage *st, const char *p, size_t n)
{
	struct input *in = &st->in;
	const char *nl;
	size_t k;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		k = nl != NULL ? (size_t)(nl - p) + 1 : n;
		if (in->skipping)
			feed(st, p, k);
		else {
			keep(st, p, k);
			if (nl == NULL && in->len > st->o->max_line) {
				feed(st, in->line, in->len);
				in->len = 0;
				in->skipping = true;
			}
		}
		if (in->skipping)
			drain(st, NULL, 0);
		if (nl != NULL) {
			if (!in->skipping) {
				/* The raw line, for passing on, less '\n'. */
				feed(st, in->line, in->len);
				drain(st, in->line, in->len - 1);
			}
			in->skipping = false;
			in->len = 0;
		}
		p += k;
		n -= k;
	}
}

/* The end of the current file: its last line, then the next file. */
static void
end_file(struct stage *st)
{
	struct input *in = &st->in;

	if (!in->skipping && in->len > 0)
		feed(st, in->line, in->len);
	art_ndjson_feed_eof(in->rd);
	drain(st, in->skipping ? NULL : in->line, in->skipping ? 0 : in->len);
	in->len = 0;
	in->skipping = false;
	art_ndjson_reader_free(in->rd);
	in->rd = NULL;
	if (in->fd > 0)
		close(in->fd);
	in->fd = -1;
}

/* Opens the next input; false when there is none left. */
static bool
open_next(struct stage *st)
{
	struct input *in = &st->in;
	const char *f;

	while ((f = *in->files) != NULL) {
		in->files++;
		if (strcmp(f, "-") == 0) {
			in->name = "<stdin>";
			in->fd = 0;
		} else if ((in->fd = open(f, O_RDONLY | O_CLOEXEC)) == -1) {
			art_warn("open '%s': %s", f, strerror(errno));
			in->failed = true;
			continue;
		} else
			in->name = f;
		in->rd = art_ndjson_reader_new(-1, in->name, st->o->max_line,
		    ART_NDJSON_REQUIRE_TYPE);
		if (in->rd == NULL)
			art_die(ART_EXIT_FAIL, "out of memory");
		art_ndjson_set_filter(in->rd, wanted, NULL);
		return true;
	}
	return false;
}

/* One read of the current input (poll said it is ready, so no block). */
static void
read_input(struct stage *st)
{
	char buf[READ_CHUNK];
	ssize_t n;

	do
		n = read(st->in.fd, buf, sizeof(buf));
	while (n == -1 && errno == EINTR);
	if (n > 0) {
		take_bytes(st, buf, (size_t)n);
		return;
	}
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		art_warn("read %s: %s", st->in.name, strerror(errno));
		st->in.failed = true;
	}
	end_file(st);
	open_next(st);
}

/* --- the loop --------------------------------------------------------- */

/*
 * Descriptors we inherited past stderr (a shell's, a test harness's) are no
 * business of the tools: mark them close-on-exec.  Our own are already.
 */
static void
cloexec_inherited(void)
{
	struct dirent *de;
	long fd, max;
	char *end;
	DIR *d;

	if ((d = opendir("/proc/self/fd")) != NULL) {
		while ((de = readdir(d)) != NULL) {
			fd = strtol(de->d_name, &end, 10);
			if (*end == '\0' && fd > 2 && fd <= INT_MAX)
				fcntl((int)fd, F_SETFD, FD_CLOEXEC);
		}
		closedir(d);
		return;
	}
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++)
		fcntl((int)fd, F_SETFD, FD_CLOEXEC);
}

static void
on_signal(int sig)
{
	int e = errno;
	ssize_t r;

	if (sig != SIGCHLD)
		stop_signal = sig;
	if (wake_fd >= 0)
		r = write(wake_fd, "", 1);	/* full pipe: already awake */
	(void)r;
	errno = e;
}

static void
setup_signals(struct stage *st)
{
	struct sigaction sa;
	int i;

	if (pipe(st->wake) == -1)
		art_die(ART_EXIT_FAIL, "pipe: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		fcntl(st->wake[i], F_SETFD, FD_CLOEXEC);
		fcntl(st->wake[i], F_SETFL, fcntl(st->wake[i], F_GETFL) |
		    O_NONBLOCK);
	}
	wake_fd = st->wake[1];
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);	/* a gone reader is EPIPE instead */
}

static void
stop_calls(struct stage *st)
{
	size_t i;

	for (i = 0; i < st->ncalls; i++) {
		art_tools_call_free(st->calls[i]);
		jv_free(st->asked[i]);
	}
	st->ncalls = 0;
	for (i = 0; i < st->nwaiting; i++)
		waiting_free(st->waiting[i]);
	st->nwaiting = 0;
}

/* Stopped by a signal: end the tools, then die of the signal. */
static _Noreturn void
stop(struct stage *st)
{
	struct sigaction sa;
	int sig = stop_signal;

	stop_calls(st);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* The pollfds: wake pipe, input, output, then ART_TOOLS_POLLFDS a call. */
static size_t
fill_pollfds(struct stage *st)
{
	size_t i, need = 3 + st->ncalls * ART_TOOLS_POLLFDS, at;
	struct pollfd *p;

	for (i = 0; i < st->nservers; i++)
		need += ART_MCP_POLLFDS;
	if (need > st->npfds) {
		if ((p = realloc(st->pfds, need * sizeof(*p))) == NULL)
			art_die(ART_EXIT_FAIL, "out of memory");
		st->pfds = p;
		st->npfds = need;
	}
	p = st->pfds;
	p[0].fd = st->wake[0], p[0].events = POLLIN;
	p[1].fd = st->in.fd, p[1].events = POLLIN;
	p[2].fd = art_outq_pending(st->out) > 0 ? art_outq_fd(st->out) : -1;
	p[2].events = POLLOUT;
	for (i = 0; i < st->ncalls; i++)
		art_tools_call_pollfds(st->calls[i],
		    p + 3 + i * ART_TOOLS_POLLFDS);
	/* Then each MCP server's pipes, after the calls'. */
	at = 3 + st->ncalls * ART_TOOLS_POLLFDS;
	for (i = 0; i < st->nservers; i++) {
		st->servers[i].nfds = art_mcp_pollfds(st->servers[i].m, p + at,
		    ART_MCP_POLLFDS);
		at += st->servers[i].nfds;
	}
	need = at;
	for (i = 0; i < need; i++)
		p[i].revents = 0;
	return need;
}

/* Milliseconds to the nearest due time of a call, running or not; -1: none. */
static int
poll_timeout(const struct stage *st)
{
	int64_t due = waiting_due_ms(st), d, now;
	size_t i;

	for (i = 0; i < st->ncalls; i++)
		if ((d = art_tools_call_due_ms(st->calls[i])) < due)
			due = d;
	now = art_tools_mono_ms();
	for (i = 0; i < st->nservers; i++)
		if ((d = art_mcp_timeout(st->servers[i].m)) >= 0 &&
		    now + d < due)
			due = now + d;
	if (due == INT64_MAX)
		return -1;
	if (due <= now)
		return 0;
	return due - now > INT_MAX ? INT_MAX : (int)(due - now);
}

/* Moves the MCP servers on; their calls settle from callbacks. */
static void
step_servers(struct stage *st)
{
	size_t i, at = 3 + st->ncalls * ART_TOOLS_POLLFDS;

	for (i = 0; i < st->nservers; i++) {
		art_mcp_work(st->servers[i].m, st->servers[i].nfds > 0 ?
		    st->pfds + at : NULL, st->servers[i].nfds);
		at += st->servers[i].nfds;
	}
}

/* Moves every call on and settles the ones that ended, in order. */
static void
step_calls(struct stage *st)
{
	int64_t now = art_tools_mono_ms();
	struct art_tools_call *c;
	struct art_err err;
	size_t i, j;
	jv line;

	for (i = 0, j = 0; i < st->ncalls; i++) {
		c = st->calls[i];
		if (art_tools_call_step(c, st->pfds + 3 + i * ART_TOOLS_POLLFDS,
		    ART_TOOLS_POLLFDS, now, &err) == -1)
			fatal(st, &err);
		if (art_tools_call_is_done(c)) {
			line = art_tools_call_settle(c);
			tape_answer(st, st->asked[i], &line);
			emit(st, line);
			art_tools_call_free(c);
		} else {
			st->asked[j] = st->asked[i];
			st->calls[j++] = c;
		}
	}
	st->ncalls = j;
}

static void
wait_output(struct stage *st)
{
	struct pollfd p = { .fd = art_outq_fd(st->out), .events = POLLOUT };
	struct art_err err;

	while (art_outq_pending(st->out) > 0) {
		if (stop_signal != 0)
			stop(st);
		if (poll(&p, 1, -1) == -1 && errno != EINTR)
			art_die(ART_EXIT_FAIL, "poll: %s", strerror(errno));
		if (art_outq_flush(st->out, &err) == -1)
			fatal(st, &err);
	}
}

static void
loop(struct stage *st)
{
	struct art_err err;
	char drop[256];
	size_t n;

	while (st->in.fd >= 0 || st->ncalls > 0 || st->nwaiting > 0 ||
	    mcp_pending(st) > 0) {
		if (stop_signal != 0)
			stop(st);
		n = fill_pollfds(st);
		if (poll(st->pfds, (nfds_t)n, poll_timeout(st)) == -1 &&
		    errno != EINTR)
			art_die(ART_EXIT_FAIL, "poll: %s", strerror(errno));
		if (st->pfds[0].revents != 0)
			while (read(st->wake[0], drop, sizeof(drop)) > 0)
				;
		if (st->pfds[2].revents != 0 &&
		    art_outq_flush(st->out, &err) == -1)
			fatal(st, &err);
		/* Servers first: step_calls() renumbers the calls' pollfds. */
		step_servers(st);
		step_calls(st);
		start_waiting(st);
		if (st->in.fd >= 0 && st->pfds[1].revents != 0)
			read_input(st);
	}
	wait_output(st);
}

/* --list: each tool's declaration, one line each. */
static int
list(const struct opts *o)
{
	struct art_err err;
	int status = ART_EXIT_OK;
	struct server *sv;
	size_t nsv, n;
	jv tools, d, out;

	if (!jv_is_valid(tools = art_tools_list(o->dirs, &err)))
		art_die(ART_EXIT_FAIL, "out of memory");
	jv_array_foreach(tools, i, t) {
		const char *name = art_json_str(&t, "name");

		d = art_tools_declaration(art_json_str(&t, "path"), name, &err);
		if (!jv_is_valid(d)) {
			art_warn("%s", err.msg);
			status = ART_EXIT_FAIL;
			d = jv_object_set(jv_object(), jv_string("name"),
			    jv_string(name));
		}
		jv_free(t);
		if (art_ndjson_write(stdout, d, &err) == -1) {
			jv_free(tools);
			art_die(ART_EXIT_FAIL, "%s", err.msg);
		}
	}
	jv_free(tools);
	/* The MCP servers' tools, as an agent file declares them. */
	sv = open_servers(o, &nsv);
	for (n = 0; n < nsv; n++) {
		tools = art_mcp_tools(sv[n].m);
		jv_array_foreach(tools, k, t) {
			const char *name = art_json_str(&t, "name");

			d = jv_object_set(jv_object(), jv_string("name"),
			    sv[n].prefix != NULL ? jv_string_fmt("%s__%s",
			    sv[n].prefix, name != NULL ? name : "") :
			    jv_string(name != NULL ? name : ""));
			d = jv_object_set(d, jv_string("description"),
			    art_json_field(&t, "description"));
			d = jv_object_set(d, jv_string("input"),
			    art_json_field(&t, "inputSchema"));
			out = art_json_field(&t, "outputSchema");
			if (jv_get_kind(out) == JV_KIND_OBJECT)
				d = jv_object_set(d, jv_string("output"), out);
			else
				jv_free(out);
			jv_free(t);
			(void)k;
			if (art_ndjson_write(stdout, d, &err) == -1)
				art_die(ART_EXIT_FAIL, "%s", err.msg);
		}
		jv_free(tools);
	}
	close_servers(sv, nsv);
	return status;
}

static int
run(const struct opts *o)
{
	struct stage st = { .o = o, .wake = { -1, -1 }, .record_fd = -1 };
	struct art_err err;
	int status;

	if (art_clock_init(&st.clock, getenv("AGENTRT_CLOCK"), &err) == -1)
		art_die(ART_EXIT_USAGE, "bad AGENTRT_CLOCK: %s", err.msg);
	if ((st.out = art_outq_new(1)) == NULL ||
	    (st.jq = art_tools_jq_new()) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	if (o->replay != NULL &&
	    (st.tape = art_tooltape_load(o->replay, &err)) == NULL)
		art_die(art_err_is(&err, "nomem") ? ART_EXIT_FAIL :
		    ART_EXIT_USAGE, "%s", art_err_is(&err, "nomem") ?
		    "out of memory" : err.msg);
	if (o->record != NULL && (st.record_fd = open(o->record,
	    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) == -1)
		art_die(ART_EXIT_USAGE, "--record '%s': %s", o->record,
		    strerror(errno));
	st.in.files = o->files;
	st.in.fd = -1;
	cloexec_inherited();
	setup_signals(&st);
	/* A replay answers every call from its tape: no server is needed. */
	if (o->replay == NULL)
		st.servers = open_servers(o, &st.nservers);
	open_next(&st);
	loop(&st);
	close_servers(st.servers, st.nservers);
	status = st.in.failed ? ART_EXIT_FAIL : ART_EXIT_OK;
	art_tools_jq_free(st.jq);
	art_outq_free(st.out);
	art_tooltape_free(st.tape);
	if (st.record_fd != -1)
		close(st.record_fd);
	free(st.in.line);
	free(st.calls);
	free(st.asked);
	free(st.waiting);
	free(st.pfds);
	return status;
}

int
main(int argc, char *argv[])
{
	static char *stdin_only[] = { "-", NULL };
	struct opts o = {
		.timeout_ms = ART_TOOLS_TIMEOUT_MS,
		.kill_grace_ms = ART_TOOLS_KILL_GRACE_MS,
		.max_output = ART_TOOLS_MAX_OUTPUT,
		.max_line = ART_NDJSON_MAX_LINE,
	};
	size_t ndirs = 0, i;
	int c, status;

	art_diag_init(argv[0]);
	o.jobs = default_jobs();
	while ((c = getopt_long(argc, argv, "t:j:lhV", longopts, NULL)) !=
	    -1) {
		switch (c) {
		case 't':
			add_dir(&o.dirs, &ndirs, optarg);
			break;
		case OPT_CWD:
			check_dir("--cwd", optarg);
			o.cwd = optarg;
			break;
		case OPT_MCP:
			add_mcp(&o, optarg);
			break;
		case OPT_RECORD:
			o.record = optarg;
			break;
		case OPT_REPLAY:
			o.replay = optarg;
			break;
		case 'j':
			o.jobs = parse_count("--jobs", optarg, 0, JOBS_MAX);
			break;
		case OPT_TIMEOUT:
			o.timeout_ms = parse_secs(optarg);
			break;
		case OPT_KILL_GRACE:
			o.kill_grace_ms = (int64_t)parse_count("--kill-grace",
			    optarg, 0, 86400000);
			break;
		case OPT_CPU:
			o.limits.cpu_secs = parse_count("--cpu", optarg, 1,
			    CPU_MAX);
			break;
		case OPT_MEMORY:
			o.limits.memory = parse_size("--memory", optarg);
			break;
		case OPT_FILES:
			o.limits.files = parse_count("--files", optarg, 1,
			    FILES_MAX);
			break;
		case OPT_MAX_OUTPUT:
			o.max_output = parse_count("--max-output", optarg, 1,
			    MAX_OUTPUT_MAX);
			break;
		case OPT_MAX_LINE:
			if (art_opt_size(optarg, &o.max_line) == -1) {
				art_warn("bad --max-line '%s': %s", optarg,
				    ART_OPT_SIZE_HINT);
				usage();
			}
			break;
		case 'l': o.list = true; break;
		case 'h': help();
		case 'V': version();
		default:  usage();
		}
	}
	if (o.list && optind < argc)
		usage();
	/* A replay looks at no tools directory, so it need not exist. */
	for (i = 0; i < ndirs && (o.replay == NULL || o.list); i++)
		check_dir("--tools", o.dirs[i]);
	if (ndirs == 0)
		default_dirs(&o.dirs, &ndirs);
	o.files = optind < argc ? argv + optind : stdin_only;
	status = o.list ? list(&o) : run(&o);
	free_dirs(o.dirs);
	free(o.mcp);
	return status;
}
