/* tree.h - a session's messages as a tree: nodes, parents, the active path */
#ifndef ART_TREE_H
#define ART_TREE_H

#include <stdint.h>

#include <jv.h>

#include "err.h"
#include "store.h"

/*
 * A node is {message, parent_id, depth, seq?}: parent_id null at a root,
 * depth 1 at a root, seq the log position of the event that added it.  These are view operations: callers record the event that
 * explains the change (message.new, head.moved) in the same transaction.
 */

/*
 * Adds message (consumed; its "id" names the node) under parent_id (NULL:
 * a root).  -1 with err code "exists" for a known id, "not_found" for an
 * unknown parent, "bad_field" for a message without a string id.
 */
int	art_tree_add(struct art_txn *, const char *sid, jv message,
	    const char *parent_id, int64_t seq, struct art_err *);
/* The node (a new jv), or jv_invalid() with err code "not_found". */
jv	art_tree_node(struct art_txn *, const char *sid, const char *id,
	    struct art_err *);
/*
 * The messages from the root down to node id (NULL or "" gives []), as a
 * new array.  O(depth): one lookup per ancestor.  jv_invalid() on error,
 * including a parent chain that does not end ("store" code).
 */
jv	art_tree_path(struct art_txn *, const char *sid, const char *id,
	    struct art_err *);
/* The node ids root..id, as a new array of strings; as art_tree_path(). */
jv	art_tree_path_ids(struct art_txn *, const char *sid, const char *id,
	    struct art_err *);
/* Every node, in id order, as a new array of nodes; jv_invalid() on error. */
jv	art_tree_nodes(struct art_txn *, const char *sid, struct art_err *);

#endif
