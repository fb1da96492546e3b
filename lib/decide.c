/* decide.c - the decision step: answer decision.request lines
 *
 * Without a program the answer is the request's "proposed", the step an
 * ordinary tool loop would take; an empty proposal (the engine has no
 * default, as for tool.execute and llm.execute) is no answer.  With a
 * program, libjq runs it over the whole request line (a line by reference
 * read back whole from the store it names, request.h) and its first value
 * decides: an object answers (a bare DecisionResponse, completed here with
 * type, session_id and decision_id), null or no value passes the request
 * on.  The program is compiled once; jq_start() resets the machine for
 * each request.
 */
#include "decide.h"

#include <stdlib.h>
#include <string.h>

#include <jq.h>

#include "clock.h"
#include "json.h"
#include "outq.h"
#include "request.h"
#include "store.h"

struct art_decide {
	jq_state	*jq;		/* NULL: answer with proposals */
	jv		 msgs;		/* jq's error messages */
	const char *const *agents;
	size_t		 nagents;
	enum art_decide_verdict (*ask)(void *, const jv *, const char *,
		    size_t, jv *, struct art_err *);
	void		*ask_arg;
	struct art_request_reader reader;	/* by-reference lines */
};


/* The members of a DecisionResponse: a proposal without any is empty. */
static const char *const response_keys[] = {
	"messages", "actions", "state", "agent"
};

static void
collect(void *arg, jv msg)
{
	struct art_decide *d = arg;

	if (jv_get_kind(msg) == JV_KIND_INVALID) {
		jv_free(msg);
		msg = jv_string("unknown error");
	} else if (jv_get_kind(msg) != JV_KIND_STRING) {
		msg = jv_dump_string(msg, 0);
	}
	d->msgs = jv_array_append(d->msgs, msg);
}

static jv
no_input(jq_state *jq, void *arg)
{
	(void)jq, (void)arg;
	return jv_invalid_with_msg(jv_string("no input to read: the program "
	    "sees one request at a time"));
}

/* vars (consumed) plus $ARGS, as jq's own --arg and --argjson make them. */
static jv
program_vars(jv vars)
{
	jv args = jv_object();

	if (jv_get_kind(vars) != JV_KIND_OBJECT) {
		jv_free(vars);
		vars = jv_object();
	}
	args = jv_object_set(args, jv_string("positional"), jv_array());
	args = jv_object_set(args, jv_string("named"), jv_copy(vars));
	return jv_object_set(vars, jv_string("ARGS"), args);
}

static int
compile(struct art_decide *d, const struct art_decide_conf *c,
    struct art_err *err)
{
	if ((d->jq = jq_init()) == NULL)
		return art_err_set(err, "nomem", "out of memory");
	jq_set_error_cb(d->jq, collect, d);
	if (c->debug != NULL)
		jq_set_debug_cb(d->jq, c->debug, c->debug_arg);
	jq_set_input_cb(d->jq, no_input, NULL);
	/* libjq 1.6 fails an assertion on import without a search path. */
	jq_set_attr(d->jq, jv_string("JQ_LIBRARY_PATH"), jv_array());
	if (!jq_compile_args(d->jq, c->program, program_vars(jv_copy(c->vars))))
		return art_err_set(err, "jq_compile", "jq program does not "
		    "compile");
	return 0;
}

struct art_decide *
art_decide_new(const struct art_decide_conf *c, jv *msgs, struct art_err *err)
{
	struct art_decide *d;
	int r = 0;

	if (msgs != NULL)
		*msgs = jv_array();
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	d->msgs = jv_array();
	d->agents = c->agents;
	d->nagents = c->nagents;
	d->ask = c->ask;
	d->ask_arg = c->ask_arg;
	if (c->program != NULL)
		r = compile(d, c, err);
	if (msgs != NULL) {
		jv_free(*msgs);
		*msgs = d->msgs;
		d->msgs = jv_array();
	}
	if (r == -1) {
		art_decide_free(d);
		return NULL;
	}
	return d;
}

void
art_decide_free(struct art_decide *d)
{
	if (d == NULL)
		return;
	if (d->jq != NULL)
		jq_teardown(&d->jq);
	art_request_reader_free(&d->reader);
	jv_free(d->msgs);
	free(d);
}

static bool
agent_is_wanted(const struct art_decide *d, const jv *line)
{
	const char *a;
	size_t i;

	if (d->nagents == 0)
		return true;
	if ((a = art_json_str(line, "agent_id")) == NULL)
		return false;
	for (i = 0; i < d->nagents; i++)
		if (strcmp(a, d->agents[i]) == 0)
			return true;
	return false;
}

/* The error line for err, about the request line. */
static enum art_decide_verdict
failed(const jv *line, jv *out, const struct art_err *err)
{
	const char *sid = art_json_str(line, "session_id");

	*out = art_ndjson_error(err->code, err->msg, NULL, 0);
	if (sid != NULL)
		*out = art_json_set(*out, "session_id", jv_string(sid));
	return ART_DECIDE_FAIL;
}

/* Checks that resp's key, when set, says what the request says. */
static int
check_member(const jv *resp, const char *key, const char *want,
    const char *did, struct art_err *err)
{
	jv v = art_json_field(resp, key);
	int ok = jv_get_kind(v) == JV_KIND_NULL ||
	    (jv_get_kind(v) == JV_KIND_STRING &&
	    strcmp(jv_string_value(v), want) == 0);

	jv_free(v);
	if (!ok)
		return art_err_set(err, "bad_response", "decision '%s': the "
		    "answer's \"%s\" is not the request's", did, key);
	return 0;
}

/*
 * The decision.response line for resp (consumed): type, session_id and
 * decision_id first, then resp's members in their order.
 */
static enum art_decide_verdict
complete(const jv *line, const char *did, jv resp, jv *out,
    struct art_err *err);

enum art_decide_verdict
art_decide_complete(const jv *line, jv resp, jv *out, struct art_err *err)
{
	const char *did = art_json_str(line, "decision_id");

	return complete(line, did != NULL ? did : "?", resp, out, err);
}

static enum art_decide_verdict
complete(const jv *line, const char *did, jv resp, jv *out,
    struct art_err *err)
{
	const char *sid = art_json_str(line, "session_id");
	const char *t = art_json_str(&resp, "type");
	jv r;

	if (t != NULL ? strcmp(art_ndjson_type(&resp), "decision.response") != 0 :
	    jv_object_has(jv_copy(resp), jv_string("type"))) {
		art_err_set(err, "bad_response", "decision '%s': the answer's "
		    "type is not \"decision.response\" (use empty to pass a "
		    "request on)", did);
		jv_free(resp);
		return failed(line, out, err);
	}
	if (check_member(&resp, "session_id", sid, did, err) == -1 ||
	    check_member(&resp, "decision_id", did, did, err) == -1) {
		jv_free(resp);
		return failed(line, out, err);
	}
	r = jv_object_set(jv_object(), jv_string("type"),
	    jv_string("decision.response"));
	r = jv_object_set(r, jv_string("session_id"), jv_string(sid));
	r = jv_object_set(r, jv_string("decision_id"), jv_string(did));
	jv_object_foreach(resp, k, v) {
		const char *name = jv_string_value(k);

		if (strcmp(name, "type") == 0 || strcmp(name, "session_id") == 0
		    || strcmp(name, "decision_id") == 0) {
			jv_free(k);
			jv_free(v);
		} else {
			r = jv_object_set(r, k, v);
		}
	}
	jv_free(resp);
	*out = r;
	return ART_DECIDE_ANSWER;
}

static bool
proposal_is_empty(const jv *p)
{
	size_t i;

	for (i = 0; i < sizeof(response_keys) / sizeof(response_keys[0]); i++)
		if (jv_object_has(jv_copy(*p), jv_string(response_keys[i])))
			return false;
	return true;
}

static enum art_decide_verdict
by_proposal(const jv *line, const char *did, jv *out, struct art_err *err)
{
	jv p = art_json_field(line, "proposed");

	if (jv_get_kind(p) == JV_KIND_NULL)
		return ART_DECIDE_PASS;
	if (jv_get_kind(p) != JV_KIND_OBJECT) {
		art_err_set(err, "bad_request", "decision '%s': \"proposed\" "
		    "is %s, not an object", did,
		    art_json_kind_name(jv_get_kind(p)));
		jv_free(p);
		return failed(line, out, err);
	}
	if (proposal_is_empty(&p)) {
		jv_free(p);
		return ART_DECIDE_PASS;
	}
	return complete(line, did, p, out, err);
}

/* A jq error value (consumed) as text: the string, or the value dumped. */
static jv
message_text(jv msg)
{
	if (jv_get_kind(msg) == JV_KIND_STRING)
		return msg;
	if (jv_get_kind(msg) == JV_KIND_INVALID) {
		jv_free(msg);
		return jv_string("unknown error");
	}
	return jv_string_concat(jv_string("(not a string): "),
	    jv_dump_string(msg, 0));
}

/* An error line from jq's message (consumed); its first line only. */
static enum art_decide_verdict
jq_failed(const jv *line, const char *did, const char *what, jv msg,
    jv *out, struct art_err *err)
{
	jv text = message_text(msg);
	const char *s = jv_string_value(text);
	int n = (int)strcspn(s, "\n");

	art_err_set(err, "jq_error", "decision '%s': %s: %.*s", did, what, n,
	    s);
	jv_free(text);
	return failed(line, out, err);
}

/* The program gave no value (v, consumed): an error, a halt, or empty. */
static enum art_decide_verdict
no_value(struct art_decide *d, const jv *line, const char *did, jv v,
    jv *out, struct art_err *err)
{
	jv code;

	if (jv_invalid_has_msg(jv_copy(v)))
		return jq_failed(line, did, "jq error", jv_invalid_get_msg(v),
		    out, err);
	jv_free(v);
	if (!jq_halted(d->jq))
		return ART_DECIDE_PASS;
	/* halt, and halt_error(0), end the outputs; other halt_errors fail. */
	code = jq_get_exit_code(d->jq);
	if (jv_get_kind(code) == JV_KIND_NUMBER && jv_number_value(code) != 0) {
		jv_free(code);
		return jq_failed(line, did, "halt_error",
		    jq_get_error_message(d->jq), out, err);
	}
	jv_free(code);
	return ART_DECIDE_PASS;
}

/*
 * The request as the seed shapes it: a by-reference line (DESIGN §2.1)
 * read back in one read transaction of the store it names, opened once.
 * jv_invalid() with err naming the decision when that cannot be done.
 */
static jv
whole(struct art_decide *d, const jv *line, const char *did,
    struct art_err *err)
{
	jv out = art_request_read(&d->reader, line, err);

	if (!jv_is_valid(out))
		art_err_prefix(err, "decision '%s'", did);
	return out;
}

static enum art_decide_verdict
by_program(struct art_decide *d, const jv *line, const char *did, jv *out,
    bool *extra, struct art_err *err)
{
	jv v, more, full = whole(d, line, did, err);

	if (!jv_is_valid(full)) {
		jv_free(full);
		return failed(line, out, err);
	}
	jq_start(d->jq, full, 0);
	v = jq_next(d->jq);
	if (!jv_is_valid(v))
		return no_value(d, line, did, v, out, err);
	/* Asked for only to say so: what a second value would be is moot. */
	more = jq_next(d->jq);
	*extra = jv_is_valid(more);
	jv_free(more);
	switch (jv_get_kind(v)) {
	case JV_KIND_NULL:
		return ART_DECIDE_PASS;
	case JV_KIND_OBJECT:
		return complete(line, did, v, out, err);
	default:
		art_err_set(err, "bad_response", "decision '%s': the program "
		    "yielded %s, not an object or null", did,
		    art_json_kind_name(jv_get_kind(v)));
		jv_free(v);
		return failed(line, out, err);
	}
}

enum art_decide_verdict
art_decide_line(struct art_decide *d, const jv *line, jv *out, bool *extra,
    struct art_err *err)
{
	return art_decide_raw(d, line, NULL, 0, out, extra, err);
}

/* A worker is sent the line's own bytes, or libjq's text of it. */
static enum art_decide_verdict
by_worker(struct art_decide *d, const jv *line, const char *did,
    const char *raw, size_t rawlen, jv *out, struct art_err *err)
{
	enum art_decide_verdict v;
	jv text, full;

	if (raw != NULL && !art_request_by_ref(line))
		return d->ask(d->ask_arg, line, raw, rawlen, out, err);
	/* A worker always gets the seed's whole DecisionRequest. */
	full = whole(d, line, did, err);
	if (!jv_is_valid(full)) {
		jv_free(full);
		return failed(line, out, err);
	}
	text = jv_dump_string(jv_copy(full), 0);
	v = d->ask(d->ask_arg, &full, jv_string_value(text),
	    (size_t)jv_string_length_bytes(jv_copy(text)), out, err);
	jv_free(text);
	jv_free(full);
	return v;
}

static enum art_decide_verdict
decide(struct art_decide *d, const jv *line, const char *raw,
    size_t rawlen, jv *out, bool *extra, struct art_err *err)
{
	const char *did;

	if (strcmp(art_ndjson_type(line), "decision.request") != 0 ||
	    !agent_is_wanted(d, line))
		return ART_DECIDE_PASS;
	if ((did = art_json_str(line, "decision_id")) == NULL) {
		art_err_set(err, "bad_request", "decision.request has no "
		    "string \"decision_id\"");
		return failed(line, out, err);
	}
	if (art_json_str(line, "session_id") == NULL) {
		art_err_set(err, "bad_request", "decision '%s': no string "
		    "\"session_id\"", did);
		return failed(line, out, err);
	}
	if (d->ask != NULL)
		return by_worker(d, line, did, raw, rawlen, out, err);
	if (d->jq == NULL)
		return by_proposal(line, did, out, err);
	return by_program(d, line, did, out, extra, err);
}

/*
 * An error line (consumed) about the request with its first bytes as
 * "input", after "message" as every stage places it: the line as it was
 * read, or libjq's text of it when the caller has no bytes.
 */
static jv
with_input(jv e, const jv *line, const char *raw, size_t rawlen)
{
	jv text = jv_null();

	if (raw == NULL) {
		text = jv_dump_string(jv_copy(*line), 0);
		raw = jv_string_value(text);
		rawlen = (size_t)jv_string_length_bytes(jv_copy(text));
	}
	if (rawlen > ART_NDJSON_EXCERPT)
		rawlen = ART_NDJSON_EXCERPT;
	e = art_json_set_after(e, "message", "input", jv_string_sized(raw,
	    (int)rawlen));
	jv_free(text);
	return e;
}

enum art_decide_verdict
art_decide_raw(struct art_decide *d, const jv *line, const char *raw,
    size_t rawlen, jv *out, bool *extra, struct art_err *err)
{
	enum art_decide_verdict v;

	*extra = false;
	v = decide(d, line, raw, rawlen, out, extra, err);
	if (v == ART_DECIDE_FAIL)
		*out = with_input(*out, line, raw, rawlen);
	return v;
}

int
art_decide_wants(const char *type, const char *trigger, void *ctx)
{
	(void)trigger, (void)ctx;
	return strcmp(type, "decision.request") == 0;
}
