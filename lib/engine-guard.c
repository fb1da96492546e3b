/* engine-guard.c - what governs a turn: its limits and the tools it runs
 *
 * An agent file's limits (max_loops, max_tool_calls, max_turn_cost,
 * max_session_cost, max_turn_ms) are held here, by the engine, whatever a
 * decision answers: a call that would start past one is not made, and
 * the turn ends failed with the limit's name as its code.  A tool the
 * agent does not declare, or arguments that fail the tool's input schema,
 * never run however the tool.execute decision is answered.
 */
#include "engine-int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parts.h"
#include "propose.h"
#include "utf8.h"

/* A limit that is a positive integer, or -1 when the agent sets none. */
static int64_t
limit_int(const jv *cfg, const char *key)
{
	int64_t n = -1;

	if (art_json_get_int(cfg, key, 0, &n, NULL) == -1 || n < 0)
		return -1;
	return n;
}

/* A decimal-string cap (price table dollars) as a double; -1: none. */
static double
limit_cost(const jv *cfg, const char *key)
{
	const char *s = art_json_str(cfg, key);
	char *end;
	double d;

	if (s == NULL)
		return -1;
	d = strtod(s, &end);
	return end == s || d < 0 ? -1 : d;
}

static double
cost_of(const jv *o)
{
	const char *s = art_json_str(o, "cost");

	return s != NULL ? strtod(s, NULL) : 0;
}

/* Stops the step's response: the rest of its actions are not taken. */
static int
stop(struct cx *c, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
stop(struct cx *c, const char *code, const char *fmt, ...)
{
	va_list ap;

	c->stop_code = code;
	va_start(ap, fmt);
	vsnprintf(c->stop_why, sizeof(c->stop_why), fmt, ap);
	va_end(ap);
	return 1;
}

static int
sum_cost(const void *sub, size_t sublen, jv v, void *ctx, struct art_err *err)
{
	double *sum = ctx;

	(void)sub;
	(void)sublen;
	(void)err;
	*sum += cost_of(&v);
	jv_free(v);
	return 0;
}

/*
 * May a call start now?  llm: a model call, else a tool call.  0 yes; 1
 * when a limit of cfg (borrowed) stops it (c->stop_code says which: the
 * caller ends the turn once the response's actions stop); -1 when the
 * store fails.
 */
int
eng_guard_call(struct cx *c, const jv *cfg, int llm)
{
	const char *key = llm ? "max_loops" : "max_tool_calls";
	int64_t max = limit_int(cfg, key), ms = limit_int(cfg, "max_turn_ms");
	int64_t made = 0, started;
	double cap, sum = 0;
	jv s = eng_summary(c), turn;
	int r = 0, timed;

	if (!jv_is_valid(s))
		return -1;
	turn = eng_turn_record(c, art_json_str(&s, "turn"));
	timed = jv_object_has(jv_copy(s), jv_string("turn_deadline"));
	jv_free(s);
	if (!jv_is_valid(turn))
		return -1;
	art_json_get_int(&turn, llm ? "llm_calls_made" : "tool_calls_made", 0,
	    &made, NULL);
	started = eng_ms_of(&turn, "started");
	if (max >= 0 && made >= max)
		r = stop(c, key, "%s reached: %lld %s call%s made in the turn "
		    "(%s %lld)", key, (long long)made, llm ? "model" : "tool",
		    made == 1 ? "" : "s", key, (long long)max);
	else if ((cap = limit_cost(cfg, "max_turn_cost")) >= 0 &&
	    cost_of(&turn) >= cap)
		r = stop(c, "max_turn_cost", "max_turn_cost reached: the turn "
		    "cost %s (max_turn_cost %s)", art_json_str(&turn, "cost"),
		    art_json_str(cfg, "max_turn_cost"));
	else if (ms >= 0 && started >= 0 && c->now - started >= ms)
		r = stop(c, "max_turn_ms", "max_turn_ms reached: the turn ran "
		    "%lld ms (max_turn_ms %lld)", (long long)(c->now - started),
		    (long long)ms);
	/*
	 * The turn's first call sets the deadline every plan checks (the
	 * agent's config may be set only after the turn began).
	 */
	if (r == 0 && !timed && ms >= 0 && started >= 0 && eng_rec(c, set(set(
	    obj("turn.deadline"), "turn_id", art_json_field(&turn,
	    "turn_id")), "deadline", eng_iso(started + ms))) == -1)
		r = -1;
	jv_free(turn);
	if (r != 0 || (cap = limit_cost(cfg, "max_session_cost")) < 0)
		return r;
	if (art_store_scan(c->t, ART_DB_TURNS, c->sid, NULL, 0, NULL, 0, 0,
	    sum_cost, &sum, c->err) == -1)
		return -1;
	if (sum >= cap)
		r = stop(c, "max_session_cost", "max_session_cost reached: the "
		    "session cost %.6g (max_session_cost %s)", sum,
		    art_json_str(cfg, "max_session_cost"));
	return r;
}

/* Ends the turn a limit stopped in this step, if one did. */
int
eng_guard_stopped(struct cx *c)
{
	const char *code = c->stop_code;

	if (code == NULL)
		return 0;
	c->stop_code = NULL;
	return eng_stop_turn(c, code, jv_null(), c->stop_why);
}

/*
 * The running turn's wall clock (summary s, borrowed): past its deadline
 * the turn ends, code max_turn_ms, whatever runs; before it, a timer.
 */
int
eng_guard_clock(struct cx *c, const jv *s)
{
	const char *st = art_json_str(s, "status");
	int64_t due = eng_ms_of(s, "turn_deadline");
	char why[160];

	if (due < 0 || st == NULL || strcmp(st, "running") != 0)
		return 0;
	if (due > c->now) {
		eng_wake_at(c, due);
		return 0;
	}
	snprintf(why, sizeof(why), "max_turn_ms reached: the turn ran past "
	    "its deadline by %lld ms", (long long)(c->now - due));
	return eng_stop_turn(c, "max_turn_ms", jv_null(), why);
}

/*
 * After a tool.execute decision (live, borrowed) is answered: a call the
 * answer left open that names a tool cfg (borrowed) does not declare, or
 * whose arguments failed the input schema, is failed here, so it cannot
 * run whatever answered (agentrt-tool refuses it too).
 */
int
eng_guard_execute(struct cx *c, const jv *live, const jv *cfg)
{
	jv tr = art_json_field(live, "trigger"), call, decl;
	const char *type = art_json_str(&tr, "type"), *id, *st, *name, *bad;
	int r = 0;

	id = art_json_str(&tr, "id");
	if (type == NULL || strcmp(type, "tool.execute") != 0 || id == NULL) {
		jv_free(tr);
		return 0;
	}
	call = eng_get_call(c, id);
	jv_free(tr);
	if (!jv_is_valid(call))
		return -1;
	st = art_json_str(&call, "status");
	name = art_json_str(&call, "name");
	if (st == NULL || name == NULL || (strcmp(st, "pending") != 0 &&
	    strcmp(st, "queued") != 0)) {
		jv_free(call);
		return 0;
	}
	decl = art_propose_tool(cfg, name);
	bad = art_json_str(&call, "input_error");
	if (jv_get_kind(decl) == JV_KIND_NULL)
		r = eng_refuse_call(c, &call, jv_string_fmt("unknown tool: %s",
		    name));
	else if (bad != NULL)
		r = eng_refuse_call(c, &call, jv_string_fmt("invalid tool "
		    "arguments: %s", bad));
	jv_free(decl);
	jv_free(call);
	return r;
}

/* tool_result_max_bytes: at the top of cfg, else in its security. */
static int64_t
result_cap(const jv *cfg)
{
	jv sec = art_json_field(cfg, "security");
	int64_t n = limit_int(cfg, "tool_result_max_bytes");

	if (n < 0)
		n = limit_int(&sec, "tool_result_max_bytes");
	jv_free(sec);
	return n;
}

/*
 * A tool's result text (consumed) as the model may see it under cfg
 * (borrowed): cut past tool_result_max_bytes, between characters, with
 * a note saying how much was cut.
 */
jv
eng_guard_result(const jv *cfg, jv text)
{
	int64_t cap = result_cap(cfg);
	size_t n, keep;
	const char *s;
	jv out;

	if (cap < 0 || jv_get_kind(text) != JV_KIND_STRING)
		return text;
	n = (size_t)jv_string_length_bytes(jv_copy(text));
	if (n <= (size_t)cap)
		return text;
	s = jv_string_value(text);
	keep = art_utf8_whole(s, (size_t)cap);
	out = jv_string_concat(jv_string_sized(s, (int)keep), jv_string_fmt(
	    "\n[truncated: %zu of %zu bytes cut by tool_result_max_bytes "
	    "%lld]", n - keep, n, (long long)cap));
	jv_free(text);
	return out;
}

jv
eng_guard_parts(const jv *cfg, jv parts)
{
	int64_t cap = result_cap(cfg);
	char why[64];

	if (cap < 0)
		return parts;
	snprintf(why, sizeof(why), "tool_result_max_bytes %lld",
	    (long long)cap);
	return art_parts_cap(parts, (size_t)cap, why);
}

/* The security config's schema_validation_mode: block unless it says. */
static const char *
schema_mode(const jv *cfg)
{
	jv sec = art_json_field(cfg, "security");
	const char *m = art_json_str(&sec, "schema_validation_mode");
	const char *out = "block";

	if (m != NULL && strcmp(m, "warn") == 0)
		out = "warn";
	else if (m != NULL && strcmp(m, "log_only") == 0)
		out = "log_only";
	jv_free(sec);
	return out;
}

/* Does a schema failure under cfg's schema_validation_mode block? */
int
eng_guard_blocks(const jv *cfg)
{
	return strcmp(schema_mode(cfg), "block") == 0;
}

/*
 * A schema failure that did not block (why, of tool name's "input" or
 * "output"), recorded as a security event under cfg's mode.
 */
int
eng_guard_schema(struct cx *c, const jv *cfg, const char *name,
    const char *which, const char *why)
{
	jv p = set(obj("security"), "violation_code",
	    jv_string("schema_validation_failed"));

	p = set(p, "severity", jv_string(schema_mode(cfg)));
	p = set(p, "pattern_id", jv_string_fmt("%s_schema", which));
	p = set(p, "scope", jv_string("tool"));
	p = set(p, "detail", jv_string_fmt("tool '%s' %s: %s", name,
	    strcmp(which, "input") == 0 ? "arguments" : "result", why));
	return eng_rec(c, p);
}
