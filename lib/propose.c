/* propose.c - what an ordinary tool loop would do next, per trigger */
#include "propose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "auto.h"
#include "err.h"
#include "ids.h"
#include "json.h"
#include "parts.h"
#include "sha.h"

static jv
response(jv messages, jv actions)
{
	jv r = jv_object();

	if (jv_is_valid(messages))
		r = jv_object_set(r, jv_string("messages"), messages);
	if (jv_is_valid(actions))
		r = jv_object_set(r, jv_string("actions"), actions);
	return r;
}

/*
 * A proposal by reference: news (consumed) continues the path that ends
 * at the head, which the proposal names instead of repeating it.
 */
static jv
after_head(const struct art_propose_in *in, jv news, jv actions)
{
	jv r = jv_object_set(jv_object(), jv_string("messages_after"),
	    in->head != NULL ? jv_string(in->head) : jv_null());

	r = jv_object_set(r, jv_string("messages"), news);
	if (jv_is_valid(actions))
		r = jv_object_set(r, jv_string("actions"), actions);
	return r;
}

static jv
action(const char *type)
{
	return jv_object_set(jv_object(), jv_string("type"), jv_string(type));
}

static jv
with_field(jv o, const char *key, jv v)
{
	if (jv_get_kind(v) == JV_KIND_NULL || !jv_is_valid(v)) {
		jv_free(v);
		return o;
	}
	return jv_object_set(o, jv_string(key), v);
}

jv
art_propose_tool(const jv *config, const char *name)
{
	jv tools = art_json_field(config, "tools"), found = jv_null();
	const char *n;

	if (jv_get_kind(tools) == JV_KIND_ARRAY) {
		jv_array_foreach(tools, i, t) {
			n = art_json_str(&t, "name");
			if (jv_get_kind(found) == JV_KIND_NULL && n != NULL &&
			    strcmp(n, name) == 0) {
				jv_free(found);
				found = jv_copy(t);
			}
			jv_free(t);
		}
	}
	jv_free(tools);
	return found;
}

jv
art_propose_sub_agent(const jv *config, const char *name)
{
	jv subs = art_json_field(config, "sub_agents"), found = jv_null(), e;
	const char *id;

	if (jv_get_kind(subs) == JV_KIND_ARRAY) {
		jv_array_foreach(subs, i, sa) {
			e = jv_get_kind(sa) == JV_KIND_STRING ? jv_object_set(
			    jv_object(), jv_string("id"), jv_copy(sa)) :
			    jv_copy(sa);
			id = art_json_str(&e, "id");
			if (jv_get_kind(found) == JV_KIND_NULL && id != NULL &&
			    strcmp(id, name) == 0) {
				jv_free(found);
				found = e;
			} else
				jv_free(e);
			jv_free(sa);
		}
	}
	jv_free(subs);
	return found;
}

int
art_propose_asks_user(const jv *config)
{
	jv v = art_json_field(config, "ask_user");
	int yes = jv_get_kind(v) == JV_KIND_TRUE;

	jv_free(v);
	return yes;
}

jv
art_propose_ask_user_tool(void)
{
	return art_json_parse_str("{\"name\":\"ask_user\",\"description\":"
	    "\"Ask the user a question and wait for the answer. Use it when "
	    "only the user can give the information or make the decision.\","
	    "\"input\":{\"type\":\"object\",\"properties\":{"
	    "\"question\":{\"type\":\"string\"},"
	    "\"options\":{\"type\":\"array\",\"items\":{\"type\":"
	    "\"string\"}},\"allow_text\":{\"type\":\"boolean\"}},"
	    "\"required\":[\"question\"]}}", NULL);
}

void
art_propose_child_id(const char *decision_id, const char *tool_call_id,
    char out[37])
{
	char name[512];
	int n = snprintf(name, sizeof(name), "%s:%s", decision_id,
	    tool_call_id);

	art_ids_v5(ART_UUID_NS_AGENTRT, name, n < (int)sizeof(name) ?
	    (size_t)n : sizeof(name) - 1, out);
}

/* A sub-agent as the tool the model sees: one "message" argument. */
static jv
sub_agent_tool(const jv *sa)
{
	const char *id = art_json_str(sa, "id");
	jv t = jv_object_set(jv_object(), jv_string("name"), jv_string(id));
	jv msg, in;

	t = jv_object_set(t, jv_string("description"),
	    art_json_str(sa, "description") != NULL ? art_json_field(sa,
	    "description") : jv_string_fmt("Delegate a task to the %s agent "
	    "and get its answer", id));
	msg = jv_object_set(jv_object(), jv_string("type"), jv_string("string"));
	msg = jv_object_set(msg, jv_string("description"), jv_string_fmt(
	    "What to ask the %s agent", id));
	in = jv_object_set(jv_object(), jv_string("type"), jv_string("object"));
	in = jv_object_set(in, jv_string("properties"), jv_object_set(
	    jv_object(), jv_string("message"), msg));
	in = jv_object_set(in, jv_string("required"), jv_array_append(
	    jv_array(), jv_string("message")));
	return jv_object_set(t, jv_string("input"), in);
}

/* AgentTools, then the sub-agents and ask_user as tools: an array. */
static jv
all_tools(const jv *config)
{
	jv tools = art_json_field(config, "tools"), subs, sa, decl;

	if (jv_get_kind(tools) != JV_KIND_ARRAY) {
		jv_free(tools);
		tools = jv_array();
	}
	subs = art_json_field(config, "sub_agents");
	if (jv_get_kind(subs) == JV_KIND_ARRAY) {
		jv_array_foreach(subs, i, e) {
			const char *id = jv_get_kind(e) == JV_KIND_STRING ?
			    jv_string_value(e) : art_json_str(&e, "id");

			sa = id != NULL ? art_propose_sub_agent(config, id) :
			    jv_null();
			decl = id != NULL ? art_propose_tool(config, id) :
			    jv_null();
			/* A declared tool of the same name wins. */
			if (jv_get_kind(sa) == JV_KIND_OBJECT &&
			    jv_get_kind(decl) == JV_KIND_NULL)
				tools = jv_array_append(tools, sub_agent_tool(&sa));
			jv_free(sa);
			jv_free(decl);
			jv_free(e);
		}
	}
	jv_free(subs);
	decl = art_propose_tool(config, "ask_user");
	if (art_propose_asks_user(config) && jv_get_kind(decl) == JV_KIND_NULL)
		tools = jv_array_append(tools, art_propose_ask_user_tool());
	jv_free(decl);
	return tools;
}

jv
art_propose_llm_tools(const jv *config)
{
	jv tools = art_json_field(config, "tools"), out, lt;
	int none = jv_get_kind(tools) != JV_KIND_ARRAY;

	jv_free(tools);
	tools = all_tools(config);
	if (none && jv_array_length(jv_copy(tools)) == 0) {
		jv_free(tools);
		return jv_null();
	}
	out = jv_array();
	jv_array_foreach(tools, i, t) {
		lt = with_field(jv_object(), "name", art_json_field(&t, "name"));
		lt = jv_object_set(lt, jv_string("description"),
		    art_json_str(&t, "description") != NULL ?
		    art_json_field(&t, "description") : jv_string(""));
		lt = with_field(lt, "input", art_json_field(&t, "input"));
		lt = with_field(lt, "output", art_json_field(&t, "output"));
		out = jv_array_append(out, lt);
		jv_free(t);
	}
	jv_free(tools);
	return out;
}

static jv
prompt_for(const jv *config, jv view)
{
	const char *system = art_json_str(config, "system");
	jv p = jv_array();

	if (system != NULL && *system != '\0') {
		jv m = jv_object_set(jv_object(), jv_string("role"),
		    jv_string("system"));
		p = jv_array_append(p, jv_object_set(m, jv_string("content"),
		    jv_string(system)));
	}
	return jv_array_concat(p, view);
}

jv
art_propose_last_turns(jv path, int64_t n)
{
	int len = jv_array_length(jv_copy(path)), i, from = 0;
	int64_t seen = 0;
	const char *role;

	for (i = len - 1; i >= 0; i--) {
		jv m = jv_array_get(jv_copy(path), i);

		role = art_json_str(&m, "role");
		if (role != NULL && strcmp(role, "user") == 0 && seen++ == n)
			from = i;
		jv_free(m);
		if (seen > n)
			break;
	}
	return from > 0 ? jv_array_slice(path, from, len) : path;
}

jv
art_propose_prompt(const jv *config, jv path)
{
	int64_t n = -1;

	if (art_json_get_int(config, "prior_turns", 0, &n, NULL) == 0 &&
	    n >= 0)
		path = art_propose_last_turns(path, n);
	return prompt_for(config, path);
}

jv
art_propose_llm_call(const jv *config, jv view)
{
	jv a = action("llm.call"), stream = art_json_field(config, "stream");
	const char *h;

	a = with_field(a, "model", art_json_field(config, "model"));
	if (jv_is_valid(view))
		a = jv_object_set(a, jv_string("messages"), prompt_for(config,
		    view));
	else
		jv_free(view);
	a = with_field(a, "tools", art_propose_llm_tools(config));
	a = jv_object_set(a, jv_string("stream"), jv_get_kind(stream) ==
	    JV_KIND_TRUE ? jv_true() : jv_false());
	jv_free(stream);
	a = with_field(a, "retry", art_json_field(config, "retry"));
	/* The config's handler: a worker-run agent proposes worker calls. */
	h = art_json_str(config, "handler");
	return jv_object_set(a, jv_string("handler"), jv_string(h != NULL ?
	    h : "server"));
}

/*
 * The same llm.call with its messages left to the engine: the config's
 * system prompt, then the active path once the response is recorded.
 */
static jv
default_llm_call(const jv *config)
{
	return art_propose_llm_call(config, jv_invalid());
}

/* May a client tool named name join config, or does the name belong? */
static int
name_is_free(const jv *config, const char *name)
{
	jv t = art_propose_tool(config, name), sa;
	int free_;

	sa = art_propose_sub_agent(config, name);
	free_ = jv_get_kind(t) == JV_KIND_NULL && jv_get_kind(sa) ==
	    JV_KIND_NULL && !(strcmp(name, "ask_user") == 0 &&
	    art_propose_asks_user(config));
	jv_free(t);
	jv_free(sa);
	return free_;
}

/*
 * The config with the ClientContext's tools (trigger.client.tools)
 * layered on as client-handled tools, or jv_invalid() when they add
 * nothing.  A name a declared tool or a sub-agent already uses keeps
 * its meaning (PROTOCOL-NOTES §6).
 */
static jv
with_client_tools(const jv *config, const jv *trigger)
{
	jv client = art_json_field(trigger, "client"), tools, mine;
	int added = 0;

	tools = art_json_field(&client, "tools");
	jv_free(client);
	if (jv_get_kind(tools) != JV_KIND_ARRAY) {
		jv_free(tools);
		return jv_invalid();
	}
	mine = art_json_field(config, "tools");
	if (jv_get_kind(mine) != JV_KIND_ARRAY) {
		jv_free(mine);
		mine = jv_array();
	}
	jv_array_foreach(tools, i, t) {
		const char *name = art_json_str(&t, "name");
		jv probe = jv_object_set(jv_copy(*config), jv_string("tools"),
		    jv_copy(mine));

		if (jv_get_kind(t) == JV_KIND_OBJECT && name != NULL &&
		    name_is_free(&probe, name)) {
			mine = jv_array_append(mine, jv_object_set(jv_copy(t),
			    jv_string("handler"), jv_string("client")));
			added = 1;
		}
		jv_free(probe);
		jv_free(t);
	}
	jv_free(tools);
	if (!added) {
		jv_free(mine);
		return jv_invalid();
	}
	return jv_object_set(jv_copy(*config), jv_string("tools"), mine);
}

/*
 * A view that continues the path to the head is proposed as its news; one
 * that forks is proposed whole, as the client wrote it.  Tools the client
 * registers for the turn are an agent write, and the model call has them.
 */
static jv
client_messages(const struct art_propose_in *in)
{
	jv view, r, layered;
	const jv *config;
	int64_t from = 0;
	int n;

	if (jv_get_kind(*in->config) != JV_KIND_OBJECT)
		return jv_object();
	view = art_json_field(in->trigger, "messages");
	n = jv_array_length(jv_copy(view));
	layered = with_client_tools(in->config, in->trigger);
	config = jv_is_valid(layered) ? &layered : in->config;
	art_json_get_int(in->trigger, "new_from", 0, &from, NULL);
	if (in->view_continues && from >= 0 && from <= n)
		r = after_head(in, jv_array_slice(view, (int)from, n),
		    jv_array_append(jv_array(), default_llm_call(config)));
	else
		r = response(jv_copy(view), jv_array_append(jv_array(),
		    art_propose_llm_call(config, view)));
	if (jv_is_valid(layered))
		r = jv_object_set(r, jv_string("agent"), layered);
	return r;
}

static jv
tool_error(const char *id, jv message)
{
	jv a = action("tool.error");

	a = jv_object_set(a, jv_string("id"), jv_string(id));
	a = jv_object_set(a, jv_string("error"), message);
	return jv_object_set(a, jv_string("retryable"), jv_false());
}

static jv
tool_execute(const struct art_propose_in *in)
{
	const char *id = art_json_str(in->trigger, "id");
	const char *name = art_json_str(in->trigger, "name");
	jv input = art_json_field(in->trigger, "input"), decl = jv_null(), out;
	const char *status = art_json_str(&input, "status");

	if (id == NULL || name == NULL)
		out = jv_object();
	else if (jv_get_kind(decl = art_propose_tool(in->config, name)) ==
	    JV_KIND_NULL)
		out = after_head(in, jv_array(), jv_array_append(jv_array(),
		    tool_error(id, jv_string_fmt("unknown tool: %s", name))));
	else if (status != NULL && strcmp(status, "valid") != 0) {
		const char *why = art_json_str(&input, "error");

		out = after_head(in, jv_array(), jv_array_append(jv_array(),
		    tool_error(id, jv_string_fmt("invalid tool arguments: %s",
		    why != NULL ? why : status))));
	} else
		out = jv_object();
	jv_free(decl);
	jv_free(input);
	return out;
}

static jv
copy_keys(jv to, const jv *from, const char *const *keys)
{
	for (; *keys != NULL; keys++)
		to = with_field(to, *keys, art_json_field(from, *keys));
	return to;
}

/*
 * Does a stored request send what the engine's default would send now:
 * the config's system prompt, then the active path?  So it does when it
 * names its messages by reference with the same system prompt.
 */
static int
prompt_is_default(const jv *req, const jv *config)
{
	jv p = art_json_field(req, "prompt");
	const char *was = art_json_str(&p, "system");
	const char *now = art_json_str(config, "system");
	int yes;

	if (now != NULL && *now == '\0')
		now = NULL;
	yes = jv_get_kind(p) == JV_KIND_OBJECT && (was == NULL ? now == NULL :
	    now != NULL && strcmp(was, now) == 0);
	jv_free(p);
	return yes;
}

/*
 * The parent llm.call again: its stored prompt, the transcript from its
 * assistant message on (tail, borrowed) and the new tool message, with
 * its settings.  A prompt the engine's default gives again is left to
 * the engine, so the proposal does not repeat the conversation.
 */
static jv
reissue(const struct art_propose_in *in, const jv *tail, const jv *tool_msg)
{
	static const char *const req_keys[] = { "model", "tools",
	    "temperature", "max_completion_tokens", "reasoning", NULL };
	static const char *const call_keys[] = { "stream", "retry", "handler",
	    NULL };
	jv asst = jv_array_get(jv_copy(*tail), 0), call, req, prompt, a;
	const char *aid = art_json_str(&asst, "id");

	call = aid != NULL ? in->llm_call(in->ctx, aid) : jv_null();
	jv_free(asst);
	req = art_json_field(&call, "request");
	if (jv_get_kind(call) != JV_KIND_OBJECT ||
	    jv_get_kind(req) != JV_KIND_OBJECT) {
		jv_free(call);
		jv_free(req);
		return jv_invalid();
	}
	a = copy_keys(action("llm.call"), &req, req_keys);
	if (!prompt_is_default(&req, in->config)) {
		prompt = in->prompt(in->ctx, &req);
		if (jv_get_kind(prompt) != JV_KIND_ARRAY) {
			jv_free(prompt);
			jv_free(a);
			jv_free(req);
			jv_free(call);
			return jv_invalid();
		}
		prompt = jv_array_concat(prompt, jv_copy(*tail));
		prompt = jv_array_append(prompt, jv_copy(*tool_msg));
		a = jv_object_set(a, jv_string("messages"), prompt);
	}
	a = copy_keys(a, &call, call_keys);
	jv_free(req);
	jv_free(call);
	return a;
}

static jv
tool_finished(const struct art_propose_in *in)
{
	const char *id = art_json_str(in->trigger, "id");
	int ok = 0;
	jv msg = jv_object(), call, tail, parts;

	art_json_get_bool(in->trigger, "ok", 0, &ok, NULL);
	if (id == NULL) {
		jv_free(msg);
		return jv_object();
	}
	msg = jv_object_set(msg, jv_string("role"), jv_string("tool"));
	msg = jv_object_set(msg, jv_string("tool_call_id"), jv_string(id));
	msg = with_field(msg, "name", art_json_field(in->trigger,
	    art_json_str(in->trigger, "agent_id") != NULL ? "agent_id" :
	    "name"));
	/* A result with an image shows its parts, not their text. */
	parts = ok ? art_json_field(in->trigger, "content") : jv_null();
	msg = jv_object_set(msg, jv_string("content"),
	    jv_get_kind(parts) == JV_KIND_ARRAY ? parts : (jv_free(parts),
	    art_json_field(in->trigger, ok ? "result" : "error")));
	if (in->pending_calls > 0)
		return after_head(in, jv_array_append(jv_array(), msg),
		    jv_array());
	/*
	 * An autonomous step's call is the engine's own, made again for
	 * the plan as it stands (engine-auto.c), not the last one's.
	 */
	if (art_auto_is(in->config))
		return after_head(in, jv_array_append(jv_array(), msg),
		    jv_array_append(jv_array(), default_llm_call(in->config)));
	tail = in->since_call(in->ctx, id);
	call = jv_get_kind(tail) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(tail)) > 0 ? reissue(in, &tail, &msg) :
	    jv_invalid();
	jv_free(tail);
	if (!jv_is_valid(call)) {
		jv_free(msg);
		jv_free(call);
		return jv_object();	/* no parent to re-issue: no proposal */
	}
	return after_head(in, jv_array_append(jv_array(), msg),
	    jv_array_append(jv_array(), call));
}

/*
 * A done that fails the turn (agentrt's error and code on done), showing
 * data (consumed) and the trigger's error.
 */
static jv
failed_done(const struct art_propose_in *in, jv data, const char *code)
{
	jv a = action("done"), error = art_json_field(in->trigger, "error");

	a = with_field(a, "data", data);
	a = jv_object_set(a, jv_string("error"), jv_get_kind(error) ==
	    JV_KIND_STRING ? error : (jv_free(error),
	    jv_string("llm call failed")));
	return jv_object_set(a, jv_string("code"), jv_string(code));
}

/* Does a failed call's detail (agentrt-llm's) say it can never be made? */
static int
is_config_error(const jv *trigger)
{
	jv d = art_json_field(trigger, "detail"), v;
	int yes;

	v = art_json_field(&d, "config");
	yes = jv_get_kind(v) == JV_KIND_STRING;
	jv_free(v);
	jv_free(d);
	return yes;
}

/*
 * Did the provider refuse the request itself: a bad key (401), no
 * access (403), a bad request (400) or no such model (404)?  The same
 * request sent again is refused again, so no resume can help; a rate
 * limit, a server error or a network failure may pass and still parks.
 */
static int
is_refused_request(const jv *trigger)
{
	static const int final[] = { 400, 401, 403, 404 };
	jv d = art_json_field(trigger, "detail"), v;
	const char *code = art_json_str(trigger, "code");
	int64_t status = 0;
	int retry = 0;
	size_t i;

	/* One the provider's format cannot carry, refused before it went. */
	if (code != NULL && strcmp(code, "bad_request") == 0) {
		jv_free(d);
		return 1;
	}
	v = art_json_field(&d, "status");
	if (jv_get_kind(v) == JV_KIND_NUMBER)
		status = (int64_t)jv_number_value(v);
	jv_free(v);
	jv_free(d);
	art_json_get_bool(trigger, "retryable", 0, &retry, NULL);
	for (i = 0; i < sizeof(final) / sizeof(final[0]) && !retry; i++)
		if (status == final[i])
			return 1;
	return 0;
}

static jv
llm_failed(const struct art_propose_in *in, int truncated)
{
	jv a, p = jv_object();
	jv error = art_json_field(in->trigger, "error");
	const char *e = jv_get_kind(error) == JV_KIND_STRING ?
	    jv_string_value(error) : NULL;

	/* No resume can help a model that is not set up: fail the turn. */
	if (!truncated && is_config_error(in->trigger)) {
		jv_free(error);
		jv_free(p);
		return after_head(in, jv_array(), jv_array_append(jv_array(),
		    failed_done(in, jv_null(), "config")));
	}
	if (!truncated && is_refused_request(in->trigger)) {
		jv_free(error);
		jv_free(p);
		return after_head(in, jv_array(), jv_array_append(jv_array(),
		    failed_done(in, jv_null(), "provider_error")));
	}
	a = action("interrupt");

	a = jv_object_set(a, jv_string("reason"), truncated ?
	    jv_string("llm call truncated") : e != NULL ?
	    jv_string_fmt("llm call failed: %s", e) :
	    jv_string("llm call failed"));
	p = jv_object_set(p, jv_string("type"), jv_string("llm.failed"));
	p = jv_object_set(p, jv_string("id"), art_json_field(in->trigger,
	    "id"));
	p = jv_object_set(p, jv_string("error"), error);
	p = jv_object_set(p, jv_string("code"), art_json_field(in->trigger,
	    "code"));
	p = jv_object_set(p, jv_string("truncated"), truncated ? jv_true() :
	    jv_false());
	a = jv_object_set(a, jv_string("payload"), p);
	return after_head(in, jv_array(), jv_array_append(jv_array(), a));
}

static jv
tool_call_for(const jv *config, const jv *tc)
{
	jv fn = art_json_field(tc, "function"), a = action("tool.call"), decl;
	const char *name = art_json_str(&fn, "name"), *h;

	a = with_field(a, "id", art_json_field(tc, "id"));
	a = with_field(a, "name", art_json_field(&fn, "name"));
	a = jv_object_set(a, jv_string("arguments"), jv_get_kind(fn) ==
	    JV_KIND_OBJECT ? art_json_field(&fn, "arguments") : jv_null());
	decl = name != NULL ? art_propose_tool(config, name) : jv_null();
	if ((h = art_json_str(&decl, "handler")) != NULL &&
	    strcmp(h, "client") == 0)
		a = jv_object_set(a, jv_string("handler"), jv_string("client"));
	jv_free(decl);
	jv_free(fn);
	return a;
}

/*
 * A call of a sub-agent: sub_agent.spawn and message.send with its
 * message (the "message" argument, else the raw arguments) appended.
 */
static jv
delegate(const struct art_propose_in *in, const jv *tc, jv actions)
{
	jv fn = art_json_field(tc, "function"), args, a, m;
	const char *id = art_json_str(tc, "id"), *name = art_json_str(&fn,
	    "name"), *raw = art_json_str(&fn, "arguments");
	char child[37];

	art_propose_child_id(in->decision_id != NULL ? in->decision_id : "",
	    id != NULL ? id : "", child);
	a = jv_object_set(action("sub_agent.spawn"), jv_string("session_id"),
	    jv_string(child));
	a = jv_object_set(a, jv_string("agent_id"), jv_string(name));
	a = jv_object_set(a, jv_string("tool_call_id"), jv_string(id != NULL ?
	    id : ""));
	actions = jv_array_append(actions, a);
	args = art_json_parse_str(raw != NULL ? raw : "", NULL);
	m = jv_object_set(jv_object(), jv_string("role"), jv_string("user"));
	m = jv_object_set(m, jv_string("content"), art_json_str(&args,
	    "message") != NULL ? art_json_field(&args, "message") :
	    jv_string(raw != NULL ? raw : ""));
	a = jv_object_set(action("message.send"), jv_string("session_id"),
	    jv_string(child));
	actions = jv_array_append(actions, jv_object_set(a,
	    jv_string("message"), m));
	jv_free(args);
	jv_free(fn);
	return actions;
}

/* Does tool call tc name one of the config's sub-agents? */
static int
is_delegation(const jv *config, const jv *tc)
{
	jv fn = art_json_field(tc, "function"), sa, decl;
	const char *name = art_json_str(&fn, "name");
	int yes;

	sa = name != NULL ? art_propose_sub_agent(config, name) : jv_null();
	decl = name != NULL ? art_propose_tool(config, name) : jv_null();
	yes = jv_get_kind(sa) == JV_KIND_OBJECT &&
	    jv_get_kind(decl) == JV_KIND_NULL && art_json_str(tc, "id") != NULL;
	jv_free(sa);
	jv_free(decl);
	jv_free(fn);
	return yes;
}

/* Does config ask for structured answers ("answer": "structured")? */
static int
asks_structured(const jv *config)
{
	const char *a = art_json_str(config, "answer");

	return a != NULL && strcmp(a, "structured") == 0 &&
	    !art_auto_is(config);
}

/* Did the finished call (the trigger's) ask for an autonomous plan? */
static int
is_plan_reply(const struct art_propose_in *in)
{
	const char *id = art_json_str(in->trigger, "id"), *g;
	jv call = id != NULL && in->llm_call != NULL ? in->llm_call(in->ctx,
	    id) : jv_null(), req = art_json_field(&call, "request");
	int yes;

	g = art_json_str(&req, "step_goal");
	yes = g != NULL && strcmp(g, ART_AUTO_PLAN_GOAL) == 0;
	jv_free(req);
	jv_free(call);
	return yes;
}

/* Was the finished call (the trigger's) already the answer's retry? */
static int
was_answer_retry(const struct art_propose_in *in)
{
	const char *id = art_json_str(in->trigger, "id");
	jv call = id != NULL && in->llm_call != NULL ? in->llm_call(in->ctx,
	    id) : jv_null(), req = art_json_field(&call, "request");
	int yes = jv_get_kind(req) == JV_KIND_OBJECT &&
	    jv_object_has(jv_copy(req), jv_string("answer_retry"));

	jv_free(req);
	jv_free(call);
	return yes;
}

/*
 * The call asked again for an answer the schema refused: the messages
 * the finished call sent, then its reply and what was wrong with it, so
 * the model can mend it.  Neither is recorded: only the mended answer
 * joins the conversation.  jv_invalid() when the call cannot be read.
 */
static jv
answer_retry(const struct art_propose_in *in, const jv *msg, const char *why)
{
	const char *id = art_json_str(in->trigger, "id");
	jv call = id != NULL && in->llm_call != NULL ? in->llm_call(in->ctx,
	    id) : jv_null(), req = art_json_field(&call, "request"), msgs, a;
	jv m;

	msgs = jv_get_kind(req) == JV_KIND_OBJECT && in->prompt != NULL ?
	    in->prompt(in->ctx, &req) : jv_invalid();
	jv_free(req);
	jv_free(call);
	if (jv_get_kind(msgs) != JV_KIND_ARRAY) {
		jv_free(msgs);
		return jv_invalid();
	}
	m = jv_object_set(jv_object(), jv_string("role"),
	    jv_string("assistant"));
	msgs = jv_array_append(msgs, jv_object_set(m, jv_string("content"),
	    art_json_field(msg, "content")));
	m = jv_object_set(jv_object(), jv_string("role"), jv_string("user"));
	msgs = jv_array_append(msgs, jv_object_set(m, jv_string("content"),
	    jv_string_fmt("That answer does not fit the %s schema (%s). "
	    "Answer again with one JSON object that does.", ART_ANSWER_FORMAT,
	    why)));
	a = art_propose_llm_call(in->config, jv_invalid());
	a = jv_object_set(a, jv_string("messages"), msgs);
	return jv_object_set(a, jv_string("answer_retry"), jv_true());
}

/*
 * The final reply of a structured-answer agent (msg, consumed).  An
 * answer that fits the schema is held to the seed's caps and rides on
 * the message ("structured_answer", with "answer_warnings" for what the
 * caps dropped); the turn's data is its summary.  One that does not is
 * asked for once more, then delivered as the plain text it is, with a
 * warning.
 */
static jv
structured_finished(const struct art_propose_in *in, jv msg)
{
	const char *text = art_json_str(&msg, "content");
	struct art_err err;
	jv ans, warn, a, w;

	if (art_answer_parse(text != NULL ? text : "", &ans, &err) == 0) {
		ans = art_answer_cap(ans, &warn);
		if (jv_array_length(jv_copy(warn)) > 0)
			msg = jv_object_set(msg, jv_string("answer_warnings"),
			    warn);
		else
			jv_free(warn);
		a = jv_object_set(action("done"), jv_string("data"),
		    art_json_field(&ans, "summary"));
		msg = jv_object_set(msg, jv_string("structured_answer"), ans);
		return after_head(in, jv_array_append(jv_array(), msg),
		    jv_array_append(jv_array(), a));
	}
	if (!was_answer_retry(in) && jv_is_valid(a = answer_retry(in, &msg,
	    err.msg))) {
		jv_free(msg);
		return after_head(in, jv_array(), jv_array_append(jv_array(),
		    a));
	}
	w = jv_object_set(jv_object(), jv_string("part"), jv_string("answer"));
	w = jv_object_set(w, jv_string("message"), jv_string_fmt("%s; "
	    "delivered as plain text", err.msg));
	msg = jv_object_set(msg, jv_string("answer_warnings"),
	    jv_array_append(jv_array(), w));
	a = jv_object_set(action("done"), jv_string("data"),
	    art_json_field(&msg, "content"));
	return after_head(in, jv_array_append(jv_array(), msg),
	    jv_array_append(jv_array(), a));
}

static jv
llm_finished(const struct art_propose_in *in)
{
	int ok = 0, truncated = 0;
	const char *code;
	jv msg, calls, actions;

	art_json_get_bool(in->trigger, "ok", 0, &ok, NULL);
	art_json_get_bool(in->trigger, "truncated", 0, &truncated, NULL);
	if (!ok || truncated)
		return llm_failed(in, truncated);
	msg = art_json_field(in->trigger, "message");
	/* A refused reply ends the turn showing what was said, and why. */
	code = art_json_str(in->trigger, "code");
	if (code != NULL && strcmp(code, "refused") == 0) {
		actions = jv_array_append(jv_array(), failed_done(in,
		    art_json_field(&msg, "content"), "refused"));
		return after_head(in, jv_array_append(jv_array(), msg),
		    actions);
	}
	calls = art_json_field(&msg, "tool_calls");
	actions = jv_array();
	if (jv_get_kind(calls) == JV_KIND_ARRAY &&
	    jv_array_length(jv_copy(calls)) > 0) {
		jv_array_foreach(calls, i, tc) {
			if (is_delegation(in->config, &tc))
				actions = delegate(in, &tc, actions);
			else
				actions = jv_array_append(actions,
				    tool_call_for(in->config, &tc));
			jv_free(tc);
		}
	} else if (art_auto_is(in->config)) {
		/* A plan's step ended: the engine judges the plan, and ends
		 * the turn, or this call is the next step.  The plan's own
		 * reply is marked, so what draws a transcript can tell it. */
		if (is_plan_reply(in))
			msg = jv_object_set(msg, jv_string("todo_plan"),
			    jv_true());
		actions = jv_array_append(actions, default_llm_call(in->config));
	} else if (asks_structured(in->config)) {
		jv_free(calls);
		jv_free(actions);
		return structured_finished(in, msg);
	} else {
		/* The answer is its text; images stay on the message. */
		jv content = art_json_field(&msg, "content");

		actions = jv_array_append(actions, jv_object_set(action("done"),
		    jv_string("data"), art_parts_join(&content)));
		jv_free(content);
	}
	jv_free(calls);
	return after_head(in, jv_array_append(jv_array(), msg), actions);
}

/*
 * An interrupt resumed.  One that held a call (approval, input_required)
 * was answered by the engine, which runs or settles the call: nothing
 * more to do, said as the transcript alone.  Any other (a failed model
 * call, one a worker raised) calls the model again over the transcript,
 * so the turn goes on from where it stopped.
 */
static jv
interrupt_resumed(const struct art_propose_in *in)
{
	jv p = art_json_field(in->interrupt, "payload");
	const char *t = art_json_str(&p, "type");
	int held = t != NULL && (strcmp(t, "approval") == 0 ||
	    strcmp(t, "input_required") == 0);

	jv_free(p);
	if (held)
		return after_head(in, jv_array(), jv_invalid());
	if (jv_get_kind(*in->config) != JV_KIND_OBJECT)
		return jv_object();
	return after_head(in, jv_array(), jv_array_append(jv_array(),
	    default_llm_call(in->config)));
}

jv
art_propose(const struct art_propose_in *in)
{
	const char *type = art_json_str(in->trigger, "type");

	if (type == NULL)
		return jv_object();
	if (strcmp(type, "session.start") == 0)
		return jv_get_kind(*in->file_config) == JV_KIND_OBJECT ?
		    jv_object_set(jv_object(), jv_string("agent"),
		    jv_copy(*in->file_config)) : jv_object();
	if (strcmp(type, "client.messages") == 0)
		return client_messages(in);
	if (strcmp(type, "tool.execute") == 0)
		return tool_execute(in);
	if (strcmp(type, "tool.finished") == 0 ||
	    strcmp(type, "sub_agent.finished") == 0)
		return tool_finished(in);
	if (strcmp(type, "llm.finished") == 0)
		return llm_finished(in);
	if (strcmp(type, "interrupt.resumed") == 0)
		return interrupt_resumed(in);
	return jv_object();	/* client.action, llm.execute, … */
}

/*
 * An llm.call left to the engine's default, with the messages it sends
 * (art_propose_prompt), and the config's tools when it names none.
 */
static jv
expand_llm_call(jv a, const jv *config, const jv *view)
{
	jv tools;

	if (!jv_object_has(jv_copy(a), jv_string("tools")) &&
	    jv_get_kind(tools = art_propose_llm_tools(config)) != JV_KIND_NULL)
		a = art_json_set_after(a, "messages", "tools", tools);
	if (jv_object_has(jv_copy(a), jv_string("messages")))
		return a;
	return art_json_set_after(a, "model", "messages", art_propose_prompt(
	    config, jv_copy(*view)));
}

static int
is_llm_call(const jv *a)
{
	const char *t = art_json_str(a, "type");

	return t != NULL && strcmp(t, "llm.call") == 0;
}

jv
art_propose_expand(jv proposed, const jv *path, const jv *config)
{
	jv out, view, acts;

	if (jv_get_kind(proposed) != JV_KIND_OBJECT ||
	    !jv_object_has(jv_copy(proposed), jv_string("messages_after")))
		return proposed;
	out = jv_object();
	view = art_json_field(&proposed, "messages");
	view = jv_array_concat(jv_copy(*path), jv_get_kind(view) ==
	    JV_KIND_ARRAY ? view : (jv_free(view), jv_array()));
	jv_object_foreach(proposed, k, v) {
		const char *key = jv_string_value(k);

		if (strcmp(key, "messages_after") == 0) {
			jv_free(v);
		} else if (strcmp(key, "messages") == 0) {
			jv_free(v);
			out = jv_object_set(out, jv_copy(k), jv_copy(view));
		} else if (strcmp(key, "actions") == 0 &&
		    jv_get_kind(v) == JV_KIND_ARRAY) {
			acts = jv_array();
			jv_array_foreach(v, i, a) {
				acts = jv_array_append(acts, is_llm_call(&a) ?
				    expand_llm_call(a, config, &view) : a);
				(void)i;
			}
			jv_free(v);
			out = jv_object_set(out, jv_copy(k), acts);
		} else
			out = jv_object_set(out, jv_copy(k), v);
		jv_free(k);
	}
	jv_free(view);
	jv_free(proposed);
	return out;
}

jv
art_propose_by_version(jv proposed, const jv *llm_tools)
{
	jv acts, out;
	int n;

	if (jv_get_kind(proposed) != JV_KIND_OBJECT ||
	    !jv_object_has(jv_copy(proposed), jv_string("messages_after")) ||
	    jv_get_kind(acts = art_json_field(&proposed, "actions")) !=
	    JV_KIND_ARRAY)
		return proposed;
	n = jv_get_kind(*llm_tools) == JV_KIND_ARRAY ?
	    jv_array_length(jv_copy(*llm_tools)) : -1;
	out = jv_array();
	jv_array_foreach(acts, i, a) {
		jv t = art_json_field(&a, "tools");

		/* The length first: most calls that differ differ in it. */
		if (is_llm_call(&a) && jv_get_kind(t) == JV_KIND_ARRAY &&
		    jv_array_length(jv_copy(t)) == n &&
		    jv_equal(jv_copy(t), jv_copy(*llm_tools)))
			a = jv_object_delete(a, jv_string("tools"));
		jv_free(t);
		out = jv_array_append(out, a);
		(void)i;
	}
	jv_free(acts);
	return jv_object_set(proposed, jv_string("actions"), out);
}

int
art_propose_config_version(const jv *config, char out[ART_CONFIG_VERSION_LEN + 1])
{
	unsigned char d[ART_SHA256_LEN];
	size_t len = 0;
	char *text = art_json_dump(config, &len), hex[2 * ART_SHA256_LEN + 1];

	out[0] = '\0';
	if (text == NULL)
		return -1;
	art_sha256(text, len, d);
	free(text);
	art_hex(d, ART_SHA256_LEN, hex);
	memcpy(out, hex, ART_CONFIG_VERSION_LEN);
	out[ART_CONFIG_VERSION_LEN] = '\0';
	return 0;
}
