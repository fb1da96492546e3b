/* reconcile.c - a view of the conversation written into the message tree */
#include "reconcile.h"

#include <string.h>

#include "ids.h"
#include "json.h"
#include "session.h"
#include "tree.h"

static int
is_known(struct art_txn *t, const char *sid, const jv *m, int *known,
    struct art_err *err)
{
	const char *id = art_json_str(m, "id");
	jv n;

	*known = 0;
	if (id == NULL)
		return 0;
	n = art_tree_node(t, sid, id, err);
	if (jv_is_valid(n))
		*known = 1;
	else if (!art_err_is(err, "not_found")) {
		jv_free(n);
		return -1;
	}
	jv_free(n);
	return 0;
}

int
art_reconcile_news_from(struct art_txn *t, const char *sid, const jv *view,
    struct art_err *err)
{
	int i, n = jv_array_length(jv_copy(*view)), known;
	jv m;

	for (i = 0; i < n; i++) {
		m = jv_array_get(jv_copy(*view), i);
		if (is_known(t, sid, &m, &known, err) == -1) {
			jv_free(m);
			return -1;
		}
		jv_free(m);
		if (!known)
			break;
	}
	return i;
}

/* The tool_call_id of a tool message that is not a known node, or NULL. */
static const char *
stray_tool(struct art_txn *t, const char *sid, const jv *m, int *fail,
    struct art_err *err)
{
	const char *role = art_json_str(m, "role");
	int known;

	if (role == NULL || strcmp(role, "tool") != 0)
		return NULL;
	if (is_known(t, sid, m, &known, err) == -1) {
		*fail = 1;
		return NULL;
	}
	return known ? NULL : art_json_str(m, "tool_call_id");
}

/*
 * The id of the node answering call tcid, as the header says; or NULL.
 * The ids of the tool messages for tcid are gathered into *ids (the
 * caller frees it: the id returned is borrowed from it).
 */
static const char *adopt_indexed(const jv *, const jv *);

static const char *
adopt(const jv *nodes, const jv *path, const char *tcid, jv *ids)
{
	const char *id, *cid, *role;

	jv_free(*ids);
	*ids = jv_array();
	jv_array_foreach(*nodes, i, n) {
		jv m = art_json_field(&n, "message");

		role = art_json_str(&m, "role");
		cid = art_json_str(&m, "tool_call_id");
		id = art_json_str(&m, "id");
		if (role != NULL && strcmp(role, "tool") == 0 && cid != NULL &&
		    id != NULL && strcmp(cid, tcid) == 0)
			*ids = jv_array_append(*ids, jv_string(id));
		jv_free(m);
		jv_free(n);
		(void)i;
	}
	return adopt_indexed(ids, path);
}

/*
 * Of the nodes answering a call (ids, in id order), the last on the path,
 * else the last: the latest recorded, as the engine's ids are UUIDv7.
 */
static const char *
adopt_indexed(const jv *ids, const jv *path)
{
	const char *found = NULL, *id;
	int on = 0, here;

	jv_array_foreach(*ids, i, n) {
		id = jv_string_value(n);
		here = 0;
		if (jv_get_kind(*path) == JV_KIND_ARRAY) {
			jv_array_foreach(*path, k, p) {
				if (strcmp(jv_string_value(p), id) == 0)
					here = 1;
				jv_free(p);
			}
		}
		if (here || !on) {
			found = id;
			on = here;
		}
		jv_free(n);	/* ids keeps its strings */
		(void)i;
	}
	return found;
}

/*
 * The node that adopts a stray tool message for call tcid, from the
 * session's index: NULL for none; *used 0 when the session has no index.
 */
static const char *
adopt_from_index(struct art_txn *t, const char *sid, const char *tcid,
    const char *head, jv *ids, jv *path, int *used, int *fail,
    struct art_err *err)
{
	int r;

	jv_free(*ids);
	r = art_session_tool_nodes(t, sid, tcid, ids, err);
	*used = r == 1;
	if (r == -1)
		*fail = 1;
	if (r != 1 || jv_array_length(jv_copy(*ids)) == 0)
		return NULL;
	/* Only a choice among several needs the path. */
	if (jv_array_length(jv_copy(*ids)) > 1 &&
	    jv_get_kind(*path) == JV_KIND_NULL) {
		*path = art_tree_path_ids(t, sid, head, err);
		if (!jv_is_valid(*path)) {
			*fail = 1;
			return NULL;
		}
	}
	return adopt_indexed(ids, path);
}

jv
art_reconcile_normalize(struct art_txn *t, const char *sid, const jv *view,
    const char *head, struct art_err *err)
{
	jv out = jv_copy(*view), nodes = jv_null(), path = jv_null(), m;
	jv ids = jv_null(), ipath = jv_null();
	int n = jv_array_length(jv_copy(*view)), i, fail = 0, used;
	const char *tcid, *id;

	for (i = 0; i < n && !fail; i++) {
		m = jv_array_get(jv_copy(out), i);
		tcid = stray_tool(t, sid, &m, &fail, err);
		if (tcid != NULL && !fail) {
			id = adopt_from_index(t, sid, tcid, head, &ids, &ipath,
			    &used, &fail, err);
			if (id != NULL)
				out = jv_array_set(out, i, jv_object_set(
				    jv_copy(m), jv_string("id"),
				    jv_string(id)));
			if (used || fail) {
				jv_free(m);
				continue;
			}
		}
		/* The tree is read only when some message needs it. */
		if (tcid != NULL && jv_get_kind(nodes) == JV_KIND_NULL) {
			nodes = art_tree_nodes(t, sid, err);
			path = jv_is_valid(nodes) ? art_tree_path_ids(t, sid,
			    head, err) : jv_invalid();
			fail = !jv_is_valid(path);
		}
		if (tcid != NULL && !fail &&
		    (id = adopt(&nodes, &path, tcid, &ids)) != NULL)
			out = jv_array_set(out, i, jv_object_set(jv_copy(m),
			    jv_string("id"), jv_string(id)));
		jv_free(m);
	}
	jv_free(nodes);
	jv_free(path);
	jv_free(ids);
	jv_free(ipath);
	if (fail) {
		jv_free(out);
		return jv_invalid();
	}
	return out;
}

/*
 * m's content (borrowed), when it is parts: each one of the seed's
 * ContentPart types, which every reader knows.
 */
static int
check_parts(const jv *m, int i, struct art_err *err)
{
	static const char *const types[] = { "text", "image_url", "file",
	    "input_audio", "video_url", NULL };
	jv content = art_json_field(m, "content");
	const char *type;
	int r = 0, k;

	if (jv_get_kind(content) != JV_KIND_ARRAY) {
		jv_free(content);
		return 0;
	}
	jv_array_foreach(content, j, part) {
		type = art_json_str(&part, "type");
		for (k = 0; type != NULL && types[k] != NULL; k++)
			if (strcmp(type, types[k]) == 0)
				break;
		if (r == 0 && (type == NULL || types[k] == NULL))
			r = art_err_set(err, "bad_response", "messages[%d]."
			    "content[%d]: %s%.60s%s: a part is text, image_url, "
			    "file, input_audio or video_url", i, j,
			    type != NULL ? "unknown part type '" : "a part with "
			    "no type", type != NULL ? type : "", type != NULL ?
			    "'" : "");
		jv_free(part);
	}
	jv_free(content);
	return r;
}

static int
check_one(const jv *m, int i, struct art_err *err)
{
	static const char *const roles[] = { "system", "user", "assistant",
	    "tool" };
	const char *role = art_json_str(m, "role"), *id;
	jv idv;
	size_t k;

	if (jv_get_kind(*m) != JV_KIND_OBJECT)
		return art_err_set(err, "bad_response", "messages[%d]: "
		    "expected an object", i);
	for (k = 0; role != NULL && k < 4; k++)
		if (strcmp(role, roles[k]) == 0)
			break;
	if (role == NULL || k == 4)
		return art_err_set(err, "bad_response", "messages[%d]: role "
		    "must be system, user, assistant or tool", i);
	idv = art_json_field(m, "id");
	id = jv_get_kind(idv) == JV_KIND_STRING ? jv_string_value(idv) : NULL;
	if (jv_get_kind(idv) != JV_KIND_NULL && (id == NULL ||
	    !art_id_is_valid(id))) {
		jv_free(idv);
		return art_err_set(err, "bad_response", "messages[%d]: id must "
		    "be 1-128 letters, digits, '.', '_', ':' or '-'", i);
	}
	jv_free(idv);
	return check_parts(m, i, err);
}

int
art_reconcile_check(const jv *view, struct art_err *err)
{
	int r = 0;

	if (jv_get_kind(*view) != JV_KIND_ARRAY)
		return art_err_set(err, "bad_response", "messages: expected "
		    "an array");
	jv_array_foreach(*view, i, m) {
		if (r == 0)
			r = check_one(&m, i, err);
		jv_free(m);
	}
	return r;
}

/* Writes m under parent as node id; the head moves to it. */
static int
write_node(jv m, const char *id, const char *parent,
    const struct art_reconcile_ops *ops)
{
	jv p = jv_object();

	m = jv_object_set(m, jv_string("id"), jv_string(id));
	p = jv_object_set(p, jv_string("type"), jv_string("message.new"));
	p = jv_object_set(p, jv_string("message"), m);
	p = jv_object_set(p, jv_string("parent_id"), parent != NULL ?
	    jv_string(parent) : jv_null());
	return ops->record(ops->ctx, p);
}

/*
 * Writes view after the known prefix that ends at start ("" for none),
 * which counts as part of the view when prefix is set.
 */
static int
apply(struct art_txn *t, const char *sid, const jv *view, const char *start,
    int prefix, const char *head, const struct art_reconcile_ops *ops,
    struct art_err *err)
{
	char parent[ART_ID_MAX + 1] = "", fresh[ART_ID_BUFSZ];
	char node[ART_ID_MAX + 1];
	int news = 0, written = 0, known, n, r = 0;
	const char *id;

	snprintf(parent, sizeof(parent), "%s", start);
	n = jv_array_length(jv_copy(*view)) + (prefix ? 1 : 0);
	jv_array_foreach(*view, i, m) {
		if (r == 0 && is_known(t, sid, &m, &known, err) == -1)
			r = -1;
		if (r == -1) {
			jv_free(m);
			continue;
		}
		id = art_json_str(&m, "id");
		if (known && !news) {
			snprintf(parent, sizeof(parent), "%s", id);
			jv_free(m);
			continue;
		}
		news = 1;
		if (id == NULL || known) {
			if (ops->mint(ops->ctx, fresh) == -1) {
				jv_free(m);
				r = -1;
				continue;
			}
			id = fresh;
		}
		snprintf(node, sizeof(node), "%s", id);	/* m is consumed next */
		r = write_node(m, node, *parent != '\0' ? parent : NULL, ops);
		snprintf(parent, sizeof(parent), "%s", node);
		written++;
	}
	if (r == -1)
		return -1;
	/* Nothing written: a view ending elsewhere moves the head there. */
	if (written == 0 && n > 0 && (head == NULL || strcmp(head,
	    parent) != 0)) {
		jv p = jv_object_set(jv_object(), jv_string("type"),
		    jv_string("head.moved"));

		p = jv_object_set(p, jv_string("head_id"), *parent != '\0' ?
		    jv_string(parent) : jv_null());
		if (ops->record(ops->ctx, p) == -1)
			return -1;
	}
	return written;
}

int
art_reconcile_apply(struct art_txn *t, const char *sid, const jv *view,
    const char *head, const struct art_reconcile_ops *ops,
    struct art_err *err)
{
	return apply(t, sid, view, "", 0, head, ops, err);
}

int
art_reconcile_apply_after(struct art_txn *t, const char *sid, const jv *news,
    const char *after, const char *head, const struct art_reconcile_ops *ops,
    struct art_err *err)
{
	jv n;

	if (after != NULL) {
		n = art_tree_node(t, sid, after, err);
		if (!jv_is_valid(n)) {
			jv_free(n);
			return -1;
		}
		jv_free(n);
	}
	return apply(t, sid, news, after != NULL ? after : "", after != NULL,
	    head, ops, err);
}
