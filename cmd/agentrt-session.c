/* agentrt-session - the engine's store: create, list, show, follow, remove */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jv.h>

#include "agent.h"
#include "clock.h"
#include "diag.h"
#include "engine.h"
#include "err.h"
#include "ids.h"
#include "json.h"
#include "request.h"
#include "log.h"
#include "ndjson.h"
#include "opt.h"
#include "session.h"
#include "store.h"

#include "session-cmd.h"

/* How often log -f looks for new events, and how many it reads at once. */
#define FOLLOW_POLL_MS	50
#define LOG_BATCH	1024

struct cmd {
	const char	*name;
	int		(*run)(struct env *, const struct opts *, int, char **);
	const char	*usage;		/* also its synopsis in --help */
	const char	*operands;	/* for completion: art_opt_complete_cmd */
	const char	*help;
	bool		 creates;	/* makes the store when there is none */
	int		 min_args;
	int		 max_args;	/* -1: any number */
};

static volatile sig_atomic_t stopping;

enum { OPT_ID = 256, OPT_IDENTITY, OPT_AFTER, OPT_SEARCH, OPT_TURN_ID, OPT_INPUT,
    OPT_EVENTS, OPT_AGENTS, OPT_TOOLS, OPT_MAX_LINE, OPT_RESUME, OPT_PAYLOAD,
    OPT_CHILDREN, OPT_AS, OPT_HASH, OPT_POLICY, OPT_EVENTS_FORMAT, OPT_ACKS,
    OPT_CLIENTS };

static const struct art_opt options[] = {
	{ "db", 'd', "DIR", ART_OPT_DIR, NULL, NULL, 0,
	    "use the store in DIR (default: $AGENTRT_DB, else "
	    "$XDG_DATA_HOME/agentrt)" },
	{ "agent", 'a', "AGENT", ART_OPT_AGENT, NULL, "new run", 0,
	    "the agent the session runs" },
	{ "id", OPT_ID, "ID", ART_OPT_TEXT, NULL, "new", 0,
	    "the session's id (default: a fresh UUIDv7)" },
	{ "identity", OPT_IDENTITY, "JSON", ART_OPT_TEXT, NULL, "new", 0,
	    "the session owner, {\"id\":...,\"metadata\":{...}}; @FILE reads "
	    "it from FILE, @- from stdin" },
	{ "quiet", 'q', NULL, ART_OPT_TEXT, NULL, "ls", 0,
	    "print only the ids" },
	{ "verbose", 'v', NULL, ART_OPT_TEXT, NULL, "run", 0,
	    "say the id of the session run -a makes on stderr" },
	{ "search", OPT_SEARCH, "TEXT", ART_OPT_TEXT, NULL, "ls", 0,
	    "only the sessions a message of which holds TEXT (case aside)" },
	{ "after", OPT_AFTER, "SEQ", ART_OPT_TEXT, NULL, "log", 0,
	    "start after event SEQ" },
	{ "follow", 'f', NULL, ART_OPT_TEXT, NULL, "log", 0,
	    "keep printing events as they are appended" },
	{ "session", 's', "SESSION", ART_OPT_SESSION, NULL, "run", 0,
	    "continue this session" },
	{ "message", 'm', "TEXT", ART_OPT_TEXT, NULL, "run", 0,
	    "send a user message" },
	{ "turn-id", OPT_TURN_ID, "ID", ART_OPT_TEXT, NULL, "run", 0,
	    "the message's turn id, for idempotency" },
	{ "input", OPT_INPUT, "JSON", ART_OPT_AT_FILE, NULL, "run",
	    ART_OPT_MANY, "send client input lines; @FILE, @- read them" },
	{ "resume", OPT_RESUME, "ID", ART_OPT_TEXT, NULL, "run", 0,
	    "resume interrupt ID (of the session or of a sub-agent it waits "
	    "on)" },
	{ "payload", OPT_PAYLOAD, "JSON", ART_OPT_AT_FILE, NULL, "run", 0,
	    "the resume's payload, e.g. {\"approved\":true}; @FILE reads it "
	    "from FILE, @- from stdin" },
	{ "events", OPT_EVENTS, "FILE", ART_OPT_FILE, NULL, "run serve", 0,
	    "append client events to FILE" },
	{ "events-format", OPT_EVENTS_FORMAT, "FORMAT", ART_OPT_WORDS,
	    "ndjson text ag-ui", "run serve", 0,
	    "how --events writes them: ndjson, text as agentrt-shell draws "
	    "a turn, or ag-ui, AG-UI's events (run only) (default: text to a "
	    "terminal, else ndjson)" },
	{ "agents", OPT_AGENTS, "DIR", ART_OPT_DIR, NULL,
	    "new run replay serve", ART_OPT_MANY, "look for NAME.json in DIR "
	    "first (replay: before the recording's own)" },
	{ "tools", OPT_TOOLS, "DIR", ART_OPT_DIR, NULL, "run serve",
	    ART_OPT_MANY,
	    "where an agent's tools named by name alone are declared "
	    "(default: $AGENTRT_TOOLS, else ./tools)" },
	{ "max-line", OPT_MAX_LINE, "BYTES", ART_OPT_TEXT, NULL, "run serve", 0,
	    "the longest ring line read (default 64M)" },
	{ "acks", OPT_ACKS, "FILE", ART_OPT_FILE, NULL, "serve", 0,
	    "after each commit, write the count of stdin lines taken to FILE "
	    "(a fifo)" },
	{ "clients", OPT_CLIENTS, "FILE", ART_OPT_FILE, NULL, "serve", 0,
	    "read client lines from FILE too (a fifo, or /dev/fd/N), beside "
	    "stdin: a front end's own way in" },
	{ "children", OPT_CHILDREN, NULL, ART_OPT_TEXT, NULL, "export", 0,
	    "the session's sub-agents too" },
	{ "as", OPT_AS, "ID", ART_OPT_TEXT, NULL, "import restore", 0,
	    "the new id of the root session; its sub-agents get ids made "
	    "from it" },
	{ "output", 'o', "FILE", ART_OPT_FILE, NULL, "checkpoint", 0,
	    "write it to FILE, not stdout" },
	{ "hash", OPT_HASH, NULL, ART_OPT_TEXT, NULL, "checkpoint", 0,
	    "print its SHA-256 in hex" },
	{ "policy", OPT_POLICY, "FILE", ART_OPT_JQ_FILE, NULL, "replay", 0,
	    "decide with the jq program in FILE (agentrt-decide -f FILE), not "
	    "by the proposals" },
	ART_OPT_STANDARD
};

/* The version, and those of the libraries this program links. */
static _Noreturn void
version(void)
{
	char lmdb[32];
	const char *const libs[] = { "libjq", ART_JQ_VERSION, "LMDB",
	    art_store_lmdb_version(lmdb, sizeof(lmdb)), NULL };

	art_opt_version("agentrt-session", PACKAGE_VERSION, libs);
}

static _Noreturn void
usage(const char *line)
{
	fprintf(stderr, "usage: agentrt-session %s\n"
	    "Try 'agentrt-session --help' for more information.\n",
	    line != NULL ? line : "[-d DIR] COMMAND [ARGS]");
	exit(ART_EXIT_USAGE);
}

/* A failure after the store opened: one line, then status 1. */
int
session_failed(const struct art_err *err)
{
	art_warn("%s", art_err_is(err, "nomem") ? "out of memory" : err->msg);
	return ART_EXIT_FAIL;
}

/* One output line; -1 (said on stderr) when the reader is gone. */
static int
emit(jv v)
{
	struct art_err err;

	if (art_ndjson_write(stdout, v, &err) == -1)
		return session_failed(&err), -1;
	return 0;
}

static int
emit_text(const char *s)
{
	if (printf("%s\n", s) < 0 || fflush(stdout) == EOF || ferror(stdout)) {
		art_warn("write: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* --- option values, checked before the store opens -------------------- */

jv
session_option_text(const char *name, const char *arg)
{
	char buf[65536];
	size_t len;
	FILE *f;
	jv text;

	if (arg[0] != '@')
		return jv_string(arg);
	if (strcmp(arg, "@-") == 0)
		f = stdin;
	else if ((f = fopen(arg + 1, "r")) == NULL)
		art_die(ART_EXIT_USAGE, "read %s '%s': %s", name, arg + 1,
		    strerror(errno));
	text = jv_string("");
	while ((len = fread(buf, 1, sizeof(buf), f)) > 0)
		text = jv_string_append_buf(text, buf, (int)len);
	if (ferror(f)) {
		jv_free(text);
		art_die(ART_EXIT_USAGE, "read %s '%s': %s", name, arg + 1,
		    strerror(errno));
	}
	if (f != stdin)
		fclose(f);
	return text;
}

static void
check_metadata(jv md)
{
	jv_object_foreach(md, k, val) {
		if (jv_get_kind(val) != JV_KIND_STRING)
			art_die(ART_EXIT_USAGE, "bad --identity: metadata "
			    "'%s': expected string", jv_string_value(k));
		jv_free(k);
		jv_free(val);
	}
	jv_free(md);
}

/* WorkerIdentity: {id?: string, metadata?: {string: string}}. */
static jv
parse_identity(const char *arg)
{
	struct art_err err;
	jv text = session_option_text("--identity", arg), v, md = jv_null();
	const char *s;

	v = art_json_parse_str(jv_string_value(text), &err);
	jv_free(text);
	if (!jv_is_valid(v))
		art_die(ART_EXIT_USAGE, "bad --identity: %s", err.msg);
	if (jv_get_kind(v) != JV_KIND_OBJECT)
		art_die(ART_EXIT_USAGE, "bad --identity: expected an object");
	/* The seed's WorkerIdentity has these two, and workers get it. */
	jv_object_foreach(v, k, val) {
		if (strcmp(jv_string_value(k), "id") != 0 &&
		    strcmp(jv_string_value(k), "metadata") != 0)
			art_die(ART_EXIT_USAGE, "bad --identity: unknown member "
			    "'%s' (an identity has id and metadata; put more in "
			    "metadata)", jv_string_value(k));
		jv_free(k);
		jv_free(val);
	}
	if (art_json_get_str(&v, "id", 0, &s, &err) == -1 ||
	    art_json_get_kind(&v, "metadata", JV_KIND_OBJECT, 0, &md,
	    &err) == -1)
		art_die(ART_EXIT_USAGE, "bad --identity: %s", err.msg);
	if (jv_get_kind(md) == JV_KIND_OBJECT)
		check_metadata(md);
	else
		jv_free(md);
	return v;
}

static uint64_t
parse_seq(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0)
		art_die(ART_EXIT_USAGE, "bad --after '%s': expected an event "
		    "number", s);
	return v;
}

static void
check_name(const char *what, const char *v)
{
	if (v != NULL && !art_id_is_valid(v))
		art_die(ART_EXIT_USAGE, "bad %s '%s': use 1-128 letters, "
		    "digits, '.', '_', ':' or '-', not starting with '.' or "
		    "'-'", what, v);
}

/*
 * new -a AGENT: the agent file must be there, as run finds it (--agents,
 * then the environment), so a typo is refused before any store is made:
 * status 2 for no such agent, as run says it, 1 for a file that is bad.
 */
static void
check_agent(const struct opts *o)
{
	struct art_err err;
	const char **dirs;
	size_t n;
	jv config;

	dirs = art_agent_dirs(o->agent_dirs, (size_t)o->nagent_dirs,
	    getenv("AGENTRT_AGENTS"), getenv("XDG_CONFIG_HOME"),
	    getenv("HOME"), &n, &err);
	if (dirs == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	config = art_agent_load(dirs, n, o->agent, &err);
	free(dirs);
	if (jv_is_valid(config)) {
		jv_free(config);
		return;
	}
	art_die(art_err_is(&err, "no_agent") ? ART_EXIT_USAGE : ART_EXIT_FAIL,
	    "%s", art_err_is(&err, "nomem") ? "out of memory" : err.msg);
}

/* Turns option text into values; usage errors exit before any store. */
static void
prepare(struct opts *o, const struct cmd *c)
{
	if (strcmp(c->name, "run") == 0 && o->agent == NULL &&
	    o->session == NULL)
		art_die(ART_EXIT_USAGE, "run: give -a AGENT (a new session) "
		    "or -s SESSION");
	check_name("session", o->session);
	check_name("--turn-id", o->turn_id);
	check_name("--id", o->id);
	check_name("--as", o->as);
	check_name("agent", o->agent);
	if (o->payload != NULL && o->resume == NULL)
		art_die(ART_EXIT_USAGE, "run: --payload goes with --resume ID");
	if (o->resume != NULL && o->session == NULL)
		art_die(ART_EXIT_USAGE, "run: --resume needs -s SESSION");
	if (o->events_format != NULL && strcmp(o->events_format, "ndjson") !=
	    0 && strcmp(o->events_format, "text") != 0 &&
	    strcmp(o->events_format, "ag-ui") != 0)
		art_die(ART_EXIT_USAGE, "bad --events-format '%s': use ndjson, "
		    "text or ag-ui", o->events_format);
	if (o->events_format != NULL && o->events == NULL)
		art_die(ART_EXIT_USAGE, "%s: --events-format goes with "
		    "--events FILE", c->name);
	/* An AG-UI stream is one thread's runs; serve drives many. */
	if (o->events_format != NULL && strcmp(o->events_format, "ag-ui") ==
	    0 && strcmp(c->name, "serve") == 0)
		art_die(ART_EXIT_USAGE, "serve: --events-format ag-ui is one "
		    "session's runs: use it with run");
	o->identity_v = o->identity != NULL ? parse_identity(o->identity) :
	    jv_null();
	o->after_seq = o->after != NULL ? parse_seq(o->after) : 0;
	if (strcmp(c->name, "new") == 0 && o->agent != NULL)
		check_agent(o);
}

/* --- new ------------------------------------------------------------- */

struct new_ctx {
	const char	*sid;
	const struct opts *o;
};

static int
new_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct new_ctx *c = ctx;

	return art_session_create(t, c->sid, c->o->agent,
	    jv_copy(c->o->identity_v), jv_array(), err);
}

static int
cmd_new(struct env *e, const struct opts *o, int argc, char **argv)
{
	char id[ART_ID_BUFSZ];
	struct new_ctx c = { o->id, o };
	struct art_err err;

	(void)argc, (void)argv;
	if (c.sid == NULL) {
		if (art_ids_v7(&e->ids, id) == -1) {
			art_warn("mint a session id: %s", strerror(errno));
			return ART_EXIT_FAIL;
		}
		c.sid = id;
	}
	if (art_store_write(e->store, new_fn, &c, &err) == -1)
		return session_failed(&err);
	return emit_text(c.sid) == -1 ? ART_EXIT_FAIL : ART_EXIT_OK;
}

/* --- ls, show ------------------------------------------------------- */

struct list {
	const char	*search;	/* --search TEXT, or NULL */
	jv		 rows;
};

/* The rows ls prints (art_session_row), those --search finds. */
static int
list_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct list *l = ctx;
	jv all = art_session_list(t, err), row;
	int r = 0, hit;

	if (!jv_is_valid(all))
		return -1;
	l->rows = jv_array();
	jv_array_foreach(all, i, s) {
		/* A summary with no id names no session to search. */
		hit = art_json_str(&s, "id") == NULL ? 0 : r == 0 &&
		    l->search != NULL ? art_session_mentions(t,
		    art_json_str(&s, "id"), l->search, err) : 1;
		if (r == 0 && hit == -1)
			r = -1;
		else if (r == 0 && hit == 1) {
			row = art_session_row(t, &s, err);
			if (jv_is_valid(row))
				l->rows = jv_array_append(l->rows, row);
			else
				r = -1;
		}
		jv_free(s);
	}
	jv_free(all);
	return r;
}

static int
cmd_ls(struct env *e, const struct opts *o, int argc, char **argv)
{
	struct list l = { o->search, jv_null() };
	struct art_err err;
	int r = 0;

	(void)argc, (void)argv;
	if (art_store_read(e->store, list_fn, &l, &err) == -1) {
		jv_free(l.rows);
		return session_failed(&err);
	}
	jv_array_foreach(l.rows, i, s) {
		if (r == 0)
			r = o->quiet ? emit_text(art_json_str(&s, "id")) :
			    emit(jv_copy(s));
		jv_free(s);
	}
	jv_free(l.rows);
	return r == 0 ? ART_EXIT_OK : ART_EXIT_FAIL;
}

struct show_ctx {
	const char	*sid;
	jv		 out;
};

static int
show_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct show_ctx *c = ctx;

	c->out = art_session_show(t, c->sid, err);
	return jv_is_valid(c->out) ? 0 : -1;
}

static int
cmd_show(struct env *e, const struct opts *o, int argc, char **argv)
{
	struct show_ctx c = { argv[0], jv_null() };
	struct art_err err;

	(void)o, (void)argc;
	if (art_store_read(e->store, show_fn, &c, &err) == -1)
		return session_failed(&err);
	return emit(c.out) == 0 ? ART_EXIT_OK : ART_EXIT_FAIL;
}

/*
 * The live decision as a worker receives it: the seed's whole
 * DecisionRequest, the conversation and all.  Exit 1 when there is none.
 */
static int
cmd_request(struct env *e, const struct opts *o, int argc, char **argv)
{
	struct art_err err;
	jv r;

	(void)o, (void)argc;
	r = art_engine_request(e->store, argv[0], &err);
	if (!jv_is_valid(r))
		return session_failed(&err);
	if (jv_get_kind(r) == JV_KIND_NULL) {
		art_warn("session '%s' has no decision waiting for an answer",
		    argv[0]);
		return ART_EXIT_FAIL;
	}
	return emit(r) == 0 ? ART_EXIT_OK : ART_EXIT_FAIL;
}

/* --- log ------------------------------------------------------------ */

struct log_ctx {
	const char	*sid;
	uint64_t	 after;
	jv		 events;
};

static int
log_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct log_ctx *c = ctx;
	jv s = art_session_get(t, c->sid, err);

	if (!jv_is_valid(s))
		return -1;
	jv_free(s);
	c->events = art_request_log_read(t, c->sid, c->after, LOG_BATCH, err);
	return jv_is_valid(c->events) ? 0 : -1;
}

static void
on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void
catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void
nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Prints a batch; the count printed, or -1 when the reader is gone. */
static int
print_events(struct log_ctx *c)
{
	struct art_err err;
	int64_t seq;
	int n = 0;

	jv_array_foreach(c->events, i, ev) {
		if (n >= 0 && art_json_get_int(&ev, "seq", 1, &seq, &err) == 0)
			c->after = (uint64_t)seq;
		if (n >= 0)
			n = emit(jv_copy(ev)) == -1 ? -1 : n + 1;
		jv_free(ev);
	}
	jv_free(c->events);
	c->events = jv_null();
	return n;
}

/*
 * Events are read in bounded batches in a read transaction and printed
 * after it ends: no transaction is held across output.
 */
static int
cmd_log(struct env *e, const struct opts *o, int argc, char **argv)
{
	struct log_ctx c = { argv[0], o->after_seq, jv_null() };
	struct art_err err;
	int n;

	(void)argc;
	if (o->follow)
		catch_stop_signals();
	while (!stopping) {
		if (art_store_read(e->store, log_fn, &c, &err) == -1)
			return session_failed(&err);
		if ((n = print_events(&c)) == -1)
			return ART_EXIT_FAIL;
		if (n == LOG_BATCH)
			continue;
		if (!o->follow)
			break;
		nap(FOLLOW_POLL_MS);
	}
	return ART_EXIT_OK;
}

/* --- rm ------------------------------------------------------------- */

struct rm_ctx {
	int	 argc;
	char	**argv;
};

/* All or nothing: one unknown session and none is removed. */
static int
exists_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct rm_ctx *c = ctx;
	jv s;
	int i;

	for (i = 0; i < c->argc; i++) {
		if (!jv_is_valid(s = art_session_get(t, c->argv[i], err)))
			return -1;
		jv_free(s);
	}
	return 0;
}

static int
rm_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct rm_ctx *c = ctx;
	int i;

	for (i = 0; i < c->argc; i++)
		if (art_session_remove(t, c->argv[i], err) == -1)
			return -1;
	return 0;
}

/*
 * Cancels each session's work in turn, once all are known to exist:
 * its running turn fails with why, its sub-agents are cancelled too.
 */
static int
cancel_each(struct env *e, int argc, char **argv, const char *why,
    struct art_err *err)
{
	struct rm_ctx c = { argc, argv };
	struct art_engine_opts eo = { e->store, &e->ids, &e->clock, NULL, NULL,
	    (long)getpid(), false };
	struct art_engine *en;
	int i, r = 0;

	if (art_store_read(e->store, exists_fn, &c, err) == -1)
		return -1;
	if ((en = art_engine_new(&eo)) == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	for (i = 0; i < argc && r == 0; i++)
		r = art_engine_cancel(en, argv[i], why, err);
	art_engine_free(en);
	return r;
}

static int
cmd_rm(struct env *e, const struct opts *o, int argc, char **argv)
{
	struct rm_ctx c = { argc, argv };
	struct art_err err;

	(void)o;
	/* A parent's running children stop before it goes (PROTOCOL §7). */
	if (cancel_each(e, argc, argv, "cancelled: the session was removed",
	    &err) == -1 || art_store_write(e->store, rm_fn, &c, &err) == -1)
		return session_failed(&err);
	return ART_EXIT_OK;
}

/* --- cancel --------------------------------------------------------- */

/*
 * Stops what the sessions are doing: each running turn fails, saying it
 * was cancelled, with its decision dropped, its calls voided and its
 * running sub-agents cancelled too.  What was recorded stays.  A session
 * a live ring drives is left alone (busy): stop that ring first.
 */
static int
cmd_cancel(struct env *e, const struct opts *o, int argc, char **argv)
{
	struct art_err err;

	(void)o;
	return cancel_each(e, argc, argv, "cancelled", &err) == -1 ?
	    session_failed(&err) : ART_EXIT_OK;
}

/* --- main ----------------------------------------------------------- */

static const struct cmd cmds[] = {
	{ "new", cmd_new, "new [-a AGENT [--agents DIR]] [--id ID] "
	    "[--identity JSON]", NULL,
	    "create a session and print its id", true, 0, 0 },
	{ "ls", cmd_ls, "ls [-q] [--search TEXT]", NULL,
	    "list sessions, one JSON object per line", false, 0, 0 },
	{ "show", cmd_show, "show SESSION", "session",
	    "print one session as JSON", false, 1, 1 },
	{ "request", cmd_request, "request SESSION", "session",
	    "print the live decision as a worker receives it", false, 1, 1 },
	{ "log", cmd_log, "log [--after SEQ] [-f] SESSION", "session",
	    "print the session's event log as NDJSON", false, 1, 1 },
	{ "rm", cmd_rm, "rm SESSION...", "session...",
	    "delete sessions and everything recorded of them; their running "
	    "sub-agents are cancelled first", false, 1, -1 },
	{ "cancel", cmd_cancel, "cancel SESSION...", "session...",
	    "stop the sessions' running turns (they fail, saying so) and "
	    "their sub-agents; what is recorded stays", false, 1, -1 },
	{ "export", session_export, "export [--children] SESSION", "session",
	    "print the session's events as NDJSON after a header line (and "
	    "its sub-agents' with --children)", false, 1, 1 },
	{ "import", session_import, "import [--as ID] [FILE]", "file",
	    "recreate the sessions of an export; print their ids", true, 0,
	    1 },
	{ "checkpoint", session_checkpoint,
	    "checkpoint [-o FILE] [--hash] SESSION", "session",
	    "write a binary snapshot of the session (and its sub-agents): a "
	    "4-byte version, then the events", false, 1, 1 },
	{ "restore", session_restore, "restore [--as ID] [FILE]", "file",
	    "recreate the sessions of a checkpoint; a no-op when they are "
	    "there as checkpointed", true, 0, 1 },
	{ "replay", session_replay, "replay [--policy FILE] [--agents DIR] "
	    "[FILE]", "file",
	    "run an export's client inputs again in a new session, every "
	    "model and tool call answered from the recording; print the "
	    "first divergence", true, 0, 1 },
	{ "run", session_run, "run [-v] [-a AGENT | -s SESSION] [-m TEXT] "
	    "[--turn-id ID] [--input JSON] [--events FILE [--events-format "
	    "FORMAT]] [--resume ID "
	    "[--payload JSON]]", NULL,
	    "drive a session on a ring of filters (stdin and stdout are the "
	    "ring)", true, 0, 0 },
	{ "serve", session_serve, "serve [--acks FILE] [--clients FILE] "
	    "[--events FILE [--events-format FORMAT]] [--agents DIR] [--tools DIR] "
	    "[--max-line BYTES]", NULL,
	    "drive every session the input names, and the store's orphans, "
	    "until the input ends (stdin: bus lines, stdout: the ring)", true,
	    0, 0 },
};

#define NCMDS	(sizeof(cmds) / sizeof(cmds[0]))

static _Noreturn void
help(void)
{
	size_t i;

	fputs(
"Usage: agentrt-session [-d DIR] COMMAND [ARGS]\n"
"\n"
"Inspect and manage agentrt sessions in the LMDB store.\n"
"\n"
"Commands:\n", stdout);
	for (i = 0; i < NCMDS; i++)
		art_opt_help_cmd(stdout, cmds[i].usage, cmds[i].help, 22);
	fputs(
"\n"
"Options:\n", stdout);
	art_opt_help(stdout, options, 22);
	fputs(
"\n"
"Exit status: 0 success, 1 failure, 2 usage error; run: 3 parked.\n",
	    stdout);
	art_opt_exit();
}

static const struct cmd *
find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

/*
 * --completions: the options (those command context takes, if given),
 * then the commands.
 */
static _Noreturn void
completions(const char *context)
{
	size_t i;

	if (context != NULL && find_cmd(context) == NULL) {
		art_warn("unknown command '%s'", context);
		usage(NULL);
	}
	art_opt_complete(stdout, options, context);
	for (i = 0; i < NCMDS && context == NULL; i++)
		art_opt_complete_cmd(stdout, cmds[i].name, cmds[i].operands,
		    cmds[i].help);
	art_opt_exit();
}


/*
 * Options before the command (c NULL) stop at the first operand, and are
 * given by the long name only, but for those of every command; after it,
 * those the command takes (options[].cmds) in either form.
 */
static void
parse(int argc, char **argv, const struct cmd *c, struct opts *o)
{
	struct option longopts[sizeof(options) / sizeof(options[0])];
	char shortopts[3 * sizeof(options) / sizeof(options[0])];
	const struct art_opt *op;
	int ch;

	art_opt_longopts(options, longopts);
	art_opt_shortopts(options, c == NULL ? "+" : "", c == NULL ? "" :
	    c->name, shortopts, sizeof(shortopts));
	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		op = art_opt_find(options, ch);
		if (c != NULL && op != NULL && !art_opt_takes(op, c->name))
			usage(c->usage);
		switch (ch) {
		case 'd': o->db = optarg; break;
		case 'a': o->agent = optarg; break;
		case OPT_ID: o->id = optarg; break;
		case OPT_IDENTITY: o->identity = optarg; break;
		case 'q': o->quiet = true; break;
		case 'v': o->verbose = true; break;
		case OPT_AFTER: o->after = optarg; break;
		case OPT_SEARCH: o->search = optarg; break;
		case 'f': o->follow = true; break;
		case 's': o->session = optarg; break;
		case 'm': o->message = optarg; break;
		case OPT_TURN_ID: o->turn_id = optarg; break;
		case OPT_INPUT:
			if (o->ninputs == MAX_INPUTS)
				usage(c != NULL ? c->usage : NULL);
			o->inputs[o->ninputs++] = optarg;
			break;
		case OPT_EVENTS: o->events = optarg; break;
		case OPT_EVENTS_FORMAT: o->events_format = optarg; break;
		case OPT_AGENTS:
			if (o->nagent_dirs == MAX_AGENT_DIRS)
				usage(c != NULL ? c->usage : NULL);
			o->agent_dirs[o->nagent_dirs++] = optarg;
			break;
		case OPT_TOOLS:
			if (o->ntool_dirs == MAX_AGENT_DIRS)
				usage(c != NULL ? c->usage : NULL);
			o->tool_dirs[o->ntool_dirs++] = optarg;
			break;
		case OPT_MAX_LINE:
			o->max_line = art_opt_size_arg("--max-line", optarg);
			break;
		case OPT_RESUME: o->resume = optarg; break;
		case OPT_PAYLOAD: o->payload = optarg; break;
		case OPT_ACKS: o->acks = optarg; break;
		case OPT_CLIENTS: o->clients = optarg; break;
		case OPT_CHILDREN: o->children = true; break;
		case OPT_AS: o->as = optarg; break;
		case 'o': o->output = optarg; break;
		case OPT_HASH: o->hash = true; break;
		case OPT_POLICY: o->policy = optarg; break;
		case 'h': help();
		case 'V': version();
		case ART_OPT_COMPLETIONS: completions(argv[optind]);
		default: usage(c != NULL ? c->usage : NULL);
		}
	}
}

/* -d, else $AGENTRT_DB, else $XDG_DATA_HOME/agentrt, else ~/.local/share. */
static const char *
store_dir(const char *db, char *buf, size_t n)
{
	struct art_err err;
	const char *dir = art_store_find_dir(db, getenv("AGENTRT_DB"),
	    getenv("XDG_DATA_HOME"), getenv("HOME"), buf, n, &err);

	if (dir == NULL)
		art_die(ART_EXIT_FAIL, "%s", err.msg);
	return dir;
}


/*
 * Opens the store; false when there is none and the command does not make
 * one (so ls lists nothing and show, log and rm find no session).
 */
static bool
setup(struct env *e, const struct opts *o, const struct cmd *c)
{
	struct art_store_opts so = { .clock = &e->clock, .create = c->creates };
	struct art_err err;
	char buf[4096];
	const char *v;

	if (art_clock_init(&e->clock, getenv("AGENTRT_CLOCK"), &err) == -1)
		art_die(ART_EXIT_USAGE, "AGENTRT_CLOCK: %s", err.msg);
	if (art_ids_init(&e->ids, &e->clock, getenv("AGENTRT_ID_SEED"),
	    &err) == -1)
		art_die(ART_EXIT_FAIL, "%s", err.msg);
	if ((v = getenv("AGENTRT_MAP_MAX")) != NULL && *v != '\0')
		so.map_max = art_opt_size_arg("AGENTRT_MAP_MAX", v);
	so.dir = store_dir(o->db, buf, sizeof(buf));
	if (art_store_open(&e->store, &so, &err) == 0)
		return true;
	if (!art_err_is(&err, "no_store"))
		art_die(ART_EXIT_FAIL, "%s", err.msg);
	return false;
}

int
main(int argc, char *argv[])
{
	struct opts o = { .identity_v = jv_null() };
	struct env e = { 0 };
	const struct cmd *c;
	int status;

	art_diag_init(argv[0]);
	/* Options before the command: stop at the first non-option. */
	parse(argc, argv, NULL, &o);
	if (optind >= argc)
		usage(NULL);
	if ((c = find_cmd(argv[optind])) == NULL) {
		art_warn("unknown command '%s'", argv[optind]);
		usage(NULL);
	}
	argc -= optind;
	argv += optind;
	optind = 1;
	parse(argc, argv, c, &o);
	argc -= optind;
	argv += optind;
	if (argc < c->min_args || (c->max_args >= 0 && argc > c->max_args))
		usage(c->usage);
	prepare(&o, c);
	if (!setup(&e, &o, c)) {
		if (strcmp(c->name, "ls") == 0)
			return ART_EXIT_OK;
		if (argc > 0)
			art_die(ART_EXIT_FAIL, "no session '%s'", argv[0]);
	}
	status = c->run(&e, &o, argc, argv);
	art_store_close(e.store);
	jv_free(o.identity_v);
	if (status == ART_EXIT_OK && (fflush(stdout) == EOF || ferror(stdout)))
		art_die(ART_EXIT_FAIL, "write: %s", strerror(errno));
	return status;
}
