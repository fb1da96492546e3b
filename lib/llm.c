/* llm.c - model calls: read off the bus, dispatched by provider, answered */
#include "llm.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "json.h"
#include "mock.h"

/* Every provider, found by the model's prefix. */
static const struct art_llm_provider *const providers[] = {
	&art_mock_provider,
};
#define NPROVIDERS	(sizeof(providers) / sizeof(providers[0]))

struct art_llm {
	struct art_llm_opts	 opts;
	void			*state[NPROVIDERS];
	bool			 opened[NPROVIDERS];
};

enum art_llm_kind
art_llm_kind_of(const jv *line)
{
	const char *type = art_json_str(line, "type"), *tt;
	jv trigger;

	if (type == NULL)
		return ART_LLM_NONE;
	if (strcmp(type, "llm.request") == 0)
		return ART_LLM_REQUEST;
	if (strcmp(type, "decision.request") != 0)
		return ART_LLM_NONE;
	trigger = art_json_field(line, "trigger");
	tt = art_json_str(&trigger, "type");
	tt = tt != NULL && strcmp(tt, "llm.execute") == 0 ? tt : NULL;
	jv_free(trigger);
	return tt != NULL ? ART_LLM_EXECUTE : ART_LLM_NONE;
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

static int
read_request(struct art_llm_call *call, struct art_err *err)
{
	if (art_json_get_str(&call->line, "session_id", 0, &call->session_id,
	    err) == -1 || read_common(call, &call->line, err) == -1 ||
	    art_json_get_kind(&call->line, "mock", JV_KIND_OBJECT, 0,
	    &call->mock, err) == -1)
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
	    err) == -1) {
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
	memset(call, 0, sizeof(*call));
	call->line = call->request = call->mock = jv_null();
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
art_llm_new(const struct art_llm_opts *opts)
{
	struct art_llm *llm;

	if ((llm = calloc(1, sizeof(*llm))) == NULL)
		return NULL;
	llm->opts = *opts;
	return llm;
}

void
art_llm_free(struct art_llm *llm)
{
	size_t i;

	if (llm == NULL)
		return;
	for (i = 0; i < NPROVIDERS; i++)
		if (llm->opened[i] && llm->state[i] != NULL &&
		    providers[i]->close != NULL)
			providers[i]->close(llm->state[i]);
	free(llm);
}

/* The provider named by model's prefix: its index, or -1 with err. */
static int
find_provider(const char *model, struct art_err *err)
{
	const char *slash = strchr(model, '/');
	size_t i, n;

	if (slash == NULL || slash == model || slash[1] == '\0')
		return art_err_set(err, "bad_model", "model '%s' is not "
		    "provider/name", model);
	n = (size_t)(slash - model);
	for (i = 0; i < NPROVIDERS; i++)
		if (strlen(providers[i]->name) == n &&
		    strncmp(providers[i]->name, model, n) == 0)
			return (int)i;
	return art_err_set(err, "bad_model", "unknown provider '%.*s' in "
	    "model '%s'", (int)n, model, model);
}

int
art_llm_check_model(const char *model, struct art_err *err)
{
	return find_provider(model, err) == -1 ? -1 : 0;
}

/* Opens provider i on first use: 0, or -1 with err. */
static int
open_provider(struct art_llm *llm, size_t i, struct art_err *err)
{
	if (llm->opened[i])
		return 0;
	if (providers[i]->open != NULL &&
	    (llm->state[i] = providers[i]->open(&llm->opts, err)) == NULL)
		return -1;
	llm->opened[i] = true;
	return 0;
}

void
art_llm_answer(struct art_llm *llm, const struct art_llm_call *call,
    struct art_llm_outcome *out)
{
	const char *model = llm->opts.model;
	struct art_err err;
	int i;

	art_llm_outcome_init(out);
	if (model == NULL)
		model = art_json_str(&call->request, "model");
	if (model == NULL) {
		art_llm_outcome_fail(out, "request has no model", false, NULL);
		return;
	}
	if ((i = find_provider(model, &err)) == -1 ||
	    open_provider(llm, (size_t)i, &err) == -1 ||
	    providers[i]->answer(llm->state[i], call, model, out, &err) == -1)
		art_llm_outcome_fail(out, err.msg, false, NULL);
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

jv
art_llm_lines(const struct art_llm_call *call,
    const struct art_llm_outcome *out)
{
	jv lines = jv_array(), l;

	if (call->stream && jv_get_kind(out->error) != JV_KIND_OBJECT) {
		jv_array_foreach(out->deltas, i, d) {
			l = line_for(call, "llm.token.delta");
			l = jv_object_set(l, jv_string("id"),
			    jv_string(call->id));
			l = jv_object_set(l, jv_string("delta"), d);
			lines = jv_array_append(lines, l);
		}
	}
	return jv_array_append(lines, settle_line(call, out));
}
