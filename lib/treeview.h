/* treeview.h - a session's message tree as people and other programs see it */
#ifndef ART_TREEVIEW_H
#define ART_TREEVIEW_H

#include <jv.h>

#include "err.h"

/*
 * These work on what lib/tree.h reads, held in memory: nodes is the array
 * art_tree_nodes() gives ({message, parent_id, depth}, in id order), a path
 * the array of messages art_tree_path() gives.  All borrow their inputs.
 */

/* The characters of content a one-line summary keeps. */
#define ART_TREEVIEW_TEXT	60
/* The fewest characters of an id that show prints. */
#define ART_TREEVIEW_ABBREV	8

/*
 * The id of the node named by name: a node's id, else the one id it is a
 * prefix of.  A new string, or jv_invalid() with err code "not_found" ("no
 * node 'X'") or "ambiguous" ("node 'X' is ambiguous: N nodes start so").
 */
jv	art_treeview_find(const jv *nodes, const char *name, struct art_err *);

/*
 * The shortest prefix length, at least ART_TREEVIEW_ABBREV, that tells
 * every node's id from every other's (as git abbreviates commit ids).
 */
int	art_treeview_abbrev(const jv *nodes);

/*
 * message on one line, its first max characters (UTF-8 code points), then
 * "…" if it had more: its content with runs of white space made one space,
 * each tool call as "→ name(arguments)", a tool message's content after
 * "← ".  A new string.
 */
jv	art_treeview_summary(const jv *message, int max);

/*
 * The tree drawn as text, one string per node (no newline), depth first,
 * children in id order:
 *
 *	* user      019b76da-a800-76c8 hello
 *	|-* assistant 019b76da-a800-76c9 hello
 *	| * user      019b76da-a800-7055 second
 *	`-* assistant 019b76da-a800-7137 regenerated (head)
 *
 * A node with one child goes on straight below it; the children of a
 * fork, and several roots, hang off "|-" and "`-" (the last) with a "| "
 * column while later siblings remain.  The id is abbreviated as
 * art_treeview_abbrev() says; head (NULL: none) ends its line "(head)".
 * A new array of strings.
 */
jv	art_treeview_lines(const jv *nodes, const char *head);

/*
 * Graphviz DOT for the tree, named name: one box per node labelled with
 * its role and summary, an edge from each parent to each child, and the
 * nodes and edges of the path root..head (path_ids, an array of ids) bold.
 * A new string ending in a newline.
 */
jv	art_treeview_dot(const jv *nodes, const jv *path_ids, const char *name,
	    const char *head);

/*
 * The leaves, in id order: {id, depth, role, text (the summary), head}.
 * A new array.
 */
jv	art_treeview_branches(const jv *nodes, const char *head);

/*
 * The lines of diff for the paths a and b: {type: "ancestor", id, depth}
 * (id null, depth 0 when they share no root), then {type: "a", message}
 * for each message of a after the ancestor, then {type: "b", message}
 * for b's.  A new array.
 */
jv	art_treeview_diff(const jv *a, const jv *b);

/*
 * path in another shape: "openai" {"messages": [...]} as Chat Completions
 * takes them, "anthropic" {"system"?, "messages"} as the Messages API does
 * (both without our ids), "markdown" a string, a "## role" heading and
 * the content for each message, tool calls as fenced JSON.  jv_invalid()
 * with err code "bad_format" for another format, or "bad_request" for a
 * message the format cannot say.
 */
jv	art_treeview_export(const jv *path, const char *format,
	    struct art_err *);

#endif
