/* engine-held.c - calls held for a person: approval and ask_user
 *
 * A held call raises an interrupt parking the head and runs no deadline;
 * the resume that answers the interrupt approves it, denies it, or (for
 * ask_user) is its result.
 */
#include "engine-int.h"

#include <stdio.h>
#include <string.h>

#include "json.h"
#include "sha.h"

/* The hex SHA-256 of "session:loop_iteration:tool_call_id" (seed 002). */
static jv
idempotency_key(const char *sid, int64_t loop, const char *id)
{
	unsigned char d[ART_SHA256_LEN];
	char hex[2 * ART_SHA256_LEN + 1];
	jv name = jv_string_fmt("%s:%lld:%s", sid, (long long)loop, id);

	art_sha256(jv_string_value(name), (size_t)jv_string_length_bytes(
	    jv_copy(name)), d);
	jv_free(name);
	return jv_string(art_hex(d, sizeof(d), hex));
}

/* Fails a call for good, with a message the model reads. */
int
eng_refuse_call(struct cx *c, const jv *call, jv why)
{
	struct settle st = { art_json_str(call, "id"), 0, 0, why, 0,
	    jv_null(), 0, 1, jv_null() };
	int r = eng_call_failed(c, call, &st, eng_finished_for(call));

	eng_settle_release(&st);
	return r;
}

/*
 * A call that waits for a person before it runs: a tool declared
 * requires_approval, or the built-in ask_user.  It raises an interrupt
 * parking the head, whose payload says what to answer, and the call is
 * held (no deadline runs) until a resume answers it.
 */
int
eng_hold_call(struct cx *c, const jv *call)
{
	const char *hold = art_json_str(call, "hold"), *id = art_json_str(call,
	    "id"), *why = art_json_str(call, "input_error");
	const char *args = art_json_str(call, "arguments");
	char iid[ART_ID_MAX + 1], h[ART_ID_MAX + 1];
	int ask = strcmp(hold, "input_required") == 0, r;
	jv v, p, ev, s, turn, opts, text;
	int64_t loop = 0;

	if (why != NULL)
		return eng_refuse_call(c, call, jv_string_fmt("invalid tool "
		    "arguments: %s", why));
	v = art_json_parse_str(args != NULL ? args : "", NULL);
	if (ask && jv_get_kind(v) != JV_KIND_OBJECT) {
		jv_free(v);
		return eng_refuse_call(c, call, jv_string("invalid tool "
		    "arguments: not a JSON object"));
	}
	if (eng_head(c, h, sizeof(h)) == -1 || eng_mint(c, iid) == -1 ||
	    !jv_is_valid(s = eng_summary(c))) {
		jv_free(v);
		return -1;
	}
	turn = eng_turn_record(c, art_json_str(&s, "turn"));
	jv_free(s);
	if (!jv_is_valid(turn)) {
		jv_free(v);
		return -1;
	}
	art_json_get_int(&turn, "llm_calls", 0, &loop, NULL);
	jv_free(turn);
	p = set(obj(hold), "tool_call_id", jv_string(id));
	p = set(p, "tool_name", art_json_field(call, "name"));
	p = set(p, "arguments", jv_get_kind(v) == JV_KIND_OBJECT ? jv_copy(v) :
	    jv_string(args != NULL ? args : ""));
	p = set(p, "idempotency_key", idempotency_key(c->sid, loop, id));
	if (ask) {
		opts = art_json_field(&v, "options");
		text = art_json_field(&v, "allow_text");
		p = set(p, "question", art_json_field(&v, "question"));
		/* Without options only text can answer; with them, by default
		 * only they can. */
		p = set(p, "allow_text", jv_get_kind(text) == JV_KIND_TRUE ||
		    jv_get_kind(opts) != JV_KIND_ARRAY ||
		    jv_array_length(jv_copy(opts)) == 0 ? jv_true() :
		    jv_false());
		p = set_some(p, "options", opts);
		p = set_some(p, "answerable_by", art_json_field(&v,
		    "answerable_by"));
		jv_free(text);
	}
	ev = set(obj("session.interrupted"), "interrupt_id", jv_string(iid));
	ev = set(ev, "origin", jv_string("system"));
	ev = set(ev, "reason", ask ? art_json_field(&v, "question") :
	    jv_string_fmt("approval required: %s", art_json_str(call, "name")));
	ev = set(ev, "payload", p);
	ev = set(ev, "anchor", eng_head_jv(h));
	jv_free(v);
	if ((r = eng_rec(c, ev)) == 0)
		r = eng_rec(c, set(eng_call_event(call, "held"), "interrupt_id",
		    jv_string(iid)));
	return r;
}

/* Is s one of the strings of the array opts (borrowed)? */
static bool
is_option(const jv *opts, const char *s)
{
	bool found = false;

	if (jv_get_kind(*opts) != JV_KIND_ARRAY)
		return false;
	jv_array_foreach(*opts, i, o) {
		if (jv_get_kind(o) == JV_KIND_STRING &&
		    strcmp(jv_string_value(o), s) == 0)
			found = true;
		jv_free(o);
		(void)i;
	}
	return found;
}

/* "a, b, c": the strings of opts (borrowed). */
static jv
listed(const jv *opts)
{
	jv list = jv_string("");

	jv_array_foreach(*opts, i, o) {
		list = jv_string_concat(list, i > 0 ? jv_string(", ") :
		    jv_string(""));
		list = jv_string_concat(list, jv_get_kind(o) ==
		    JV_KIND_STRING ? o : (jv_free(o), jv_string("?")));
	}
	return list;
}

/* A member of the payload that must be a string when given: NULL if not. */
static int
str_member(const jv *payload, const char *key, jv *out, char *why, size_t n)
{
	*out = jv_get_kind(*payload) == JV_KIND_OBJECT ?
	    art_json_field(payload, key) : jv_null();
	if (jv_get_kind(*out) == JV_KIND_NULL ||
	    jv_get_kind(*out) == JV_KIND_STRING)
		return 0;
	snprintf(why, n, "an ask_user answer's %s must be a string", key);
	return -1;
}

/*
 * The answer a resume gives an ask_user question (asked, the interrupt's
 * payload): the envelope the runtime API gives the model, {choice, text,
 * answered_by}, what is absent left out; or jv_invalid() and why.  A
 * string payload (or {"answer": S}) is the choice when it is one of the
 * options, else the text.
 */
static jv
answer_of(const jv *payload, const jv *asked, char *why, size_t n)
{
	jv opts = art_json_field(asked, "options"), by_ok =
	    art_json_field(asked, "answerable_by"), choice = jv_null(),
	    text = jv_null(), by = jv_null(), bare, env = jv_invalid(), list,
	    allow_text = art_json_field(asked, "allow_text");
	bool allow = jv_get_kind(allow_text) != JV_KIND_FALSE;

	jv_free(allow_text);

	if (str_member(payload, "answer", &bare, why, n) == -1 ||
	    str_member(payload, "choice", &choice, why, n) == -1 ||
	    str_member(payload, "text", &text, why, n) == -1 ||
	    str_member(payload, "answered_by", &by, why, n) == -1)
		goto done;
	if (jv_get_kind(*payload) == JV_KIND_STRING) {
		jv_free(bare);
		bare = jv_copy(*payload);
	}
	/* A bare answer: an option is the choice, anything else text. */
	if (jv_get_kind(bare) == JV_KIND_STRING) {
		if (jv_get_kind(choice) == JV_KIND_NULL &&
		    is_option(&opts, jv_string_value(bare))) {
			choice = bare;
			bare = jv_null();
		} else if (jv_get_kind(text) == JV_KIND_NULL) {
			text = bare;
			bare = jv_null();
		}
	}
	if (jv_get_kind(choice) == JV_KIND_NULL &&
	    jv_get_kind(text) == JV_KIND_NULL) {
		snprintf(why, n, "an ask_user question needs an answer: a "
		    "string payload, or {\"choice\": OPTION, \"text\": TEXT, "
		    "\"answered_by\": WHO}");
		goto done;
	}
	if (jv_get_kind(choice) == JV_KIND_STRING &&
	    !is_option(&opts, jv_string_value(choice))) {
		list = jv_get_kind(opts) == JV_KIND_ARRAY ? listed(&opts) :
		    jv_string("(none: it takes text)");
		snprintf(why, n, "the choice must be one of: %s",
		    jv_string_value(list));
		jv_free(list);
		goto done;
	}
	if (jv_get_kind(text) == JV_KIND_STRING && !allow) {
		list = listed(&opts);
		snprintf(why, n, "the answer must be one of: %s",
		    jv_string_value(list));
		jv_free(list);
		goto done;
	}
	if (jv_get_kind(by_ok) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(by_ok)) > 0 &&
	    (jv_get_kind(by) != JV_KIND_STRING ||
	    !is_option(&by_ok, jv_string_value(by)))) {
		list = listed(&by_ok);
		snprintf(why, n, "this question is answerable by %s only: give "
		    "answered_by", jv_string_value(list));
		jv_free(list);
		goto done;
	}
	env = jv_object();
	env = set_some(env, "choice", jv_copy(choice));
	env = set_some(env, "text", jv_copy(text));
	env = set_some(env, "answered_by", jv_copy(by));
done:
	jv_free(opts);
	jv_free(by_ok);
	jv_free(choice);
	jv_free(text);
	jv_free(by);
	jv_free(bare);
	return env;
}

/*
 * A resume of interrupt iid (it, borrowed) that held a call: with apply
 * 0 checks the payload (1 and why when it cannot answer), with apply 1
 * answers the call: approved, it runs; denied, it fails with the reason;
 * asked, the answer is its result.  0 when it held no call (any more),
 * -1 when the store fails.
 */
int
eng_answer_hold(struct cx *c, const jv *it, const jv *payload, const char *iid,
    int apply, char *why, size_t n)
{
	jv p = art_json_field(it, "payload"), call, a, reason;
	const char *type = art_json_str(&p, "type");
	const char *tcid = art_json_str(&p, "tool_call_id"), *st, *held;
	int r = 0, yes = 0;

	call = type != NULL && tcid != NULL ? eng_get(c, ART_DB_CALLS, c->sid,
	    tcid) : jv_null();
	if (!jv_is_valid(call)) {
		jv_free(p);
		return -1;
	}
	st = art_json_str(&call, "status");
	held = art_json_str(&call, "interrupt_id");
	if (st == NULL || strcmp(st, "held") != 0 ||
	    held == NULL || strcmp(held, iid) != 0) {
		jv_free(call);
		jv_free(p);
		return 0;
	}
	if (strcmp(type, "approval") == 0) {
		if (art_json_get_bool(payload, "approved", 1, &yes, NULL) == -1) {
			snprintf(why, n, "an approval needs {\"approved\": true} "
			    "or {\"approved\": false, \"reason\": TEXT}");
			r = 1;
		} else if (apply && yes)
			r = eng_rec(c, set(eng_call_event(&call, "approved"),
			    "approved", jv_true()));
		else if (apply) {
			reason = art_json_field(payload, "reason");
			r = eng_refuse_call(c, &call, jv_get_kind(reason) ==
			    JV_KIND_STRING ? jv_string_fmt("the user did not "
			    "approve %s: %s", art_json_str(&call, "name"),
			    jv_string_value(reason)) : jv_string_fmt("the user "
			    "did not approve %s", art_json_str(&call, "name")));
			jv_free(reason);
		}
	} else {
		a = answer_of(payload, &p, why, n);
		if (!jv_is_valid(a))
			r = 1;
		else if (apply)
			r = eng_tool_done(c, &call, &a);
		jv_free(a);
	}
	jv_free(call);
	jv_free(p);
	return r;
}
