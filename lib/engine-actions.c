/* engine-actions.c - a decision's actions, and applying its response
 *
 * A decision.response is checked, recorded (decision.completed), its
 * messages reconciled into the tree, its state and agent versioned, and
 * its actions taken in order: calls made, settles, done, an interrupt, a
 * sub-agent spawned, a message sent.  A response that cannot apply is
 * refused whole (err code "reject").
 */
#include "engine-int.h"

#include <stdio.h>
#include <string.h>

#include "json.h"
#include "propose.h"
#include "reconcile.h"
#include "request.h"
#include "schema.h"
#include "session.h"
#include "tree.h"

/* Is there a call id?  1 yes, 0 no, -1 when the store fails. */
static int
call_exists(struct cx *c, const char *id)
{
	jv call = eng_get(c, ART_DB_CALLS, c->sid, id);
	int ok = !jv_is_valid(call) ? -1 : jv_get_kind(call) != JV_KIND_NULL;

	jv_free(call);
	return ok;
}

static jv
pick(const jv *a, const jv *cfg, const char *key)
{
	jv v = art_json_field(a, key);

	if (jv_get_kind(v) != JV_KIND_NULL)
		return v;
	jv_free(v);
	return art_json_field(cfg, key);
}

static int
layer_retry(struct cx *c, struct art_retry *r, const jv *cfg, const jv *a)
{
	jv p1 = art_json_field(cfg, "retry"), p2 = art_json_field(a, "retry");
	/* An action's policy is the seed's, whole; the config's was checked
	 * where it was read. */
	int bad = art_retry_check(&p2, c->err) == -1 ||
	    art_retry_layer(r, &p1, c->err) == -1 ||
	    art_retry_layer(r, &p2, c->err) == -1;

	jv_free(p1);
	jv_free(p2);
	return bad ? eng_reject(c, "%s", c->err->msg) : 0;
}

/* The agent's prior_turns, or jv_null() when it sets none. */
static jv
prior_turns(const jv *cfg)
{
	int64_t n = -1;

	if (art_json_get_int(cfg, "prior_turns", 0, &n, NULL) == -1 || n < 0)
		return jv_null();
	return jv_number((double)n);
}

/*
 * The request (consumed) as it is recorded: tools that are still the
 * config's (mine, consumed: the very jv eng_config_version gave for
 * version ver, so a plan step's own tools are not taken for them) are
 * named by the version, "config", and the config is kept under it
 * (request.h), so a call costs the same to record with forty tools as
 * with one.  jv_invalid() with c->err on a store failure.
 */
static jv
tools_by_version(struct cx *c, jv req, const jv *cfg, const char *ver,
    jv mine)
{
	unsigned char k[ART_REQUEST_CONFIG_KEY_MAX];
	jv tools = art_json_field(&req, "tools");
	size_t n;
	int has, same = ver != NULL && jv_is_valid(req) &&
	    jv_get_kind(mine) == JV_KIND_ARRAY;

	/* No tools (null and null are identical): nothing to name. */
	same = jv_identical(tools, mine) && same;

	if (!same)
		return req;
	n = art_request_config_key(ver, k);
	if ((has = art_store_has(c->t, ART_DB_VERSIONS, c->sid, k, n,
	    c->err)) == 0)
		has = art_store_add(c->t, ART_DB_VERSIONS, c->sid, k, n,
		    jv_copy(*cfg), c->err) == -1 ? -1 : 1;
	if (has == -1) {
		jv_free(req);
		return jv_invalid();
	}
	/* Where the tools were, so the request made whole reads the same. */
	return jv_object_delete(art_json_set_after(req, "tools", "config",
	    jv_string(ver)), jv_string("tools"));
}

/* Messages (consumed) without their ids, which the engine assigns. */
static jv
without_ids(jv msgs)
{
	jv out = jv_array();

	jv_array_foreach(msgs, i, m) {
		if (jv_get_kind(m) == JV_KIND_OBJECT)
			m = jv_object_delete(m, jv_string("id"));
		out = jv_array_append(out, m);
		(void)i;
	}
	jv_free(msgs);
	return out;
}

/*
 * Whether an llm.call's messages (borrowed) are those the engine's
 * default sends at head h, ids aside (a message the worker proposed is
 * given its id when it is recorded) (art_propose_prompt): a worker that returns the
 * whole proposal it was given (art_propose_expand) accepts the default,
 * so its call is made as the default is, prior_turns, an autonomous
 * agent's plan and step text, and tools by version alike.  1 or 0; -1
 * with c->err when the store fails.
 */
static int
is_default_prompt(struct cx *c, const jv *cfg, const char *h, const jv *msgs)
{
	jv path, want;

	if (jv_get_kind(*msgs) != JV_KIND_ARRAY || jv_get_kind(*cfg) !=
	    JV_KIND_OBJECT)
		return 0;
	path = art_tree_path(c->t, c->sid, *h != '\0' ? h : NULL, c->err);
	if (!jv_is_valid(path))
		return -1;
	want = without_ids(art_propose_prompt(cfg, path));
	return jv_equal(want, without_ids(jv_copy(*msgs))) ? 1 : 0;
}

/* Whether tools (borrowed) are the config's own, as LlmTools. */
static int
is_config_tools(const jv *tools, const jv *cfg)
{
	jv mine;
	int yes;

	if (jv_get_kind(*tools) != JV_KIND_ARRAY)
		return 0;
	mine = art_propose_llm_tools(cfg);
	yes = jv_get_kind(mine) == JV_KIND_ARRAY && jv_equal(mine,
	    jv_copy(*tools));
	return yes;
}

static jv
llm_request(struct cx *c, const jv *a, const jv *cfg, const char *h)
{
	static const char *const extras[] = { "temperature",
	    "max_completion_tokens", "reasoning", NULL };
	const char *const *k;
	jv req = set(jv_object(), "model", pick(a, cfg, "model"));
	jv msgs = art_json_field(a, "messages"), tools, mine = jv_null();
	const char *sys = art_json_str(cfg, "system"), *ver = NULL, *v;
	char vbuf[ART_CONFIG_VERSION_LEN + 1];
	int dflt;

	if ((dflt = is_default_prompt(c, cfg, h, &msgs)) == -1) {
		jv_free(msgs);
		jv_free(req);
		return jv_invalid();
	}
	if (dflt) {
		jv_free(msgs);
		msgs = jv_null();
	}
	if (jv_get_kind(msgs) == JV_KIND_NULL) {
		/*
		 * The seed's default, the config's system prompt and then the
		 * active path, is recorded by reference: the path is read
		 * when the call goes out (art_request_llm), so recording a
		 * call costs the same at step 1000 as at step 1.
		 */
		jv_free(msgs);
		msgs = jv_object();
		if (sys != NULL && *sys != '\0')
			msgs = set(msgs, "system", jv_string(sys));
		msgs = set(msgs, "path", eng_head_jv(h));
		/* prior_turns: the path is cut when the call goes out. */
		req = set(req, "prompt", set_some(msgs, "prior_turns",
		    prior_turns(cfg)));
	} else
		req = set(req, "messages", msgs);
	tools = art_json_field(a, "tools");
	/* An echoed default names the config's tools: they are by version. */
	if (dflt && is_config_tools(&tools, cfg)) {
		jv_free(tools);
		tools = jv_null();
	}
	if (jv_get_kind(tools) == JV_KIND_NULL && jv_get_kind(*cfg) ==
	    JV_KIND_OBJECT) {
		jv_free(tools);
		/* Copied: another config resolved before the end would
		 * change the engine's buffer. */
		if ((v = eng_config_version(c, cfg, &tools)) != NULL)
			ver = strcpy(vbuf, v);
		mine = jv_copy(tools);
	} else if (jv_get_kind(tools) == JV_KIND_NULL) {
		jv_free(tools);
		tools = art_propose_llm_tools(cfg);
	}
	req = set_some(req, "tools", tools);
	for (k = extras; *k != NULL; k++)
		req = set_some(req, *k, pick(a, cfg, *k));
	/* agentrt's: a format to answer in, and an answer asked again. */
	req = set_some(req, "response_format", art_json_field(a,
	    "response_format"));
	req = set_some(req, "answer_retry", art_json_field(a, "answer_retry"));
	req = eng_auto_request(c, cfg, h, req);
	return tools_by_version(c, req, cfg, ver, mine);
}

/*
 * Whether the running turn's client asked for its model calls streamed
 * (ClientInput.stream, recorded on turn.started): true or false, which
 * wins over the action's and the config's; jv_null() when it did not
 * say; jv_invalid() when the store fails.
 */
static jv
turn_stream(struct cx *c)
{
	jv s = eng_summary(c), turn, v;
	const char *tid;

	if (!jv_is_valid(s))
		return s;
	tid = art_json_str(&s, "turn");
	turn = tid != NULL ? eng_turn_record(c, tid) : jv_null();
	jv_free(s);
	if (!jv_is_valid(turn))
		return turn;
	v = art_json_field(&turn, "stream");
	jv_free(turn);
	return jv_get_kind(v) == JV_KIND_TRUE || jv_get_kind(v) ==
	    JV_KIND_FALSE ? v : (jv_free(v), jv_null());
}

static int
act_llm_call(struct cx *c, const jv *a, const jv *cfg, const char *h)
{
	char id[ART_ID_MAX + 1];
	struct art_retry pol;
	const char *given = art_json_str(a, "id"), *handler;
	jv p, req, stream, hv, msgs = art_json_field(a, "messages");
	int bad_msgs = jv_get_kind(msgs) != JV_KIND_NULL &&
	    art_reconcile_check(&msgs, c->err) == -1, made;

	jv_free(msgs);
	if (bad_msgs)
		return eng_reject(c, "llm.call: %s", c->err->msg);
	if (given != NULL && (made = call_exists(c, given)) != 0)
		return made < 0 ? -1 : 0;	/* a live id: already made */
	if ((made = eng_guard_call(c, cfg, 1)) != 0)
		return made < 0 ? -1 : 0;	/* a limit: the turn ends */
	if (given != NULL)
		snprintf(id, sizeof(id), "%s", given);
	else if (eng_mint(c, id) == -1)
		return -1;
	req = llm_request(c, a, cfg, h);
	if (!jv_is_valid(req))
		return -1;
	if (art_json_str(&req, "model") == NULL) {
		jv_free(req);
		return eng_reject(c, "llm.call has no model (none in the "
		    "action or the agent config)");
	}
	art_retry_default(&pol, ART_KIND_LLM);
	hv = pick(a, cfg, "handler");
	handler = jv_get_kind(hv) == JV_KIND_STRING ? jv_string_value(hv) :
	    "server";
	if (strcmp(handler, "server") != 0 && strcmp(handler, "worker") != 0) {
		jv_free(hv);
		jv_free(req);
		return eng_reject(c, "llm.call: handler must be server or worker");
	}
	if (layer_retry(c, &pol, cfg, a) == -1) {
		jv_free(hv);
		jv_free(req);
		return -1;
	}
	stream = turn_stream(c);
	if (jv_get_kind(stream) == JV_KIND_NULL)
		stream = pick(a, cfg, "stream");
	else if (!jv_is_valid(stream)) {
		jv_free(hv);
		jv_free(req);
		return -1;
	}
	p = set(obj("llm.call.requested"), "id", jv_string(id));
	p = set(p, "attempt", jv_number(1));
	p = set(p, "request", req);
	p = set(p, "stream", jv_get_kind(stream) == JV_KIND_TRUE ? jv_true() :
	    jv_false());
	p = set(p, "retry", art_retry_json(&pol));
	p = set(p, "handler", jv_string(handler));
	p = set(p, "anchor", eng_head_jv(h));
	p = set_some(p, "mock", art_json_field(cfg, "mock"));
	p = set_some(p, "format", art_json_field(cfg, "format"));
	p = set_some(p, "providers", art_json_field(cfg, "providers"));
	p = set_some(p, "fallback", art_json_field(cfg, "fallback"));
	/* The llm stage redacts what it records (a cassette) as we do. */
	p = set_some(p, "security", art_json_field(cfg, "security"));
	jv_free(stream);
	jv_free(hv);
	return eng_rec(c, p);
}

/*
 * The call's arguments against the declaration's input schema, once, when
 * the call is made: the verdict rides on the call (input_error) to the
 * tool.execute trigger's ToolInput, and the output schema rides along for
 * the settle.  p is the tool.call.requested payload (consumed).
 */
static jv
check_tool_schemas(jv p, const jv *decl)
{
	jv schema = art_json_field(decl, "input"), args;
	const char *text = art_json_str(&p, "arguments");
	struct art_err err;

	if (jv_get_kind(schema) != JV_KIND_NULL && text != NULL) {
		args = art_json_parse_str(text, NULL);
		if (jv_get_kind(args) == JV_KIND_OBJECT &&
		    art_schema_validate(&schema, &args, &err) == -1)
			p = set(p, "input_error", art_err_is(&err,
			    "bad_schema") ? jv_string_fmt("the tool's input "
			    "schema cannot be used: %s", err.msg) :
			    jv_string(err.msg));
		jv_free(args);
	}
	jv_free(schema);
	return set_some(p, "output_schema", art_json_field(decl, "output"));
}

static int
act_tool_call(struct cx *c, const jv *a, const jv *cfg, const char *h)
{
	char id[ART_ID_MAX + 1];
	struct art_retry pol;
	const char *given = art_json_str(a, "id"), *name, *dh;
	jv args = art_json_field(a, "arguments"), decl, p, hold = jv_null(), why;
	int client, made;

	if ((name = art_json_str(a, "name")) == NULL) {
		jv_free(args);
		return eng_reject(c, "tool.call has no name");
	}
	if ((given != NULL && (made = call_exists(c, given)) != 0) ||
	    (made = eng_guard_call(c, cfg, 0)) != 0) {
		jv_free(args);
		return made < 0 ? -1 : 0;
	}
	if (given != NULL)
		snprintf(id, sizeof(id), "%s", given);
	else if (eng_mint(c, id) == -1) {
		jv_free(args);
		return -1;
	}
	decl = art_propose_tool(cfg, name);
	if (jv_get_kind(decl) == JV_KIND_NULL && strcmp(name, "ask_user") == 0 &&
	    art_propose_asks_user(cfg)) {
		jv_free(decl);
		decl = set(art_propose_ask_user_tool(), "hold",
		    jv_string("input_required"));
	} else if (jv_get_kind(decl) == JV_KIND_NULL) {
		jv_free(decl);
		decl = eng_auto_builtin(cfg, name);
	} else if (jv_get_kind(hold = art_json_field(&decl,
	    "requires_approval")) == JV_KIND_TRUE)
		decl = set(decl, "hold", jv_string("approval"));
	jv_free(hold);
	hold = jv_null();
	dh = art_json_str(&decl, "handler");
	client = dh != NULL && strcmp(dh, "client") == 0;
	dh = art_json_str(a, "handler");
	if (dh != NULL && strcmp(dh, "client") == 0)
		client = 1;
	art_retry_default(&pol, client ? ART_KIND_CLIENT_TOOL : ART_KIND_TOOL);
	if (layer_retry(c, &pol, cfg, a) == -1) {
		jv_free(args);
		jv_free(decl);
		return -1;
	}
	p = set(obj("tool.call.requested"), "id", jv_string(id));
	p = set(p, "attempt", jv_number(1));
	p = set(p, "name", jv_string(name));
	p = set(p, "arguments", jv_get_kind(args) == JV_KIND_STRING ? args :
	    jv_get_kind(args) == JV_KIND_NULL ? (jv_free(args),
	    jv_string("")) : jv_dump_string(args, 0));
	p = set(p, "handler", jv_string(client ? "client" : "worker"));
	p = set(p, "retry", art_retry_json(&pol));
	p = set(p, "anchor", eng_head_jv(h));
	p = check_tool_schemas(p, &decl);
	p = set_some(p, "hold", art_json_field(&decl, "hold"));
	p = set_some(p, "builtin", art_json_field(&decl, "builtin"));
	jv_free(decl);
	/* Under schema_validation_mode warn or log_only the call runs. */
	why = art_json_field(&p, "input_error");
	if (jv_get_kind(why) == JV_KIND_STRING && !eng_guard_blocks(cfg))
		p = jv_object_delete(p, jv_string("input_error"));
	else {
		jv_free(why);
		why = jv_null();
	}
	made = eng_rec(c, p);
	if (made == 0 && jv_get_kind(why) == JV_KIND_STRING)
		made = eng_guard_schema(c, cfg, name, "input",
		    jv_string_value(why));
	jv_free(why);
	return made;
}

/* A settle inside a response: id and attempt default from the execute. */
static int
act_settle(struct cx *c, const jv *a, const char *type, const jv *live)
{
	jv tr = art_json_field(live, "trigger"), src = jv_copy(*a);
	const char *tt = art_json_str(&tr, "type");
	const char *want = strncmp(type, "llm.", 4) == 0 ? "llm.execute" :
	    "tool.execute";
	struct settle st;
	int r;

	if (art_json_str(a, "id") == NULL) {
		if (tt == NULL || strcmp(tt, want) != 0) {
			jv_free(tr);
			jv_free(src);
			return eng_reject(c, "%s without an id answers no "
			    "execute (unresolvable settle id)", type);
		}
		jv at = art_json_field(a, "attempt");

		src = set(src, "id", art_json_field(&tr, "id"));
		if (jv_get_kind(at) == JV_KIND_NULL)
			src = set(src, "attempt", art_json_field(&tr, "attempt"));
		jv_free(at);
	}
	jv_free(tr);
	if (eng_read_settle(&src, type, &st, c->err) == -1) {
		eng_settle_release(&st);
		jv_free(src);
		return eng_reject(c, "%s", c->err->msg);
	}
	r = eng_settle(c, &st, type, &src);
	jv_free(src);
	return r;
}

/*
 * Raising an interrupt voids the model calls not yet answered on the
 * path it parks (PROTOCOL-NOTES §7); tools already started keep running.
 */
static int
void_parked_llm(struct cx *c, const char *h)
{
	jv s = eng_summary(c), calls, ids;
	int r = 0;

	if (!jv_is_valid(s))
		return -1;
	calls = eng_open_calls(c, &s);
	jv_free(s);
	ids = *h != '\0' ? art_tree_path_ids(c->t, c->sid, h, c->err) :
	    jv_array();
	if (!jv_is_valid(ids)) {
		jv_free(calls);
		return -1;
	}
	jv_array_foreach(calls, i, call) {
		const char *anchor = art_json_str(&call, "anchor");

		if (r == 0 && eng_kind_of(&call) == ART_KIND_LLM &&
		    (anchor == NULL || eng_in_ids(&ids, anchor)))
			r = eng_void_call(c, &call);
		jv_free(call);
	}
	jv_free(calls);
	jv_free(ids);
	return r;
}

static int
act_interrupt(struct cx *c, const jv *a, const char *h)
{
	char id[ART_ID_MAX + 1];
	const char *given = art_json_str(a, "interrupt_id");
	jv p, s = eng_summary(c);
	int parked = jv_is_valid(s) ? eng_is_parked(c, &s) : 0;

	jv_free(s);
	if (parked)
		return 0;	/* already parked here: a no-op */
	if (given != NULL)
		snprintf(id, sizeof(id), "%s", given);
	else if (eng_mint(c, id) == -1)
		return -1;
	p = set(obj("session.interrupted"), "interrupt_id", jv_string(id));
	p = set(p, "origin", jv_string("frontend"));
	p = set(p, "reason", art_json_str(a, "reason") != NULL ?
	    art_json_field(a, "reason") : jv_string("interrupted"));
	p = set(p, "payload", art_json_field(a, "payload"));
	p = set(p, "anchor", eng_head_jv(h));
	if (eng_rec(c, p) == -1)
		return -1;
	return void_parked_llm(c, h);
}

/* How deep sub-agents may nest: the config's max_subagent_depth, else 5. */
static int64_t
max_depth(const jv *cfg)
{
	int64_t n = SUB_AGENT_DEPTH;

	if (art_json_get_int(cfg, "max_subagent_depth", 0, &n, NULL) == -1 ||
	    n < 0)
		n = SUB_AGENT_DEPTH;
	return n;
}

/*
 * sub_agent.spawn: a call of kind sub_agent whose id is the child's
 * session id (the seed's Call.id), answering tool_call_id.  It goes out
 * when planned (eng_open_child); one that would nest deeper than the limit
 * fails at once, as a tool error the model reads.
 */
static int
act_spawn(struct cx *c, const jv *a, const jv *cfg, const char *h)
{
	const char *child = art_json_str(a, "session_id");
	const char *agent = art_json_str(a, "agent_id");
	const char *tcid = art_json_str(a, "tool_call_id");
	struct art_retry pol;
	jv p, s, anc, none = jv_null(), call;
	int64_t depth = 0, max = max_depth(cfg);
	int r;

	if (child == NULL || !art_id_is_valid(child))
		return eng_reject(c, "sub_agent.spawn: session_id must be a "
		    "session id");
	if (agent == NULL || !art_id_is_valid(agent) || tcid == NULL)
		return eng_reject(c, "sub_agent.spawn needs agent_id and "
		    "tool_call_id");
	if (strcmp(child, c->sid) == 0)
		return eng_reject(c, "sub_agent.spawn: a session cannot be its "
		    "own child");
	if ((r = call_exists(c, child)) != 0)	/* redelivered: asked for */
		return r < 0 ? -1 : 0;
	art_retry_default(&pol, ART_KIND_SUB_AGENT);
	if (layer_retry(c, &pol, &none, a) == -1)
		return -1;
	p = set(obj("sub_agent.requested"), "id", jv_string(child));
	p = set(p, "attempt", jv_number(1));
	p = set(p, "agent_id", jv_string(agent));
	p = set(p, "session_id", jv_string(child));
	p = set(p, "tool_call_id", jv_string(tcid));
	p = set(p, "name", jv_string(agent));
	p = set(p, "retry", art_retry_json(&pol));
	p = set(p, "anchor", eng_head_jv(h));
	if (eng_rec(c, p) == -1 || !jv_is_valid(s = eng_summary(c)))
		return -1;
	anc = art_json_field(&s, "ancestry");
	if (jv_get_kind(anc) == JV_KIND_ARRAY)
		depth = jv_array_length(jv_copy(anc));
	jv_free(anc);
	jv_free(s);
	if (depth + 1 <= max)
		return 0;
	call = eng_get_call(c, child);
	if (!jv_is_valid(call))
		return -1;
	r = eng_refuse_call(c, &call, jv_string_fmt("sub-agent depth limit "
	    "reached: this session is %lld deep and max_subagent_depth is "
	    "%lld, so %s cannot be started", (long long)depth, (long long)max,
	    agent));
	jv_free(call);
	return r;
}

/* A user message (arg, borrowed) into this session, as a client's. */
int
eng_deliver(struct cx *c, void *arg)
{
	jv line = set(obj("client.message"), "message", jv_copy(*(jv *)arg));
	int r = eng_input_message(c, &line, "client.message");

	jv_free(line);
	return r;
}

/*
 * A session made (by new) and never started: no config, no decision on
 * its way, no message.  It is started as run -a would start it, its
 * session.start queued with its agent's file, before a message reaches
 * it; 0 when it needs none or was started, -1 with c->err on a store
 * failure.
 */
static int
start_unstarted(struct cx *c)
{
	char h[ART_ID_MAX + 1];
	jv s = eng_summary(c), live, cfg, q, file;
	const char *agent = art_json_str(&s, "agent_id");
	int64_t nodes = 0;
	int r = 0;

	if (!jv_is_valid(s) || agent == NULL) {
		r = jv_is_valid(s) ? 0 : -1;
		jv_free(s);
		return r;
	}
	live = art_json_field(&s, "live");
	art_json_get_int(&s, "nodes", 0, &nodes, NULL);
	if (jv_get_kind(live) != JV_KIND_NULL || nodes > 0) {
		jv_free(live);
		jv_free(s);
		return 0;
	}
	jv_free(live);
	if (eng_head(c, h, sizeof(h)) == -1 ||
	    !jv_is_valid(cfg = eng_config_at(c, h))) {
		jv_free(s);
		return -1;
	}
	q = jv_get_kind(cfg) == JV_KIND_NULL ? eng_queued(c) : jv_array();
	if (!jv_is_valid(q))
		r = -1;
	else if (jv_get_kind(cfg) == JV_KIND_NULL &&
	    jv_array_length(jv_copy(q)) == 0) {
		struct art_err lerr;

		file = c->e->o.load_agent(c->e->o.agent_ctx, agent, &lerr);
		/* Said in the session; the message is delivered all the same,
		 * and its turn fails for want of a config, as before. */
		r = !jv_is_valid(file) ? (jv_free(file), eng_rec_error(c,
		    "bad_agent", lerr.msg, NULL)) : eng_queue_decision(c,
		    obj("session.start"), 1, set(jv_object(), "agent_file",
		    file));
	}
	jv_free(q);
	jv_free(cfg);
	jv_free(s);
	return r;
}

/* In a session a message.send reaches: driven by us, then delivered. */
static int
send_step(struct cx *c, void *arg)
{
	if (eng_claim(c) == -1)
		return -1;
	eng_adopt(c, c->sid);
	if (start_unstarted(c) == -1)
		return -1;
	return eng_deliver(c, arg);
}

/*
 * message.send: to a child not yet opened, the message waits on its call
 * and goes with it; to any other session (this one, another root) it is
 * delivered now as a client.message, opening a turn there, unless a live
 * process other than ours drives that session.
 */
static int
act_send(struct cx *c, const jv *a)
{
	const char *to = art_json_str(a, "session_id"), *st;
	jv m = art_json_field(a, "message"), view, call, ts;
	int64_t pid;
	int r;

	view = jv_array_append(jv_array(), jv_copy(m));
	r = to == NULL || jv_get_kind(m) != JV_KIND_OBJECT ? -1 :
	    art_reconcile_check(&view, c->err);
	jv_free(view);
	if (r == -1) {
		jv_free(m);
		return eng_reject(c, "message.send needs session_id and a "
		    "message");
	}
	if (!jv_is_valid(call = eng_get(c, ART_DB_CALLS, c->sid, to))) {
		jv_free(m);
		return -1;
	}
	st = art_json_str(&call, "status");
	ts = art_session_get(c->t, to, NULL);
	if (jv_get_kind(call) != JV_KIND_NULL &&
	    eng_kind_of(&call) == ART_KIND_SUB_AGENT &&
	    !jv_is_valid(ts) && st != NULL) {
		/* Not opened yet: the message goes with it; never: dropped. */
		r = strcmp(st, "queued") == 0 || strcmp(st, "retry_scheduled") ==
		    0 ? eng_rec(c, set(set(obj("sub_agent.messaged"), "id",
		    jv_string(to)), "message", jv_copy(m))) : 0;
		jv_free(call);
		jv_free(ts);
		jv_free(m);
		return r;
	}
	jv_free(call);
	if (eng_rec(c, set(set(obj("session.message_requested"), "session_id",
	    jv_string(to)), "message", jv_copy(m))) == -1) {
		jv_free(ts);
		jv_free(m);
		return -1;
	}
	if (!jv_is_valid(ts))
		r = eng_rec_error(c, "not_found", "message.send: no session "
		    "with that id", a);
	else if (strcmp(to, c->sid) == 0)
		r = eng_deliver(c, &m);
	else if ((pid = eng_driver_of(c, to)) != 0)
		r = pid < 0 ? -1 : eng_rec_error(c, "busy", "message.send: "
		    "another process drives that session", a);
	else
		r = eng_with_session(c, to, send_step, &m);
	jv_free(ts);
	jv_free(m);
	return r;
}

/*
 * done ends the turn with data; agentrt's error (and code, a word for
 * it) make the end a failure that still shows the data, as a refused
 * reply or a model that cannot be called ends.
 */
static int
act_done(struct cx *c, const jv *a)
{
	jv data = art_json_field(a, "data"), error = art_json_field(a,
	    "error"), code = art_json_field(a, "code");
	char why[512];
	int r;

	if (jv_get_kind(error) == JV_KIND_NULL) {
		jv_free(error);
		jv_free(code);
		return eng_end_turn(c, data, jv_null());
	}
	if (jv_get_kind(error) != JV_KIND_STRING || (jv_get_kind(code) !=
	    JV_KIND_NULL && jv_get_kind(code) != JV_KIND_STRING)) {
		jv_free(data);
		jv_free(error);
		jv_free(code);
		return eng_reject(c, "done: error and code must be strings");
	}
	snprintf(why, sizeof(why), "%s", jv_string_value(error));
	r = eng_stop_turn(c, jv_get_kind(code) == JV_KIND_STRING ?
	    jv_string_value(code) : NULL, data, why);
	jv_free(error);
	jv_free(code);
	return r;
}

static int
act(struct cx *c, const jv *a, const jv *live, const jv *cfg)
{
	const char *type = art_json_str(a, "type");
	char h[ART_ID_MAX + 1];

	if (eng_head(c, h, sizeof(h)) == -1)
		return -1;
	if (type == NULL)
		return eng_reject(c, "an action has no type");
	if (strcmp(type, "llm.call") == 0)
		return act_llm_call(c, a, cfg, h);
	if (strcmp(type, "tool.call") == 0)
		return act_tool_call(c, a, cfg, h);
	if (strcmp(type, "tool.result") == 0 || strcmp(type, "tool.error") ==
	    0 || strcmp(type, "llm.result") == 0 ||
	    strcmp(type, "llm.error") == 0)
		return act_settle(c, a, type, live);
	if (strcmp(type, "done") == 0)
		return act_done(c, a);
	if (strcmp(type, "interrupt") == 0)
		return act_interrupt(c, a, h);
	if (strcmp(type, "sub_agent.spawn") == 0)
		return act_spawn(c, a, cfg, h);
	if (strcmp(type, "message.send") == 0)
		return act_send(c, a);
	return eng_reject(c, "unsupported action '%s'", type);
}

/* --- applying a decision response ----------------------------------- */

static int
rec_cb(void *ctx, jv payload)
{
	return eng_rec(ctx, payload);
}

static int
mint_cb(void *ctx, char *buf)
{
	return eng_mint(ctx, buf);
}

static int
check_response(struct cx *c, const jv *r)
{
	jv m = art_json_field(r, "messages"), a = art_json_field(r, "actions");
	jv agent = art_json_field(r, "agent");
	jv after = art_json_field(r, "messages_after");
	int bad = 0;

	if (jv_get_kind(m) != JV_KIND_NULL && art_reconcile_check(&m,
	    c->err) == -1)
		bad = 1;
	else if (jv_get_kind(after) != JV_KIND_NULL &&
	    (jv_get_kind(after) != JV_KIND_STRING ||
	    !art_id_is_valid(jv_string_value(after))))
		bad = art_err_set(c->err, "reject", "messages_after: expected "
		    "a message id or null") == -1;
	else if (jv_get_kind(a) != JV_KIND_NULL &&
	    jv_get_kind(a) != JV_KIND_ARRAY)
		bad = art_err_set(c->err, "reject", "actions: expected an "
		    "array") == -1;
	else if (jv_get_kind(agent) != JV_KIND_NULL &&
	    (jv_get_kind(agent) != JV_KIND_OBJECT ||
	    art_json_str(&agent, "model") == NULL))
		bad = art_err_set(c->err, "reject", "agent: expected an "
		    "AgentConfig with a model") == -1;
	jv_free(m);
	jv_free(a);
	jv_free(agent);
	jv_free(after);
	return bad ? eng_reject(c, "%s", c->err->msg) : 0;
}

/* state or agent: a present, non-null value that differs is a version. */
static int
version(struct cx *c, const jv *r, const char *field, const char *type,
    const char *as, enum art_version kind)
{
	char h[ART_ID_MAX + 1];
	jv v = art_json_field(r, field), cur;
	int same;

	if (jv_get_kind(v) == JV_KIND_NULL) {
		jv_free(v);
		return 0;
	}
	if (eng_head(c, h, sizeof(h)) == -1) {
		jv_free(v);
		return -1;
	}
	cur = art_session_resolve(c->t, c->sid, kind, *h != '\0' ? h : NULL,
	    c->err);
	same = art_json_equal(&v, &cur);
	jv_free(cur);
	if (same) {
		jv_free(v);
		return 0;
	}
	return eng_rec(c, set(set(obj(type), as, v), "anchor", eng_head_jv(h)));
}

int
eng_in_ids(const jv *ids, const char *id)
{
	int found = 0;

	jv_array_foreach(*ids, i, x) {
		if (!found && strcmp(jv_string_value(x), id) == 0)
			found = 1;
		jv_free(x);
	}
	return found;
}

/* Drops the queued decisions about call id (its execute or finished). */
int
eng_drop_for_call(struct cx *c, const char *id)
{
	jv all = eng_queued(c);
	int r = jv_is_valid(all) ? 0 : -1;

	if (r == 0) {
		jv_array_foreach(all, i, e) {
			jv tr = art_json_field(&e, "trigger");
			const char *tid = art_json_str(&tr, "id");
			const char *cs = art_json_str(&tr, "session_id");

			/* A sub-agent's finished names its child session. */
			if (r == 0 && ((tid != NULL && strcmp(tid, id) == 0) ||
			    (cs != NULL && strcmp(cs, id) == 0)))
				r = eng_rec(c, set(obj("decision.dropped"),
				    "id", art_json_field(&e, "id")));
			jv_free(tr);
			jv_free(e);
		}
	}
	jv_free(all);
	return r;
}

/*
 * After a fork, work anchored off the new path is abandoned: its calls are
 * voided and their queued decisions dropped (PROTOCOL-NOTES.md §3).  A
 * head that only grew keeps every anchor on its path, so that is skipped.
 */
/* Is node h at most steps below old?  A walk up of that many parents. */
static int
below(struct cx *c, const char *h, const char *old, int steps)
{
	char at[ART_ID_MAX + 1];
	jv m;
	int i, yes = 0;

	snprintf(at, sizeof(at), "%s", h);
	for (i = 0; i < steps && !yes && *at != '\0' &&
	    jv_is_valid(m = eng_step_up(c, at)); i++) {
		jv_free(m);
		yes = strcmp(at, old) == 0;
	}
	return yes;
}

/*
 * The head moved from old: calls anchored off the new path are voided.
 * A head that went down from old by the steps just written is still on
 * old's path (the tool loop's case), found without reading the path.
 */
int
eng_void_stranded(struct cx *c, const char *old, int steps)
{
	char h[ART_ID_MAX + 1];
	jv ids, s, calls;
	int r = 0;

	if (eng_head(c, h, sizeof(h)) == -1)
		return -1;
	if (*old == '\0' || strcmp(old, h) == 0 || below(c, h, old, steps))
		return 0;
	ids = art_tree_path_ids(c->t, c->sid, *h != '\0' ? h : NULL, c->err);
	if (!jv_is_valid(ids) || eng_in_ids(&ids, old)) {
		r = jv_is_valid(ids) ? 0 : -1;
		jv_free(ids);
		return r;
	}
	s = eng_summary(c);
	calls = jv_is_valid(s) ? eng_open_calls(c, &s) : jv_array();
	jv_free(s);
	jv_array_foreach(calls, i, call) {
		const char *anchor = art_json_str(&call, "anchor");
		const char *id = art_json_str(&call, "id");

		if (r == 0 && anchor != NULL && id != NULL &&
		    !eng_in_ids(&ids, anchor))
			r = eng_void_call(c, &call);
		jv_free(call);
	}
	jv_free(calls);
	jv_free(ids);
	return r;
}

/*
 * The response as decision.completed keeps it: its messages are the
 * whole transcript again, and what they add is recorded by message.new
 * events, so the log keeps their count, not a copy.
 */
static jv
recorded_response(const jv *resp)
{
	jv r = jv_copy(*resp), m = art_json_field(resp, "messages");

	if (jv_get_kind(m) == JV_KIND_ARRAY) {
		r = jv_object_delete(r, jv_string("messages"));
		r = set(r, "messages_count", jv_number(jv_array_length(m)));
	} else
		jv_free(m);
	return r;
}

/* view (consumed) with its tool messages on their nodes; see reconcile.h */
jv
eng_normalized(struct cx *c, jv view, const char *h)
{
	jv out = art_reconcile_normalize(c->t, c->sid, &view, *h != '\0' ? h :
	    NULL, c->err);

	jv_free(view);
	return out;
}

/*
 * resp (consumed) with its agent's mcp_servers those of the session's
 * agent file (the session.start decision's agent_file, else the config
 * in force): a server is a command agentrt-tool runs, so only the file
 * the user wrote may name one, never a decision (a worker's answer).
 * jv_invalid() when the store cannot be read.
 */
static jv
file_servers(struct cx *c, const jv *live, jv resp)
{
	jv agent = art_json_field(&resp, "agent"), src, sv;
	char h[ART_ID_MAX + 1];

	if (jv_get_kind(agent) != JV_KIND_OBJECT) {
		jv_free(agent);
		return resp;
	}
	src = art_json_field(live, "agent_file");
	if (jv_get_kind(src) != JV_KIND_OBJECT) {
		jv_free(src);
		if (eng_head(c, h, sizeof(h)) == -1) {
			jv_free(agent);
			jv_free(resp);
			return jv_invalid();
		}
		if (!jv_is_valid(src = eng_config_at(c, h))) {
			jv_free(agent);
			jv_free(resp);
			return jv_invalid();
		}
	}
	sv = jv_get_kind(src) == JV_KIND_OBJECT ? art_json_field(&src,
	    "mcp_servers") : jv_null();
	jv_free(src);
	if (jv_get_kind(sv) == JV_KIND_OBJECT)
		agent = jv_object_set(agent, jv_string("mcp_servers"), sv);
	else {
		jv_free(sv);
		agent = jv_object_delete(agent, jv_string("mcp_servers"));
	}
	return jv_object_set(resp, jv_string("agent"), agent);
}

int
eng_apply_response(struct cx *c, const jv *live, const jv *r)
{
	const char *id = art_json_str(live, "id");
	char h[ART_ID_MAX + 1], old[ART_ID_MAX + 1];
	struct art_reconcile_ops ops = { mint_cb, rec_cb, c };
	jv resp = jv_copy(*r), msgs, actions, cfg;
	int rc = 0, by_ref;

	c->stop_code = NULL;
	resp = jv_object_delete(resp, jv_string("type"));
	resp = jv_object_delete(resp, jv_string("session_id"));
	resp = jv_object_delete(resp, jv_string("decision_id"));
	if (!jv_is_valid(resp = file_servers(c, live, resp)))
		return -1;
	if (check_response(c, &resp) == -1 || eng_rec(c, set(set(
	    obj("decision.completed"), "id", jv_string(id)), "response",
	    recorded_response(&resp))) == -1 ||
	    eng_head(c, h, sizeof(h)) == -1) {
		jv_free(resp);
		return -1;
	}
	msgs = art_json_field(&resp, "messages");
	snprintf(old, sizeof(old), "%s", h);
	by_ref = jv_object_has(jv_copy(resp), jv_string("messages_after"));
	if (by_ref && jv_get_kind(msgs) == JV_KIND_NULL) {
		jv_free(msgs);
		msgs = jv_array();
	}
	/* Again at the write: the view may predate a node now recorded. */
	if (jv_get_kind(msgs) == JV_KIND_ARRAY)
		msgs = eng_normalized(c, msgs, h);
	if (!jv_is_valid(msgs))
		rc = -1;
	else if (by_ref) {
		/* The news after a node (DESIGN §2.1): O(news), no path read. */
		jv after = art_json_field(&resp, "messages_after");

		rc = art_reconcile_apply_after(c->t, c->sid, &msgs,
		    jv_get_kind(after) == JV_KIND_STRING ?
		    jv_string_value(after) : NULL, *h != '\0' ? h : NULL, &ops,
		    c->err);
		if (rc == -1 && art_err_is(c->err, "not_found"))
			rc = eng_reject(c, "messages_after: %s", c->err->msg);
		jv_free(after);
	} else if (jv_get_kind(msgs) == JV_KIND_ARRAY)
		rc = art_reconcile_apply(c->t, c->sid, &msgs, *h != '\0' ? h :
		    NULL, &ops, c->err);
	jv_free(msgs);
	if (rc != -1)
		rc = eng_void_stranded(c, old, rc);
	if (rc == -1 || version(c, &resp, "state", "worker.state.updated",
	    "state", ART_VERSION_STATE) == -1 || version(c, &resp, "agent",
	    "agent.updated", "config", ART_VERSION_AGENT) == -1 ||
	    eng_head(c, h, sizeof(h)) == -1) {
		jv_free(resp);
		return -1;
	}
	/* A response's own agent is the source of its llm.call defaults. */
	cfg = art_json_field(&resp, "agent");
	if (jv_get_kind(cfg) == JV_KIND_NULL) {
		jv_free(cfg);
		cfg = eng_config_at(c, h);
	}
	actions = art_json_field(&resp, "actions");
	rc = jv_is_valid(cfg) ? 0 : -1;
	if (rc == 0)
		rc = eng_auto_step(c, live, &cfg, h, &actions);
	if (jv_get_kind(actions) == JV_KIND_ARRAY) {
		jv_array_foreach(actions, i, a) {
			if (rc == 0 && jv_get_kind(a) != JV_KIND_OBJECT)
				rc = eng_reject(c, "an action is not an object");
			if (rc == 0 && c->stop_code == NULL)
				rc = act(c, &a, live, &cfg);
			jv_free(a);
		}
	}
	if (rc == 0)
		rc = eng_guard_stopped(c);
	if (rc == 0)
		rc = eng_guard_execute(c, live, &cfg);
	jv_free(actions);
	jv_free(cfg);
	jv_free(resp);
	return rc;
}
