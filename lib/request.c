/* request.c - the seed's full shape of what the ring carries by reference */
#include "request.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "json.h"
#include "log.h"
#include "propose.h"
#include "session.h"
#include "tree.h"

bool
art_request_by_ref(const jv *line)
{
	jv ref = art_json_field(line, "ref");
	const char *type = art_json_str(line, "type");
	bool yes = jv_get_kind(ref) == JV_KIND_OBJECT;

	/* A model request names its tools by a version, or is whole. */
	if (yes && type != NULL && strcmp(type, "llm.request") == 0)
		yes = art_json_str(&ref, "config") != NULL;
	jv_free(ref);
	return yes;
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
		m = art_propose_last_turns(m, n);
	jv_free(p);
	if (!jv_is_valid(m)) {
		jv_free(out);
		return m;
	}
	return jv_array_concat(out, m);
}

jv
art_request_tools(struct art_txn *t, const char *sid, jv req,
    struct art_err *err)
{
	jv cfg, tools;
	const char *ver = art_json_str(&req, "config");

	if (ver == NULL)
		return req;
	cfg = art_request_config(t, sid, ver, err);
	if (!jv_is_valid(cfg)) {
		jv_free(req);
		return cfg;
	}
	tools = art_propose_llm_tools(&cfg);
	jv_free(cfg);
	if (jv_get_kind(tools) != JV_KIND_NULL)
		req = art_json_set_after(req, "config", "tools", tools);
	else
		jv_free(tools);
	return jv_object_delete(req, jv_string("config"));
}

jv
art_request_llm(struct art_txn *t, const char *sid, jv req,
    struct art_err *err)
{
	jv msgs;

	if (jv_get_kind(req) == JV_KIND_OBJECT &&
	    !jv_is_valid(req = art_request_tools(t, sid, req, err)))
		return req;
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
	    (!jv_object_has(jv_copy(req), jv_string("prompt")) &&
	    !jv_object_has(jv_copy(req), jv_string("config")))) {
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

size_t
art_request_config_key(const char *version,
    unsigned char key[ART_REQUEST_CONFIG_KEY_MAX])
{
	size_t n = strlen(version), i;

	if (n == 0 || n > ART_CONFIG_VERSION_LEN)
		return 0;
	for (i = 0; i < n; i++)
		if (!((version[i] >= '0' && version[i] <= '9') ||
		    (version[i] >= 'a' && version[i] <= 'f')))
			return 0;
	key[0] = ART_REQUEST_CONFIG_KIND;
	memcpy(key + 1, version, n);
	return n + 1;
}

jv
art_request_config(struct art_txn *t, const char *sid, const char *version,
    struct art_err *err)
{
	unsigned char k[ART_REQUEST_CONFIG_KEY_MAX];
	size_t n = art_request_config_key(version, k);
	jv cfg;

	if (n == 0) {
		art_err_set(err, "bad_field", "config version '%s': expected "
		    "1 to %d hex digits", version, ART_CONFIG_VERSION_LEN);
		return jv_invalid();
	}
	cfg = art_store_get(t, ART_DB_VERSIONS, sid, k, n, err);
	if (!jv_is_valid(cfg) && art_err_is(err, "not_found"))
		art_err_set(err, "not_found", "session %s has no config "
		    "version %s", sid, version);
	return cfg;
}

/* An llm.request by reference made whole: the config's tools put back. */
static jv
llm_whole(struct art_txn *t, const jv *line, struct art_err *err)
{
	jv ref = art_json_field(line, "ref"), req, cfg, tools, out;
	const char *sid = art_json_str(line, "session_id");
	const char *ver = art_json_str(&ref, "config");

	req = art_json_field(line, "request");
	if (sid == NULL || ver == NULL || jv_get_kind(req) != JV_KIND_OBJECT) {
		jv_free(ref);
		jv_free(req);
		art_err_set(err, "bad_request", "a by-reference llm.request "
		    "needs session_id, ref.config and a request object");
		return jv_invalid();
	}
	cfg = art_request_config(t, sid, ver, err);
	jv_free(ref);
	if (!jv_is_valid(cfg)) {
		jv_free(req);
		return cfg;
	}
	tools = art_propose_llm_tools(&cfg);
	jv_free(cfg);
	if (jv_get_kind(tools) != JV_KIND_NULL &&
	    !jv_object_has(jv_copy(req), jv_string("tools")))
		req = art_json_set_after(req, "messages", "tools", tools);
	else
		jv_free(tools);
	out = jv_object_set(jv_copy(*line), jv_string("request"), req);
	return jv_object_delete(out, jv_string("ref"));
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
	if (strcmp(art_json_str(line, "type") != NULL ? art_json_str(line,
	    "type") : "", "llm.request") == 0) {
		jv_free(ref);
		return llm_whole(t, line, err);
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

void
art_request_reader_free(struct art_request_reader *r)
{
	if (r->store != NULL)
		art_store_close(r->store);
	r->store = NULL;
	if (r->version[0] != '\0')
		jv_free(r->tools);
	r->version[0] = '\0';
}

struct read_whole {
	const jv	*line;
	jv		 out;
};

static int
read_whole_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct read_whole *w = ctx;

	w->out = art_request_whole(t, w->line, err);
	return jv_is_valid(w->out) ? 0 : -1;
}

/* The tools of the version the llm.request line names, if r has them. */
static bool
kept_tools(struct art_request_reader *r, const jv *line, jv *out)
{
	jv ref = art_json_field(line, "ref"), req;
	const char *ver = art_json_str(&ref, "config");
	bool yes = ver != NULL && r->version[0] != '\0' &&
	    strcmp(ver, r->version) == 0;

	jv_free(ref);
	if (!yes)
		return false;
	req = art_json_field(line, "request");
	if (jv_get_kind(req) != JV_KIND_OBJECT) {
		jv_free(req);
		return false;
	}
	if (jv_get_kind(r->tools) != JV_KIND_NULL &&
	    !jv_object_has(jv_copy(req), jv_string("tools")))
		req = art_json_set_after(req, "messages", "tools",
		    jv_copy(r->tools));
	*out = jv_object_delete(jv_object_set(jv_copy(*line),
	    jv_string("request"), req), jv_string("ref"));
	return true;
}

/* Keeps the tools of the whole llm.request (borrowed) made from line. */
static void
keep_tools(struct art_request_reader *r, const jv *line, const jv *whole)
{
	jv ref = art_json_field(line, "ref"), req;
	const char *ver = art_json_str(&ref, "config");

	if (ver != NULL && strlen(ver) <= ART_CONFIG_VERSION_LEN) {
		if (r->version[0] != '\0')
			jv_free(r->tools);
		req = art_json_field(whole, "request");
		r->tools = art_json_field(&req, "tools");
		jv_free(req);
		snprintf(r->version, sizeof(r->version), "%s", ver);
	}
	jv_free(ref);
}

static bool
line_has_tools(const jv *line)
{
	jv req = art_json_field(line, "request");
	bool yes = jv_get_kind(req) == JV_KIND_OBJECT &&
	    jv_object_has(jv_copy(req), jv_string("tools"));

	jv_free(req);
	return yes;
}

jv
art_request_read(struct art_request_reader *r, const jv *line,
    struct art_err *err)
{
	struct art_store_opts so = { .clock = &art_clock_real };
	struct read_whole w = { line, jv_invalid() };
	jv ref, out;
	const char *dir, *type = art_json_str(line, "type");
	bool llm = type != NULL && strcmp(type, "llm.request") == 0;
	int rc;

	if (!art_request_by_ref(line))
		return jv_copy(*line);
	if (llm && kept_tools(r, line, &out))
		return out;
	ref = art_json_field(line, "ref");
	if ((dir = art_json_str(&ref, "store")) == NULL) {
		jv_free(ref);
		art_err_set(err, "bad_request", "\"ref\" names no store");
		return jv_invalid();
	}
	if (r->store != NULL && strcmp(art_store_dir(r->store), dir) != 0) {
		art_store_close(r->store);
		r->store = NULL;
	}
	so.dir = dir;
	rc = r->store != NULL ? 0 : art_store_open(&r->store, &so, err);
	jv_free(ref);
	if (rc == 0)
		rc = art_store_read(r->store, read_whole_fn, &w, err);
	if (rc == -1) {
		jv_free(w.out);
		art_err_prefix(err, "read it from the store");
		if (!art_err_is(err, "nomem"))
			err->code = "bad_request";
		return jv_invalid();
	}
	/* Only tools read by the version: a line's own are its own. */
	if (llm && !line_has_tools(line))
		keep_tools(r, line, &w.out);
	return w.out;
}
