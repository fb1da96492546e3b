/* request.c - the seed's full shape of what the ring carries by reference */
#include "request.h"

#include <string.h>

#include "json.h"
#include "log.h"
#include "propose.h"
#include "session.h"
#include "tree.h"

bool
art_request_by_ref(const jv *line)
{
	jv ref = art_json_field(line, "ref");
	bool yes = jv_get_kind(ref) == JV_KIND_OBJECT;

	jv_free(ref);
	return yes;
}


/*
 * prior_turns: path (consumed) from the start of the n-th turn before the
 * current one, a turn being a user message and what follows it.
 */
static jv
last_turns(jv path, int64_t n)
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
art_request_prompt(struct art_txn *t, const char *sid, const jv *req,
    struct art_err *err)
{
	jv p = art_json_field(req, "prompt"), m, out = jv_array();
	const char *sys = art_json_str(&p, "system"), *at;
	int64_t n = -1;

	if (jv_get_kind(p) != JV_KIND_OBJECT) {
		jv_free(p);
		jv_free(out);
		m = art_json_field(req, "messages");
		return jv_get_kind(m) == JV_KIND_ARRAY ? m : (jv_free(m),
		    jv_array());
	}
	if (sys != NULL)
		out = jv_array_append(out,
		    art_json_set(art_json_set(jv_object(), "role",
		    jv_string("system")), "content", jv_string(sys)));
	at = art_json_str(&p, "path");
	m = art_tree_path(t, sid, at, err);
	if (jv_is_valid(m) && art_json_get_int(&p, "prior_turns", 0, &n,
	    NULL) == 0 && n >= 0)
		m = last_turns(m, n);
	jv_free(p);
	if (!jv_is_valid(m)) {
		jv_free(out);
		return m;
	}
	return jv_array_concat(out, m);
}

jv
art_request_llm(struct art_txn *t, const char *sid, jv req,
    struct art_err *err)
{
	jv msgs;

	if (jv_get_kind(req) != JV_KIND_OBJECT ||
	    !jv_object_has(jv_copy(req), jv_string("prompt")))
		return req;
	msgs = art_request_prompt(t, sid, &req, err);
	if (!jv_is_valid(msgs)) {
		jv_free(req);
		return msgs;
	}
	/* The messages go where the engine put them: after the model. */
	return art_json_set_after(jv_object_delete(req, jv_string("prompt")),
	    "model", "messages", msgs);
}

jv
art_request_event(struct art_txn *t, jv event, struct art_err *err)
{
	jv p = art_json_field(&event, "payload"), req;
	const char *type = art_json_str(&p, "type");
	const char *sid = art_json_str(&event, "session_id");

	if (type == NULL || sid == NULL ||
	    strcmp(type, "llm.call.requested") != 0) {
		jv_free(p);
		return event;
	}
	req = art_json_field(&p, "request");
	if (jv_get_kind(req) != JV_KIND_OBJECT ||
	    !jv_object_has(jv_copy(req), jv_string("prompt"))) {
		jv_free(req);
		jv_free(p);
		return event;
	}
	req = art_request_llm(t, sid, req, err);
	if (!jv_is_valid(req)) {
		jv_free(p);
		jv_free(event);
		return req;
	}
	p = art_json_set(p, "request", req);
	return art_json_set(event, "payload", p);
}

jv
art_request_log_read(struct art_txn *t, const char *sid, uint64_t after,
    size_t max, struct art_err *err)
{
	jv evs = art_log_read(t, sid, after, max, err), out, e;

	if (!jv_is_valid(evs))
		return evs;
	out = jv_array();
	jv_array_foreach(evs, i, ev) {
		e = art_request_event(t, ev, err);
		if (!jv_is_valid(e)) {
			jv_free(out);
			jv_free(evs);
			return e;
		}
		out = jv_array_append(out, e);
		(void)i;
	}
	jv_free(evs);
	return out;
}

/* The tree as the seed's MessageTree, nodes recorded up to seq only. */
static jv
tree_at(struct art_txn *t, const char *sid, const jv *head, int64_t seq,
    struct art_err *err)
{
	jv nodes = art_tree_nodes(t, sid, err), out = jv_array(), p;
	int64_t at;

	if (!jv_is_valid(nodes)) {
		jv_free(out);
		return nodes;
	}
	jv_array_foreach(nodes, i, n) {
		at = 0;
		art_json_get_int(&n, "seq", 0, &at, NULL);
		if (seq < 0 || at <= seq) {
			jv m = art_json_set(jv_object(), "message",
			    art_json_field(&n, "message"));

			p = art_json_field(&n, "parent_id");
			if (jv_get_kind(p) != JV_KIND_NULL)
				m = art_json_set(m, "parent_id", p);
			else
				jv_free(p);
			out = jv_array_append(out, m);
		}
		jv_free(n);
		(void)i;
	}
	jv_free(nodes);
	/* MessageTree.head_id is optional: an empty tree has none. */
	return art_json_set_some(art_json_set(jv_object(), "nodes", out),
	    "head_id", jv_copy(*head));
}

jv
art_request_whole(struct art_txn *t, const jv *line, struct art_err *err)
{
	static const char *const before[] = { "type", "session_id",
	    "decision_id", "agent_id", "identity", "trigger", NULL };
	static const char *const after[] = { "ancestry", "attempts",
	    "deadline", "turn_id", NULL };
	const char *const *k;
	jv ref = art_json_field(line, "ref"), head, path, cfg, state, tree;
	jv prop, base, r, v;
	const char *sid = art_json_str(line, "session_id"), *h, *ma;
	int64_t seq = -1;

	if (jv_get_kind(ref) != JV_KIND_OBJECT || sid == NULL) {
		jv_free(ref);
		return jv_copy(*line);
	}
	art_json_get_int(&ref, "seq", -1, &seq, NULL);
	head = art_json_field(&ref, "head");
	h = jv_get_kind(head) == JV_KIND_STRING ? jv_string_value(head) : NULL;
	path = art_tree_path(t, sid, h, err);
	cfg = jv_is_valid(path) ? art_session_resolve_at(t, sid,
	    ART_VERSION_AGENT, h, seq, err) : jv_invalid();
	state = jv_is_valid(cfg) ? art_session_resolve_at(t, sid,
	    ART_VERSION_STATE, h, seq, err) : jv_invalid();
	tree = jv_is_valid(state) ? tree_at(t, sid, &head, seq, err) :
	    jv_invalid();
	if (!jv_is_valid(tree)) {
		jv_free(ref);
		jv_free(head);
		jv_free(path);
		jv_free(cfg);
		jv_free(state);
		return tree;
	}
	/* The proposal continues the head (or, rarely, a node above it). */
	prop = art_json_field(line, "proposed");
	ma = art_json_str(&prop, "messages_after");
	base = ma == NULL || (h != NULL && strcmp(ma, h) == 0) ?
	    jv_copy(path) : art_tree_path(t, sid, ma, err);
	if (!jv_is_valid(base)) {
		jv_free(prop);
		jv_free(ref);
		jv_free(head);
		jv_free(path);
		jv_free(cfg);
		jv_free(state);
		jv_free(tree);
		return base;
	}
	if (jv_get_kind(prop) == JV_KIND_OBJECT && ma == NULL &&
	    jv_object_has(jv_copy(prop), jv_string("messages_after"))) {
		jv_free(base);		/* messages_after null: from the root */
		base = jv_array();
	}
	prop = art_propose_expand(prop, &base, &cfg);
	jv_free(base);
	r = jv_object();
	for (k = before; *k != NULL; k++)
		r = art_json_set(r, *k, art_json_field(line, *k));
	/* A WorkerIdentity is an object, {} for none (never null). */
	if (jv_get_kind(v = art_json_field(&r, "identity")) != JV_KIND_OBJECT)
		r = art_json_set(r, "identity", jv_object());
	jv_free(v);
	r = art_json_set(r, "proposed", prop);
	r = art_json_set(r, "state", state);
	r = art_json_set(r, "agent", cfg);
	r = art_json_set(r, "calls", art_json_field(line, "calls"));
	r = art_json_set(r, "pending_calls", art_json_field(line,
	    "pending_calls"));
	r = art_json_set(r, "messages", path);
	r = art_json_set(r, "message_tree", tree);
	for (k = after; *k != NULL; k++)
		r = art_json_set(r, *k, art_json_field(line, *k));
	jv_free(ref);
	jv_free(head);
	return r;
}
