/* toolrun.c - tool calls off the bus: run, queued, routed, replayed
 *
 * A call is answered, in the decision, as soon as it is read: with no
 * actions when it runs (or waits) and settles later, or with the result
 * itself (a jq tool, a tape, an error).  Running calls and the calls
 * waiting for a slot keep their arrival order, so settles come out in
 * the order tools end and slots go first come, first served.  Whatever
 * --record keeps of a call ("asked": [name, arguments]) travels with it
 * from its request to its answer.
 *
 * A failure that ends the run (out of memory, the reader gone) can happen
 * deep in a callback; it is kept in the toolrun, every line after it is
 * dropped, and the entry point the caller called returns it.
 */
#include "toolrun.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "json.h"
#include "mcp.h"
#include "ndjson.h"
#include "outbox.h"
#include "parts.h"
#include "request.h"
#include "security.h"
#include "session.h"
#include "store.h"
#include "utf8.h"

/* How long a server may take from its start to its tool list. */
#define MCP_START_MS	30000
/* How often another live stage's attempt is looked for in the outbox. */
#define WATCH_MS	100
/*
 * The sessions an agent's server tells of a list change, at most: the
 * last ones to ask or call, so that a long-lived stage does not keep
 * every session it ever served.  One that falls out is told again once
 * it next calls the server.
 */
#define MAX_SUBS	256

/*
 * An MCP server whose tools this stage serves: one of --mcp, or one an
 * agent's "mcp_servers" names (started by a tools.list line, or by the
 * first call to one of its tools), known by its name and command.
 */
struct server {
	char		*prefix;	/* NAME of NAME=; NULL: none */
	struct art_mcp	*m;
	jv		 names;		/* served name -> the server's */
	size_t		 nfds;		/* pollfds filled last */
	char		*name, *command;	/* an agent's; else NULL */
	jv		 envkey;	/* an agent's: its env names, dumped */
	jv		 subs;		/* [{session_id, tools}] told of it */
	jv		 asks;		/* tools.list lines to answer */
	unsigned	 gen;		/* the list they were told of */
};

/* An MCP call in flight: where its settle goes. */
struct mcp_call {
	struct art_toolrun *tr;
	char		*session_id, *call_id;
	int64_t		 attempt;
	jv		 asked;
};

/* A call answered and waiting for a job slot; it owns its strings. */
struct waiting {
	char		*session_id, *call_id, *name, *path, *input;
	size_t		 input_len;
	int64_t		 attempt;
	int64_t		 due_ms;	/* mono time; INT64_MAX: none */
	jv		 asked;
	jv		 pass;		/* its declaration's "env" */
};

struct art_toolrun {
	struct art_toolrun_conf	  c;
	struct art_tools_jq	 *jq;
	struct art_tools_call	**calls;	/* running, in start order */
	jv			 *asked;	/* each call's */
	size_t			  ncalls, cap;
	size_t			  npolled;	/* calls in the pollfds */
	struct waiting		**waiting;	/* for a slot, in order */
	size_t			  nwaiting, wcap;
	struct server		 *servers;	/* --mcp, in order */
	size_t			  nservers;
	struct art_store	 *store;	/* the last ref's, for agents */
	/*
	 * The outbox (outbox.h): "sid\ncall\nattempt" of each attempt this
	 * stage claimed and has not yet kept a result of; the attempts
	 * another live stage runs, watched for their results; and the
	 * attempt claimed by the tool.execute being answered now, whose
	 * answer in the decision (an error before it ran) is kept too.
	 */
	jv			  claimed;
	jv			  watched;	/* [{sid, id, attempt}] */
	jv			  cur;		/* {sid, id, attempt}, or null */
	/*
	 * With --record: the security object (and system prompt) of the
	 * agent whose call is being taken, {security, system}, or null, and
	 * the pipeline built from the last one, so a tape is screened as
	 * the store is.
	 */
	jv			  guard;
	struct art_security	 *tape_sec;
	jv			  tape_key;
	const char		 *src;		/* the line being taken */
	size_t			  lineno;
	bool			  failed;	/* the run cannot go on */
	struct art_err		  err;		/* why */
};

/* --- failing, warning, output ----------------------------------------- */

static void
fail(struct art_toolrun *tr, const struct art_err *err)
{
	if (!tr->failed)
		tr->err = *err;
	tr->failed = true;
}

static void
fail_nomem(struct art_toolrun *tr)
{
	struct art_err err;

	art_err_set(&err, "nomem", "out of memory");
	fail(tr, &err);
}

/* What an entry point returns: 0, or the kept failure. */
static int
outcome(const struct art_toolrun *tr, struct art_err *err)
{
	if (!tr->failed)
		return 0;
	*err = tr->err;
	return -1;
}

static void __attribute__((format(printf, 2, 3)))
warn(const struct art_toolrun *tr, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (tr->c.warn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tr->c.warn(tr->c.ctx, msg);
}

static void	keep(struct art_toolrun *, const jv *line);
static void	keep_answer(struct art_toolrun *, const jv *action);
static int	ref_store(struct art_toolrun *, const jv *rec,
		    struct art_err *);

static void
emit(struct art_toolrun *tr, jv line)
{
	struct art_err err;

	/* A claimed attempt's result is kept before it goes out. */
	keep(tr, &line);
	if (tr->failed)
		jv_free(line);
	else if (art_outq_push(tr->c.out, line, &err) == -1)
		fail(tr, &err);
}

/* A line not ours, passed on as it came. */
static void
emit_raw(struct art_toolrun *tr, const char *p, size_t n)
{
	struct art_err err;

	if (!tr->failed && (art_outq_push_raw(tr->c.out, p, n, &err) == -1 ||
	    art_outq_push_raw(tr->c.out, "\n", 1, &err) == -1))
		fail(tr, &err);
}

/* {"type":…,"session_id":…}: how every line we make begins. */
static jv
begin_line(const char *type, const char *sid)
{
	return jv_object_set(jv_object_set(jv_object(), jv_string("type"),
	    jv_string(type)), jv_string("session_id"), jv_string(sid));
}

/* The settle line of a call, up to its outcome. */
static jv
begin_settle(bool ok, const char *sid, const char *id, int64_t attempt)
{
	jv line = begin_line(ok ? "tool.result" : "tool.error", sid);

	line = jv_object_set(line, jv_string("id"), jv_string(id));
	return jv_object_set(line, jv_string("attempt"),
	    jv_number((double)attempt));
}

static void
respond(struct art_toolrun *tr, const char *sid, const char *did,
    jv actions)
{
	jv r = begin_line("decision.response", sid);

	r = jv_object_set(r, jv_string("decision_id"), jv_string(did));
	emit(tr, jv_object_set(r, jv_string("actions"), actions));
}

static jv
tool_error(const char *msg, bool retryable)
{
	jv a = jv_object();

	a = jv_object_set(a, jv_string("type"), jv_string("tool.error"));
	a = jv_object_set(a, jv_string("error"), jv_string(msg));
	return jv_object_set(a, jv_string("retryable"), jv_bool(retryable));
}

/* A tool.error the engine records with its code (the settle's "code"). */
static jv
tool_refusal(jv msg, const char *code)
{
	jv a = jv_object();

	a = jv_object_set(a, jv_string("type"), jv_string("tool.error"));
	a = jv_object_set(a, jv_string("error"), msg);
	a = jv_object_set(a, jv_string("retryable"), jv_false());
	return jv_object_set(a, jv_string("code"), jv_string(code));
}

/* --- the outbox -------------------------------------------------------- */

/* "sid\ncall\nattempt": an attempt's key in tr->claimed. */
static jv
claim_key(const char *sid, const char *id, int64_t attempt)
{
	return jv_string_fmt("%s\n%s\n%lld", sid, id, (long long)attempt);
}

/*
 * line (borrowed) is a settle line: when its attempt is one this stage
 * claimed, the line is kept as its result (synced) before it goes out.
 * A result that cannot be kept still goes out, with a warning.
 */
static void
keep(struct art_toolrun *tr, const jv *line)
{
	const char *type = art_json_str(line, "type");
	const char *sid = art_json_str(line, "session_id");
	const char *id = art_json_str(line, "id");
	struct art_err err;
	int64_t attempt = 1;
	jv key, was;

	if (type == NULL || sid == NULL || id == NULL ||
	    jv_object_length(jv_copy(tr->claimed)) == 0 ||
	    (strcmp(type, "tool.result") != 0 &&
	    strcmp(type, "tool.error") != 0))
		return;
	art_json_get_int(line, "attempt", 0, &attempt, NULL);
	key = claim_key(sid, id, attempt);
	was = jv_object_get(jv_copy(tr->claimed), jv_copy(key));
	if (jv_is_valid(was) && tr->store != NULL &&
	    art_outbox_done(tr->store, sid, id, attempt, line, &err) == -1)
		warn(tr, "tool call %s: keep its result: %s", id, err.msg);
	if (jv_is_valid(was))
		tr->claimed = jv_object_delete(tr->claimed, key);
	else
		jv_free(key);
	jv_free(was);
}

/*
 * An answer in the decision (action, borrowed) for the attempt being
 * answered now (tr->cur): kept as the settle line it stands for.
 */
static void
keep_answer(struct art_toolrun *tr, const jv *action)
{
	jv line;

	if (jv_get_kind(tr->cur) != JV_KIND_OBJECT ||
	    art_json_str(action, "type") == NULL)
		return;
	line = jv_copy(*action);
	line = jv_object_set(line, jv_string("session_id"),
	    art_json_field(&tr->cur, "sid"));
	line = jv_object_set(line, jv_string("id"), art_json_field(&tr->cur,
	    "id"));
	line = jv_object_set(line, jv_string("attempt"),
	    art_json_field(&tr->cur, "attempt"));
	keep(tr, &line);
	jv_free(line);
}

/* The settle line saying an attempt's stage died while it ran. */
static jv
interrupted(const char *sid, const char *id, int64_t attempt)
{
	jv line = begin_settle(false, sid, id, attempt);

	line = jv_object_set(line, jv_string("error"), jv_string("interrupted "
	    "while running: the tool stage running it died"));
	line = jv_object_set(line, jv_string("retryable"), jv_true());
	return jv_object_set(line, jv_string("code"), jv_string("interrupted"));
}

/*
 * The attempts another live stage runs: each settles here once its
 * result is kept, or as interrupted once that stage is gone.
 */
static void
step_watched(struct art_toolrun *tr)
{
	jv left = jv_array(), entry;
	struct art_err err;
	const char *sid, *id, *st;
	int64_t attempt;

	jv_array_foreach(tr->watched, i, w) {
		sid = art_json_str(&w, "sid");
		id = art_json_str(&w, "id");
		attempt = 1;
		art_json_get_int(&w, "attempt", 0, &attempt, NULL);
		entry = art_outbox_get(tr->store, sid, id, attempt, &err);
		st = art_json_str(&entry, "state");
		if (!jv_is_valid(entry) || (st != NULL &&
		    strcmp(st, "running") == 0 && art_outbox_alive(&entry)))
			left = jv_array_append(left, jv_copy(w));
		else if (st != NULL && strcmp(st, "done") == 0)
			emit(tr, art_json_field(&entry, "line"));
		else if (st != NULL)
			emit(tr, interrupted(sid, id, attempt));
		/* Nothing kept: the call settled, and no one waits. */
		jv_free(entry);
		jv_free(w);
		(void)i;
	}
	jv_free(tr->watched);
	tr->watched = left;
}

/* Whether a running entry (borrowed) names this process. */
static bool
mine(const jv *entry)
{
	int64_t pid = 0;

	art_json_get_int(entry, "pid", 0, &pid, NULL);
	return pid == (int64_t)getpid();
}

/*
 * Before a tool.execute (rec, trig: borrowed) runs an executable or an
 * MCP tool: its attempt is claimed in the store's outbox, so it runs at
 * most once.  true: claimed (or no store: a line not by reference runs as
 * it always has), run it.  false: answered here: from the outbox when
 * the attempt finished before, left open and watched when another live
 * stage runs it, interrupted when the stage that ran it died, or an
 * error when the store cannot say.
 */
static bool
claim(struct art_toolrun *tr, const jv *rec, const jv *trig)
{
	const char *sid = art_json_str(rec, "session_id"), *id, *st;
	const char *did = art_json_str(rec, "decision_id");
	struct art_err err;
	int64_t attempt = 1;
	jv entry, w;
	int r;

	jv_free(tr->cur);
	tr->cur = jv_null();
	id = art_json_str(trig, "id");
	if (!art_request_by_ref(rec) || sid == NULL || id == NULL ||
	    did == NULL)
		return true;
	art_json_get_int(trig, "attempt", 0, &attempt, NULL);
	if ((r = ref_store(tr, rec, &err)) == 0)
		r = art_outbox_claim(tr->store, sid, id, attempt, &entry, &err);
	else
		entry = jv_null();
	if (r == -1) {
		warn(tr, "%s:%zu: tool call %s: claim it in the store: %s",
		    tr->src, tr->lineno, id, err.msg);
		respond(tr, sid, did, jv_array_append(jv_array(),
		    tool_error("cannot record the call before it runs",
		    true)));
		return false;
	}
	if (r == 1) {
		w = art_json_set(jv_object(), "sid", jv_string(sid));
		w = art_json_set(w, "id", jv_string(id));
		tr->cur = art_json_set(w, "attempt", jv_number((double)attempt));
		tr->claimed = jv_object_set(tr->claimed, claim_key(sid, id,
		    attempt), jv_true());
		return true;
	}
	st = art_json_str(&entry, "state");
	if (st != NULL && strcmp(st, "done") == 0) {
		/* It ran: its result again, and nothing runs. */
		respond(tr, sid, did, jv_array());
		emit(tr, art_json_field(&entry, "line"));
	} else if (art_outbox_alive(&entry) && mine(&entry)) {
		/* Asked again while we run it: its settle is on its way. */
		respond(tr, sid, did, jv_array());
	} else if (art_outbox_alive(&entry)) {
		respond(tr, sid, did, jv_array());
		w = art_json_set(jv_object(), "sid", jv_string(sid));
		w = art_json_set(w, "id", jv_string(id));
		w = art_json_set(w, "attempt", jv_number((double)attempt));
		tr->watched = jv_array_append(tr->watched, w);
	} else {
		warn(tr, "%s:%zu: tool call %s: interrupted: the stage that "
		    "ran it died", tr->src, tr->lineno, id);
		respond(tr, sid, did, jv_array());
		emit(tr, interrupted(sid, id, attempt));
	}
	jv_free(entry);
	return false;
}

/* --- the tape ---------------------------------------------------------- */

/* What --record keeps of a call: [name, arguments], or null. */
static jv
asked_of(const struct art_toolrun *tr, const char *name, const jv *trig)
{
	jv a;

	if (tr->c.record_fd == -1)
		return jv_null();
	a = jv_array_append(jv_array_append(jv_array(), jv_string(name)),
	    art_tooltape_args(trig));
	return jv_get_kind(tr->guard) == JV_KIND_OBJECT ?
	    jv_array_append(a, jv_copy(tr->guard)) : a;
}

/*
 * The pipeline of guard ({security, system}, borrowed), built once for
 * each guard in a row; NULL, with why said, when it cannot be built (an
 * agent file is checked when it is loaded, so this is rare).
 */
static const struct art_security *
tape_security(struct art_toolrun *tr, const jv *guard)
{
	struct art_err err;
	jv key = jv_dump_string(jv_copy(*guard), 0);

	if (tr->tape_sec != NULL && jv_equal(jv_copy(key),
	    jv_copy(tr->tape_key))) {
		jv_free(key);
		return tr->tape_sec;
	}
	art_security_free(tr->tape_sec);
	tr->tape_sec = NULL;
	jv_free(tr->tape_key);
	tr->tape_key = key;
	if (art_security_new(guard, &tr->tape_sec, &err) == -1) {
		warn(tr, "--record '%s': the agent's security: %s",
		    tr->c.record, err.msg);
		tr->tape_sec = NULL;
	}
	return tr->tape_sec;
}

/* obj (consumed) with member key screened as a tool's output for a tape. */
static jv
screen_member(const struct art_security *sec, jv obj, const char *key,
    const char *where)
{
	jv v = art_json_field(&obj, key), hits = jv_null();
	const char *id = NULL;
	int blocked = 0;

	if (jv_get_kind(v) == JV_KIND_NULL) {
		jv_free(v);
		return obj;
	}
	v = art_security_scan(sec, ART_SEC_TOOL, v, where, &hits, &blocked,
	    &id);
	jv_free(hits);
	/* A blocked text is never kept: the engine keeps none of it. */
	if (blocked)
		v = (jv_free(v), jv_string_fmt("[blocked:%s]", id != NULL ? id :
		    "security"));
	return art_json_set(obj, key, v);
}

/*
 * The answer (borrowed) as a tape keeps it: with the agent's security
 * (guard, borrowed), its result, error and structured content screened
 * as the engine screens what it records.  A new jv.
 */
static jv
screened(struct art_toolrun *tr, const jv *guard, const char *name,
    const jv *answer)
{
	const struct art_security *sec;
	char where[ART_TOOLS_NAME_MAX + 32];
	jv out = jv_copy(*answer);

	if (jv_get_kind(*guard) != JV_KIND_OBJECT ||
	    (sec = tape_security(tr, guard)) == NULL)
		return out;
	snprintf(where, sizeof(where), "tool '%s' result", name);
	out = screen_member(sec, out, "result", where);
	out = screen_member(sec, out, "error", where);
	return screen_member(sec, out, "structured_content", where);
}

/*
 * Appends the answer (borrowed), a tool.result or tool.error, to the tape
 * for the call asked (consumed; null: not recording).  A failed write is
 * an error line, and the run goes on.
 */
static void
tape_answer(struct art_toolrun *tr, jv asked, const jv *answer)
{
	struct art_err err;
	jv name, args, line, guard, kept;

	if (jv_get_kind(asked) != JV_KIND_ARRAY) {
		jv_free(asked);
		return;
	}
	name = jv_array_get(jv_copy(asked), 0);
	args = jv_array_get(jv_copy(asked), 1);
	guard = jv_array_length(jv_copy(asked)) > 2 ? jv_array_get(asked, 2) :
	    (jv_free(asked), jv_null());
	kept = screened(tr, &guard, jv_string_value(name), answer);
	line = art_tooltape_line(jv_string_value(name), &args, &kept);
	jv_free(kept);
	jv_free(guard);
	if (jv_is_valid(line) &&
	    art_tooltape_append(tr->c.record_fd, &line, &err) == -1) {
		if (art_err_is(&err, "nomem"))
			fail(tr, &err);
		warn(tr, "--record '%s': %s", tr->c.record, err.msg);
		emit(tr, art_ndjson_error("record_failed", err.msg, NULL, 0));
	}
	jv_free(line);
	jv_free(name);
	jv_free(args);
}

/* Answers the decision with action (consumed), taped for the call asked. */
static void
respond_one(struct art_toolrun *tr, const char *sid, const char *did,
    jv asked, jv action)
{
	tape_answer(tr, asked, &action);
	keep_answer(tr, &action);
	respond(tr, sid, did, jv_array_append(jv_array(), action));
}

/*
 * The call's answer is the tape's, and no tool runs.  A call the tape
 * lacks is an error, not a tool run for real: a replay that quietly ran
 * tools would not be one.  That error is not taped again.
 */
static void
replay(struct art_toolrun *tr, const jv *trig, const char *sid,
    const char *did, const char *name)
{
	jv args = art_tooltape_args(trig);
	jv ex = art_tooltape_next(tr->c.replay, name, &args);
	char msg[256];

	jv_free(args);
	if (!jv_is_valid(ex)) {
		jv_free(ex);
		snprintf(msg, sizeof(msg), "no recorded answer for tool '%s' "
		    "with these arguments (replay)", name);
		warn(tr, "%s:%zu: %s", tr->src, tr->lineno, msg);
		respond(tr, sid, did, jv_array_append(jv_array(),
		    tool_error(msg, false)));
		return;
	}
	respond_one(tr, sid, did, asked_of(tr, name, trig),
	    art_tooltape_action(&ex));
	jv_free(ex);
}

/* A request we own but cannot answer: an error line and a warning. */
static void
bad_request(struct art_toolrun *tr, const jv *rec, const struct art_err *err,
    const char *what, const char *raw, size_t len)
{
	const char *sid = art_json_str(rec, "session_id");
	char msg[512];
	jv e;

	snprintf(msg, sizeof(msg), "%s:%zu: %s%s", tr->src, tr->lineno, what,
	    err->msg);
	warn(tr, "%s", msg);
	e = art_ndjson_error(err->code, msg, raw, len);
	if (sid != NULL)
		e = jv_object_set(e, jv_string("session_id"), jv_string(sid));
	emit(tr, e);
}

/* --- running tools ---------------------------------------------------- */

/* Adds a running call and what --record keeps of it (consumed). */
static int
add_call(struct art_toolrun *tr, struct art_tools_call *c, jv asked)
{
	size_t ccap = tr->cap, acap = tr->cap;
	int r;

	/* Two arrays, one count: the smaller room is theirs. */
	r = art_grow(&tr->calls, &ccap, tr->ncalls + 1, sizeof(*tr->calls));
	if (r == 0)
		r = art_grow(&tr->asked, &acap, tr->ncalls + 1,
		    sizeof(*tr->asked));
	tr->cap = ccap < acap ? ccap : acap;
	if (r == -1)
		return -1;
	tr->asked[tr->ncalls] = asked;
	tr->calls[tr->ncalls++] = c;
	return 0;
}

/* Whether another executable tool may start now. */
static bool
has_slot(const struct art_toolrun *tr)
{
	return tr->c.jobs == 0 || tr->ncalls < tr->c.jobs;
}

/*
 * The variables a tool is passed through: --env's, then those its
 * declaration's "env" (borrowed; null: none) names, borrowed from the
 * conf and from pass.  NULL when out of memory; free(3) frees it.
 */
static const char **
pass_names(const struct art_toolrun *tr, const jv *pass)
{
	const char **v;
	size_t n = 0, i = 0;
	int len = jv_get_kind(*pass) == JV_KIND_ARRAY ?
	    jv_array_length(jv_copy(*pass)) : 0;
	jv e;

	while (tr->c.pass != NULL && tr->c.pass[n] != NULL)
		n++;
	if ((v = calloc(n + (size_t)len + 1, sizeof(*v))) == NULL)
		return NULL;
	for (; i < n; i++)
		v[i] = tr->c.pass[i];
	for (int k = 0; k < len; k++) {
		e = jv_array_get(jv_copy(*pass), k);
		/* pass holds the string, so its bytes outlive e. */
		if (jv_get_kind(e) == JV_KIND_STRING)
			v[i++] = jv_string_value(e);
		jv_free(e);
	}
	v[i] = NULL;
	return v;
}

/*
 * Starts an executable tool whose spec names the call, the tool and its
 * input, passing the variables pass names (pass_names()); the rest comes
 * from the conf, and the time limit from the
 * deadline (due_ms, mono time; INT64_MAX: none), else the default.  The
 * call takes *asked, leaving null.  NULL with err, and *asked as it was,
 * when it could not start.
 */
static struct art_tools_call *
launch(struct art_toolrun *tr, struct art_tools_spec *spec, int64_t due_ms,
    const jv *pass, jv *asked, struct art_err *err)
{
	struct art_tools_call *c;
	int64_t now = art_clock_mono_ms();
	const char **names = pass_names(tr, pass);
	char **env;

	env = names != NULL ? art_tools_env(tr->c.env, names,
	    spec->session_id, spec->call_id, spec->attempt) : NULL;
	free(names);
	if (env == NULL) {
		fail_nomem(tr);
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	spec->env = env;
	spec->cwd = tr->c.cwd;
	spec->max_output = tr->c.max_output;
	spec->kill_grace_ms = tr->c.kill_grace_ms;
	spec->limits = tr->c.limits;
	spec->timeout_ms = due_ms == INT64_MAX ? tr->c.timeout_ms :
	    due_ms - now;
	c = art_tools_call_start(spec, now, err);
	art_tools_env_free(env);
	if (c == NULL)
		return NULL;
	if (add_call(tr, c, *asked) == -1) {
		art_tools_call_free(c);
		fail_nomem(tr);
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	*asked = jv_null();
	return c;
}

/*
 * Starts an executable tool and answers the decision: at once with no
 * actions, or with a tool.error when the tool cannot start.
 */
static void
start_call(struct art_toolrun *tr, const char *sid, const char *did,
    struct art_tools_spec *spec, int64_t due_ms, const jv *pass, jv asked)
{
	struct art_err err;

	if (launch(tr, spec, due_ms, pass, &asked, &err) == NULL) {
		warn(tr, "%s", err.msg);
		respond_one(tr, sid, did, asked, tool_error(err.msg,
		    art_err_is(&err, "tool_busy")));
		return;
	}
	respond(tr, sid, did, jv_array());
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
	jv_free(w->pass);
	free(w);
}

/*
 * A copy of what spec borrows, taking asked and pass; NULL when out of
 * memory.
 */
static struct waiting *
waiting_new(const struct art_tools_spec *spec, int64_t due_ms, jv asked,
    jv pass)
{
	struct waiting *w;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		jv_free(asked);
		jv_free(pass);
		return NULL;
	}
	w->asked = asked;
	w->pass = pass;
	if ((w->session_id = strdup(spec->session_id)) == NULL ||
	    (w->call_id = strdup(spec->call_id)) == NULL ||
	    (w->name = strdup(spec->name)) == NULL ||
	    (w->path = strdup(spec->path)) == NULL ||
	    (w->input = malloc(spec->input_len + 1)) == NULL) {
		waiting_free(w);
		return NULL;
	}
	memcpy(w->input, spec->input, spec->input_len);
	w->input[spec->input_len] = '\0';
	w->input_len = spec->input_len;
	w->attempt = spec->attempt;
	w->due_ms = due_ms;
	return w;
}

/* Queues spec's call, taking asked, and answers the decision. */
static void
wait_for_slot(struct art_toolrun *tr, const char *did,
    const struct art_tools_spec *spec, int64_t due_ms, const jv *pass,
    jv asked)
{
	struct waiting *w;

	if (art_grow(&tr->waiting, &tr->wcap, tr->nwaiting + 1,
	    sizeof(*tr->waiting)) == -1) {
		jv_free(asked);
		fail_nomem(tr);
		return;
	}
	if ((w = waiting_new(spec, due_ms, asked, jv_copy(*pass))) == NULL) {
		fail_nomem(tr);
		return;
	}
	tr->waiting[tr->nwaiting++] = w;
	respond(tr, spec->session_id, did, jv_array());
}

/* The settle line of a waiting call that fails without running. */
static void
settle_waiting(struct art_toolrun *tr, struct waiting *w, const char *msg,
    bool retryable)
{
	jv line = begin_settle(false, w->session_id, w->call_id, w->attempt);

	line = jv_object_set(line, jv_string("error"), jv_string(msg));
	line = jv_object_set(line, jv_string("retryable"), jv_bool(retryable));
	tape_answer(tr, w->asked, &line);
	w->asked = jv_null();
	emit(tr, line);
}

/* Settles the waiting calls whose deadline has passed, keeping the order. */
static void
expire_waiting(struct art_toolrun *tr, int64_t now)
{
	size_t i, j;

	for (i = 0, j = 0; i < tr->nwaiting; i++) {
		if (tr->waiting[i]->due_ms <= now) {
			settle_waiting(tr, tr->waiting[i], "deadline exceeded",
			    true);
			waiting_free(tr->waiting[i]);
		} else
			tr->waiting[j++] = tr->waiting[i];
	}
	tr->nwaiting = j;
}

/* Starts waiting calls, first come first, while there are slots. */
static void
start_waiting(struct art_toolrun *tr)
{
	struct art_tools_spec spec = { 0 };
	struct art_err err;
	struct waiting *w;

	expire_waiting(tr, art_clock_mono_ms());
	while (tr->nwaiting > 0 && has_slot(tr) && !tr->failed) {
		w = tr->waiting[0];
		memmove(tr->waiting, tr->waiting + 1,
		    --tr->nwaiting * sizeof(*tr->waiting));
		spec.name = w->name;
		spec.path = w->path;
		spec.input = w->input;
		spec.input_len = w->input_len;
		spec.session_id = w->session_id;
		spec.call_id = w->call_id;
		spec.attempt = w->attempt;
		if (launch(tr, &spec, w->due_ms, &w->pass, &w->asked,
		    &err) == NULL) {
			warn(tr, "%s", err.msg);
			settle_waiting(tr, w, err.msg,
			    art_err_is(&err, "tool_busy"));
		}
		waiting_free(w);
	}
}

/* The nearest deadline of a waiting call, mono time; INT64_MAX: none. */
static int64_t
waiting_due_ms(const struct art_toolrun *tr)
{
	int64_t due = INT64_MAX;
	size_t i;

	for (i = 0; i < tr->nwaiting; i++)
		if (tr->waiting[i]->due_ms < due)
			due = tr->waiting[i]->due_ms;
	return due;
}

/* --- answering --------------------------------------------------------- */

/*
 * The call's deadline in art_clock_mono_ms() time, INT64_MAX when the
 * trigger has none: the time it has left on the bus's clock, from now.
 */
static int
call_due(const struct art_toolrun *tr, const jv *trig, int64_t *due_ms,
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
	*due_ms = art_clock_mono_ms() + (at - art_clock_now_ms(tr->c.clock));
	return 0;
}

/*
 * A tool.execute for a tool we have (path, kind), passed the variables
 * pass (borrowed: its declaration's "env") names; asked is taken.
 */
static void
run_tool(struct art_toolrun *tr, const jv *rec, const jv *trig,
    const char *path, int kind, const jv *pass, jv asked, const char *raw,
    size_t len)
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
	    call_due(tr, trig, &due, &err) == -1) {
		jv_free(args);
		jv_free(asked);
		bad_request(tr, rec, &err, "trigger: ", raw, len);
		return;
	}
	spec.name = art_json_str(trig, "name");
	spec.input = jv_string_value(args);
	spec.input_len = (size_t)jv_string_length_bytes(jv_copy(args));
	spec.path = path;
	spec.session_id = sid;
	if (due <= art_clock_mono_ms())
		respond_one(tr, sid, did, asked,
		    tool_error("deadline exceeded", true));
	else if (kind == ART_TOOLS_JQ)
		respond_one(tr, sid, did, asked, art_tools_jq_run(tr->jq, path,
		    spec.input, spec.input_len, tr->c.max_output));
	else if (tr->nwaiting == 0 && has_slot(tr))
		start_call(tr, sid, did, &spec, due, pass, asked);
	else
		wait_for_slot(tr, did, &spec, due, pass, asked);
	jv_free(args);
}

/* --- MCP servers ------------------------------------------------------ */

static art_mcp_progress_fn mcp_progress;

/* Starts server i and waits for its tools; -1 with err. */
static int
open_server(struct art_toolrun *tr, size_t i, struct art_err *err)
{
	struct server *sv = &tr->servers[i];
	const char *spec = tr->c.mcp[i];
	char **argv, **env;
	jv tools;

	sv->names = jv_object();
	sv->subs = jv_array();
	sv->asks = jv_array();
	sv->envkey = jv_null();
	if ((argv = art_mcp_argv(spec, &sv->prefix, err)) == NULL)
		return -1;	/* its message names the spec */
	/* The server's environment is a tool's: no provider key. */
	if ((env = art_tools_env(tr->c.env, tr->c.pass, "", "", 0)) == NULL) {
		art_mcp_argv_free(argv);
		return art_err_set(err, "nomem", "out of memory");
	}
	sv->m = art_mcp_start((const char *const *)argv,
	    (const char *const *)env, tr->c.cwd, MCP_START_MS, err);
	art_tools_env_free(env);
	art_mcp_argv_free(argv);
	if (sv->m == NULL || art_mcp_wait_ready(sv->m, err) == -1)
		return art_err_is(err, "nomem") ? -1 :
		    art_err_prefix(err, "--mcp '%s'", spec);
	art_mcp_set_progress(sv->m, mcp_progress);
	tools = art_mcp_tools(sv->m);
	jv_array_foreach(tools, k, t) {
		const char *name = art_json_str(&t, "name");

		if (name != NULL)
			sv->names = jv_object_set(sv->names,
			    sv->prefix != NULL ? jv_string_fmt("%s__%s",
			    sv->prefix, name) : jv_string(name),
			    jv_string(name));
		jv_free(t);
		(void)k;
	}
	jv_free(tools);
	return 0;
}

static void
close_servers(struct art_toolrun *tr)
{
	size_t i;

	for (i = 0; i < tr->nservers; i++) {
		art_mcp_free(tr->servers[i].m);
		jv_free(tr->servers[i].names);
		jv_free(tr->servers[i].subs);
		jv_free(tr->servers[i].asks);
		free(tr->servers[i].prefix);
		free(tr->servers[i].name);
		free(tr->servers[i].command);
		jv_free(tr->servers[i].envkey);
	}
	free(tr->servers);
	tr->servers = NULL;
	tr->nservers = 0;
}

/* The server serving name, and the name it knows the tool by. */
static struct server *
find_server(struct art_toolrun *tr, const char *name, jv *tool)
{
	size_t i;

	for (i = 0; i < tr->nservers; i++) {
		*tool = jv_object_get(jv_copy(tr->servers[i].names),
		    jv_string(name));
		if (jv_is_valid(*tool))
			return &tr->servers[i];
		jv_free(*tool);
	}
	*tool = jv_invalid();
	return NULL;
}

static size_t
mcp_pending(const struct art_toolrun *tr)
{
	size_t i, n = 0;

	for (i = 0; i < tr->nservers; i++)
		n += art_mcp_pending(tr->servers[i].m);
	return n;
}

static void
mcp_call_free(struct mcp_call *mc)
{
	free(mc->session_id);
	free(mc->call_id);
	free(mc);
}

/* The text of an MCP result, cut at max as an executable's output is. */
static jv
mcp_text(const struct art_mcp_done *d, size_t max)
{
	size_t len = d->len;

	if (len <= max)
		return jv_string_sized(d->text, (int)len);
	/* Cut at a character, and say so. */
	len = art_utf8_back(d->text, max);
	return jv_string_fmt("%.*s\n[output truncated at %zu bytes]",
	    (int)len, d->text, max);
}

/*
 * An MCP result with an image: its ContentPart[] (toolrun.h), held to
 * max bytes as text is.
 */
static jv
mcp_parts(const struct art_mcp_done *d, size_t max)
{
	char why[64];

	snprintf(why, sizeof(why), "--max-output %zu", max);
	return art_parts_cap(jv_copy(*d->parts), max, why);
}

/*
 * line (consumed) with what an output schema applies to, MCP's
 * structuredContent (null when the server gave none): the engine checks
 * it, the model reads the text.  Held to --max-output as the text is:
 * past it, "structured_content_cut" gives its size instead, and it is
 * neither checked nor kept.
 */
static jv
with_structured(struct art_toolrun *tr, jv line, const struct art_mcp_done *d,
    const char *call_id)
{
	jv sc = art_json_field(d->result, "structuredContent");
	size_t len = 0;
	char *text;

	if (jv_get_kind(sc) != JV_KIND_NULL &&
	    (text = art_json_dump(&sc, &len)) != NULL) {
		free(text);
		if (len > tr->c.max_output) {
			jv_free(sc);
			warn(tr, "call %s: structuredContent of %zu bytes cut "
			    "by --max-output %zu: not checked, not kept",
			    call_id, len, tr->c.max_output);
			return jv_object_set(line, jv_string(
			    "structured_content_cut"), jv_number((double)len));
		}
	}
	return jv_object_set(line, jv_string("structured_content"), sc);
}

/* The settle of an MCP call, as an executable's would be. */
static void
mcp_done(void *ctx, const struct art_mcp_done *d)
{
	struct mcp_call *mc = ctx;
	struct art_toolrun *tr = mc->tr;
	jv line = begin_settle(d->ok, mc->session_id, mc->call_id,
	    mc->attempt), text = mcp_text(d, tr->c.max_output);

	if (d->ok && jv_get_kind(*d->parts) == JV_KIND_ARRAY) {
		jv_free(text);
		line = jv_object_set(line, jv_string("result"),
		    mcp_parts(d, tr->c.max_output));
	} else if (d->ok)
		line = jv_object_set(line, jv_string("result"), text);
	if (d->ok)
		line = with_structured(tr, line, d, mc->call_id);
	else {
		line = jv_object_set(line, jv_string("error"), text);
		line = jv_object_set(line, jv_string("retryable"),
		    jv_bool(d->retryable));
	}
	tape_answer(tr, mc->asked, &line);
	emit(tr, line);
	mcp_call_free(mc);
}

/* A notifications/progress of an MCP call, as a tool.progress line. */
static void
mcp_progress(void *ctx, const struct art_mcp_progress *p)
{
	struct mcp_call *mc = ctx;
	jv line = begin_line("tool.progress", mc->session_id);

	line = jv_object_set(line, jv_string("id"), jv_string(mc->call_id));
	line = jv_object_set(line, jv_string("progress"),
	    jv_number(p->progress));
	if (p->has_total)
		line = jv_object_set(line, jv_string("total"),
		    jv_number(p->total));
	if (p->message != NULL)
		line = jv_object_set(line, jv_string("message"),
		    jv_string(p->message));
	emit(mc->tr, line);
}

/*
 * The arguments of an MCP call: the trigger's input value when it is an
 * object, else its arguments text parsed; jv_invalid() when that is not
 * a JSON object.
 */
static jv
mcp_args(const jv *trig, const char *text)
{
	jv input = art_json_field(trig, "input");
	jv args = art_json_field(&input, "value");

	jv_free(input);
	if (jv_get_kind(args) != JV_KIND_OBJECT) {
		jv_free(args);
		args = text != NULL && *text != '\0' ?
		    art_json_parse_str(text, NULL) : jv_object();
	}
	if (jv_get_kind(args) != JV_KIND_OBJECT) {
		jv_free(args);
		return jv_invalid();
	}
	return args;
}

/*
 * A tool.execute for an MCP server's tool: answered now, settled later;
 * asked is taken.
 */
static void
run_mcp(struct art_toolrun *tr, const jv *rec, const jv *trig,
    struct server *sv, const char *tool, jv asked, const char *raw,
    size_t len)
{
	const char *sid = art_json_str(rec, "session_id");
	const char *did = art_json_str(rec, "decision_id");
	const char *id, *text;
	struct mcp_call *mc;
	struct art_err err;
	int64_t attempt = 1, due, wait;
	jv args;

	if (art_json_get_str(trig, "id", 1, &id, &err) == -1 ||
	    art_json_get_int(trig, "attempt", 0, &attempt, &err) == -1 ||
	    art_json_get_str(trig, "arguments", 0, &text, &err) == -1 ||
	    call_due(tr, trig, &due, &err) == -1) {
		jv_free(asked);
		bad_request(tr, rec, &err, "trigger: ", raw, len);
		return;
	}
	if (!jv_is_valid(args = mcp_args(trig, text))) {
		respond_one(tr, sid, did, asked,
		    tool_error("arguments are not a JSON object", false));
		return;
	}
	wait = due == INT64_MAX ? tr->c.timeout_ms : due -
	    art_clock_mono_ms();
	if (wait <= 0) {
		jv_free(args);
		respond_one(tr, sid, did, asked,
		    tool_error("deadline exceeded", true));
		return;
	}
	if ((mc = calloc(1, sizeof(*mc))) == NULL ||
	    (mc->session_id = strdup(sid)) == NULL ||
	    (mc->call_id = strdup(id)) == NULL) {
		if (mc != NULL)
			mcp_call_free(mc);
		jv_free(args);
		jv_free(asked);
		fail_nomem(tr);
		return;
	}
	mc->tr = tr;
	mc->attempt = attempt;
	mc->asked = asked;
	if (art_mcp_call(sv->m, tool, args, wait, mcp_done, mc, &err) == -1) {
		respond_one(tr, sid, did, mc->asked, tool_error(err.msg,
		    false));
		mcp_call_free(mc);
		return;
	}
	respond(tr, sid, did, jv_array());
}


/* --- an agent's MCP servers (its "mcp_servers") ----------------------- */

/* Ends the last server, one just added that could not start. */
static void
drop_last_server(struct art_toolrun *tr)
{
	struct server *sv = &tr->servers[tr->nservers - 1];

	art_mcp_free(sv->m);
	jv_free(sv->names);
	jv_free(sv->subs);
	jv_free(sv->asks);
	free(sv->name);
	free(sv->command);
	jv_free(sv->envkey);
	tr->nservers--;
}

/*
 * The agent server name running command, started now when there is
 * none (its tools come later: art_mcp_call() waits for them, and so do
 * the tools.list lines in its asks); spec (borrowed) is its mcp_servers
 * entry, whose "env" names what it is passed beside --env's.  One that
 * died stays, so later asks fail at once saying why.  NULL with err, the
 * message naming the server, when it cannot even be started.
 */
static struct server *
agent_server(struct art_toolrun *tr, const char *name, const jv *spec,
    struct art_err *err)
{
	const char *cmd = art_json_str(spec, "command");
	struct server *sv, *grown;
	char **argv, **env, *prefix = NULL;
	const char **pass;
	jv penv, envkey;
	size_t i;

	if (cmd == NULL) {
		art_err_set(err, "bad_mcp", "mcp server '%s': no command",
		    name);
		return NULL;
	}
	/* One server per name, command and env: env is what it was given. */
	penv = art_json_field(spec, "env");
	envkey = jv_dump_string(jv_copy(penv), JV_PRINT_SORTED);
	for (i = 0; i < tr->nservers; i++) {
		sv = &tr->servers[i];
		if (sv->name != NULL && strcmp(sv->name, name) == 0 &&
		    strcmp(sv->command, cmd) == 0 &&
		    jv_equal(jv_copy(sv->envkey), jv_copy(envkey))) {
			jv_free(penv);
			jv_free(envkey);
			return sv;
		}
	}
	if ((argv = art_mcp_argv(cmd, &prefix, err)) == NULL) {
		art_err_prefix(err, "mcp server '%s'", name);
		jv_free(penv);
		jv_free(envkey);
		return NULL;
	}
	free(prefix);	/* a "NAME=" in an agent's command is its own */
	pass = pass_names(tr, &penv);
	env = pass != NULL ? art_tools_env(tr->c.env, pass, "", "", 0) : NULL;
	free(pass);
	jv_free(penv);
	grown = env != NULL ? realloc(tr->servers, (tr->nservers + 1) *
	    sizeof(*tr->servers)) : NULL;
	if (grown != NULL) {
		tr->servers = grown;
		sv = &tr->servers[tr->nservers++];
		memset(sv, 0, sizeof(*sv));
		sv->names = jv_object();
		sv->subs = jv_array();
		sv->asks = jv_array();
		sv->name = strdup(name);
		sv->command = strdup(cmd);
		sv->envkey = envkey;
	} else
		jv_free(envkey);
	if (grown == NULL || sv->name == NULL || sv->command == NULL) {
		if (grown != NULL)
			drop_last_server(tr);
		art_tools_env_free(env);
		art_mcp_argv_free(argv);
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	sv->m = art_mcp_start((const char *const *)argv,
	    (const char *const *)env, tr->c.cwd, MCP_START_MS, err);
	art_tools_env_free(env);
	art_mcp_argv_free(argv);
	if (sv->m == NULL) {
		if (!art_err_is(err, "nomem"))
			art_err_prefix(err, "mcp server '%s'", name);
		drop_last_server(tr);	/* the next ask tries again */
		return NULL;
	}
	art_mcp_set_progress(sv->m, mcp_progress);
	return sv;
}

/* The tools.listed line telling sid of sv's tools that globs pass. */
static jv
listed(const struct server *sv, const char *sid, const char *id,
    const jv *globs)
{
	jv line = begin_line("tools.listed", sid), tools;

	if (id != NULL)
		line = jv_object_set(line, jv_string("id"), jv_string(id));
	line = jv_object_set(line, jv_string("server"),
	    jv_string(sv->name));
	tools = art_mcp_tools(sv->m);
	line = jv_object_set(line, jv_string("tools"),
	    art_mcp_declarations(&tools, globs, sv->name));
	jv_free(tools);
	return line;
}

/* The tools.listed line saying why the list of server name is not. */
static jv
not_listed(const char *name, const char *sid, const char *id,
    const char *why)
{
	jv line = begin_line("tools.listed", sid);
	char pre[ART_TOOLS_NAME_MAX + 20];

	line = jv_object_set(line, jv_string("id"), jv_string(id));
	line = jv_object_set(line, jv_string("server"), jv_string(name));
	/* The line names the server: its error need not. */
	snprintf(pre, sizeof(pre), "mcp server '%s': ", name);
	return jv_object_set(line, jv_string("error"), jv_string(
	    strncmp(why, pre, strlen(pre)) == 0 ? why + strlen(pre) : why));
}

/* sid is told of sv's list when it changes, once; globs borrowed. */
static void
subscribe(struct server *sv, const char *sid, const jv *globs)
{
	bool known = false;

	jv_array_foreach(sv->subs, i, s) {
		const char *x = art_json_str(&s, "session_id");

		if (x != NULL && strcmp(x, sid) == 0)
			known = true;
		jv_free(s);
		(void)i;
	}
	/* The oldest go first: a long-lived stage hears of many sessions. */
	if (!known && jv_array_length(jv_copy(sv->subs)) >= MAX_SUBS)
		sv->subs = jv_array_slice(sv->subs, 1, MAX_SUBS);
	if (!known)
		sv->subs = jv_array_append(sv->subs, jv_object_set(
		    jv_object_set(jv_object(), jv_string("session_id"),
		    jv_string(sid)), jv_string("tools"), jv_copy(*globs)));
}

/*
 * The tools.list lines sv holds, answered once its tools are in (each
 * kept on the tape when recording), or with why it died.
 */
static void
answer_asks(struct art_toolrun *tr, struct server *sv)
{
	struct art_err err;
	jv asks, globs, line, answer, args;
	const char *sid;
	bool ready = art_mcp_is_ready(sv->m);

	if (jv_array_length(jv_copy(sv->asks)) == 0 ||
	    (!ready && !art_mcp_is_dead(sv->m)))
		return;
	if (!ready)
		art_mcp_wait_ready(sv->m, &err);	/* says why, at once */
	else
		sv->gen = art_mcp_tools_generation(sv->m);
	asks = sv->asks;
	sv->asks = jv_array();
	jv_array_foreach(asks, i, a) {
		sid = art_json_str(&a, "session_id");
		globs = art_json_field(&a, "tools");
		if (!ready) {
			warn(tr, "mcp server '%s': %s", sv->name, err.msg);
			emit(tr, not_listed(sv->name, sid, art_json_str(&a,
			    "id"), err.msg));
		} else {
			subscribe(sv, sid, &globs);
			line = listed(sv, sid, art_json_str(&a, "id"), &globs);
			if (tr->c.record_fd != -1) {
				answer = jv_object_set(jv_object_set(
				    jv_object(), jv_string("type"),
				    jv_string("tool.result")),
				    jv_string("result"),
				    art_json_field(&line, "tools"));
				args = jv_object_set(jv_object(),
				    jv_string("server"), jv_string(sv->name));
				tape_answer(tr, jv_array_append(
				    jv_array_append(jv_array(),
				    jv_string("tools.list")), args), &answer);
				jv_free(answer);
			}
			emit(tr, line);
		}
		jv_free(globs);
		jv_free(a);
		(void)i;
	}
	jv_free(asks);
}

/*
 * A tools.list line: {session_id, id, server, command, tools?, env?},
 * the server as an agent's mcp_servers names it.  Answered with
 * tools.listed {session_id, id, server, tools} once the server's tools
 * are in, or the same with an "error" and no tools; the session is told
 * again when the server's list changes.  With a tape to replay, the
 * list recorded answers, and no server starts.
 */
static void
tools_list(struct art_toolrun *tr, const jv *rec, const char *raw,
    size_t len)
{
	const char *sid, *id, *name;
	struct art_err err;
	struct server *sv;
	jv ask, line, args, t;

	if (art_json_get_str(rec, "session_id", 1, &sid, &err) == -1 ||
	    art_json_get_str(rec, "id", 1, &id, &err) == -1 ||
	    art_json_get_str(rec, "server", 1, &name, &err) == -1) {
		bad_request(tr, rec, &err, "tools.list: ", raw, len);
		return;
	}
	if (tr->c.replay != NULL) {
		args = jv_object_set(jv_object(), jv_string("server"),
		    jv_string(name));
		t = art_tooltape_next(tr->c.replay, "tools.list", &args);
		if (jv_is_valid(t) && jv_object_has(jv_copy(t),
		    jv_string("result"))) {
			line = begin_line("tools.listed", sid);
			line = jv_object_set(line, jv_string("id"),
			    jv_string(id));
			line = jv_object_set(line, jv_string("server"),
			    jv_string(name));
			emit(tr, jv_object_set(line, jv_string("tools"),
			    art_json_field(&t, "result")));
		} else
			emit(tr, not_listed(name, sid, id, "the tape holds no "
			    "tools list of it"));
		jv_free(t);
		jv_free(args);
		return;
	}
	if ((sv = agent_server(tr, name, rec, &err)) == NULL) {
		if (art_err_is(&err, "nomem")) {
			fail(tr, &err);
			return;
		}
		warn(tr, "%s:%zu: %s", tr->src, tr->lineno, err.msg);
		emit(tr, not_listed(name, sid, id, err.msg));
		return;
	}
	ask = jv_object_set(jv_object(), jv_string("session_id"),
	    jv_string(sid));
	ask = jv_object_set(ask, jv_string("id"), jv_string(id));
	ask = jv_object_set(ask, jv_string("tools"),
	    art_json_field(rec, "tools"));
	sv->asks = jv_array_append(sv->asks, ask);
	answer_asks(tr, sv);
}

/*
 * The agent servers moved on: the asks of one now ready (or dead) are
 * answered, and one whose list changed tells every session told of it.
 */
static void
tell_changes(struct art_toolrun *tr)
{
	struct server *sv;
	unsigned gen;
	size_t i;

	for (i = 0; i < tr->nservers; i++) {
		sv = &tr->servers[i];
		if (sv->name == NULL)
			continue;
		answer_asks(tr, sv);
		if (!art_mcp_is_ready(sv->m) ||
		    (gen = art_mcp_tools_generation(sv->m)) == sv->gen)
			continue;
		if (sv->gen == 0) {
			/* Its first list: what the sessions were told. */
			sv->gen = gen;
			continue;
		}
		sv->gen = gen;
		jv_array_foreach(sv->subs, k, sub) {
			jv globs = art_json_field(&sub, "tools");

			emit(tr, listed(sv, art_json_str(&sub, "session_id"),
			    NULL, &globs));
			jv_free(globs);
			jv_free(sub);
			(void)k;
		}
	}
}

/* tools.list lines waiting for their server. */
static size_t
asks_pending(const struct art_toolrun *tr)
{
	size_t i, n = 0;

	for (i = 0; i < tr->nservers; i++)
		if (tr->servers[i].name != NULL)
			n += (size_t)jv_array_length(jv_copy(
			    tr->servers[i].asks));
	return n;
}

/* --- a line ------------------------------------------------------------ */

/*
 * The "env" of the tool's declaration: the agent's (decl, borrowed), or,
 * when the agent gives no more than the name or there is no agent, the
 * declaration file's beside the tool at path.
 */
static jv
declared_env(const struct art_toolrun *tr, const jv *decl, const char *path,
    const char *name)
{
	struct art_err err;
	jv d, env;

	if (jv_get_kind(*decl) == JV_KIND_OBJECT)
		return art_json_field(decl, "env");
	if (!jv_is_valid(d = art_tools_declaration(path, name, &err))) {
		/* It runs as it always did, but passed nothing. */
		warn(tr, "%s:%zu: tool '%s': %s", tr->src, tr->lineno, name,
		    err.msg);
		return d;
	}
	env = art_json_field(&d, "env");
	jv_free(d);
	return env;
}

/*
 * A tool an agent's MCP server declared (decl borrowed, with the
 * server's mcp_servers entry as "mcp_spec"): to that server, started
 * now if this stage has not yet; refused when the entry's globs do not
 * pass it (a list the server changed may have brought it).
 */
static void
route_agent_server(struct art_toolrun *tr, const jv *rec, const jv *trig,
    const char *name, const jv *decl, const char *raw, size_t len)
{
	const char *server = art_json_str(decl, "mcp_server");
	const char *sid = art_json_str(rec, "session_id");
	const char *did = art_json_str(rec, "decision_id");
	jv spec = art_json_field(decl, "mcp_spec"), globs;
	struct art_err err;
	struct server *sv;

	globs = art_json_field(&spec, "tools");
	if (jv_get_kind(spec) != JV_KIND_OBJECT ||
	    !art_mcp_tool_is_matched(&globs, name)) {
		respond(tr, sid, did, jv_array_append(jv_array(),
		    tool_refusal(jv_string_fmt("unknown tool: %s (mcp server "
		    "'%s' does not serve it to this agent)", name, server),
		    "unknown_tool")));
	} else if ((sv = agent_server(tr, server, &spec, &err)) == NULL) {
		if (art_err_is(&err, "nomem"))
			fail(tr, &err);
		else
			respond(tr, sid, did, jv_array_append(jv_array(),
			    tool_error(err.msg, false)));
	} else if (claim(tr, rec, trig)) {
		/* A later ring's session hears of the list changing too. */
		subscribe(sv, sid, &globs);
		run_mcp(tr, rec, trig, sv, name, asked_of(tr, name, trig),
		    raw, len);
	}
	jv_free(globs);
	jv_free(spec);
}

/*
 * A tool whose file lost its exec bit: the call fails saying so, and the
 * one running the ring hears it too, rather than the call going on to
 * another stage that has no such tool either.  Nothing runs, so no claim.
 */
static void
noexec(struct art_toolrun *tr, const jv *rec, const jv *trig,
    const char *name, const char *path)
{
	char msg[ART_TOOLS_NAME_MAX + PATH_MAX + 64];

	art_tools_noexec_msg(name, path, msg, sizeof(msg));
	warn(tr, "%s:%zu: %s", tr->src, tr->lineno, msg);
	respond_one(tr, art_json_str(rec, "session_id"), art_json_str(rec,
	    "decision_id"), asked_of(tr, name, trig), tool_error(msg, false));
}

/*
 * The tools directories first, then the MCP servers, then another stage.
 * decl (borrowed) is the agent's declaration of the tool: an object, the
 * name alone, or null when the request names no agent.
 */
static void
route(struct art_toolrun *tr, const jv *rec, const jv *trig,
    const char *name, const jv *decl, const char *raw, size_t len)
{
	struct art_err err;
	struct server *sv;
	char *path;
	int kind;
	jv tool, pass;

	if ((kind = art_tools_find(tr->c.dirs, name, &path, &err)) == -1) {
		fail(tr, &err);
		return;
	}
	if (kind == ART_TOOLS_NOEXEC) {
		noexec(tr, rec, trig, name, path);
		free(path);
	} else if (kind != ART_TOOLS_NONE) {
		/* A jq tool sees no environment: nothing to pass. */
		pass = kind == ART_TOOLS_EXEC ? declared_env(tr, decl, path,
		    name) : jv_null();
		/* A jq tool has no effect: run again, it does no harm. */
		if (kind != ART_TOOLS_EXEC || claim(tr, rec, trig))
			run_tool(tr, rec, trig, path, kind, &pass,
			    asked_of(tr, name, trig), raw, len);
		jv_free(pass);
		free(path);
	} else if (jv_get_kind(*decl) == JV_KIND_OBJECT &&
	    art_json_str(decl, "mcp_server") != NULL) {
		route_agent_server(tr, rec, trig, name, decl, raw, len);
	} else if ((sv = find_server(tr, name, &tool)) != NULL) {
		if (claim(tr, rec, trig))
			run_mcp(tr, rec, trig, sv, jv_string_value(tool),
			    asked_of(tr, name, trig), raw, len);
		jv_free(tool);
	} else {
		jv_free(tool);
		emit_raw(tr, raw, len);
	}
	/* What answered the decision now was kept; later settles are. */
	jv_free(tr->cur);
	tr->cur = jv_null();
}

/* --- the allow-list --------------------------------------------------- */

struct agent_read {
	const char	*sid, *head;
	int64_t		 seq;
	jv		 out;
};

static int
agent_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct agent_read *a = ctx;

	a->out = art_session_resolve_at(t, a->sid, ART_VERSION_AGENT, a->head,
	    a->seq, err);
	return jv_is_valid(a->out) ? 0 : -1;
}

/*
 * The agent config of a by-reference request (borrowed) as it stood at
 * the request's place in the store its ref names (what
 * art_request_whole() gives as "agent"), opened once and kept;
 * jv_null() when the session has none, jv_invalid() with err when the
 * store cannot say.
 */
/*
 * tr->store opened on the store a by-reference request (borrowed) names
 * in its ref, kept open while the requests name that one.  0, or -1
 * with err.
 */
static int
ref_store(struct art_toolrun *tr, const jv *rec, struct art_err *err)
{
	struct art_store_opts so = { .clock = tr->c.clock };
	jv ref = art_json_field(rec, "ref");
	const char *dir = art_json_str(&ref, "store");
	int r;

	if (dir == NULL) {
		jv_free(ref);
		return art_err_set(err, "bad_request", "\"ref\" names no "
		    "store");
	}
	if (tr->store != NULL && strcmp(art_store_dir(tr->store), dir) != 0) {
		art_store_close(tr->store);
		tr->store = NULL;
	}
	so.dir = dir;
	r = tr->store != NULL ? 0 : art_store_open(&tr->store, &so, err);
	jv_free(ref);
	return r;
}

static jv
stored_agent(struct art_toolrun *tr, const jv *rec, const char *sid,
    struct art_err *err)
{
	jv ref = art_json_field(rec, "ref"), head;
	struct agent_read a = { sid, NULL, -1, jv_invalid() };
	int r;

	head = art_json_field(&ref, "head");
	a.head = jv_get_kind(head) == JV_KIND_STRING ? jv_string_value(head) :
	    NULL;
	art_json_get_int(&ref, "seq", -1, &a.seq, NULL);
	r = ref_store(tr, rec, err);
	if (r == 0)
		r = art_store_read(tr->store, agent_fn, &a, err);
	jv_free(head);
	jv_free(ref);
	if (r == -1) {
		jv_free(a.out);
		return jv_invalid();
	}
	return a.out;
}

/*
 * The agent's declaration of the tool name (an object with that "name",
 * or the name alone), or jv_invalid() when config (borrowed) declares no
 * such tool.
 */
static jv
declaration_of(const jv *config, const char *name)
{
	jv tools = art_json_field(config, "tools"), found = jv_invalid();
	const char *n;

	if (jv_get_kind(tools) == JV_KIND_ARRAY)
		jv_array_foreach(tools, i, t) {
			n = jv_get_kind(t) == JV_KIND_STRING ?
			    jv_string_value(t) : art_json_str(&t, "name");
			if (!jv_is_valid(found) && n != NULL &&
			    strcmp(n, name) == 0)
				found = jv_copy(t);
			jv_free(t);
			(void)i;
		}
	jv_free(tools);
	return found;
}

/* The guard of config (borrowed), for a tape: see struct art_toolrun. */
static void
guard_from(struct art_toolrun *tr, const jv *config)
{
	jv sec = art_json_field(config, "security");

	jv_free(tr->guard);
	tr->guard = jv_null();
	if (jv_get_kind(sec) != JV_KIND_OBJECT) {
		jv_free(sec);
		return;
	}
	tr->guard = art_json_set_some(art_json_set(jv_object(), "security",
	    sec), "system", art_json_field(config, "system"));
}

/*
 * Whether the request's agent lets the tool name run.  Yes, with *decl
 * the agent's declaration of it, or null when the request names no
 * agent: a line with no "agent" that is not by reference, which runs as
 * it always has.  No, and the decision answered here with a tool.error
 * that runs nothing, when the agent does not declare it ("unknown tool:
 * NAME", code unknown_tool) or the store cannot say what the agent is.
 */
static bool
is_declared(struct art_toolrun *tr, const jv *rec, const char *sid,
    const char *did, const char *name, jv *decl)
{
	jv config = art_json_field(rec, "agent");
	struct art_err err;

	*decl = jv_null();
	if (jv_get_kind(config) != JV_KIND_OBJECT) {
		jv_free(config);
		if (!art_request_by_ref(rec))
			return true;
		config = stored_agent(tr, rec, sid, &err);
		if (!jv_is_valid(config)) {
			if (art_err_is(&err, "nomem")) {
				fail(tr, &err);
				return false;
			}
			warn(tr, "%s:%zu: tool '%s': read the agent from the "
			    "store: %s", tr->src, tr->lineno, name, err.msg);
			respond(tr, sid, did, jv_array_append(jv_array(),
			    tool_refusal(jv_string_fmt("cannot check tool "
			    "'%s' against the agent: %s", name, err.msg),
			    "bad_request")));
			return false;
		}
	}
	*decl = declaration_of(&config, name);
	if (tr->c.record_fd != -1)
		guard_from(tr, &config);
	if (jv_get_kind(*decl) == JV_KIND_OBJECT &&
	    art_json_str(decl, "mcp_server") != NULL) {
		/* Which server, as the agent names it, goes with the call. */
		jv servers = art_json_field(&config, "mcp_servers");
		jv spec = art_json_field(&servers,
		    art_json_str(decl, "mcp_server"));

		*decl = jv_object_set(*decl, jv_string("mcp_spec"), spec);
		jv_free(servers);
	}
	jv_free(config);
	if (jv_is_valid(*decl))
		return true;
	*decl = jv_null();
	warn(tr, "%s:%zu: refused tool '%s': the agent does not declare it",
	    tr->src, tr->lineno, name);
	respond(tr, sid, did, jv_array_append(jv_array(),
	    tool_refusal(jv_string_fmt("unknown tool: %s", name),
	    "unknown_tool")));
	return false;
}

/*
 * Whether the engine found the arguments valid: the trigger's ToolInput
 * says "invalid" (or "malformed") when they fail the tool's input schema,
 * and then the decision is answered here with the tool.error the
 * engine's proposal would have made, whatever passed the request on.  A
 * trigger with no input runs as it always has.
 */
static bool
input_is_valid(struct art_toolrun *tr, const jv *trig, const char *sid,
    const char *did, const char *name)
{
	jv in = art_json_field(trig, "input");
	const char *st = art_json_str(&in, "status"), *why;
	bool ok = st == NULL || strcmp(st, "valid") == 0;

	if (!ok) {
		why = art_json_str(&in, "error");
		warn(tr, "%s:%zu: refused tool '%s': its arguments are %s",
		    tr->src, tr->lineno, name, st);
		respond(tr, sid, did, jv_array_append(jv_array(),
		    tool_refusal(jv_string_fmt("invalid tool arguments: %s",
		    why != NULL ? why : st), "invalid_arguments")));
	}
	jv_free(in);
	return ok;
}

/* --- a decision -------------------------------------------------------- */

/* A decision.request whose trigger is tool.execute. */
static void
answer(struct art_toolrun *tr, const jv *rec, const jv *trig,
    const char *raw, size_t len)
{
	const char *sid, *did, *name = art_json_str(trig, "name");
	struct art_err err;
	jv decl;

	if (art_json_get_str(rec, "session_id", 1, &sid, &err) == -1 ||
	    art_json_get_str(rec, "decision_id", 1, &did, &err) == -1) {
		bad_request(tr, rec, &err, "", raw, len);
		return;
	}
	if (!art_tools_name_is_valid(name)) {
		respond(tr, sid, did, jv_array_append(jv_array(),
		    tool_error("bad tool name", false)));
		return;
	}
	if (!is_declared(tr, rec, sid, did, name, &decl))
		return;
	if (!input_is_valid(tr, trig, sid, did, name)) {
		jv_free(decl);
		return;
	}
	if (tr->c.replay != NULL)
		replay(tr, trig, sid, did, name);
	else
		route(tr, rec, trig, name, &decl, raw, len);
	jv_free(decl);
}

int
art_toolrun_wants(const char *type, const char *trigger, void *ctx)
{
	(void)ctx;
	return (strcmp(type, "decision.request") == 0 &&
	    (trigger == NULL || strcmp(trigger, "tool.execute") == 0)) ||
	    strcmp(type, "tools.list") == 0;
}

int
art_toolrun_line(struct art_toolrun *tr, jv rec, const char *raw,
    size_t len, const char *src, size_t lineno, struct art_err *err)
{
	jv trig = art_json_field(&rec, "trigger");

	tr->src = src;
	tr->lineno = lineno;
	jv_free(tr->guard);
	tr->guard = jv_null();
	if (strcmp(art_ndjson_type(&rec), "decision.request") == 0 &&
	    jv_get_kind(trig) == JV_KIND_OBJECT &&
	    strcmp(art_ndjson_type(&trig), "tool.execute") == 0)
		answer(tr, &rec, &trig, raw, len);
	else if (strcmp(art_ndjson_type(&rec), "tools.list") == 0)
		tools_list(tr, &rec, raw, len);
	else
		emit_raw(tr, raw, len);
	jv_free(trig);
	jv_free(rec);
	return outcome(tr, err);
}

/* --- the poll loop ----------------------------------------------------- */

size_t
art_toolrun_active(const struct art_toolrun *tr)
{
	return tr->ncalls + tr->nwaiting + mcp_pending(tr) +
	    asks_pending(tr) + (size_t)jv_array_length(jv_copy(tr->watched));
}

size_t
art_toolrun_waiting(const struct art_toolrun *tr)
{
	return tr->nwaiting;
}

size_t
art_toolrun_running(const struct art_toolrun *tr)
{
	return tr->ncalls + mcp_pending(tr);
}

void
art_toolrun_drop_waiting(struct art_toolrun *tr)
{
	size_t i;

	for (i = 0; i < tr->nwaiting; i++)
		waiting_free(tr->waiting[i]);
	tr->nwaiting = 0;
}

/* ART_TOOLS_POLLFDS a running call, then each MCP server's. */
size_t
art_toolrun_pollfds(struct art_toolrun *tr, struct pollfd *pfd, size_t max)
{
	size_t i, need = tr->ncalls * ART_TOOLS_POLLFDS, at;

	for (i = 0; i < tr->nservers; i++)
		need += ART_MCP_POLLFDS;
	if (need > max)
		return need;
	for (i = 0; i < tr->ncalls; i++)
		art_tools_call_pollfds(tr->calls[i],
		    pfd + i * ART_TOOLS_POLLFDS);
	tr->npolled = tr->ncalls;
	at = tr->ncalls * ART_TOOLS_POLLFDS;
	for (i = 0; i < tr->nservers; i++) {
		tr->servers[i].nfds = art_mcp_pollfds(tr->servers[i].m,
		    pfd + at, ART_MCP_POLLFDS);
		at += tr->servers[i].nfds;
	}
	for (i = 0; i < at; i++)
		pfd[i].revents = 0;
	return at;
}

int
art_toolrun_timeout(const struct art_toolrun *tr)
{
	int64_t due = waiting_due_ms(tr), d, now;
	size_t i;

	for (i = 0; i < tr->ncalls; i++)
		if ((d = art_tools_call_due_ms(tr->calls[i])) < due)
			due = d;
	now = art_clock_mono_ms();
	for (i = 0; i < tr->nservers; i++)
		if ((d = art_mcp_timeout(tr->servers[i].m)) >= 0 &&
		    now + d < due)
			due = now + d;
	/* Another stage's attempts are looked at in the store, now and then. */
	if (jv_array_length(jv_copy(tr->watched)) > 0 && now + WATCH_MS < due)
		due = now + WATCH_MS;
	if (due == INT64_MAX)
		return -1;
	if (due <= now)
		return 0;
	return due - now > INT_MAX ? INT_MAX : (int)(due - now);
}

/* Moves the MCP servers on; their calls settle from callbacks. */
static void
step_servers(struct art_toolrun *tr, const struct pollfd *pfd)
{
	size_t i, at = tr->npolled * ART_TOOLS_POLLFDS;

	for (i = 0; i < tr->nservers; i++) {
		art_mcp_work(tr->servers[i].m, pfd != NULL &&
		    tr->servers[i].nfds > 0 ? pfd + at : NULL,
		    pfd != NULL ? tr->servers[i].nfds : 0);
		if (pfd != NULL)
			at += tr->servers[i].nfds;
	}
}

/* Moves every call on and settles the ones that ended, in order. */
static void
step_calls(struct art_toolrun *tr, const struct pollfd *pfd)
{
	int64_t now = art_clock_mono_ms();
	struct art_tools_call *c;
	struct art_err err;
	size_t i, j;
	jv line;

	for (i = 0, j = 0; i < tr->ncalls; i++) {
		c = tr->calls[i];
		if (art_tools_call_step(c, pfd != NULL && i < tr->npolled ?
		    pfd + i * ART_TOOLS_POLLFDS : NULL, pfd != NULL &&
		    i < tr->npolled ? ART_TOOLS_POLLFDS : 0, now, &err) == -1)
			fail(tr, &err);
		if (art_tools_call_is_done(c)) {
			line = art_tools_call_settle(c);
			/* Kept first: the window a kill can lose it in. */
			keep(tr, &line);
			tape_answer(tr, tr->asked[i], &line);
			emit(tr, line);
			art_tools_call_free(c);
		} else {
			tr->asked[j] = tr->asked[i];
			tr->calls[j++] = c;
		}
	}
	tr->ncalls = j;
	tr->npolled = 0;
}

int
art_toolrun_work(struct art_toolrun *tr, const struct pollfd *pfd, size_t n,
    struct art_err *err)
{
	if (n == 0)
		pfd = NULL;
	/* Servers first: step_calls() renumbers the calls. */
	step_servers(tr, pfd);
	tell_changes(tr);
	step_calls(tr, pfd);
	if (jv_array_length(jv_copy(tr->watched)) > 0)
		step_watched(tr);
	start_waiting(tr);
	return outcome(tr, err);
}

/* --- the object -------------------------------------------------------- */

/* Says, through warn, each tool in the directories that cannot run. */
static int
noexec_notes(struct art_toolrun *tr, struct art_err *err)
{
	char msg[ART_TOOLS_NAME_MAX + PATH_MAX + 64];
	jv tools;

	if (tr->c.warn == NULL)
		return 0;
	if (!jv_is_valid(tools = art_tools_list(tr->c.dirs, err)))
		return -1;
	jv_array_foreach(tools, i, t) {
		jv x = art_json_field(&t, "executable");

		if (jv_get_kind(x) == JV_KIND_FALSE)
			warn(tr, "%s", art_tools_noexec_msg(art_json_str(&t,
			    "name"), art_json_str(&t, "path"), msg,
			    sizeof(msg)));
		jv_free(x);
		jv_free(t);
		(void)i;
	}
	jv_free(tools);
	return 0;
}

struct art_toolrun *
art_toolrun_new(const struct art_toolrun_conf *c, struct art_err *err)
{
	struct art_toolrun *tr;
	size_t i;

	if ((tr = calloc(1, sizeof(*tr))) == NULL ||
	    (tr->jq = art_tools_jq_new()) == NULL) {
		free(tr);
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	tr->c = *c;
	tr->claimed = jv_object();
	tr->watched = jv_array();
	tr->cur = jv_null();
	tr->guard = jv_null();
	tr->tape_key = jv_null();
	/* A replay answers every call from its tape: no tool or server runs. */
	if (c->replay != NULL)
		return tr;
	if (noexec_notes(tr, err) == -1) {
		art_toolrun_free(tr);
		return NULL;
	}
	if (c->nmcp == 0)
		return tr;
	if ((tr->servers = calloc(c->nmcp, sizeof(*tr->servers))) == NULL) {
		art_toolrun_free(tr);
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	for (i = 0; i < c->nmcp; i++) {
		tr->nservers++;
		if (open_server(tr, i, err) == -1) {
			art_toolrun_free(tr);
			return NULL;
		}
	}
	return tr;
}

void
art_toolrun_stop(struct art_toolrun *tr)
{
	size_t i;

	for (i = 0; i < tr->ncalls; i++) {
		art_tools_call_free(tr->calls[i]);
		jv_free(tr->asked[i]);
	}
	tr->ncalls = 0;
	art_toolrun_drop_waiting(tr);
}

void
art_toolrun_free(struct art_toolrun *tr)
{
	if (tr == NULL)
		return;
	art_toolrun_stop(tr);
	close_servers(tr);
	art_store_close(tr->store);
	jv_free(tr->claimed);
	jv_free(tr->watched);
	jv_free(tr->cur);
	jv_free(tr->guard);
	jv_free(tr->tape_key);
	art_security_free(tr->tape_sec);
	art_tools_jq_free(tr->jq);
	free(tr->calls);
	free(tr->asked);
	free(tr->waiting);
	free(tr);
}

/* --- declarations ------------------------------------------------------ */

/* An MCP server's tool t (borrowed) as an agent file declares it. */
static jv
mcp_declaration(const struct server *sv, const jv *t)
{
	const char *name = art_json_str(t, "name");
	jv d, out;

	if (name == NULL)
		name = "";
	d = jv_object_set(jv_object(), jv_string("name"), sv->prefix != NULL ?
	    jv_string_fmt("%s__%s", sv->prefix, name) : jv_string(name));
	d = jv_object_set(d, jv_string("description"),
	    art_json_field(t, "description"));
	d = jv_object_set(d, jv_string("input"),
	    art_json_field(t, "inputSchema"));
	out = art_json_field(t, "outputSchema");
	if (jv_get_kind(out) == JV_KIND_OBJECT)
		d = jv_object_set(d, jv_string("output"), out);
	else
		jv_free(out);
	return d;
}

int
art_toolrun_declare(struct art_toolrun *tr, art_toolrun_declare_fn *fn,
    void *ctx, struct art_err *err)
{
	struct art_err derr;
	jv tools, d;
	size_t n;

	if (!jv_is_valid(tools = art_tools_list(tr->c.dirs, err)))
		return -1;
	jv_array_foreach(tools, i, t) {
		const char *name = art_json_str(&t, "name");
		jv x = art_json_field(&t, "executable");

		/* One that cannot run was said when tr was made. */
		if (jv_get_kind(x) == JV_KIND_FALSE) {
			jv_free(t);
			continue;
		}
		jv_free(x);
		d = art_tools_declaration(art_json_str(&t, "path"), name,
		    &derr);
		if (jv_is_valid(d))
			fn(ctx, d, NULL);
		else
			fn(ctx, jv_object_set(jv_object(), jv_string("name"),
			    jv_string(name)), derr.msg);
		jv_free(t);
	}
	jv_free(tools);
	for (n = 0; n < tr->nservers; n++) {
		tools = art_mcp_tools(tr->servers[n].m);
		jv_array_foreach(tools, k, t) {
			fn(ctx, mcp_declaration(&tr->servers[n], &t), NULL);
			jv_free(t);
			(void)k;
		}
		jv_free(tools);
	}
	return 0;
}
