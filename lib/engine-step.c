/* engine-step.c - one step: its helpers, a step within it, its transaction
 *
 * A step is a struct cx: one session's work inside one write transaction.
 * Here are the small things every step uses (ids, timers, the lines it
 * emits, refusing its input), reading the session it is in, running a
 * step of another session inside the same transaction (eng_with_session),
 * and the transaction a step runs in: what it hands out after the
 * commit, and whether the commit must reach the disk first.
 */
#include "engine-int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "session.h"

/*
 * Runs fn in session sid inside the same transaction (a sub-agent, the
 * parent it reports to, the target of a message.send), then plans sid
 * unless a step of sid is already under way further up: that step plans
 * it when it ends.  Lines, events and wakes join c's.
 */
int
eng_with_session(struct cx *c, const char *sid, int (*fn)(struct cx *, void *),
    void *arg)
{
	struct cx s = *c;
	const struct cx *u;
	int r, busy = 0;

	if (strcmp(sid, c->sid) == 0)
		return fn(c, arg);
	for (u = c; u != NULL; u = u->up)
		if (strcmp(u->sid, sid) == 0)
			busy = 1;
	s.sid = sid;
	s.sum = jv_invalid();
	s.up = c;
	r = fn(&s, arg);
	if (r == 0 && !busy)
		r = eng_plan(&s);
	jv_free(s.sum);
	c->out = s.out;
	c->events = s.events;
	c->adopt = s.adopt;
	c->wake = s.wake;
	jv_free(c->sum);	/* sid's step may have written ours too */
	c->sum = jv_invalid();
	return r;
}

/* sid is driven by this engine from now on (once the step commits). */
void
eng_adopt(struct cx *c, const char *sid)
{
	c->adopt = jv_array_append(c->adopt, jv_string(sid));
}

/* --- small things --------------------------------------------------- */

jv
eng_iso(int64_t ms)
{
	char buf[ART_CLOCK_BUFSZ];

	return jv_string(art_clock_format(ms, buf));
}

int64_t
eng_ms_of(const jv *o, const char *key)
{
	const char *s = art_json_str(o, key);
	int64_t ms;

	if (s == NULL || art_clock_parse(s, &ms, NULL) == -1)
		return -1;
	return ms;
}

int
eng_mint(struct cx *c, char *buf)
{
	if (art_ids_v7(c->e->o.ids, buf) == -1)
		return art_err_set(c->err, "ids", "cannot mint an id");
	return 0;
}

/* Refuses the step's input: the entry point records only the refusal. */
int
eng_reject(struct cx *c, const char *fmt, ...)
{
	char why[sizeof(c->err->msg)];
	va_list ap;

	/* Made apart first: an argument may be c->err->msg itself. */
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return art_err_set(c->err, "reject", "%s", why);
}

void
eng_wake_at(struct cx *c, int64_t ms)
{
	if (ms >= 0 && (c->wake < 0 || ms < c->wake))
		c->wake = ms;
}

void
eng_wake(struct cx *c, const jv *o, const char *key)
{
	eng_wake_at(c, eng_ms_of(o, key));
}

void
eng_emit(struct cx *c, jv line)
{
	c->out = jv_array_append(c->out, line);
}

/* --- reading the session -------------------------------------------- */

/* The session's summary, read once per change (a step reads it often). */
jv
eng_summary(struct cx *c)
{
	if (!jv_is_valid(c->sum)) {
		jv_free(c->sum);
		c->sum = art_session_get(c->t, c->sid, c->err);
		if (!jv_is_valid(c->sum))
			return jv_copy(c->sum);
	}
	return jv_copy(c->sum);
}

/* The head now, copied to buf ("" when the tree is empty). */
int
eng_head(struct cx *c, char *buf, size_t n)
{
	jv s = eng_summary(c);
	const char *h;

	if (!jv_is_valid(s))
		return -1;
	h = art_json_str(&s, "head");
	snprintf(buf, n, "%s", h != NULL ? h : "");
	jv_free(s);
	return 0;
}

jv
eng_head_jv(const char *h)
{
	return *h != '\0' ? jv_string(h) : jv_null();
}

jv
eng_config_at(struct cx *c, const char *h)
{
	return art_session_resolve(c->t, c->sid, ART_VERSION_AGENT,
	    *h != '\0' ? h : NULL, c->err);
}

/*
 * The version of config (borrowed, an object) and, when tools is not
 * NULL, its LlmTools in *tools (a new jv): worked out once a config.
 * The version is the engine's, valid until the next call; NULL when it
 * could not be worked out (out of memory), and then what would name
 * the config by it goes whole.
 */
const char *
eng_config_version(struct cx *c, const jv *config, jv *tools)
{
	struct art_engine *e = c->e;

	if (!jv_identical(jv_copy(e->cfg_last), jv_copy(*config))) {
		jv_free(e->cfg_last);
		jv_free(e->cfg_tools);
		e->cfg_tools = art_propose_llm_tools(config);
		e->cfg_last = art_propose_config_version(config,
		    e->cfg_version) == 0 ? jv_copy(*config) : jv_null();
	}
	if (tools != NULL)
		*tools = jv_copy(e->cfg_tools);
	return e->cfg_version[0] != '\0' ? e->cfg_version : NULL;
}

/*
 * The record under (sid, key) in db, key NULL for none: a new jv,
 * jv_null() when there is none, or jv_invalid() with c->err when the
 * store fails.  c->err is left alone otherwise, so a step may look a
 * record up while its err holds the reason for something else.
 */
jv
eng_get(struct cx *c, enum art_db db, const char *sid, const char *key)
{
	struct art_err err;
	jv v;

	/* No record is keyed by an id longer than an id may be. */
	if ((sid != NULL && strlen(sid) > ART_ID_MAX) || (key != NULL &&
	    strlen(key) > ART_ID_MAX))
		return jv_null();
	v = art_store_get(c->t, db, sid, key, key != NULL ? strlen(key) : 0,
	    &err);
	if (jv_is_valid(v))
		return v;
	jv_free(v);
	if (art_err_is(&err, "not_found"))
		return jv_null();
	*c->err = err;
	return jv_invalid();
}

jv
eng_get_call(struct cx *c, const char *id)
{
	return art_store_get(c->t, ART_DB_CALLS, c->sid, id, strlen(id),
	    c->err);
}

/* The open calls, as full records, in id order. */
jv
eng_open_calls(struct cx *c, const jv *s)
{
	jv open = art_json_field(s, "open"), out = jv_array(), call;

	if (jv_get_kind(open) == JV_KIND_OBJECT) {
		jv keys = jv_keys(jv_copy(open));

		jv_array_foreach(keys, i, k) {
			call = eng_get_call(c, jv_string_value(k));
			if (jv_is_valid(call))
				out = jv_array_append(out, call);
			else
				jv_free(call);
			jv_free(k);
		}
		jv_free(keys);
	}
	jv_free(open);
	return out;
}

/* --- transactions --------------------------------------------------- */

/*
 * Group commit (DESIGN §4).  The lines one loop iteration read are one
 * write transaction (art_engine_input_batch), and only a transaction
 * with an effect is synced to disk: a model call or a tool run going
 * out, a sub-agent starting, an event a client may act on.  The rest
 * (recording that a tool started, a decision.request, a token, a
 * message a client only shows) commits to the OS page cache and is made
 * durable by the next synced commit, which fdatasyncs the whole file.
 * A process killed with kill -9 loses none of it; an OS crash can lose
 * that unsynced tail, and what it held is re-derived on the next run: a
 * decision.request is a pure function of what is recorded, so the live
 * decision is sent again, and a call whose dispatch was lost is retried.
 * A tool step is then two synced commits: the decision that starts the
 * tool run, and the one that makes the model call.
 */

int
eng_op_txn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct op *op = ctx;
	struct cx c = { op->e, t, err, op->sid,
	    art_clock_now_ms(op->e->o.clock), jv_array(), jv_array(), -1,
	    jv_invalid(), jv_array(), NULL, NULL, "" };
	int r;

	r = op->fn != NULL ? op->fn(&c, op->arg) : 0;

	if (r == 0 && !op->quiet)
		r = eng_plan(&c);
	jv_free(c.sum);
	jv_free(op->out);
	jv_free(op->events);
	jv_free(op->adopt);
	op->out = c.out;	/* a rerun (the map grew) starts afresh */
	op->events = c.events;
	op->adopt = c.adopt;
	op->wake = c.wake;
	return r;
}

/* The prompts a transaction kept are dropped (it is run again or undone). */
void
eng_prompts_unstage(struct art_engine *e)
{
	jv_free(e->prompt_stage);
	e->prompt_stage = jv_object();
	eng_scan_unstage(e);
}

/* The transaction committed: what it kept is what the next builds on. */
void
eng_prompts_keep(struct art_engine *e)
{
	jv_object_foreach(e->prompt_stage, k, v)
		e->prompts = jv_object_set(e->prompts, k, v);
	eng_scan_keep(e);
	eng_prompts_unstage(e);
}

/* Is a ring line an effect?  Only some decisions are pure. */
static int
line_acts(const jv *line)
{
	const char *type = art_json_str(line, "type"), *tt;
	jv tr;
	int acts;

	if (type == NULL || strcmp(type, "decision.request") != 0)
		return 1;	/* llm.request, and anything unforeseen */
	tr = art_json_field(line, "trigger");
	tt = art_json_str(&tr, "type");
	acts = tt == NULL || strcmp(tt, "tool.execute") == 0 ||
	    strcmp(tt, "llm.execute") == 0;
	jv_free(tr);
	return acts;
}

/*
 * May a client act on this event?  Only what a client just shows is
 * left unsynced: a token, a message, a tool's result, metrics, a turn
 * starting, thinking or acting.  A completion, an error, a tool call (a
 * client tool is run on it), a suspension and anything unforeseen sync.
 */
static int
event_acts(const jv *ev)
{
	static const char *const shown[] = { "token", "message",
	    "tool_result", "metrics", "turn.started", NULL };
	const char *type = art_json_str(ev, "type"), *st;
	int i;

	if (type == NULL)
		return 1;
	for (i = 0; shown[i] != NULL; i++)
		if (strcmp(type, shown[i]) == 0)
			return 0;
	st = art_json_str(ev, "status");
	return strcmp(type, "status") != 0 || st == NULL ||
	    (strcmp(st, "thinking") != 0 && strcmp(st, "acting") != 0);
}

static int
any_acts(const jv *a, int (*acts)(const jv *))
{
	int r = 0;

	jv_array_foreach(*a, i, x) {
		r = r || acts(&x);
		jv_free(x);
		(void)i;
	}
	return r;
}

/* Must op's transaction reach the disk before what it made goes out? */
int
eng_op_has_effect(const struct op *op)
{
	return op->sync || jv_array_length(jv_copy(op->adopt)) > 0 ||
	    any_acts(&op->out, line_acts) || any_acts(&op->events, event_acts);
}

/* One op as its own transaction, synced only when it has an effect. */
int
eng_op_write(struct art_txn *t, void *ctx, struct art_err *err)
{
	int r;

	/* A rerun starts afresh. */
	eng_prompts_unstage(((struct op *)ctx)->e);
	r = eng_op_txn(t, ctx, err);

	if (r == 0 && !eng_op_has_effect(ctx) &&
	    !((struct op *)ctx)->e->o.sync_always)
		art_txn_nosync(t);
	return r;
}

/* The refusal of a step's input, recorded on its own. */
int
eng_reject_step(struct cx *c, void *arg)
{
	const char *why = arg;
	jv s = eng_summary(c), live;
	const char *lid;
	int r;

	if (!jv_is_valid(s))
		return -1;
	live = art_json_field(&s, "live");
	jv_free(s);
	lid = art_json_str(&live, "id");
	if (lid != NULL)
		r = eng_rec(c, set(set(set(obj("decision.errored"), "id",
		    jv_string(lid)), "error", jv_string(why)), "retryable",
		    jv_false()));
	else
		r = 0;
	jv_free(live);
	if (r == 0)
		r = eng_rec_error(c, "bad_response", why, NULL);
	return r == 0 && lid != NULL ? eng_fail_run(c, why) : r;
}
