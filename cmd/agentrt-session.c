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
	const char	*usage;
	const char	*shortopts;	/* beyond -d, -h */
	bool		 creates;	/* makes the store when there is none */
	int		 min_args;
	int		 max_args;	/* -1: any number */
};

static volatile sig_atomic_t stopping;

enum { OPT_ID = 256, OPT_IDENTITY, OPT_AFTER, OPT_TURN_ID, OPT_INPUT,
    OPT_EVENTS, OPT_AGENTS, OPT_TOOLS, OPT_MAX_LINE, OPT_RESUME, OPT_PAYLOAD,
    OPT_CHILDREN, OPT_AS, OPT_HASH, OPT_POLICY };

static const struct option longopts[] = {
	{ "db",		required_argument,	NULL, 'd' },
	{ "agent",	required_argument,	NULL, 'a' },
	{ "id",		required_argument,	NULL, OPT_ID },
	{ "identity",	required_argument,	NULL, OPT_IDENTITY },
	{ "quiet",	no_argument,		NULL, 'q' },
	{ "after",	required_argument,	NULL, OPT_AFTER },
	{ "follow",	no_argument,		NULL, 'f' },
	{ "session",	required_argument,	NULL, 's' },
	{ "message",	required_argument,	NULL, 'm' },
	{ "turn-id",	required_argument,	NULL, OPT_TURN_ID },
	{ "input",	required_argument,	NULL, OPT_INPUT },
	{ "events",	required_argument,	NULL, OPT_EVENTS },
	{ "agents",	required_argument,	NULL, OPT_AGENTS },
	{ "tools",	required_argument,	NULL, OPT_TOOLS },
	{ "max-line",	required_argument,	NULL, OPT_MAX_LINE },
	{ "resume",	required_argument,	NULL, OPT_RESUME },
	{ "payload",	required_argument,	NULL, OPT_PAYLOAD },
	{ "children",	no_argument,		NULL, OPT_CHILDREN },
	{ "as",		required_argument,	NULL, OPT_AS },
	{ "output",	required_argument,	NULL, 'o' },
	{ "hash",	no_argument,		NULL, OPT_HASH },
	{ "policy",	required_argument,	NULL, OPT_POLICY },
	{ "help",	no_argument,		NULL, 'h' },
	{ "version",	no_argument,		NULL, 'V' },
	{ NULL,		0,			NULL, 0 }
};

static _Noreturn void
help(void)
{
	fputs(
"Usage: agentrt-session [-d DIR] COMMAND [ARGS]\n"
"\n"
"Inspect and manage agentrt sessions in the LMDB store.\n"
"\n"
"Commands:\n"
"  new [-a AGENT] [--id ID] [--identity JSON]\n"
"                      create a session and print its id\n"
"  ls [-q]             list sessions, one JSON object per line\n"
"  show SESSION        print one session as JSON\n"
"  request SESSION     print the live decision as a worker receives it\n"
"  log [--after SEQ] [-f] SESSION\n"
"                      print the session's event log as NDJSON\n"
"  rm SESSION...       delete sessions and everything recorded of them;\n"
"                      their running sub-agents are cancelled first\n"
"  cancel SESSION...   stop the sessions' running turns (they fail, saying\n"
"                      so) and their sub-agents; what is recorded stays\n"
"  export [--children] SESSION\n"
"                      print the session's events as NDJSON after a header\n"
"                      line (and its sub-agents' with --children)\n"
"  import [--as ID] [FILE]\n"
"                      recreate the sessions of an export; print their ids\n"
"  checkpoint [-o FILE] [--hash] SESSION\n"
"                      write a binary snapshot of the session (and its\n"
"                      sub-agents): a 4-byte version, then the events\n"
"  restore [--as ID] [FILE]\n"
"                      recreate the sessions of a checkpoint; a no-op when\n"
"                      they are there as checkpointed\n"
"  replay [--policy FILE] [--agents DIR] [FILE]\n"
"                      run an export's client inputs again in a new\n"
"                      session, every model and tool call answered from\n"
"                      the recording; print the first divergence\n"
"  run [-a AGENT | -s SESSION] [-m TEXT] [--input JSON] [--events FILE]\n"
"      [--resume ID [--payload JSON]]\n"
"                      drive a session on a ring of filters (stdin and\n"
"                      stdout are the ring)\n"
"\n"
"Options:\n"
"  -d, --db DIR        use the store in DIR (default: $AGENTRT_DB, else\n"
"                      $XDG_DATA_HOME/agentrt)\n"
"  -a, --agent AGENT   (new, run) the agent the session runs\n"
"      --id ID         (new) the session's id (default: a fresh UUIDv7)\n"
"      --identity JSON (new) the session owner, {\"id\":...,\"metadata\":{...}};\n"
"                      @FILE reads it from FILE, @- from stdin\n"
"  -q, --quiet         (ls) print only the ids\n"
"      --after SEQ     (log) start after event SEQ\n"
"  -f, --follow        (log) keep printing events as they are appended\n"
"  -s, --session SESSION\n"
"                      (run) continue this session\n"
"  -m, --message TEXT  (run) send a user message\n"
"      --turn-id ID    (run) the message's turn id, for idempotency\n"
"      --input JSON    (run) send client input lines; @FILE, @- read them\n"
"      --resume ID     (run) resume interrupt ID (of the session or of a\n"
"                      sub-agent it waits on)\n"
"      --payload JSON  (run) the resume's payload, e.g. {\"approved\":true};\n"
"                      @FILE reads it from FILE, @- from stdin\n"
"      --events FILE   (run) append client events to FILE as NDJSON\n"
"      --agents DIR    (run, replay) look for NAME.json in DIR first\n"
"                      (replay: before the recording's own)\n"
"      --tools DIR     (run) where an agent's tools named by name alone are\n"
"                      declared (default: $AGENTRT_TOOLS, else ./tools)\n"
"      --max-line BYTES\n"
"                      (run) the longest ring line read (default 64M)\n"
"      --children      (export) the session's sub-agents too\n"
"      --as ID         (import, restore) the new id of the root session;\n"
"                      its sub-agents get ids made from it\n"
"  -o, --output FILE   (checkpoint) write it to FILE, not stdout\n"
"      --hash          (checkpoint) print its SHA-256 in hex\n"
"      --policy FILE   (replay) decide with the jq program in FILE\n"
"                      (agentrt-decide -f FILE), not by the proposals\n"
"  -h, --help          print this help and exit\n"
"  -V, --version       print the version and exit\n"
"\n"
"Exit status: 0 success, 1 failure, 2 usage error; run: 3 parked.\n",
	    stdout);
	exit(ferror(stdout) || fflush(stdout) == EOF ? ART_EXIT_FAIL :
	    ART_EXIT_OK);
}

static _Noreturn void
version(void)
{
	printf("agentrt-session %s\n", PACKAGE_VERSION);
	exit(ferror(stdout) || fflush(stdout) == EOF ? ART_EXIT_FAIL :
	    ART_EXIT_OK);
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
	o->identity_v = o->identity != NULL ? parse_identity(o->identity) :
	    jv_null();
	o->after_seq = o->after != NULL ? parse_seq(o->after) : 0;
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

static int
list_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	jv *all = ctx;

	*all = art_session_list(t, err);
	return jv_is_valid(*all) ? 0 : -1;
}

static jv
ls_row(jv s)
{
	static const char *const keys[] = { "id", "agent_id", "created",
	    "status", "head", "turn" };
	jv row = jv_object();
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		row = jv_object_set(row, jv_string(keys[i]),
		    art_json_field(&s, keys[i]));
	jv_free(s);
	return row;
}

static int
cmd_ls(struct env *e, const struct opts *o, int argc, char **argv)
{
	struct art_err err;
	int r = 0;
	jv all;

	(void)argc, (void)argv;
	if (art_store_read(e->store, list_fn, &all, &err) == -1)
		return session_failed(&err);
	jv_array_foreach(all, i, s) {
		if (r == 0)
			r = o->quiet ? emit_text(art_json_str(&s, "id")) :
			    emit(ls_row(jv_copy(s)));
		jv_free(s);
	}
	jv_free(all);
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
	{ "new",  cmd_new,  "new [-a AGENT] [--id ID] [--identity JSON]", "a:",
	    true, 0, 0 },
	{ "ls",   cmd_ls,   "ls [-q]", "q", false, 0, 0 },
	{ "show", cmd_show, "show SESSION", "", false, 1, 1 },
	{ "request", cmd_request, "request SESSION", "", false, 1, 1 },
	{ "log",  cmd_log,  "log [--after SEQ] [-f] SESSION", "f", false, 1, 1 },
	{ "rm",   cmd_rm,   "rm SESSION...", "", false, 1, -1 },
	{ "cancel", cmd_cancel, "cancel SESSION...", "", false, 1, -1 },
	{ "export", session_export, "export [--children] SESSION", "", false,
	    1, 1 },
	{ "import", session_import, "import [--as ID] [FILE]", "", true, 0, 1 },
	{ "checkpoint", session_checkpoint, "checkpoint [-o FILE] [--hash] "
	    "SESSION", "o:", false, 1, 1 },
	{ "restore", session_restore, "restore [--as ID] [FILE]", "", true, 0,
	    1 },
	{ "replay", session_replay, "replay [--policy FILE] [--agents DIR] "
	    "[FILE]", "", true, 0, 1 },
	{ "run",  session_run, "run [-a AGENT | -s SESSION] [-m TEXT] "
	    "[--turn-id ID] [--input JSON] [--events FILE] [--resume ID "
	    "[--payload JSON]]", "a:s:m:", true, 0, 0 },
};

static const struct cmd *
find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

/* Long options each command takes, beyond --db, --help, --version. */
static bool
cmd_takes(const struct cmd *c, int opt)
{
	switch (opt) {
	case 'a':
		return strcmp(c->name, "new") == 0 || strcmp(c->name, "run") == 0;
	case OPT_ID: case OPT_IDENTITY:
		return strcmp(c->name, "new") == 0;
	case 'q':
		return strcmp(c->name, "ls") == 0;
	case 'f': case OPT_AFTER:
		return strcmp(c->name, "log") == 0;
	case OPT_CHILDREN:
		return strcmp(c->name, "export") == 0;
	case OPT_AS:
		return strcmp(c->name, "import") == 0 ||
		    strcmp(c->name, "restore") == 0;
	case 'o': case OPT_HASH:
		return strcmp(c->name, "checkpoint") == 0;
	case OPT_POLICY:
		return strcmp(c->name, "replay") == 0;
	case OPT_AGENTS:
		return strcmp(c->name, "run") == 0 ||
		    strcmp(c->name, "replay") == 0;
	case 's': case 'm': case OPT_TURN_ID: case OPT_INPUT: case OPT_EVENTS:
	case OPT_TOOLS: case OPT_MAX_LINE: case OPT_RESUME:
	case OPT_PAYLOAD:
		return strcmp(c->name, "run") == 0;
	}
	return true;
}

static size_t	parse_size(const char *, const char *);

static void
parse(int argc, char **argv, const char *shortopts, const struct cmd *c,
    struct opts *o)
{
	int ch;

	while ((ch = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c != NULL && !cmd_takes(c, ch))
			usage(c->usage);
		switch (ch) {
		case 'd': o->db = optarg; break;
		case 'a': o->agent = optarg; break;
		case OPT_ID: o->id = optarg; break;
		case OPT_IDENTITY: o->identity = optarg; break;
		case 'q': o->quiet = true; break;
		case OPT_AFTER: o->after = optarg; break;
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
			o->max_line = parse_size("--max-line", optarg);
			break;
		case OPT_RESUME: o->resume = optarg; break;
		case OPT_PAYLOAD: o->payload = optarg; break;
		case OPT_CHILDREN: o->children = true; break;
		case OPT_AS: o->as = optarg; break;
		case 'o': o->output = optarg; break;
		case OPT_HASH: o->hash = true; break;
		case OPT_POLICY: o->policy = optarg; break;
		case 'h': help();
		case 'V': version();
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

/* A size option's value, or a usage error. */
static size_t
parse_size(const char *name, const char *s)
{
	size_t v;

	if (art_opt_size(s, &v) == -1)
		art_die(ART_EXIT_USAGE, "bad %s '%s': %s", name, s,
		    ART_OPT_SIZE_HINT);
	return v;
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
		so.map_max = parse_size("AGENTRT_MAP_MAX", v);
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
	char shortopts[16];
	int status;

	art_diag_init(argv[0]);
	/* Options before the command: stop at the first non-option. */
	parse(argc, argv, "+d:hV", NULL, &o);
	if (optind >= argc)
		usage(NULL);
	if ((c = find_cmd(argv[optind])) == NULL) {
		art_warn("unknown command '%s'", argv[optind]);
		usage(NULL);
	}
	argc -= optind;
	argv += optind;
	optind = 1;
	snprintf(shortopts, sizeof(shortopts), "d:hV%s", c->shortopts);
	parse(argc, argv, shortopts, c, &o);
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
