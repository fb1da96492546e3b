/* llm.c - model calls: read off the bus, dispatched by provider, answered */
#include "llm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "cassette.h"
#include "clock.h"
#include "json.h"
#include "ndjson.h"
#include "price.h"
#include "providers.h"
#include "security.h"


struct art_llm_job {
	struct art_llm		*llm;
	struct art_llm_call	 call;
	jv			 chain;		/* the models, in order */
	int			 at;		/* the one being asked */
	jv			 deltas;	/* sent so far, for the record */
	struct art_llm_job	*prev, *next;	/* the calls in flight */
};

struct art_llm {
	struct art_llm_opts	 opts;
	art_llm_emit_fn		*emit;
	void			*ctx;
	void			*state[ART_NPROVIDERS];
	bool			 opened[ART_NPROVIDERS];
	size_t			 nfds[ART_NPROVIDERS];	/* last filled */
	struct art_llm_job	*jobs;
	size_t			 njobs;
};

enum art_llm_kind
art_llm_kind_of(const jv *line)
{
	const char *type = art_ndjson_type(line);
	jv trigger;
	bool exec;

	if (strcmp(type, "llm.request") == 0)
		return ART_LLM_REQUEST;
	if (strcmp(type, "decision.request") != 0)
		return ART_LLM_NONE;
	trigger = art_json_field(line, "trigger");
	exec = jv_get_kind(trigger) == JV_KIND_OBJECT &&
	    strcmp(art_ndjson_type(&trigger), "llm.execute") == 0;
	jv_free(trigger);
	return exec ? ART_LLM_EXECUTE : ART_LLM_NONE;
}

/*
 * The fields both shapes share, read from src (the llm.request line or
 * the llm.execute trigger, which call->line holds).
 */
static int
read_common(struct art_llm_call *call, const jv *src, struct art_err *err)
{
	const char *deadline = NULL;
	int stream = 0;

	if (art_json_get_str(src, "id", 1, &call->id, err) == -1 ||
	    art_json_get_int(src, "attempt", 0, &call->attempt, err) == -1 ||
	    art_json_get_bool(src, "stream", 0, &stream, err) == -1 ||
	    art_json_get_str(src, "deadline", 0, &deadline, err) == -1 ||
	    art_json_get_str(src, "format", 0, &call->format, err) == -1 ||
	    art_json_get_kind(src, "request", JV_KIND_OBJECT, 1,
	    &call->request, err) == -1)
		return -1;
	if (call->attempt < 1)
		return art_err_set(err, "bad_field", "field 'attempt': "
		    "expected 1 or more, got %lld", (long long)call->attempt);
	call->stream = stream != 0;
	if (deadline != NULL &&
	    art_clock_parse(deadline, &call->deadline_ms, err) == -1)
		return art_err_prefix(err, "field 'deadline'");
	return 0;
}

/* The provider blocks and the fallback models, from src (borrowed). */
static int
read_chain(struct art_llm_call *call, const jv *src, struct art_err *err)
{
	if (art_json_get_kind(src, "providers", JV_KIND_OBJECT, 0,
	    &call->providers, err) == -1 || art_json_get_kind(src, "fallback",
	    JV_KIND_ARRAY, 0, &call->fallback, err) == -1)
		return -1;
	if (jv_get_kind(call->fallback) != JV_KIND_ARRAY)
		return 0;
	jv_array_foreach(call->fallback, i, m) {
		int bad = jv_get_kind(m) != JV_KIND_STRING;

		jv_free(m);
		if (bad)
			return art_err_set(err, "bad_field", "field "
			    "'fallback': item %d is not a model name", i);
	}
	return 0;
}

static int
read_request(struct art_llm_call *call, struct art_err *err)
{
	if (art_json_get_str(&call->line, "session_id", 0, &call->session_id,
	    err) == -1 || read_common(call, &call->line, err) == -1 ||
	    art_json_get_kind(&call->line, "mock", JV_KIND_OBJECT, 0,
	    &call->mock, err) == -1 || read_chain(call, &call->line, err) == -1)
		return art_err_prefix(err, "llm.request");
	return 0;
}

static int
read_execute(struct art_llm_call *call, struct art_err *err)
{
	jv trigger = art_json_field(&call->line, "trigger");
	jv agent = jv_null();
	int r = -1;

	if (art_json_get_str(&call->line, "session_id", 0, &call->session_id,
	    err) == -1 || art_json_get_str(&call->line, "decision_id", 1,
	    &call->decision_id, err) == -1 ||
	    art_json_get_kind(&call->line, "agent", JV_KIND_OBJECT, 0, &agent,
	    err) == -1)
		goto out;
	if (read_common(call, &trigger, err) == -1) {
		art_err_prefix(err, "trigger");
		goto out;
	}
	if (art_json_get_kind(&agent, "mock", JV_KIND_OBJECT, 0, &call->mock,
	    err) == -1 || read_chain(call, &agent, err) == -1) {
		art_err_prefix(err, "agent");
		goto out;
	}
	r = 0;
out:
	/* The trigger's strings stay alive in call->line. */
	jv_free(trigger);
	jv_free(agent);
	return r == -1 ? art_err_prefix(err, "llm.execute decision") : 0;
}

int
art_llm_call_init(struct art_llm_call *call, const jv *line,
    struct art_err *err)
{
	int r;

	memset(call, 0, sizeof(*call));
	call->kind = art_llm_kind_of(line);
	call->line = jv_copy(*line);
	call->attempt = 1;
	call->deadline_ms = -1;
	call->request = jv_null();
	call->mock = jv_null();
	call->providers = jv_null();
	call->fallback = jv_null();
	if (call->kind == ART_LLM_REQUEST)
		r = read_request(call, err);
	else if (call->kind == ART_LLM_EXECUTE)
		r = read_execute(call, err);
	else
		r = art_err_set(err, "bad_field", "not a model call");
	if (r == -1) {
		err->code = "bad_request";
		art_llm_call_release(call);
		return -1;
	}
	return 0;
}

void
art_llm_call_release(struct art_llm_call *call)
{
	jv_free(call->line);
	jv_free(call->request);
	jv_free(call->mock);
	jv_free(call->providers);
	jv_free(call->fallback);
	memset(call, 0, sizeof(*call));
	call->line = call->request = call->mock = jv_null();
	call->providers = call->fallback = jv_null();
}

void
art_llm_outcome_init(struct art_llm_outcome *out)
{
	out->deltas = jv_array();
	out->response = jv_null();
	out->error = jv_null();
	out->delay_ms = 0;
}

void
art_llm_outcome_release(struct art_llm_outcome *out)
{
	jv_free(out->deltas);
	jv_free(out->response);
	jv_free(out->error);
	out->deltas = out->response = out->error = jv_null();
}

void
art_llm_outcome_fail(struct art_llm_outcome *out, const char *message,
    bool retryable, const char *code)
{
	jv e = jv_object();

	e = jv_object_set(e, jv_string("error"), jv_string(message));
	e = jv_object_set(e, jv_string("retryable"), jv_bool(retryable));
	if (code != NULL)
		e = jv_object_set(e, jv_string("code"), jv_string(code));
	jv_free(out->deltas);
	jv_free(out->response);
	jv_free(out->error);
	out->deltas = jv_array();
	out->response = jv_null();
	out->error = e;
}

struct art_llm *
art_llm_new(const struct art_llm_opts *opts, art_llm_emit_fn *emit,
    void *ctx)
{
	struct art_llm *llm;

	if ((llm = calloc(1, sizeof(*llm))) == NULL)
		return NULL;
	llm->opts = *opts;
	if (llm->opts.clock == NULL)
		llm->opts.clock = &art_clock_real;	/* providers read it too */
	llm->emit = emit;
	llm->ctx = ctx;
	return llm;
}

static void job_free(struct art_llm_job *);

void
art_llm_free(struct art_llm *llm)
{
	size_t i;

	if (llm == NULL)
		return;
	for (i = 0; i < ART_NPROVIDERS; i++)
		if (llm->opened[i] && llm->state[i] != NULL &&
		    art_providers[i]->close != NULL)
			art_providers[i]->close(llm->state[i]);
	while (llm->jobs != NULL)
		job_free(llm->jobs);
	free(llm);
}

/*
 * The provider for model: the "format" of the provider block its prefix
 * names in blocks (an object, or null), else the provider of that name.
 * Its index, or -1 with err.
 */
static int
find_provider(const char *model, const jv *blocks, struct art_err *err)
{
	const char *slash = strchr(model, '/'), *format;
	char prefix[128];
	size_t n;
	jv block;
	int i;

	if (slash == NULL || slash == model || slash[1] == '\0')
		return art_err_set(err, "bad_model", "model '%s' is not "
		    "provider/name", model);
	n = (size_t)(slash - model);
	if (blocks != NULL && jv_get_kind(*blocks) == JV_KIND_OBJECT &&
	    n < sizeof(prefix)) {
		memcpy(prefix, model, n);
		prefix[n] = '\0';
		block = art_json_field(blocks, prefix);
		format = art_json_str(&block, "format");
		i = format != NULL ? art_provider_find(format, strlen(format)) :
		    art_provider_find(model, n);
		jv_free(block);
		if (format != NULL && i == -1)
			return art_err_set(err, "bad_model", "provider '%s' "
			    "has format '%s', which is not openai or "
			    "anthropic", prefix, format);
		if (i != -1)
			return i;
	}
	if ((i = art_provider_find(model, n)) != -1)
		return i;
	return art_err_set(err, "bad_model", "unknown provider '%.*s' in "
	    "model '%s'", (int)n, model, model);
}

int
art_llm_check_model(const char *model, struct art_err *err)
{
	return find_provider(model, NULL, err) == -1 ? -1 : 0;
}

/* Opens provider i on first use: 0, or -1 with err. */
static int
open_provider(struct art_llm *llm, size_t i, struct art_err *err)
{
	if (llm->opened[i])
		return 0;
	if (art_providers[i]->open != NULL &&
	    (llm->state[i] = art_providers[i]->open(&llm->opts, err)) == NULL)
		return -1;
	llm->opened[i] = true;
	return 0;
}

/* --- jobs: one call, asked of each model of its chain in turn --------- */

static jv delta_line(const struct art_llm_call *, jv delta);

const struct art_llm_call *
art_llm_job_call(const struct art_llm_job *job)
{
	return &job->call;
}

void
art_llm_job_delta(struct art_llm_job *job, jv delta)
{
	jv lines;

	if (job->call.stream) {
		lines = jv_array_append(jv_array(), delta_line(&job->call,
		    jv_copy(delta)));
		job->llm->emit(job->llm->ctx, lines, 0);
	}
	job->deltas = jv_array_append(job->deltas, delta);
}

static void
job_free(struct art_llm_job *job)
{
	struct art_llm *llm = job->llm;

	if (job->prev != NULL)
		job->prev->next = job->next;
	else
		llm->jobs = job->next;
	if (job->next != NULL)
		job->next->prev = job->prev;
	llm->njobs--;
	art_llm_call_release(&job->call);
	jv_free(job->chain);
	jv_free(job->deltas);
	free(job);
}

/* The model being asked, borrowed from the chain. */
static const char *
job_model(const struct art_llm_job *job)
{
	jv m = jv_array_get(jv_copy(job->chain), job->at);
	const char *s = jv_string_value(m);

	jv_free(m);	/* the chain holds it */
	return s;
}

/*
 * The pipeline of the agent whose call this is, when its line carries a
 * "security" object (the engine puts the agent's there), watching the
 * request's system message; 0 with *out NULL when there is none.
 */
static int
record_security(const struct art_llm_call *call, struct art_security **out,
    struct art_err *err)
{
	jv sec = art_json_field(&call->line, "security"), cfg, msgs;
	bool sys = false;
	int rc;

	*out = NULL;
	if (jv_get_kind(sec) == JV_KIND_NULL) {
		jv_free(sec);
		return 0;
	}
	cfg = art_json_set(jv_object(), "security", sec);
	msgs = art_json_field(&call->request, "messages");
	if (jv_get_kind(msgs) == JV_KIND_ARRAY)
		jv_array_foreach(msgs, i, m) {
			const char *role = art_json_str(&m, "role");

			if (!sys && role != NULL && strcmp(role, "system") == 0 &&
			    art_json_str(&m, "content") != NULL) {
				cfg = art_json_set(cfg, "system",
				    art_json_field(&m, "content"));
				sys = true;
			}
			jv_free(m);
		}
	jv_free(msgs);
	rc = art_security_new(&cfg, out, err);
	jv_free(cfg);
	return rc;
}

/* obj (consumed) with its string member key scanned as model output. */
static jv
scan_member(const struct art_security *sec, jv obj, const char *key)
{
	const char *bid;
	int blocked;
	jv v = art_json_field(&obj, key), hits;

	if (jv_get_kind(v) != JV_KIND_STRING) {
		jv_free(v);
		return obj;
	}
	v = art_security_scan(sec, ART_SEC_OUTPUT, v, "recorded model reply",
	    &hits, &blocked, &bid);
	jv_free(hits);
	return art_json_set(obj, key, v);
}

/*
 * Whether delta piece p (a delta, or one of its tool_calls) belongs to
 * the stream tc names: the text when tc is NULL, else the arguments of
 * the tool call of that id.
 */
static bool
in_stream(const jv *p, const char *tc)
{
	const char *id = art_json_str(p, "id");

	return id != NULL && strcmp(id, tc) == 0;
}

/*
 * deltas (consumed) with one stream's fragments redacted: a secret may be
 * split over several, so they are joined and scanned whole, and when
 * that changes anything the first fragment holds all of the redacted
 * text and the rest are emptied.  The stream is the deltas' member key
 * ("text" or "reasoning") when tc is NULL, else tool call tc's arguments.
 */
static jv
scan_fragments(const struct art_security *sec, jv deltas, const char *tc,
    const char *key)
{
	const char *bid;
	jv whole = jv_string(""), red, hits, d, pieces, p;
	int blocked, n = jv_array_length(jv_copy(deltas)), i, j, first = -1;

	for (i = 0; i < n; i++) {
		d = jv_array_get(jv_copy(deltas), i);
		pieces = tc == NULL ? jv_array_append(jv_array(), jv_copy(d)) :
		    art_json_field(&d, "tool_calls");
		if (jv_get_kind(pieces) == JV_KIND_ARRAY)
			jv_array_foreach(pieces, k, x) {
				if ((tc == NULL || in_stream(&x, tc)) &&
				    art_json_str(&x, key) != NULL) {
					whole = jv_string_concat(whole,
					    art_json_field(&x, key));
					first = first < 0 ? i : first;
				}
				jv_free(x);
			}
		jv_free(pieces);
		jv_free(d);
	}
	if (first < 0) {
		jv_free(whole);
		return deltas;
	}
	red = art_security_scan(sec, ART_SEC_OUTPUT, jv_copy(whole),
	    "recorded model reply", &hits, &blocked, &bid);
	jv_free(hits);
	if (jv_equal(jv_copy(red), whole)) {
		jv_free(red);
		return deltas;
	}
	for (i = first; i < n; i++) {
		d = jv_array_get(jv_copy(deltas), i);
		if (tc == NULL) {
			if (art_json_str(&d, key) != NULL)
				d = art_json_set(d, key, i == first ?
				    jv_copy(red) : jv_string(""));
		} else if (jv_get_kind(pieces = art_json_field(&d,
		    "tool_calls")) == JV_KIND_ARRAY) {
			for (j = 0; j < jv_array_length(jv_copy(pieces)); j++) {
				p = jv_array_get(jv_copy(pieces), j);
				if (in_stream(&p, tc) &&
				    art_json_str(&p, key) != NULL)
					p = art_json_set(p, key, i == first ?
					    jv_copy(red) : jv_string(""));
				pieces = jv_array_set(pieces, j, p);
			}
			d = art_json_set(d, "tool_calls", pieces);
		} else
			jv_free(pieces);
		deltas = jv_array_set(deltas, i, d);
		first = i == first ? -2 : first;
	}
	jv_free(red);
	return deltas;
}

/* The ids of the tool calls deltas (borrowed) stream arguments for. */
static jv
streamed_calls(const jv *deltas)
{
	jv ids = jv_object();

	jv_array_foreach(*deltas, i, d) {
		jv tcs = art_json_field(&d, "tool_calls");

		if (jv_get_kind(tcs) == JV_KIND_ARRAY)
			jv_array_foreach(tcs, j, t) {
				if (art_json_str(&t, "id") != NULL)
					ids = jv_object_set(ids, art_json_field(
					    &t, "id"), jv_true());
				jv_free(t);
			}
		jv_free(tcs);
		jv_free(d);
	}
	return jv_keys(ids);
}

/*
 * response (consumed) without the thinking blocks whose text a scan
 * would change: a signature holds only for the text it signed, so a
 * redacted block could never be sent back (the engine drops them too).
 */
static jv
scan_thinking(const struct art_security *sec, jv response)
{
	jv blocks = art_json_field(&response, "thinking_blocks"), kept, t, red;
	jv hits;
	const char *bid;
	int blocked;

	if (jv_get_kind(blocks) != JV_KIND_ARRAY) {
		jv_free(blocks);
		return response;
	}
	kept = jv_array();
	jv_array_foreach(blocks, i, b) {
		t = art_json_field(&b, "thinking");
		if (jv_get_kind(t) == JV_KIND_STRING) {
			red = art_security_scan(sec, ART_SEC_OUTPUT,
			    jv_copy(t), "recorded model reply", &hits,
			    &blocked, &bid);
			jv_free(hits);
			if (!jv_equal(red, t)) {
				jv_free(b);
				continue;
			}
		} else
			jv_free(t);
		kept = jv_array_append(kept, b);
	}
	jv_free(blocks);
	return art_json_set(response, "thinking_blocks", kept);
}

/*
 * What the model said, as a cassette may keep it: the deltas' text,
 * reasoning and tool-call arguments, the response's content, reasoning,
 * refusal, thinking blocks and tool calls' arguments,
 * scanned as model output (a provider's own body, for a call with a
 * format, is scanned whole).
 */
static void
redact_exchange(const struct art_security *sec, const struct art_llm_call
    *call, jv *deltas, jv *response)
{
	const char *bid;
	int blocked;
	jv ids, tcs, fn, hits;

	if (call->format != NULL) {
		*deltas = art_security_scan(sec, ART_SEC_OUTPUT, *deltas,
		    "recorded model reply", &hits, &blocked, &bid);
		jv_free(hits);
		*response = art_security_scan(sec, ART_SEC_OUTPUT, *response,
		    "recorded model reply", &hits, &blocked, &bid);
		jv_free(hits);
		return;
	}
	*deltas = scan_fragments(sec, *deltas, NULL, "text");
	*deltas = scan_fragments(sec, *deltas, NULL, "reasoning");
	ids = streamed_calls(deltas);
	jv_array_foreach(ids, i, id) {
		*deltas = scan_fragments(sec, *deltas, jv_string_value(id),
		    "arguments");
		jv_free(id);
	}
	jv_free(ids);
	if (jv_get_kind(*response) != JV_KIND_OBJECT)
		return;
	*response = scan_member(sec, *response, "content");
	*response = scan_member(sec, *response, "reasoning");
	*response = scan_member(sec, *response, "refusal");
	*response = scan_thinking(sec, *response);
	tcs = art_json_field(response, "tool_calls");
	if (jv_get_kind(tcs) == JV_KIND_ARRAY) {
		jv_array_foreach(tcs, i, tc) {
			fn = art_json_field(&tc, "function");
			if (jv_get_kind(fn) == JV_KIND_OBJECT)
				tc = art_json_set(tc, "function",
				    scan_member(sec, fn, "arguments"));
			else
				jv_free(fn);
			tcs = jv_array_set(tcs, i, tc);
		}
		*response = art_json_set(*response, "tool_calls", tcs);
	} else
		jv_free(tcs);
}

/*
 * Appends the settled exchange to the record; a failure is a line.  With
 * the agent's security object on the call's line, what the model said is
 * redacted first, so a secret the pipeline redacts never reaches the
 * cassette (block and log_only hits are kept as said: replaying them
 * must block, or log, again).
 */
static void
record(struct art_llm_job *job, const struct art_llm_outcome *out)
{
	struct art_llm *llm = job->llm;
	struct art_security *sec;
	struct art_err err;
	jv all = jv_copy(job->deltas), first, line, resp;

	if (record_security(&job->call, &sec, &err) == -1) {
		llm->emit(llm->ctx, jv_array_append(jv_array(),
		    art_ndjson_error("record_failed", err.msg, NULL, 0)), 0);
		jv_free(all);
		return;
	}
	jv_array_foreach(out->deltas, i, d)
		all = jv_array_append(all, d);
	resp = jv_copy(out->response);
	if (sec != NULL)
		redact_exchange(sec, &job->call, &all, &resp);
	art_security_free(sec);
	first = jv_array_get(jv_copy(job->chain), 0);
	line = art_cassette_line(jv_string_value(first), &job->call.request,
	    job->call.stream, &all, &resp, &out->error);
	if (art_cassette_append(llm->opts.record_fd, &line, &err) == -1)
		llm->emit(llm->ctx, jv_array_append(jv_array(),
		    art_ndjson_error("record_failed", err.msg, NULL, 0)), 0);
	jv_free(line);
	jv_free(first);
	jv_free(all);
	jv_free(resp);
}

/*
 * What usage cost: at the served model's price when the table knows it
 * (served, the provider's own name, is priced under model's provider
 * prefix), else at model's; null when neither has a price.
 */
static jv
cost_of(const struct art_prices *prices, const char *model,
    const char *served, const jv *usage)
{
	const char *slash = strchr(model, '/');
	jv cost = jv_null();
	char *name;

	if (served != NULL && slash != NULL && (name = malloc((size_t)(slash -
	    model) + strlen(served) + 2)) != NULL) {
		sprintf(name, "%.*s/%s", (int)(slash - model), model, served);
		cost = art_prices_cost(prices, name, usage);
		free(name);
	}
	if (jv_get_kind(cost) == JV_KIND_STRING)
		return cost;
	jv_free(cost);
	return art_prices_cost(prices, model, usage);
}

/*
 * A provider's response names the model that served it in its own words
 * ("gpt-4.1-nano-2025-04-14" for "openai/gpt-4o"): that becomes
 * served_model, and model says which "provider/name" of the chain
 * answered, the name every other member of the protocol routes and
 * prices by.
 */
static jv
settle_response(const struct art_llm *llm, const char *model, jv resp)
{
	jv served = art_json_field(&resp, "model"), usage, cost;
	const char *s = jv_get_kind(served) == JV_KIND_STRING &&
	    *jv_string_value(served) != '\0' &&
	    strcmp(jv_string_value(served), model) != 0 ?
	    jv_string_value(served) : NULL;

	resp = jv_object_set(resp, jv_string("model"), jv_string(model));
	if (s != NULL)
		resp = jv_object_set(resp, jv_string("served_model"),
		    jv_string(s));
	usage = art_json_field(&resp, "usage");
	cost = cost_of(llm->opts.prices, model, s, &usage);
	if (jv_get_kind(cost) == JV_KIND_STRING)
		resp = jv_object_set(resp, jv_string("cost"), cost);
	else
		jv_free(cost);
	jv_free(usage);
	jv_free(served);
	return resp;
}

/* The call is answered: out goes back, and the job ends. */
static void
answer(struct art_llm_job *job, struct art_llm_outcome *out, bool asked)
{
	struct art_llm *llm = job->llm;

	if (asked && jv_get_kind(out->response) == JV_KIND_OBJECT &&
	    job->call.format == NULL)
		out->response = settle_response(llm, job_model(job),
		    out->response);
	if (llm->opts.record_fd >= 0)
		record(job, out);
	llm->emit(llm->ctx, art_llm_lines(&job->call, out), out->delay_ms);
	art_llm_outcome_release(out);
	job_free(job);
}

/*
 * A call the provider cannot make (-1 from answer or start): final.  One
 * the setup forbids (no such model or provider, no key, no script) says
 * so in its detail, {"config": err's code}, since no retry or resume can
 * help until someone changes the setup.
 */
static void
cannot_call(struct art_llm_outcome *out, const struct art_err *err,
    const char *model)
{
	static const char *const setup[] = { "bad_model", "no_api_key",
	    "no_script", NULL };
	char msg[sizeof(err->msg) + 160];
	size_t i;

	/*
	 * A request the provider's format cannot carry (a part it has no
	 * block for): the same request fails again, so it is final, and
	 * says the model whose format it is.
	 */
	if (art_err_is(err, "bad_request")) {
		snprintf(msg, sizeof(msg), "%s (model %s)", err->msg,
		    model != NULL ? model : "?");
		art_llm_outcome_fail(out, msg, false, "bad_request");
		return;
	}
	art_llm_outcome_fail(out, err->msg, false, NULL);
	for (i = 0; setup[i] != NULL; i++)
		if (art_err_is(err, setup[i]))
			out->error = jv_object_set(out->error,
			    jv_string("detail"), jv_object_set(jv_object(),
			    jv_string("config"), jv_string(setup[i])));
}

/* Asks the chain's model at job->at; an answer may come before return. */
static void
ask(struct art_llm_job *job)
{
	struct art_llm *llm = job->llm;
	const char *model = job_model(job);
	struct art_llm_outcome out;
	struct art_err err;
	int i, r;

	i = find_provider(model, &job->call.providers, &err);
	if (i != -1 && open_provider(llm, (size_t)i, &err) == -1)
		i = -1;
	if (i != -1 && art_providers[i]->start != NULL) {
		if (art_providers[i]->start(llm->state[i], job, model, &err) == 0)
			return;		/* it answers from art_llm_work() */
		i = -1;
	}
	art_llm_outcome_init(&out);
	r = i == -1 ? -1 : art_providers[i]->answer(llm->state[i], &job->call,
	    model, &out, &err);
	if (r == -1)
		cannot_call(&out, &err, model);
	art_llm_job_done(job, &out);
}

void
art_llm_job_done(struct art_llm_job *job, struct art_llm_outcome *out)
{
	struct art_llm_outcome mine = *out;

	/* Empty, and nothing to release: callers need not. */
	out->deltas = out->response = out->error = jv_null();
	out->delay_ms = 0;
	if (jv_get_kind(mine.error) == JV_KIND_OBJECT &&
	    job->at + 1 < jv_array_length(jv_copy(job->chain))) {
		art_llm_outcome_release(&mine);
		job->at++;
		ask(job);
		return;
	}
	answer(job, &mine, true);
}

/* Plays the cassette's answer, or says it has none. */
static void
replay(struct art_llm_job *job)
{
	struct art_llm_outcome out;
	const char *model = job_model(job);
	jv ex = art_cassette_next(job->llm->opts.replay, model,
	    &job->call.request);
	char msg[256];

	art_llm_outcome_init(&out);
	if (!jv_is_valid(ex)) {
		jv_free(ex);
		snprintf(msg, sizeof(msg), "no exchange in the cassette for "
		    "this request to %s", model);
		art_llm_outcome_fail(&out, msg, false, NULL);
	} else {
		jv_free(out.deltas);
		out.deltas = art_json_field(&ex, "deltas");
		if (jv_get_kind(out.deltas) != JV_KIND_ARRAY) {
			jv_free(out.deltas);
			out.deltas = jv_array();
		}
		out.response = art_json_field(&ex, "response");
		out.error = art_json_field(&ex, "error");
		jv_free(ex);
	}
	answer(job, &out, false);
}

void
art_llm_submit(struct art_llm *llm, struct art_llm_call *call)
{
	struct art_llm_outcome out;
	struct art_llm_job *job;
	const char *model = llm->opts.model;
	int64_t now;

	if ((job = calloc(1, sizeof(*job))) == NULL) {
		art_llm_call_release(call);
		llm->emit(llm->ctx, jv_array_append(jv_array(),
		    art_ndjson_error("nomem", "out of memory", NULL, 0)), 0);
		return;
	}
	job->llm = llm;
	job->call = *call;
	memset(call, 0, sizeof(*call));
	call->line = call->request = call->mock = jv_null();
	call->providers = call->fallback = jv_null();
	job->deltas = jv_array();
	job->next = llm->jobs;
	if (llm->jobs != NULL)
		llm->jobs->prev = job;
	llm->jobs = job;
	llm->njobs++;

	if (model == NULL)
		model = art_json_str(&job->call.request, "model");
	/* A provider's own body names its model without the provider. */
	if (model != NULL && job->call.format != NULL &&
	    strchr(model, '/') == NULL)
		job->chain = jv_array_append(jv_array(), jv_string_fmt("%s/%s",
		    job->call.format, model));
	else
		job->chain = jv_array_append(jv_array(), jv_string(model !=
		    NULL ? model : ""));
	art_llm_outcome_init(&out);
	if (model == NULL) {
		art_llm_outcome_fail(&out, "request has no model", false,
		    NULL);
		answer(job, &out, false);
		return;
	}
	/* --model is every call's one model: no fallback then. */
	if (llm->opts.model == NULL &&
	    jv_get_kind(job->call.fallback) == JV_KIND_ARRAY)
		jv_array_foreach(job->call.fallback, i, m)
			job->chain = jv_array_append(job->chain, m);
	now = art_clock_now_ms(llm->opts.clock);
	if (job->call.deadline_ms >= 0 && now >= job->call.deadline_ms) {
		art_llm_outcome_fail(&out, "deadline passed before the call "
		    "was made", true, "deadline_exceeded");
		answer(job, &out, false);
		return;
	}
	art_llm_outcome_release(&out);
	if (llm->opts.replay != NULL)
		replay(job);
	else
		ask(job);
}

size_t
art_llm_active(const struct art_llm *llm)
{
	return llm->njobs;
}

size_t
art_llm_pollfds(struct art_llm *llm, struct pollfd *pfd, size_t max)
{
	size_t i, n = 0, k;

	for (i = 0; i < ART_NPROVIDERS; i++) {
		llm->nfds[i] = 0;
		if (!llm->opened[i] || art_providers[i]->pollfds == NULL)
			continue;
		k = art_providers[i]->pollfds(llm->state[i], n < max ? pfd + n :
		    NULL, n < max ? max - n : 0);
		llm->nfds[i] = n + k <= max ? k : n < max ? max - n : 0;
		n += k;
	}
	return n;
}

int
art_llm_timeout(const struct art_llm *llm)
{
	size_t i;
	int t, best = -1;

	for (i = 0; i < ART_NPROVIDERS; i++) {
		if (!llm->opened[i] || art_providers[i]->timeout == NULL)
			continue;
		t = art_providers[i]->timeout(llm->state[i]);
		if (t >= 0 && (best < 0 || t < best))
			best = t;
	}
	return best;
}

void
art_llm_work(struct art_llm *llm, const struct pollfd *pfd, size_t n)
{
	size_t i, k, at = 0;

	/*
	 * Each provider gets back the pollfds it filled last, in the same
	 * order: a callback may start a transfer in another provider (a
	 * fallback), so what it would fill now may differ.
	 */
	for (i = 0; i < ART_NPROVIDERS; i++) {
		k = llm->nfds[i];
		if (at + k > n)
			k = at < n ? n - at : 0;
		if (llm->opened[i] && art_providers[i]->work != NULL)
			art_providers[i]->work(llm->state[i], k > 0 ? pfd + at :
			    NULL, k);
		at += k;
		llm->nfds[i] = 0;
	}
}

/* A new line {type, session_id?, ...} for call. */
static jv
line_for(const struct art_llm_call *call, const char *type)
{
	jv l = jv_object();

	l = jv_object_set(l, jv_string("type"), jv_string(type));
	if (call->session_id != NULL)
		l = jv_object_set(l, jv_string("session_id"),
		    jv_string(call->session_id));
	return l;
}

/* The settle's fields after "type": {id, attempt, response} or error's. */
static jv
settle_into(jv l, const struct art_llm_call *call,
    const struct art_llm_outcome *out)
{
	l = jv_object_set(l, jv_string("id"), jv_string(call->id));
	l = jv_object_set(l, jv_string("attempt"),
	    jv_number((double)call->attempt));
	if (jv_get_kind(out->error) == JV_KIND_OBJECT) {
		jv_object_foreach(out->error, k, v)
			l = jv_object_set(l, k, v);
		return l;
	}
	return jv_object_set(l, jv_string("response"),
	    jv_copy(out->response));
}

static jv
settle_line(const struct art_llm_call *call,
    const struct art_llm_outcome *out)
{
	const char *type = jv_get_kind(out->error) == JV_KIND_OBJECT ?
	    "llm.error" : "llm.result";
	jv action, l;

	if (call->kind == ART_LLM_REQUEST)
		return settle_into(line_for(call, type), call, out);
	action = jv_object_set(jv_object(), jv_string("type"),
	    jv_string(type));
	action = settle_into(action, call, out);
	l = line_for(call, "decision.response");
	l = jv_object_set(l, jv_string("decision_id"),
	    jv_string(call->decision_id));
	return jv_object_set(l, jv_string("actions"),
	    jv_array_append(jv_array(), action));
}

/* An llm.token.delta line for call carrying delta (consumed). */
static jv
delta_line(const struct art_llm_call *call, jv delta)
{
	jv l = line_for(call, "llm.token.delta");

	l = jv_object_set(l, jv_string("id"), jv_string(call->id));
	return jv_object_set(l, jv_string("delta"), delta);
}

jv
art_llm_lines(const struct art_llm_call *call,
    const struct art_llm_outcome *out)
{
	jv lines = jv_array();

	if (call->stream && jv_get_kind(out->error) != JV_KIND_OBJECT)
		jv_array_foreach(out->deltas, i, d)
			lines = jv_array_append(lines, delta_line(call, d));
	return jv_array_append(lines, settle_line(call, out));
}

/* --- parsing model requests ------------------------------------------- */

void
art_llm_reuse_free(struct art_llm_reuse *r)
{
	if (r->text != NULL)
		jv_free(r->messages);
	free(r->text);
	r->text = NULL;
	r->len = 0;
}

/* Past the string that starts at p (at its opening quote), or NULL. */
static const char *
skip_string(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* Past the array or object that starts at p, or NULL. */
static const char *
skip_nested(const char *p, const char *end)
{
	int depth = 0;

	while (p < end) {
		if (*p == '"') {
			if ((p = skip_string(p, end)) == NULL)
				return NULL;
			continue;
		}
		if (*p == '[' || *p == '{')
			depth++;
		else if ((*p == ']' || *p == '}') && --depth == 0)
			return p + 1;
		p++;
	}
	return NULL;
}

/* Finds "needle" in text[0..n), outside strings; returns its offset. */
static const char *
find_key(const char *p, const char *end, const char *needle)
{
	size_t k = strlen(needle);

	while (p < end) {
		if (*p == '"') {
			if ((size_t)(end - p) >= k && memcmp(p, needle, k) == 0)
				return p;
			if ((p = skip_string(p, end)) == NULL)
				return NULL;
			continue;
		}
		p++;
	}
	return NULL;
}

/*
 * The span [*a, *b) of the request's messages array: the request object
 * is the top-level member "request", its "messages" its own member (the
 * request is walked member by member, so nothing nested deeper counts).
 */
static int
messages_span(const char *text, size_t n, size_t *a, size_t *b)
{
	const char *end = text + n, *p = find_key(text, end, "\"request\":{");
	const char *q;

	if (p == NULL)
		return 0;
	for (p += strlen("\"request\":{"); p < end && *p != '}';) {
		if (*p == ',' || *p == ' ') {
			p++;
			continue;
		}
		if (*p != '"')
			return 0;
		q = skip_string(p, end);
		if (q == NULL || q >= end || *q != ':')
			return 0;
		if ((size_t)(q - p) == strlen("\"messages\"") &&
		    memcmp(p, "\"messages\"", (size_t)(q - p)) == 0) {
			if (q + 1 >= end || q[1] != '[' ||
			    (p = skip_nested(q + 1, end)) == NULL)
				return 0;
			*a = (size_t)(q + 1 - text);
			*b = (size_t)(p - text);
			return 1;
		}
		/* Another member: skip its value. */
		p = q + 1;
		if (p < end && (*p == '{' || *p == '['))
			p = skip_nested(p, end);
		else if (p < end && *p == '"')
			p = skip_string(p, end);
		else
			while (p < end && *p != ',' && *p != '}')
				p++;
		if (p == NULL)
			return 0;
	}
	return 0;
}

jv
art_llm_parse_request(struct art_llm_reuse *r, const char *text, size_t n,
    struct art_err *err)
{
	size_t a, b, len;
	jv msgs, tail, line, req;
	char *skel;

	if (!messages_span(text, n, &a, &b))
		return art_json_parse(text, n, err);
	len = b - a;
	if (r->text != NULL && len > r->len && memcmp(text + a, r->text,
	    r->len - 1) == 0 && text[a + r->len - 1] == ',') {
		/* The kept messages and more: "[" + what follows the comma. */
		skel = malloc(len - r->len + 2);
		if (skel != NULL)
			skel[len - r->len + 1] = '\0';
		if (skel == NULL) {
			art_err_set(err, "nomem", "out of memory");
			return jv_invalid();
		}
		skel[0] = '[';
		memcpy(skel + 1, text + a + r->len, len - r->len);
		tail = art_json_parse(skel, len - r->len + 1, err);
		free(skel);
		msgs = jv_get_kind(tail) == JV_KIND_ARRAY ? jv_array_concat(
		    jv_copy(r->messages), tail) : tail;
	} else if (r->text != NULL && len == r->len &&
	    memcmp(text + a, r->text, len) == 0)
		msgs = jv_copy(r->messages);
	else
		msgs = art_json_parse(text + a, len, err);
	if (jv_get_kind(msgs) != JV_KIND_ARRAY) {
		jv_free(msgs);
		return art_json_parse(text, n, err);
	}
	/* The line with [] for its messages, then the messages put back. */
	if ((skel = calloc(1, n - len + 3)) == NULL) {
		jv_free(msgs);
		art_err_set(err, "nomem", "out of memory");
		return jv_invalid();
	}
	memcpy(skel, text, a);
	memcpy(skel + a, "[]", 2);
	memcpy(skel + a + 2, text + b, n - b);
	line = art_json_parse(skel, n - len + 2, err);
	free(skel);
	req = art_json_field(&line, "request");
	if (jv_get_kind(req) != JV_KIND_OBJECT) {
		jv_free(req);
		jv_free(line);
		jv_free(msgs);
		return art_json_parse(text, n, err);
	}
	line = jv_object_set(line, jv_string("request"), jv_object_set(req,
	    jv_string("messages"), jv_copy(msgs)));
	/* Kept for the next request. */
	art_llm_reuse_free(r);
	if ((r->text = malloc(len)) != NULL) {
		memcpy(r->text, text + a, len);
		r->len = len;
		r->messages = msgs;
	} else
		jv_free(msgs);
	return line;
}
