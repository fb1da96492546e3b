/* engine-calls.c - calls: dispatch, settle, void, timers, and planning
 *
 * A call (a model call, a tool call, a sub-agent) is requested by an
 * action, goes out when a step is planned (eng_plan), and ends settled:
 * completed, errored and retried as its policy allows, failed, or
 * voided.  Its end queues the decision that folds the result in
 * (llm.finished, tool.finished, sub_agent.finished).
 */
#include "engine-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "parts.h"
#include "request.h"
#include "schema.h"
#include "security.h"
#include "session.h"
#include "wire.h"

static int
call_retry(const jv *call, enum art_call_kind kind, struct art_retry *r)
{
	jv pol = art_json_field(call, "retry");

	art_retry_default(r, kind);
	art_retry_layer(r, &pol, NULL);
	jv_free(pol);
	return 0;
}

enum art_call_kind
eng_kind_of(const jv *call)
{
	const char *k = art_json_str(call, "kind"), *h;

	if (k != NULL && strcmp(k, "llm_call") == 0)
		return ART_KIND_LLM;
	if (k != NULL && strcmp(k, "sub_agent") == 0)
		return ART_KIND_SUB_AGENT;
	h = art_json_str(call, "handler");
	return h != NULL && strcmp(h, "client") == 0 ? ART_KIND_CLIENT_TOOL :
	    ART_KIND_TOOL;
}

/* "llm.call.", "tool.call." or "sub_agent." + step. */
jv
eng_call_event(const jv *call, const char *step)
{
	enum art_call_kind k = eng_kind_of(call);
	char type[32];

	snprintf(type, sizeof(type), "%s.%s", k == ART_KIND_LLM ? "llm.call" :
	    k == ART_KIND_SUB_AGENT ? "sub_agent" : "tool.call", step);
	return set(set(obj(type), "id", art_json_field(call, "id")),
	    "attempt", art_json_field(call, "attempt"));
}

/* The tool's arguments as the seed's ToolInput. */
static jv
tool_input(const char *args, const jv *call)
{
	struct art_err err;
	jv v = art_json_parse_str(args, &err), in = jv_object();
	const char *why = art_json_str(call, "input_error");

	if (jv_get_kind(v) == JV_KIND_OBJECT && why != NULL) {
		/* Parsed, but not what the tool's input schema says. */
		in = set(in, "status", jv_string("invalid"));
		in = set(in, "value", v);
		return set(in, "error", jv_string(why));
	}
	if (jv_get_kind(v) == JV_KIND_OBJECT) {
		in = set(in, "status", jv_string("valid"));
		return set(in, "value", v);
	}
	in = set(in, "status", jv_string("malformed"));
	in = set(in, "error", jv_is_valid(v) ? jv_string_fmt("arguments are "
	    "%s, not a JSON object", art_json_kind_name(jv_get_kind(v))) :
	    jv_string(err.msg));
	jv_free(v);
	return in;
}

/*
 * A model call's request, kept apart from the call (views.c): jv_null()
 * when it has none, jv_invalid() when the store fails.
 */
jv
eng_call_request(struct cx *c, const jv *call)
{
	const char *id = art_json_str(call, "id");

	return id != NULL ? eng_get(c, ART_DB_REQUESTS, c->sid, id) : jv_null();
}

/*
 * The request a worker-run call with a format carries: the provider's own
 * body (PROTOCOL-NOTES §9), without "stream" (the trigger says).
 */
static jv
native_request(const jv *call, jv req, struct art_err *err)
{
	const char *format = art_json_str(call, "format");
	const struct art_wire *w = format != NULL ? art_wire_find(format) :
	    NULL;
	const char *model = art_json_str(&req, "model"), *slash;
	jv body;

	if (format == NULL)
		return req;
	if (w == NULL) {
		jv_free(req);
		art_err_set(err, "bad_request", "format '%s' is not openai or "
		    "anthropic", format);
		return jv_invalid();
	}
	slash = model != NULL ? strchr(model, '/') : NULL;
	body = w->request(&req, slash != NULL ? slash + 1 : model != NULL ?
	    model : "", false, err);
	jv_free(req);
	return body;
}

/*
 * The request (consumed) as a local ring carries it (DESIGN §2.1): tools
 * recorded by the config's version, or (a call recorded before calls
 * were) that are the config's at the head, are left out, and *ref names
 * the store and the config's version they are read from; the config is
 * kept under its version the first time a session's call names it.  *ref is
 * jv_null() when the request goes whole; jv_invalid() and *ref untouched
 * with c->err on a store failure.
 */
static jv
tools_by_version(struct cx *c, jv req, jv *ref)
{
	char h[ART_ID_MAX + 1];
	unsigned char k[ART_REQUEST_CONFIG_KEY_MAX];
	jv tools = art_json_field(&req, "tools"), cfg = jv_null(), mine;
	const char *ver;
	size_t n;
	int has = 0, same;

	*ref = jv_null();
	/* Recorded by version already (engine-actions.c): named so. */
	if (jv_get_kind(tools) == JV_KIND_NULL && art_json_str(&req,
	    "config") != NULL) {
		*ref = set(set(jv_object(), "store", jv_string(art_store_dir(
		    art_txn_store(c->t)))), "config", art_json_field(&req,
		    "config"));
		jv_free(tools);
		return jv_object_delete(req, jv_string("config"));
	}
	if (c->e != NULL && jv_get_kind(tools) == JV_KIND_ARRAY &&
	    eng_head(c, h, sizeof(h)) == -1)
		cfg = jv_invalid();	/* c->err says why */
	else if (c->e != NULL && jv_get_kind(tools) == JV_KIND_ARRAY)
		cfg = eng_config_at(c, h);
	if (jv_get_kind(cfg) != JV_KIND_OBJECT) {
		jv_free(tools);
		if (!jv_is_valid(cfg)) {
			jv_free(req);
			return cfg;
		}
		jv_free(cfg);
		return req;
	}
	ver = eng_config_version(c, &cfg, &mine);
	same = ver != NULL && jv_get_kind(mine) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(mine)) == jv_array_length(jv_copy(tools)) &&
	    jv_equal(jv_copy(mine), jv_copy(tools));
	jv_free(mine);
	jv_free(tools);
	n = same ? art_request_config_key(ver, k) : 0;
	if (same && (has = art_store_has(c->t, ART_DB_VERSIONS, c->sid, k, n,
	    c->err)) == 0)
		has = art_store_add(c->t, ART_DB_VERSIONS, c->sid, k, n,
		    jv_copy(cfg), c->err) == -1 ? -1 : 1;
	jv_free(cfg);
	if (has == -1) {
		jv_free(req);
		return jv_invalid();
	}
	if (!same)
		return req;
	*ref = set(set(jv_object(), "store", jv_string(art_store_dir(
	    art_txn_store(c->t)))), "config", jv_string(ver));
	return jv_object_delete(req, jv_string("tools"));
}

static int
dispatch_llm(struct cx *c, const jv *call, jv p)
{
	const char *handler = art_json_str(call, "handler");
	struct art_err err;
	jv line, tr, req, ref;

	if (handler != NULL && strcmp(handler, "worker") == 0) {
		req = art_request_llm(c->t, c->sid, eng_call_request(c, call),
		    c->err);
		if (!jv_is_valid(req)) {
			jv_free(p);
			return -1;
		}
		req = native_request(call, req, &err);
		if (!jv_is_valid(req)) {
			struct settle st = { art_json_str(call, "id"), 0, 0,
			    jv_string(err.msg), 0, jv_string("provider_error"),
			    0, 1, jv_null() };

			jv_free(req);
			jv_free(p);
			return eng_settle(c, &st, "llm.error", NULL);
		}
		tr = set(obj("llm.execute"), "id", art_json_field(call, "id"));
		tr = set(tr, "request", req);
		tr = set_some(tr, "format", art_json_field(call, "format"));
		tr = set(tr, "stream", art_json_field(call, "stream"));
		tr = set(tr, "attempt", art_json_field(call, "attempt"));
		tr = set_some(tr, "deadline", art_json_field(&p, "deadline"));
		jv_free(p);
		return eng_queue_decision(c, tr, 1, jv_null());
	}
	line = set(obj("llm.request"), "session_id", jv_string(c->sid));
	line = set(line, "id", art_json_field(call, "id"));
	line = set(line, "attempt", art_json_field(call, "attempt"));
	tr = set(jv_object(), "stream", art_json_field(call, "stream"));
	tr = set_some(tr, "deadline", art_json_field(&p, "deadline"));
	tr = set_some(tr, "mock", art_json_field(call, "mock"));
	tr = set_some(tr, "providers", art_json_field(call, "providers"));
	tr = set_some(tr, "fallback", art_json_field(call, "fallback"));
	tr = set_some(tr, "security", art_json_field(call, "security"));
	jv_free(p);
	req = tools_by_version(c, eng_call_request(c, call), &ref);
	if (!jv_is_valid(req)) {
		jv_free(line);
		jv_free(tr);
		return -1;
	}
	tr = set_some(tr, "ref", ref);
	/* A default prompt goes out as text made from the last call's. */
	p = eng_llm_line_text(c, jv_copy(line), &req, jv_copy(tr));
	if (jv_get_kind(p) == JV_KIND_STRING) {
		jv_free(req);
		jv_free(line);
		jv_free(tr);
		eng_emit(c, p);
		return 0;
	}
	if (!jv_is_valid(p)) {
		jv_free(req);
		jv_free(line);
		jv_free(tr);
		return -1;
	}
	req = art_request_llm(c->t, c->sid, req, c->err);
	if (!jv_is_valid(req)) {
		jv_free(line);
		jv_free(tr);
		return -1;
	}
	line = set(line, "request", req);
	jv_object_foreach(tr, k, v)
		line = jv_object_set(line, k, v);
	jv_free(tr);
	eng_emit(c, line);
	return 0;
}

/* The tool.execute trigger of call (borrowed), its deadline d's. */
static jv
execute_trigger(const jv *call, const jv *d)
{
	const char *args = art_json_str(call, "arguments");
	jv tr = set(obj("tool.execute"), "id", art_json_field(call, "id"));

	tr = set(tr, "name", art_json_field(call, "name"));
	tr = set(tr, "arguments", jv_string(args != NULL ? args : ""));
	tr = set(tr, "input", tool_input(args != NULL ? args : "", call));
	tr = set(tr, "attempt", art_json_field(call, "attempt"));
	return set_some(tr, "deadline", art_json_field(d, "deadline"));
}

/* A queued call goes out: a request line, or an execute decision. */
static int
dispatch_call(struct cx *c, const jv *call)
{
	struct art_retry pol;
	enum art_call_kind kind = eng_kind_of(call);
	int64_t deadline;
	jv p, tr, yes = art_json_field(call, "approved");
	int held = art_json_str(call, "hold") != NULL &&
	    jv_get_kind(yes) != JV_KIND_TRUE;

	jv_free(yes);
	if (held)
		return eng_hold_call(c, call);	/* a person answers first */
	if (art_json_str(call, "builtin") != NULL)
		return eng_auto_done(c, call);	/* the engine's own tool */
	p = eng_call_event(call, "dispatched");
	call_retry(call, kind, &pol);
	deadline = art_retry_deadline_ms(&pol, c->now);
	if (deadline >= 0)
		p = set(p, "deadline", eng_iso(deadline));
	eng_wake_at(c, deadline);
	if (eng_rec(c, jv_copy(p)) == -1) {
		jv_free(p);
		return -1;
	}
	if (kind == ART_KIND_LLM)
		return dispatch_llm(c, call, p);
	if (kind == ART_KIND_SUB_AGENT) {
		jv_free(p);
		return eng_open_child(c, call);
	}
	if (kind == ART_KIND_CLIENT_TOOL) {
		jv_free(p);
		return 0;	/* the client settles it */
	}
	tr = execute_trigger(call, &p);
	jv_free(p);
	return eng_queue_decision(c, tr, 1, jv_null());
}

/*
 * A worker tool call that was out when its driver died goes out again as
 * the same attempt: the tool stage answers it from its outbox when the
 * tool finished, says it was interrupted when its stage died while it
 * ran, and runs it only when it never started (outbox.h).
 */
int
eng_execute_again(struct cx *c, const jv *call)
{
	return eng_queue_decision(c, execute_trigger(call, call), 1,
	    jv_null());
}

/* A settle's value as the text a tool message holds. */
jv
eng_as_text(jv v)
{
	if (jv_get_kind(v) == JV_KIND_STRING)
		return v;
	if (jv_get_kind(v) == JV_KIND_NULL) {
		jv_free(v);
		return jv_string("");
	}
	return jv_dump_string(v, 0);
}

/*
 * Finds the pending call a settle names; jv_invalid() when refused, or
 * jv_number(-1) when the store fails.
 */
static jv
settle_target(struct cx *c, const struct settle *st, const char *kind,
    const jv *line)
{
	jv call = eng_get(c, ART_DB_CALLS, c->sid, st->id);
	const char *status = art_json_str(&call, "status"), *k;
	int64_t attempt = 0;
	char msg[300];

	if (!jv_is_valid(call))
		return jv_number(-1);
	k = art_json_str(&call, "kind");
	art_json_get_int(&call, "attempt", 0, &attempt, NULL);
	if (k == NULL || strcmp(k, kind) != 0)
		snprintf(msg, sizeof(msg), "no %s '%s'", kind, st->id);
	else if (status == NULL || strcmp(status, "pending") != 0)
		snprintf(msg, sizeof(msg), "%s '%s' is not pending (%s)",
		    kind, st->id, status != NULL ? status : "?");
	else if (st->attempt != 0 && st->attempt != attempt)
		snprintf(msg, sizeof(msg), "%s '%s': attempt %lld is stale "
		    "(now %lld)", kind, st->id, (long long)st->attempt,
		    (long long)attempt);
	else
		return call;
	jv_free(call);
	if (!st->internal && eng_rec_error(c, "stale_settle", msg, line) == -1)
		return jv_number(-1);
	return jv_invalid();
}

/* A failed attempt: retry when allowed, else the terminal fold-back. */
int
eng_call_failed(struct cx *c, const jv *call, const struct settle *st,
    jv finished)
{
	struct art_retry pol;
	int64_t attempt = 1, wait;
	jv p = eng_call_event(call, "errored");
	const char *ft;

	art_json_get_int(call, "attempt", 0, &attempt, NULL);
	call_retry(call, eng_kind_of(call), &pol);
	p = set_some(p, "name", art_json_field(call, "name"));
	p = set(p, "error", jv_copy(st->value));
	p = set(p, "retryable", st->retryable ? jv_true() : jv_false());
	p = set_some(p, "code", jv_copy(st->code));
	p = set_some(p, "detail", jv_copy(st->detail));
	if (st->retryable && art_retry_again(&pol, attempt)) {
		wait = art_retry_backoff_ms(&pol, attempt);
		if (st->retry_after_ms > wait)
			wait = st->retry_after_ms;
		p = set(p, "next_at", eng_iso(c->now + wait));
		eng_wake_at(c, c->now + wait);
		jv_free(finished);
		return eng_rec(c, p);
	}
	if (eng_rec(c, p) == -1) {
		jv_free(finished);
		return -1;
	}
	finished = set(finished, "ok", jv_false());
	finished = set(finished, "error", jv_copy(st->value));
	/* The seed's llm.finished carries the detail; tool.finished has none. */
	if ((ft = art_json_str(&finished, "type")) != NULL &&
	    strcmp(ft, "llm.finished") == 0)
		finished = set_some(finished, "detail", jv_copy(st->detail));
	return eng_queue_decision(c, finished, 1, jv_null());
}

/*
 * A result against the tool's output schema: an MCP tool's structured
 * content when the settle carries one (sc not NULL; null: the server
 * gave none, which a declared schema makes an error, as MCP has it;
 * true: the tool stage cut it at --max-output, and it is not checked),
 * else the result's JSON when it is JSON text, else the text itself.
 * 0, or -1 with the reason in err.
 */
static int
check_output(const jv *call, const jv *result, const jv *sc,
    struct art_err *err)
{
	jv schema = art_json_field(call, "output_schema"), v;
	int r = 0;

	if (jv_get_kind(schema) == JV_KIND_NULL || (sc != NULL &&
	    jv_get_kind(*sc) == JV_KIND_TRUE)) {
		jv_free(schema);
		return 0;
	}
	if (sc != NULL && jv_get_kind(*sc) == JV_KIND_NULL) {
		jv_free(schema);
		return art_err_set(err, "bad_output", "the tool declares an "
		    "output schema, and its result has no structuredContent");
	}
	if (sc != NULL) {
		v = jv_copy(*sc);
		if (art_schema_validate(&schema, &v, err) == -1) {
			art_err_prefix(err, "structuredContent does not match "
			    "the tool's output schema");
			r = -1;
		}
		jv_free(v);
		jv_free(schema);
		return r;
	}
	v = jv_get_kind(*result) == JV_KIND_STRING ? art_json_parse_str(
	    jv_string_value(*result), NULL) : jv_copy(*result);
	if (!jv_is_valid(v)) {
		jv_free(v);
		v = jv_copy(*result);
	}
	if (art_schema_validate(&schema, &v, err) == -1) {
		art_err_prefix(err, "output does not match the tool's output "
		    "schema");
		r = -1;
	}
	jv_free(v);
	jv_free(schema);
	return r;
}

/* The trigger a call's end queues: tool.finished or sub_agent.finished. */
jv
eng_finished_for(const jv *call)
{
	if (eng_kind_of(call) == ART_KIND_SUB_AGENT)
		return set(set(set(obj("sub_agent.finished"), "id",
		    art_json_field(call, "tool_call_id")), "session_id",
		    art_json_field(call, "id")), "agent_id", art_json_field(call,
		    "agent_id"));
	return set(set(obj("tool.finished"), "id", art_json_field(call, "id")),
	    "name", art_json_field(call, "name"));
}

/*
 * A tool's result or error text (consumed) scanned as cfg's pipeline
 * (borrowed) says: a client-handled tool's as client input, any other's
 * as a tool's.  *block as for eng_scan(); jv_invalid() when the store or
 * the pipeline fails.
 */
static jv
scan_result(struct cx *c, const jv *call, const jv *cfg, jv text,
    const char **block)
{
	const struct art_security *sec;
	const char *name = art_json_str(call, "name");
	char where[160];

	*block = NULL;
	if (eng_scan_sec(c, cfg, &sec) == -1) {
		jv_free(text);
		return jv_invalid();
	}
	if (sec == NULL)
		return text;
	snprintf(where, sizeof(where), "tool '%.100s' result",
	    name != NULL ? name : "?");
	return eng_scan(c, sec, eng_kind_of(call) == ART_KIND_CLIENT_TOOL ?
	    ART_SEC_INPUT : ART_SEC_TOOL, text, where, block);
}

/*
 * An MCP result's structured content (sc, borrowed) as it is recorded:
 * its JSON text scanned as the result's text is, parsed back; jv_null()
 * when a scan blocks it, jv_invalid() when the store or the pipeline
 * fails.
 */
static jv
scanned_structured(struct cx *c, const jv *call, const jv *cfg, const jv *sc)
{
	const char *block;
	jv t, v;

	if (jv_get_kind(*sc) == JV_KIND_NULL || jv_get_kind(*sc) ==
	    JV_KIND_TRUE)		/* none, or cut */
		return jv_null();
	t = scan_result(c, call, cfg, jv_dump_string(jv_copy(*sc), 0),
	    &block);
	if (!jv_is_valid(t))
		return t;
	if (block != NULL) {
		jv_free(t);
		return jv_null();
	}
	v = art_json_parse_str(jv_string_value(t), NULL);
	if (!jv_is_valid(v)) {	/* a redaction made it text */
		jv_free(v);
		return t;
	}
	jv_free(t);
	return v;
}

int
eng_tool_done(struct cx *c, const jv *call, const jv *value)
{
	return eng_tool_done_sc(c, call, value, NULL);
}

/*
 * A tool call's result (borrowed), recorded and queued to fold in; sc as
 * for check_output(), recorded too (scanned) when it is not null.
 */
int
eng_tool_done_sc(struct cx *c, const jv *call, const jv *value, const jv *sc)
{
	char h[ART_ID_MAX + 1];
	jv p, fin = eng_finished_for(call), cfg, text, parts, scr = jv_null();
	const char *block;
	int off;

	if (eng_head(c, h, sizeof(h)) == -1 ||
	    !jv_is_valid(cfg = eng_config_at(c, h))) {
		jv_free(fin);
		return -1;
	}
	off = check_output(call, value, sc, c->err) == -1;
	if (off && eng_guard_blocks(&cfg)) {
		/* A result the tool promised otherwise: terminal, not retried. */
		struct settle bad = { art_json_str(call, "id"), 0, 0,
		    jv_string(c->err->msg), 0, jv_null(), 0, 1, jv_null() };
		int r = eng_call_failed(c, call, &bad, fin);

		jv_free(bad.value);
		jv_free(cfg);
		return r;
	}
	/* Under schema_validation_mode warn or log_only it stands. */
	if (off && eng_guard_schema(c, &cfg, art_json_str(call, "name"),
	    "output", c->err->msg) == -1) {
		jv_free(cfg);
		jv_free(fin);
		return -1;
	}
	/*
	 * A ContentPart[] with an image (parts.h): its texts are scanned, its
	 * images are not (a data URL is no text, and a redaction would break
	 * it), and the message shows the parts; the result is their text.
	 */
	parts = art_parts_is(value) ? jv_copy(*value) : jv_null();
	text = jv_get_kind(parts) == JV_KIND_ARRAY ? scan_result(c, call, &cfg,
	    art_parts_texts(&parts), &block) : scan_result(c, call, &cfg,
	    eng_as_text(jv_copy(*value)), &block);
	if (jv_is_valid(text) && jv_get_kind(parts) == JV_KIND_ARRAY) {
		parts = eng_guard_parts(&cfg, art_parts_set_texts(parts, text));
		text = art_parts_text(&parts);
	}
	if (jv_is_valid(text) && block != NULL) {
		/* Never shown to the model: a tool error saying why. */
		struct settle no = { art_json_str(call, "id"), 0, 0,
		    eng_scan_refusal(block, NULL), 0,
		    jv_string("blocked"), 0, 1, jv_null() };
		int r = eng_call_failed(c, call, &no, fin);

		eng_settle_release(&no);
		jv_free(text);
		jv_free(parts);
		jv_free(cfg);
		return r;
	}
	if (jv_is_valid(text) && jv_get_kind(parts) != JV_KIND_ARRAY)
		text = eng_guard_result(&cfg, text);
	if (jv_is_valid(text) && sc != NULL &&
	    !jv_is_valid(scr = scanned_structured(c, call, &cfg, sc))) {
		jv_free(text);
		text = scr;
		scr = jv_null();
	}
	jv_free(cfg);
	if (!jv_is_valid(text)) {
		jv_free(parts);
		jv_free(fin);
		return -1;
	}
	p = eng_call_event(call, "completed");
	p = set(p, "name", art_json_field(call, "name"));
	p = set(p, "result", jv_copy(text));
	p = set_some(p, "content", jv_copy(parts));
	p = set_some(p, "structured_content", scr);
	if (eng_rec(c, p) == -1) {
		jv_free(text);
		jv_free(parts);
		jv_free(fin);
		return -1;
	}
	fin = set(fin, "ok", jv_true());
	fin = set(fin, "result", text);
	fin = set_some(fin, "content", parts);
	return eng_queue_decision(c, fin, 1, jv_null());
}

/* A tool's error text (st's value) scanned as its result would be. */
static int
scan_error(struct cx *c, const jv *call, struct settle *st)
{
	char h[ART_ID_MAX + 1];
	const char *block;
	jv cfg, v;

	if (eng_head(c, h, sizeof(h)) == -1 ||
	    !jv_is_valid(cfg = eng_config_at(c, h)))
		return -1;
	v = scan_result(c, call, &cfg, st->value, &block);
	jv_free(cfg);
	st->value = !jv_is_valid(v) ? v : block != NULL ? (jv_free(v),
	    eng_scan_refusal(block, NULL)) : v;
	return jv_is_valid(st->value) ? 0 : -1;
}

static int
settle_tool(struct cx *c, struct settle *st, const jv *line)
{
	jv call = settle_target(c, st, "tool_call", line), sc;
	int r;

	if (jv_get_kind(call) == JV_KIND_NUMBER)
		return -1;
	if (!jv_is_valid(call))
		return 0;
	if (!st->ok && (r = scan_error(c, &call, st)) != 0) {
		jv_free(call);
		return r;
	}
	/* Cut by the tool stage's --max-output: true, not checked. */
	sc = line == NULL ? jv_invalid() : jv_object_has(jv_copy(*line),
	    jv_string("structured_content")) ? art_json_field(line,
	    "structured_content") : jv_object_has(jv_copy(*line),
	    jv_string("structured_content_cut")) ? jv_true() : jv_invalid();
	r = st->ok ? eng_tool_done_sc(c, &call, &st->value, jv_is_valid(sc) ?
	    &sc : NULL) : eng_call_failed(c, &call, st,
	    eng_finished_for(&call));
	jv_free(sc);
	jv_free(call);
	return r;
}

/*
 * The assistant message a model reply records, under the call's id; an
 * Anthropic reply's thinking_blocks go with it (agentrt's extension), so
 * the next request can send them back; its images (LlmResponse.images)
 * make its content ContentPart[] (art_parts_with_images).
 */
static jv
assistant(const char *id, const jv *resp)
{
	jv m = set(jv_object(), "id", jv_string(id)), tc, images;

	m = set(m, "role", jv_string("assistant"));
	/* Images the model made go with its text, as image_url parts. */
	images = art_json_field(resp, "images");
	m = set_some(m, "content", art_parts_with_images(art_json_field(resp,
	    "content"), &images));
	jv_free(images);
	m = set_some(m, "thinking_blocks", art_json_field(resp,
	    "thinking_blocks"));
	tc = art_json_field(resp, "tool_calls");
	if (jv_get_kind(tc) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(tc)) > 0)
		return set(m, "tool_calls", tc);
	jv_free(tc);
	return m;
}

static int
is_worker(const jv *call)
{
	const char *h = art_json_str(call, "handler");

	return h != NULL && strcmp(h, "worker") == 0;
}

/*
 * A worker-run call with a format is answered in the provider's body:
 * read it as an LlmResponse, or make the settle the error it is.
 */
static void
native_response(struct cx *c, const jv *call, struct settle *st)
{
	const struct art_wire *w = art_wire_find(art_json_str(call,
	    "format"));
	jv resp = jv_invalid(), e = jv_invalid(), req, rf;
	const char *name;
	size_t len;
	char *text;
	int r = -1;

	if (w != NULL && (text = art_json_dump(&st->value, &len)) != NULL) {
		r = w->response(text, len, &resp, &e);
		free(text);
	}
	jv_free(st->value);
	if (r == 0) {
		jv_free(e);
		/* An answer given through the format's own means (a forced
		 * tool) is the reply's content, as agentrt-llm makes it. */
		req = w->answer != NULL ? eng_call_request(c, call) : jv_null();
		rf = art_json_field(&req, "response_format");
		if ((name = art_json_str(&rf, "name")) != NULL)
			resp = w->answer(resp, name);
		jv_free(rf);
		jv_free(req);
		st->value = resp;
		return;
	}
	jv_free(resp);
	st->ok = 0;
	st->value = jv_is_valid(e) ? art_json_field(&e, "error") :
	    jv_string("llm.result: cannot read the response");
	st->retryable = jv_get_kind(jv_object_get(jv_copy(e),
	    jv_string("retryable"))) == JV_KIND_TRUE;
	jv_free(st->code);
	st->code = jv_is_valid(e) ? art_json_field(&e, "code") : jv_null();
	jv_free(e);
}

/*
 * A model reply the security pipeline blocked (pattern id): kept as the
 * refusal in place of what was said, and the turn ends, code blocked,
 * with that refusal as its text.
 */
static int
blocked_reply(struct cx *c, jv call, struct settle *st, jv fin,
    const char *id)
{
	char why[300];
	jv text = eng_scan_refusal(id, "the model's reply was"), resp, p;

	snprintf(why, sizeof(why), "the model's reply matched "
	    "security pattern %s", id);
	jv_free(fin);
	resp = jv_object_delete(jv_copy(st->value), jv_string("tool_calls"));
	resp = jv_object_delete(resp, jv_string("reasoning"));
	resp = jv_object_delete(resp, jv_string("thinking_blocks"));
	resp = set(resp, "content", jv_copy(text));
	resp = set(resp, "finish_reason", jv_string("content_filter"));
	p = set(eng_call_event(&call, "completed"), "response", resp);
	jv_free(call);
	if (eng_rec(c, p) == -1) {
		jv_free(text);
		return -1;
	}
	return eng_stop_turn(c, "blocked", text, why);
}

/*
 * fin (consumed) for a reply the model or the provider's filter refused
 * (finish_reason "refusal" or "content_filter", whichever provider):
 * code refused and why in error, beside the message that keeps what
 * was said, so the proposal ends the turn showing both.
 */
static jv
refused(jv fin, const jv *resp)
{
	const char *fr = art_json_str(resp, "finish_reason");
	const char *words = art_json_str(resp, "refusal");

	if (fr == NULL || (strcmp(fr, "refusal") != 0 &&
	    strcmp(fr, "content_filter") != 0))
		return fin;
	fin = set(fin, "code", jv_string("refused"));
	if (words != NULL && *words != '\0')
		return set(fin, "error", jv_string_fmt("the model refused: %s",
		    words));
	return set(fin, "error", jv_string(strcmp(fr, "refusal") == 0 ?
	    "the model refused" : "the provider's content filter stopped "
	    "the reply"));
}

static int
settle_llm(struct cx *c, struct settle *st, const jv *line)
{
	jv call = settle_target(c, st, "llm_call", line), p, fin;
	jv tail = jv_null();
	const struct art_security *sec = NULL;
	const char *fr, *block = NULL;

	if (jv_get_kind(call) == JV_KIND_NUMBER)
		return -1;
	if (!jv_is_valid(call))
		return 0;
	if (st->ok && art_json_str(&call, "format") != NULL &&
	    is_worker(&call))
		native_response(c, &call, st);
	fin = set(obj("llm.finished"), "id", jv_string(st->id));
	if (!st->ok) {
		int r;

		fin = set(fin, "truncated", jv_false());
		fin = set_some(fin, "code", jv_copy(st->code));
		/* A configuration error says so in detail: see propose.c. */
		fin = set_some(fin, "detail", line != NULL ?
		    art_json_field(line, "detail") : jv_null());
		r = eng_call_failed(c, &call, st, fin);
		jv_free(call);
		return r;
	}
	/* The reply as it may be kept: scanned, its stream's tail shown. */
	if (eng_scan_sec_at(c, &sec) == -1) {
		jv_free(call);
		jv_free(fin);
		return eng_fail_run(c, c->err->msg);
	}
	if (sec != NULL && jv_get_kind(tail = eng_scan_delta_end(c,
	    st->id)) == JV_KIND_OBJECT) {
		jv ce = set(obj("token"), "id", jv_string(st->id));

		jv_object_foreach(tail, k, v)
			ce = jv_object_set(ce, k, v);
		eng_publish(c, NULL, ce);
	}
	jv_free(tail);
	st->value = eng_scan_reply(c, sec, st->value, &block);
	if (!jv_is_valid(st->value)) {
		jv_free(call);
		jv_free(fin);
		return -1;
	}
	if (block != NULL)
		return blocked_reply(c, call, st, fin, block);
	p = set(eng_call_event(&call, "completed"), "response",
	    jv_copy(st->value));
	jv_free(call);
	if (eng_rec(c, p) == -1) {
		jv_free(fin);
		return -1;
	}
	fr = art_json_str(&st->value, "finish_reason");
	fin = set(fin, "ok", jv_true());
	fin = set(fin, "message", assistant(st->id, &st->value));
	fin = set(fin, "truncated", fr != NULL && strcmp(fr, "length") == 0 ?
	    jv_true() : jv_false());
	fin = set_some(fin, "usage", art_json_field(&st->value, "usage"));
	fin = set_some(fin, "cost", art_json_field(&st->value, "cost"));
	return eng_queue_decision(c, refused(fin, &st->value), 1, jv_null());
}

/* Reads a settle from a line or an action; -1 when it is malformed. */
int
eng_read_settle(const jv *src, const char *type, struct settle *st,
    struct art_err *err)
{
	int is_error = strcmp(type + strlen(type) - 6, ".error") == 0;
	int is_llm = strncmp(type, "llm.", 4) == 0;

	memset(st, 0, sizeof(*st));
	st->value = jv_null();
	st->code = art_json_field(src, "code");
	st->detail = art_json_field(src, "detail");
	if (art_json_get_str(src, "id", 0, &st->id, err) == -1 ||
	    art_json_get_int(src, "attempt", 0, &st->attempt, err) == -1 ||
	    art_json_get_bool(src, "retryable", 0, &st->retryable, err) == -1 ||
	    art_json_get_int(src, "retry_after_ms", 0, &st->retry_after_ms,
	    err) == -1)
		return -1;
	st->ok = !is_error;
	if (is_error) {
		st->value = art_json_field(src, "error");
		if (jv_get_kind(st->value) != JV_KIND_STRING)
			return art_err_set(err, "bad_field", "%s: field 'error': "
			    "expected string", type);
	} else if (is_llm) {
		st->value = art_json_field(src, "response");
		if (jv_get_kind(st->value) != JV_KIND_OBJECT)
			return art_err_set(err, "bad_field", "%s: field "
			    "'response': expected object", type);
	} else
		st->value = art_json_field(src, "result");
	return 0;
}

void
eng_settle_release(struct settle *st)
{
	jv_free(st->value);
	jv_free(st->code);
	jv_free(st->detail);
}

int
eng_settle(struct cx *c, struct settle *st, const char *type, const jv *line)
{
	int r = strncmp(type, "llm.", 4) == 0 ? settle_llm(c, st, line) :
	    settle_tool(c, st, line);

	eng_settle_release(st);
	return r;
}

/* Fails a call the engine itself gave up on (deadline, lost dispatch). */
int
eng_fail_call(struct cx *c, const jv *call, const char *why, const char *code)
{
	struct settle st = { art_json_str(call, "id"), 0, 0, jv_string(why), 1,
	    code != NULL ? jv_string(code) : jv_null(), 0, 1, jv_null() };
	const char *child = art_json_str(call, "id");
	jv cs;
	int r;

	if (eng_kind_of(call) == ART_KIND_SUB_AGENT) {
		/* A child out of time: it stops, and the parent reads why. */
		eng_settle_release(&st);
		if (eng_refuse_call(c, call, jv_string_fmt("sub-agent %s: %s",
		    art_json_str(call, "agent_id"), why)) == -1)
			return -1;
		cs = art_session_get(c->t, child, NULL);
		r = jv_is_valid(cs) ? eng_with_session(c, child,
		    eng_cancel_step, "cancelled: the delegation that started "
		    "this session ran out of time") : 0;
		jv_free(cs);
		return r;
	}
	return eng_settle(c, &st, eng_kind_of(call) == ART_KIND_LLM ?
	    "llm.error" : "tool.error", NULL);
}

/* Is interrupt id open in this session? */
static int
interrupt_open(struct cx *c, const char *id)
{
	jv s = eng_summary(c), all = art_json_field(&s, "interrupts"), it;
	int open;

	it = jv_get_kind(all) == JV_KIND_OBJECT ? jv_object_get(jv_copy(all),
	    jv_string(id)) : jv_invalid();
	open = jv_is_valid(it);
	jv_free(it);
	jv_free(all);
	jv_free(s);
	return open;
}

/*
 * Abandons an open call: voided, its queued decisions dropped, and for a
 * sub-agent its child session cancelled, and so its children (§7).
 */
int
eng_void_call(struct cx *c, const jv *call)
{
	const char *id = art_json_str(call, "id");
	const char *st = art_json_str(call, "status");
	const char *iid = art_json_str(call, "interrupt_id");
	jv cs;
	int r = eng_rec(c, set(set(obj("call.voided"), "kind",
	    art_json_field(call, "kind")), "id", jv_string(id)));

	if (r == 0)
		r = eng_drop_for_call(c, id);
	/* A held call's question has nobody left to answer it. */
	if (r == 0 && st != NULL && strcmp(st, "held") == 0 && iid != NULL &&
	    interrupt_open(c, iid))
		r = eng_rec(c, set(set(obj("session.interrupt_cancelled"),
		    "interrupt_id", jv_string(iid)), "reason", jv_string("the "
		    "call it held was voided")));
	if (r == 0 && eng_kind_of(call) == ART_KIND_SUB_AGENT) {
		cs = art_session_get(c->t, id, NULL);
		if (jv_is_valid(cs))
			r = eng_with_session(c, id, eng_cancel_step,
			    "cancelled: the delegation that started this "
			    "session was voided");
		jv_free(cs);
	}
	return r;
}

/* --- planning and timers -------------------------------------------- */

static int
timers_for_call(struct cx *c, const jv *call)
{
	const char *st = art_json_str(call, "status");
	int64_t due;

	if (st == NULL)
		return 0;
	if (strcmp(st, "pending") == 0) {
		due = eng_ms_of(call, "deadline");
		if (due >= 0 && due <= c->now)
			return eng_fail_call(c, call, "deadline exceeded",
			    "deadline_exceeded");
		eng_wake_at(c, due);
	} else if (strcmp(st, "retry_scheduled") == 0) {
		due = eng_ms_of(call, "next_at");
		if (due >= 0 && due <= c->now) {
			int64_t n = 1;

			art_json_get_int(call, "attempt", 0, &n, NULL);
			return eng_rec(c, set(eng_call_event(call, "requested"),
			    "attempt", jv_number((double)n + 1)));
		}
		eng_wake_at(c, due);
	}
	return 0;
}

static int
timers_for_decision(struct cx *c, const jv *s)
{
	jv live = art_json_field(s, "live");
	int64_t due = eng_ms_of(&live, "deadline"), attempts = 1;
	int r = 0, again;

	if (jv_get_kind(live) != JV_KIND_OBJECT || due < 0 || due > c->now) {
		eng_wake_at(c, due);
		jv_free(live);
		return 0;
	}
	art_json_get_int(&live, "attempts", 0, &attempts, NULL);
	again = attempts < DECISION_ATTEMPTS;
	r = eng_rec(c, set(set(set(obj("decision.errored"), "id",
	    art_json_field(&live, "id")), "error",
	    jv_string("deadline exceeded")), "retryable", again ? jv_true() :
	    jv_false()));
	if (r == 0)
		r = again ? eng_redeliver(c, &live) : eng_fail_run(c,
		    "decision deadline exceeded too often");
	jv_free(live);
	return r;
}

/* Timers, then calls that can go out, then the next decision. */
int
eng_plan(struct cx *c)
{
	jv s = eng_summary(c), calls;
	int r = 0;

	if (!jv_is_valid(s))
		return -1;
	if (eng_guard_clock(c, &s) == -1) {
		jv_free(s);
		return -1;
	}
	jv_free(s);
	if (!jv_is_valid(s = eng_summary(c)))
		return -1;
	r = timers_for_decision(c, &s);
	jv_free(s);
	s = eng_summary(c);
	calls = jv_is_valid(s) ? eng_open_calls(c, &s) : jv_array();
	jv_free(s);
	jv_array_foreach(calls, i, call) {
		if (r == 0)
			r = timers_for_call(c, &call);
		jv_free(call);
	}
	jv_free(calls);
	if (r == -1 || !jv_is_valid(s = eng_summary(c)))
		return -1;
	calls = eng_open_calls(c, &s);
	jv_array_foreach(calls, i, call) {
		const char *st = art_json_str(&call, "status");

		if (r == 0 && st != NULL && strcmp(st, "queued") == 0)
			r = dispatch_call(c, &call);
		jv_free(call);
	}
	jv_free(calls);
	jv_free(s);
	if (r == -1 || !jv_is_valid(s = eng_summary(c)))
		return -1;
	r = eng_dispatch_decision(c, &s);
	jv_free(s);
	return r;
}
