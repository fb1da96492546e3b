/* engine-queue.c - the decision queue, the live decision, its request
 *
 * A session has at most one live decision; the others wait in the queue
 * (ART_DB_PENDING), in order.  The live one goes out as a decision.request
 * by reference (DESIGN §2.1), and a model call's llm.request as text made
 * from the last call's, so building either costs the news, not the path.
 */
#include "engine-int.h"

#include <stdio.h>
#include <string.h>

#include "json.h"
#include "propose.h"
#include "reconcile.h"
#include "request.h"
#include "tree.h"

/* --- the queue ------------------------------------------------------ */

/* A call as the seed's Call type shows it. */
static jv
wire_call(const jv *call)
{
	static const char *const keys[] = { "id", "kind", "status", "attempt",
	    "deadline", "anchor", "name", "arguments", "handler", "stream",
	    "agent_id", "session_id", NULL };
	const char *const *k;
	jv w = jv_object();

	const char *st = art_json_str(call, "status");

	for (k = keys; *k != NULL; k++)
		w = set_some(w, *k, art_json_field(call, *k));
	/*
	 * A call held for a person (approval, ask_user) has not been
	 * dispatched: the seed's "queued", with agentrt's "held" member
	 * naming the interrupt it waits on.
	 */
	if (st != NULL && strcmp(st, "held") == 0) {
		w = set(w, "status", jv_string("queued"));
		w = set(w, "held", jv_true());
		w = set_some(w, "interrupt_id", art_json_field(call,
		    "interrupt_id"));
	}
	return w;
}

static int
passes_park(const jv *q)
{
	jv tr = art_json_field(q, "trigger");
	const char *t = art_json_str(&tr, "type");
	jv esc = art_json_field(q, "escapes");
	/* Tools already started keep running (PROTOCOL-NOTES §7). */
	int ok = t != NULL && (strcmp(t, "interrupt.resumed") == 0 ||
	    strcmp(t, "client.action") == 0 ||
	    strcmp(t, "tool.execute") == 0);

	/* A view that leaves the parked branch (see escapes_park). */
	ok = ok || jv_get_kind(esc) == JV_KIND_TRUE;
	jv_free(esc);
	jv_free(tr);
	return ok;
}

static int
queue_fn(const void *sub, size_t sublen, jv v, void *ctx, struct art_err *err)
{
	struct queue_scan *q = ctx;

	(void)sub, (void)sublen, (void)err;
	if (jv_get_kind(q->first) == JV_KIND_NULL &&
	    (!q->parked || passes_park(&v)))
		q->first = jv_copy(v);
	if (jv_is_valid(q->all))
		q->all = jv_array_append(q->all, v);
	else
		jv_free(v);
	return 0;
}

int
eng_scan_queue(struct cx *c, struct queue_scan *q)
{
	return art_store_scan(c->t, ART_DB_PENDING, c->sid, NULL, 0, NULL, 0,
	    0, queue_fn, q, c->err);
}

/* Every queued decision, in order: a new array, or jv_invalid(). */
jv
eng_queued(struct cx *c)
{
	struct queue_scan q = { jv_null(), jv_array(), 0 };
	int r = eng_scan_queue(c, &q);

	jv_free(q.first);
	if (r == -1) {
		jv_free(q.all);
		return jv_invalid();
	}
	return q.all;
}

static int
is_finished_trigger(const jv *trigger)
{
	const char *t = art_json_str(trigger, "type");

	return t != NULL && (strcmp(t, "tool.finished") == 0 ||
	    strcmp(t, "sub_agent.finished") == 0);
}

/*
 * Open tool and sub-agent calls, plus results not yet folded in (queued
 * tool.finished decisions other than the one being built).
 */
static int64_t
pending_calls(struct cx *c, const jv *s, const char *except)
{
	jv open = art_json_field(s, "open"), all;
	int64_t n = 0;

	if (jv_get_kind(open) == JV_KIND_OBJECT) {
		jv_object_foreach(open, k, kind) {
			if (strcmp(jv_string_value(kind), "llm_call") != 0)
				n++;
			jv_free(k);
			jv_free(kind);
		}
	}
	jv_free(open);
	if (jv_is_valid(all = eng_queued(c))) {
		jv_array_foreach(all, i, e) {
			jv tr = art_json_field(&e, "trigger");
			const char *id = art_json_str(&e, "id");

			if (is_finished_trigger(&tr) && (except == NULL ||
			    id == NULL || strcmp(id, except) != 0))
				n++;
			jv_free(tr);
			jv_free(e);
		}
	}
	jv_free(all);
	return n;
}

int
eng_queue_decision(struct cx *c, jv trigger, int priority, jv extra)
{
	char id[ART_ID_BUFSZ];
	jv p;

	if (eng_mint(c, id) == -1) {
		jv_free(trigger);
		jv_free(extra);
		return -1;
	}
	p = set(obj("decision.queued"), "id", jv_string(id));
	p = set(p, "trigger", trigger);
	p = set(p, "priority", jv_number(priority));
	/* What the proposal needs beside the trigger: agent_file, interrupt. */
	if (jv_get_kind(extra) == JV_KIND_OBJECT) {
		jv_object_foreach(extra, k, v)
			p = jv_object_set(p, k, v);
	}
	jv_free(extra);
	return eng_rec(c, p);
}

/* client.message becomes client.messages, composed against the head. */
static jv
compose(struct cx *c, const char *h, jv trigger)
{
	const char *type = art_json_str(&trigger, "type");
	jv path, msg, n, out;
	char id[ART_ID_BUFSZ];
	int known = 0, news;

	if (type == NULL || (strcmp(type, "client.message") != 0 &&
	    strcmp(type, "client.messages") != 0))
		return trigger;
	out = set(obj("client.messages"), "client", jv_get_kind(n =
	    art_json_field(&trigger, "client")) == JV_KIND_OBJECT ? n :
	    (jv_free(n), jv_object()));
	if (strcmp(type, "client.messages") == 0) {
		msg = art_json_field(&trigger, "messages");
		news = art_reconcile_news_from(c->t, c->sid, &msg, c->err);
		out = set(out, "messages", msg);
		jv_free(trigger);
		return set(out, "new_from", jv_number(news < 0 ? 0 : news));
	}
	path = art_tree_path(c->t, c->sid, *h != '\0' ? h : NULL, c->err);
	if (!jv_is_valid(path))
		path = jv_array();
	msg = art_json_field(&trigger, "message");
	if (art_json_str(&msg, "id") == NULL && eng_mint(c, id) == 0)
		msg = set(msg, "id", jv_string(id));
	n = art_tree_node(c->t, c->sid, art_json_str(&msg, "id"), NULL);
	known = jv_is_valid(n);
	jv_free(n);
	out = set(out, "new_from", jv_number(jv_array_length(jv_copy(path))));
	out = set(out, "messages", known ? path : jv_array_append(path, msg));
	if (known)
		jv_free(msg);
	jv_free(trigger);
	return out;
}

/* --- the live decision ---------------------------------------------- */

/*
 * The session's owner as the seed's WorkerIdentity.  The request must
 * carry one, but each of its members is optional: a session made with
 * no --identity has {}, never null.
 */
static jv
identity_of(const jv *summary)
{
	jv id = art_json_field(summary, "identity");

	if (jv_get_kind(id) == JV_KIND_OBJECT)
		return id;
	jv_free(id);
	return jv_object();
}

/*
 * What the proposal's callbacks read the session through.  art_propose()
 * cannot fail, so a store failure a callback meets is kept here, and the
 * request built on it is not sent.
 */
struct propose_cx {
	struct cx	*c;
	int		 failed;
};

/*
 * A stored request (consumed) for a proposal to call again: tools named
 * by the version of the config the proposal is made from are left to it
 * (a call that names none gets the config's), those of another version
 * read back.  jv_invalid() with c->err when they cannot be.
 */
static jv
same_tools(struct cx *c, jv req)
{
	char h[ART_ID_MAX + 1];
	const char *ver = art_json_str(&req, "config"), *now;
	jv cfg;
	int same;

	if (ver == NULL)
		return req;
	if (c->e == NULL)
		return art_request_tools(c->t, c->sid, req, c->err);
	if (eng_head(c, h, sizeof(h)) == -1 ||
	    !jv_is_valid(cfg = eng_config_at(c, h))) {
		jv_free(req);
		return jv_invalid();	/* c->err says why */
	}
	same = jv_get_kind(cfg) == JV_KIND_OBJECT &&
	    (now = eng_config_version(c, &cfg, NULL)) != NULL &&
	    strcmp(now, ver) == 0;
	jv_free(cfg);
	return same ? jv_object_delete(req, jv_string("config")) :
	    art_request_tools(c->t, c->sid, req, c->err);
}

static jv
llm_call_cb(void *ctx, const char *id)
{
	struct propose_cx *pc = ctx;
	struct cx *c = pc->c;
	jv call = eng_get(c, ART_DB_CALLS, c->sid, id), req;

	if (jv_get_kind(call) != JV_KIND_OBJECT) {
		pc->failed = pc->failed || !jv_is_valid(call);
		jv_free(call);
		return jv_null();
	}
	if (!jv_is_valid(req = eng_call_request(c, &call)) ||
	    !jv_is_valid(req = same_tools(c, req))) {
		pc->failed = 1;
		jv_free(call);
		return jv_null();
	}
	return set(call, "request", req);
}

/* Does message m ask for tool call id? */
static int
asks_for(const jv *m, const char *id)
{
	jv calls = art_json_field(m, "tool_calls");
	const char *role = art_json_str(m, "role"), *cid;
	int yes = 0;

	if (role != NULL && strcmp(role, "assistant") == 0 &&
	    jv_get_kind(calls) == JV_KIND_ARRAY) {
		jv_array_foreach(calls, k, tc) {
			cid = art_json_str(&tc, "id");
			yes = yes || (cid != NULL && strcmp(cid, id) == 0);
			jv_free(tc);
			(void)k;
		}
	}
	jv_free(calls);
	return yes;
}

/*
 * The message of node at (ART_ID_MAX + 1 bytes), at moved to its parent
 * ("" past a root); jv_invalid() when at names no node.  The walks up
 * from the head below are made of it: each goes as far as it needs.
 */
jv
eng_step_up(struct cx *c, char *at)
{
	jv n = art_tree_node(c->t, c->sid, at, NULL), m;
	const char *p;

	if (!jv_is_valid(n))
		return n;
	m = art_json_field(&n, "message");
	p = art_json_str(&n, "parent_id");
	snprintf(at, ART_ID_MAX + 1, "%s", p != NULL ? p : "");
	jv_free(n);
	return m;
}

/* a (consumed) back to front. */
static jv
reversed(jv a)
{
	jv out = jv_array();
	int i;

	for (i = jv_array_length(jv_copy(a)) - 1; i >= 0; i--)
		out = jv_array_append(out, jv_array_get(jv_copy(a), i));
	jv_free(a);
	return out;
}

/*
 * The messages from the last assistant message on the active path that
 * asked for call id down to the head: a walk up from the head, as far as
 * that message (the tool results since it, in a tool loop).
 */
static jv
since_call_cb(void *ctx, const char *id)
{
	struct cx *c = ((struct propose_cx *)ctx)->c;
	char at[ART_ID_MAX + 1];
	jv rev = jv_array(), m;
	int found = 0;

	if (eng_head(c, at, sizeof(at)) == -1)
		*at = '\0';
	while (!found && *at != '\0' && jv_is_valid(m = eng_step_up(c, at))) {
		found = asks_for(&m, id);
		rev = jv_array_append(rev, m);
	}
	if (!found) {
		jv_free(rev);
		return jv_null();
	}
	return reversed(rev);
}

static jv
prompt_cb(void *ctx, const jv *req)
{
	struct cx *c = ((struct propose_cx *)ctx)->c;

	return art_request_prompt(c->t, c->sid, req, c->err);
}

/* The seq of sid's last event, 0 for none. */
static int64_t
last_seq(struct cx *c)
{
	unsigned char k[8];
	size_t n = sizeof(k);

	if (art_store_last(c->t, ART_DB_EVENTS, c->sid, NULL, 0, k, &n,
	    NULL) != 1 || n != 8)
		return 0;
	return (int64_t)art_be64_get(k);
}

/* Do the view's first from messages have the ids of the path to h? */
static int
continues(struct cx *c, const jv *trigger, const char *h)
{
	jv view = art_json_field(trigger, "messages"), ids;
	int64_t from = -1;
	int yes;

	art_json_get_int(trigger, "new_from", -1, &from, NULL);
	ids = art_tree_path_ids(c->t, c->sid, *h != '\0' ? h : NULL, NULL);
	yes = jv_is_valid(ids) && jv_get_kind(view) == JV_KIND_ARRAY &&
	    from == jv_array_length(jv_copy(ids)) &&
	    from <= jv_array_length(jv_copy(view));
	for (int i = 0; yes && i < from; i++) {
		jv m = jv_array_get(jv_copy(view), i);
		jv id = jv_array_get(jv_copy(ids), i);
		const char *mid = art_json_str(&m, "id");

		yes = mid != NULL && strcmp(mid, jv_string_value(id)) == 0;
		jv_free(m);
		jv_free(id);
	}
	jv_free(ids);
	jv_free(view);
	return yes;
}

/*
 * A proposal (consumed) made from config (borrowed) as the ring carries
 * it: its llm.calls leave out the config's tools, and *ver is set to the
 * config's version, which the line's ref names.
 */
static jv
by_version(struct cx *c, jv proposed, const jv *config, const char **ver)
{
	jv tools;

	*ver = NULL;
	if (c->e == NULL)	/* agentrt-session request: made whole next */
		return proposed;
	if ((*ver = eng_config_version(c, config, &tools)) == NULL) {
		jv_free(tools);		/* no version: whole */
		return proposed;
	}
	proposed = art_propose_by_version(proposed, &tools);
	jv_free(tools);
	return proposed;
}

/*
 * The decision.request line for the live decision, by reference (DESIGN
 * §2.1): the trigger, the proposal (news only), the calls, and where it
 * stands in the store ("ref": the head and the log position), but not
 * the conversation, the tree, the state or the config, which
 * agentrt-decide reads back from the store for whoever needs them
 * (art_request_whole).
 */
static jv
build_request(struct cx *c, const jv *live)
{
	char h[ART_ID_MAX + 1];
	jv s = eng_summary(c), r, config, calls, trigger, file, wcalls, intr;
	jv ref;
	const char *ver = NULL;
	struct propose_cx pc = { c, 0 };
	struct art_propose_in in;
	const char *id = art_json_str(live, "id"), *tt;

	if (!jv_is_valid(s) || eng_head(c, h, sizeof(h)) == -1) {
		jv_free(s);
		return jv_invalid();
	}
	config = eng_config_at(c, h);
	trigger = art_json_field(live, "trigger");
	file = art_json_field(live, "agent_file");
	intr = art_json_field(live, "interrupt");
	calls = eng_open_calls(c, &s);
	wcalls = jv_array();
	jv_array_foreach(calls, i, call) {
		wcalls = jv_array_append(wcalls, wire_call(&call));
		jv_free(call);
	}
	jv_free(calls);
	tt = art_json_str(&trigger, "type");
	in = (struct art_propose_in){ &trigger, &config, &file, &intr,
	    *h != '\0' ? h : NULL, id, pending_calls(c, &s, id),
	    tt != NULL && strcmp(tt, "client.messages") == 0 &&
	    continues(c, &trigger, h), llm_call_cb, since_call_cb, prompt_cb,
	    &pc };
	r = set(obj("decision.request"), "session_id", jv_string(c->sid));
	r = set(r, "decision_id", art_json_field(live, "id"));
	r = set(r, "agent_id", art_json_field(&s, "agent_id"));
	r = set(r, "identity", identity_of(&s));
	r = set(r, "trigger", jv_copy(trigger));
	r = set(r, "proposed", jv_get_kind(config) == JV_KIND_OBJECT ?
	    by_version(c, art_propose(&in), &config, &ver) :
	    jv_is_valid(config) ? art_propose(&in) : jv_object());
	r = set(r, "calls", wcalls);
	r = set(r, "pending_calls", jv_number((double)in.pending_calls));
	r = set(r, "ancestry", art_json_field(&s, "ancestry"));
	r = set(r, "attempts", art_json_field(live, "attempts"));
	r = set(r, "deadline", art_json_field(live, "deadline"));
	/*
	 * A client.action names the client's turn, if it gave one; a
	 * session's start belongs to no turn, though the first message is
	 * in the commit that makes the session.
	 */
	r = set(r, "turn_id", art_json_str(live, "client_turn_id") != NULL ?
	    art_json_field(live, "client_turn_id") : tt != NULL &&
	    strcmp(tt, "session.start") == 0 ? jv_null() :
	    art_json_field(&s, "turn"));
	/* agentrt-llm runs a worker's model call with the agent's settings. */
	if (tt != NULL && strcmp(tt, "llm.execute") == 0)
		r = set(r, "agent", jv_copy(config));
	ref = set(jv_object(), "store", jv_string(art_store_dir(
	    art_txn_store(c->t))));
	ref = set(ref, "head", eng_head_jv(h));
	ref = set(ref, "seq", jv_number((double)last_seq(c)));
	if (ver != NULL)
		ref = set(ref, "config", jv_string(ver));
	r = set(r, "ref", ref);
	jv_free(config);
	jv_free(trigger);
	jv_free(file);
	jv_free(intr);
	jv_free(s);
	if (pc.failed) {
		jv_free(r);
		return jv_invalid();	/* c->err says why */
	}
	return r;
}

/* Records the dispatch of a decision (live, consumed) and sends it. */
static int
send_decision(struct cx *c, jv live)
{
	struct art_retry pol;
	jv req;

	art_retry_default(&pol, ART_KIND_DECISION);
	live = set(live, "deadline", eng_iso(art_retry_deadline_ms(&pol,
	    c->now)));
	if (eng_rec(c, set(jv_copy(live), "type",
	    jv_string("decision.dispatched"))) == -1) {
		jv_free(live);
		return -1;
	}
	eng_wake(c, &live, "deadline");
	req = build_request(c, &live);
	jv_free(live);
	if (!jv_is_valid(req))
		return -1;
	eng_emit(c, req);
	return 0;
}

/* Sends the live decision again, one attempt more. */
int
eng_redeliver(struct cx *c, const jv *live)
{
	int64_t attempts = 1;
	jv again = jv_copy(*live);

	art_json_get_int(live, "attempts", 0, &attempts, NULL);
	again = jv_object_delete(again, jv_string("dispatched_at"));
	again = set(again, "attempts", jv_number((double)attempts + 1));
	return send_decision(c, again);
}

/* The open interrupt that parks the head (a new jv), or jv_null(). */
jv
eng_parking(struct cx *c, const jv *s)
{
	jv all = art_json_field(s, "interrupts"), ids, found = jv_null();
	const char *h = art_json_str(s, "head"), *anchor;

	if (jv_get_kind(all) != JV_KIND_OBJECT ||
	    jv_object_length(jv_copy(all)) == 0) {
		jv_free(all);
		return found;
	}
	ids = art_tree_path_ids(c->t, c->sid, h, c->err);
	if (!jv_is_valid(ids))
		ids = jv_array();
	jv_object_foreach(all, k, it) {
		anchor = art_json_str(&it, "anchor");
		if (jv_get_kind(found) == JV_KIND_NULL && (anchor == NULL ||
		    eng_in_ids(&ids, anchor))) {
			jv_free(found);
			found = jv_copy(it);
		}
		jv_free(k);
		jv_free(it);
	}
	jv_free(ids);
	jv_free(all);
	return found;
}

/* Is the active path parked on an open interrupt? */
int
eng_is_parked(struct cx *c, const jv *s)
{
	jv it = eng_parking(c, s);
	int parked = jv_get_kind(it) != JV_KIND_NULL;

	jv_free(it);
	return parked;
}

/* The queue's next decision goes live, if none is. */
int
eng_dispatch_decision(struct cx *c, const jv *s)
{
	struct queue_scan q = { jv_null(), jv_invalid(), 0 };
	char h[ART_ID_MAX + 1];
	jv live = art_json_field(s, "live"), d, file;
	int r;

	if (jv_get_kind(live) != JV_KIND_NULL) {
		jv_free(live);
		return 0;
	}
	jv_free(live);
	q.parked = eng_is_parked(c, s);
	if (eng_scan_queue(c, &q) == -1)
		return -1;
	if (jv_get_kind(q.first) == JV_KIND_NULL)
		return 0;
	if (eng_head(c, h, sizeof(h)) == -1) {
		jv_free(q.first);
		return -1;
	}
	/* An agent file's MCP servers list their tools first (engine-mcp.c). */
	file = art_json_field(&q.first, "agent_file");
	if ((r = eng_mcp_ready(c, s, &q.first, &file)) != 1) {
		jv_free(file);
		jv_free(q.first);
		return r;
	}
	d = set(jv_object(), "id", art_json_field(&q.first, "id"));
	d = set(d, "attempts", jv_number(1));
	d = set(d, "trigger", compose(c, h, art_json_field(&q.first,
	    "trigger")));
	d = set_some(d, "turn_id", art_json_field(&q.first, "turn_id"));
	d = set_some(d, "client_turn_id", art_json_field(&q.first,
	    "client_turn_id"));
	d = set_some(d, "agent_file", file);
	d = set_some(d, "interrupt", art_json_field(&q.first, "interrupt"));
	jv_free(q.first);
	return send_decision(c, d);
}

/* --- a model request as text ---------------------------------------- */

/* text (consumed) and the JSON text of msgs (consumed), comma-joined. */
static jv
joined(jv text, jv msgs)
{
	jv_array_foreach(msgs, k, m) {
		if (jv_is_valid(text) && jv_string_length_bytes(jv_copy(text)) > 0)
			text = jv_string_append_buf(text, ",", 1);
		if (jv_is_valid(text))
			text = art_json_append_dump(text, &m);
		jv_free(m);
		(void)k;
	}
	jv_free(msgs);
	return text;
}

/*
 * The messages root..h as JSON text joined by commas ("" for none): the
 * text kept for the session's last model call and the messages below it
 * (a walk up of as many nodes), or, off that path, the whole path read.
 */
static jv
path_text(struct cx *c, const char *h)
{
	jv kept = jv_null(), n, m, news = jv_array(), text, entry;
	char at[ART_ID_MAX + 1];
	int64_t depth = 0, kd = -1, i;
	const char *kh = NULL;
	int found = 0;

	if (h == NULL)
		return jv_string("");
	n = art_tree_node(c->t, c->sid, h, c->err);
	if (!jv_is_valid(n) || art_json_get_int(&n, "depth", 1, &depth,
	    c->err) == -1) {
		jv_free(news);
		return n;
	}
	jv_free(n);
	if (c->e != NULL) {
		kept = jv_object_get(jv_copy(c->e->prompt_stage),
		    jv_string(c->sid));
		if (!jv_is_valid(kept)) {
			jv_free(kept);
			kept = jv_object_get(jv_copy(c->e->prompts),
			    jv_string(c->sid));
		}
		if (!jv_is_valid(kept)) {
			jv_free(kept);
			kept = jv_null();
		}
		kh = art_json_str(&kept, "head");
		art_json_get_int(&kept, "depth", -1, &kd, NULL);
	}
	/* Up from h to the depth of the kept head: is it there? */
	snprintf(at, sizeof(at), "%s", h);
	for (i = depth; kh != NULL && kd >= 0 && i > kd && *at != '\0' &&
	    jv_is_valid(m = eng_step_up(c, at)); i--)
		news = jv_array_append(news, m);
	found = kh != NULL && i == kd && strcmp(at, kh) == 0;
	if (found)
		text = joined(art_json_field(&kept, "text"), reversed(news));
	else {
		jv_free(news);
		news = art_tree_path(c->t, c->sid, h, c->err);
		if (!jv_is_valid(news)) {
			jv_free(kept);
			return news;
		}
		text = joined(jv_string(""), news);
	}
	jv_free(kept);
	if (!jv_is_valid(text)) {
		art_err_set(c->err, "nomem", "out of memory");
		return text;
	}
	if (c->e != NULL) {
		entry = set(set(set(jv_object(), "head", jv_string(h)), "depth",
		    jv_number((double)depth)), "text", jv_copy(text));
		c->e->prompt_stage = jv_object_set(c->e->prompt_stage,
		    jv_string(c->sid), entry);
	}
	return text;
}

/* ",", then the members of a non-empty object o and its closing brace. */
static jv
append_members(jv text, const jv *o)
{
	jv t = art_json_append_dump(jv_string(""), o);

	if (!jv_is_valid(t)) {
		jv_free(text);
		return t;
	}
	text = jv_string_append_str(text, ",");
	text = jv_string_append_buf(text, jv_string_value(t) + 1,
	    jv_string_length_bytes(jv_copy(t)) - 1);
	jv_free(t);
	return text;
}

/* Object text (consumed) without its closing brace. */
static jv
open_object(jv text)
{
	jv out;

	if (!jv_is_valid(text))
		return text;
	out = jv_string_sized(jv_string_value(text),
	    jv_string_length_bytes(jv_copy(text)) - 1);
	jv_free(text);
	return out;
}

/*
 * The llm.request line for a call whose prompt is the engine's default,
 * as text: the one O(path) piece of a step (DESIGN §2.1) is then a copy
 * of the path's text, kept from the last call, and the news.  The bytes
 * are those art_json_dump() makes of the line with the request made
 * whole (art_request_llm).  jv_null() when the request holds its own
 * messages; jv_invalid() on failure.
 */
jv
eng_llm_line_text(struct cx *c, jv head, const jv *req, jv tail)
{
	jv pr = art_json_field(req, "prompt"), text, msgs, rest, t, sys;
	const char *s = art_json_str(&pr, "system");
	jv model = art_json_field(req, "model");

	/* A prompt cut to its last turns is read whole (request.c). */
	if (jv_get_kind(pr) != JV_KIND_OBJECT || jv_get_kind(model) ==
	    JV_KIND_INVALID || jv_object_has(jv_copy(pr),
	    jv_string("prior_turns"))) {
		jv_free(pr);
		jv_free(model);
		jv_free(head);
		jv_free(tail);
		return jv_null();
	}
	msgs = path_text(c, art_json_str(&pr, "path"));
	if (!jv_is_valid(msgs)) {
		jv_free(pr);
		jv_free(model);
		jv_free(head);
		jv_free(tail);
		return msgs;
	}
	t = jv_string("[");
	if (s != NULL) {
		sys = set(set(jv_object(), "role", jv_string("system")),
		    "content", jv_string(s));
		t = art_json_append_dump(t, &sys);
		jv_free(sys);
		if (jv_is_valid(t) && jv_string_length_bytes(jv_copy(msgs)) > 0)
			t = jv_string_append_buf(t, ",", 1);
	}
	if (jv_is_valid(t))
		t = jv_string_concat(t, msgs);
	else
		jv_free(msgs);
	if (jv_is_valid(t))
		t = jv_string_append_buf(t, "]", 1);
	/* {"type":…,"attempt":N,"request":{"model":M,"messages":[…],…},…} */
	text = open_object(art_json_append_dump(jv_string(""), &head));
	text = jv_string_append_str(text, ",\"request\":{\"model\":");
	text = art_json_append_dump(text, &model);
	text = jv_string_append_str(text, ",\"messages\":");
	if (jv_is_valid(t) && jv_is_valid(text))
		text = jv_string_concat(text, t);
	else {
		jv_free(t);
		jv_free(text);
		text = jv_invalid();
	}
	rest = jv_object_delete(jv_object_delete(jv_copy(*req),
	    jv_string("prompt")), jv_string("model"));
	if (jv_is_valid(text) && jv_object_length(jv_copy(rest)) > 0)
		text = append_members(text, &rest);
	else if (jv_is_valid(text))
		text = jv_string_append_str(text, "}");
	if (jv_is_valid(text))
		text = append_members(text, &tail);
	jv_free(rest);
	jv_free(pr);
	jv_free(model);
	jv_free(head);
	jv_free(tail);
	if (!jv_is_valid(text))
		art_err_set(c->err, "nomem", "out of memory");
	return text;
}

/* --- reading a decision back ---------------------------------------- */

struct request_q {
	const char	*sid;
	jv		 out;
};

static int
request_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct request_q *q = ctx;
	struct cx c = { NULL, t, err, q->sid, 0, jv_array(), jv_array(), -1,
	    jv_invalid(), jv_array(), NULL, NULL, "" };
	jv s = eng_summary(&c), live, line;
	int r = 0;

	if (!jv_is_valid(s)) {
		r = -1;
		goto out;
	}
	live = art_json_field(&s, "live");
	if (jv_get_kind(live) != JV_KIND_OBJECT) {
		jv_free(live);
		q->out = jv_null();
		goto out;
	}
	line = build_request(&c, &live);
	jv_free(live);
	q->out = jv_is_valid(line) ? art_request_whole(t, &line, err) : line;
	jv_free(line);
	r = jv_is_valid(q->out) ? 0 : -1;
out:
	jv_free(s);
	jv_free(c.sum);
	jv_free(c.out);
	jv_free(c.events);
	jv_free(c.adopt);
	return r;
}

jv
art_engine_request(struct art_store *st, const char *sid, struct art_err *err)
{
	struct request_q q = { sid, jv_invalid() };

	if (art_store_read(st, request_fn, &q, err) == -1) {
		jv_free(q.out);
		return jv_invalid();
	}
	return q.out;
}
