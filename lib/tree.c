/* tree.c - a session's messages as a tree: nodes, parents, the active path
 *
 * Each node stores its parent and its depth, so the active path is read by
 * walking parent links from the head: the cost follows the path's length,
 * never the size of the tree or of the log.
 */
#include "tree.h"

#include <string.h>

#include "json.h"

static int
id_key(const char *id, struct art_err *err)
{
	if (id == NULL || *id == '\0')
		return art_err_set(err, "bad_field", "message has no id");
	return 0;
}

jv
art_tree_node(struct art_txn *t, const char *sid, const char *id,
    struct art_err *err)
{
	jv n = art_store_get(t, ART_DB_NODES, sid, id, strlen(id), err);

	if (!jv_is_valid(n) && art_err_is(err, "not_found"))
		art_err_set(err, "not_found", "no message '%s'", id);
	return n;
}

int
art_tree_add(struct art_txn *t, const char *sid, jv message,
    const char *parent_id, int64_t seq, struct art_err *err)
{
	const char *id = art_json_str(&message, "id");
	int64_t depth = 1;
	jv node, parent;
	int r;

	if (id_key(id, err) == -1) {
		jv_free(message);
		return -1;
	}
	if (parent_id != NULL) {
		parent = art_tree_node(t, sid, parent_id, err);
		if (!jv_is_valid(parent) || art_json_get_int(&parent, "depth",
		    1, &depth, err) == -1) {
			jv_free(parent);
			jv_free(message);
			return -1;
		}
		jv_free(parent);
		depth++;
	}
	node = jv_object();
	node = jv_object_set(node, jv_string("message"), jv_copy(message));
	node = jv_object_set(node, jv_string("parent_id"), parent_id != NULL ?
	    jv_string(parent_id) : jv_null());
	node = jv_object_set(node, jv_string("depth"), jv_number(depth));
	if (seq > 0)
		node = jv_object_set(node, jv_string("seq"), jv_number(seq));
	r = art_store_add(t, ART_DB_NODES, sid, id, strlen(id), node, err);
	if (r == -1 && art_err_is(err, "exists"))
		art_err_set(err, "exists", "message '%s' exists", id);
	jv_free(message);
	return r;
}

/* Walks up from id, handing each node to fn; stops at a root. */
static jv
walk(struct art_txn *t, const char *sid, const char *id, int want_ids,
    struct art_err *err)
{
	jv out = jv_array(), node, parent, msg;
	int64_t depth, expect = -1;
	const char *pid;
	char cur[512];

	if (id == NULL || *id == '\0')
		return out;
	snprintf(cur, sizeof(cur), "%s", id);
	for (;;) {
		node = art_tree_node(t, sid, cur, err);
		if (!jv_is_valid(node) || art_json_get_int(&node, "depth", 1,
		    &depth, err) == -1)
			goto fail;
		/* Depth falls by one a step, so a cycle cannot loop. */
		if (expect != -1 && depth != expect) {
			art_err_set(err, "store", "message '%s': depth %lld, "
			    "expected %lld", cur, (long long)depth,
			    (long long)expect);
			goto fail;
		}
		expect = depth - 1;
		msg = want_ids ? jv_string(cur) : art_json_field(&node,
		    "message");
		out = jv_array_append(out, msg);
		parent = art_json_field(&node, "parent_id");
		pid = jv_get_kind(parent) == JV_KIND_STRING ?
		    jv_string_value(parent) : NULL;
		if (pid != NULL)
			snprintf(cur, sizeof(cur), "%s", pid);
		jv_free(parent);
		jv_free(node);
		if (pid == NULL)
			break;
	}
	if (expect != 0) {
		art_err_set(err, "store", "message '%s': root at depth %lld",
		    id, (long long)expect + 1);
		jv_free(out);
		return jv_invalid();
	}
	return out;
fail:
	jv_free(node);
	jv_free(out);
	return jv_invalid();
}

static jv
reverse(jv a)
{
	int n = jv_array_length(jv_copy(a)), i;
	jv r = jv_array_sized(n);

	for (i = n - 1; i >= 0; i--)
		r = jv_array_append(r, jv_array_get(jv_copy(a), i));
	jv_free(a);
	return r;
}

jv
art_tree_path(struct art_txn *t, const char *sid, const char *id,
    struct art_err *err)
{
	jv up = walk(t, sid, id, 0, err);

	return jv_is_valid(up) ? reverse(up) : up;
}

jv
art_tree_path_ids(struct art_txn *t, const char *sid, const char *id,
    struct art_err *err)
{
	jv up = walk(t, sid, id, 1, err);

	return jv_is_valid(up) ? reverse(up) : up;
}

static int
nodes_fn(const void *sub, size_t sublen, jv v, void *ctx, struct art_err *err)
{
	jv *all = ctx;

	(void)sub, (void)sublen, (void)err;
	*all = jv_array_append(*all, v);
	return 0;
}

jv
art_tree_nodes(struct art_txn *t, const char *sid, struct art_err *err)
{
	jv all = jv_array();

	if (art_store_scan(t, ART_DB_NODES, sid, NULL, 0, NULL, 0, 0,
	    nodes_fn, &all, err) == -1) {
		jv_free(all);
		return jv_invalid();
	}
	return all;
}
