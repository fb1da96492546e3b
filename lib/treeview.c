/* treeview.c - a session's message tree as people and other programs see it
 *
 * Everything here works on the nodes or a path already read from the
 * store, so agentrt-tree holds a read transaction only while it reads
 * them.  The drawing walks the tree with a stack of its own rather than by
 * recursion: a conversation is mostly one long chain, thousands deep.
 */
#include "treeview.h"

#include <stdbool.h>
#include <string.h>

#include "answer.h"
#include "json.h"
#include "wire.h"

/* {parent id, or "" for the roots: [child ids in id order]}. */
static jv
children(const jv *nodes)
{
	jv kids = jv_object(), m, list;
	const char *p;

	jv_array_foreach(*nodes, i, n) {
		m = art_json_field(&n, "message");
		if ((p = art_json_str(&n, "parent_id")) == NULL)
			p = "";
		list = jv_object_get(jv_copy(kids), jv_string(p));
		if (!jv_is_valid(list)) {
			jv_free(list);
			list = jv_array();
		}
		list = jv_array_append(list, art_json_field(&m, "id"));
		kids = jv_object_set(kids, jv_string(p), list);
		jv_free(m);
		jv_free(n);
	}
	return kids;
}

/* {id: message} */
static jv
by_id(const jv *nodes)
{
	jv all = jv_object(), m;

	jv_array_foreach(*nodes, i, n) {
		m = art_json_field(&n, "message");
		all = jv_object_set(all, art_json_field(&m, "id"), m);
		jv_free(n);
	}
	return all;
}

/* The ids of list (borrowed), or [] when list is not an array. */
static jv
kids_of(const jv *kids, const char *id)
{
	jv list = jv_object_get(jv_copy(*kids), jv_string(id));

	if (jv_get_kind(list) == JV_KIND_ARRAY)
		return list;
	jv_free(list);
	return jv_array();
}

jv
art_treeview_find(const jv *nodes, const char *name, struct art_err *err)
{
	jv found = jv_null(), m;
	size_t len = strlen(name);
	const char *id;
	int n = 0;

	jv_array_foreach(*nodes, i, node) {
		m = art_json_field(&node, "message");
		id = art_json_str(&m, "id");
		if (id != NULL && strcmp(id, name) == 0) {
			jv_free(found);
			found = jv_string(id);
			n = 1;
			jv_free(m);
			jv_free(node);
			break;
		}
		if (id != NULL && len > 0 && strncmp(id, name, len) == 0) {
			if (n++ == 0)
				found = jv_string(id);
		}
		jv_free(m);
		jv_free(node);
	}
	if (n == 1)
		return found;
	jv_free(found);
	if (n == 0)
		art_err_set(err, "not_found", "no node '%s'", name);
	else
		art_err_set(err, "ambiguous", "node '%s' is ambiguous: %d "
		    "nodes start so", name, n);
	return jv_invalid();
}

static size_t
common_prefix(const char *a, const char *b)
{
	size_t i = 0;

	while (a[i] != '\0' && a[i] == b[i])
		i++;
	return i;
}

int
art_treeview_abbrev(const jv *nodes)
{
	jv ids = jv_array(), m, prev, cur;
	size_t best = ART_TREEVIEW_ABBREV, c;
	int i, n;

	jv_array_foreach(*nodes, k, node) {
		m = art_json_field(&node, "message");
		cur = art_json_field(&m, "id");
		if (jv_get_kind(cur) == JV_KIND_STRING)
			ids = jv_array_append(ids, cur);
		else
			jv_free(cur);
		jv_free(m);
		jv_free(node);
	}
	ids = jv_sort(ids, jv_copy(ids));
	n = jv_array_length(jv_copy(ids));
	for (i = 1; i < n; i++) {
		prev = jv_array_get(jv_copy(ids), i - 1);
		cur = jv_array_get(jv_copy(ids), i);
		c = common_prefix(jv_string_value(prev), jv_string_value(cur));
		if (c + 1 > best)
			best = c + 1;
		jv_free(prev);
		jv_free(cur);
	}
	jv_free(ids);
	return (int)best;
}

/* s with each run of white space made one space, trimmed. */
static jv
squeeze(const char *s)
{
	static const char space[] = " \t\n\r";
	jv out = jv_string("");
	size_t n;

	for (;;) {
		s += strspn(s, space);
		if (*s == '\0')
			return out;
		if (jv_string_length_bytes(jv_copy(out)) > 0)
			out = jv_string_append_str(out, " ");
		n = strcspn(s, space);
		out = jv_string_append_buf(out, s, (int)n);
		s += n;
	}
}

/* The text of content: a string, or the "text" of an array's parts. */
static jv
content_text(const jv *msg)
{
	jv c = art_json_field(msg, "content"), out = jv_string(""), t;

	if (jv_get_kind(c) == JV_KIND_STRING) {
		jv_free(out);
		return c;
	}
	if (jv_get_kind(c) == JV_KIND_ARRAY) {
		jv_array_foreach(c, i, part) {
			t = art_json_field(&part, "text");
			if (jv_get_kind(t) == JV_KIND_STRING)
				out = jv_string_concat(out, t);
			else
				jv_free(t);
			jv_free(part);
		}
	}
	jv_free(c);
	return out;
}

/* "name(arguments)", the arguments as their text is. */
static jv
call_text(const jv *tc)
{
	jv fn = art_json_field(tc, "function"), args, out;
	const char *name = art_json_str(&fn, "name");

	if (name == NULL)
		name = art_json_str(tc, "name");
	args = art_json_field(&fn, "arguments");
	if (jv_get_kind(args) == JV_KIND_NULL) {
		jv_free(args);
		args = art_json_field(tc, "arguments");
	}
	if (jv_get_kind(args) != JV_KIND_STRING)
		args = jv_get_kind(args) == JV_KIND_NULL ?
		    (jv_free(args), jv_string("")) : jv_dump_string(args, 0);
	out = jv_string_fmt("%s(%s)", name != NULL ? name : "?",
	    jv_string_value(args));
	jv_free(args);
	jv_free(fn);
	return out;
}

/* s cut to max code points, "…" ending it if it was cut. */
static jv
cut(jv s, int max)
{
	const char *p = jv_string_value(s);
	int n = 0;
	size_t i;

	for (i = 0; p[i] != '\0'; i++) {
		if (((unsigned char)p[i] & 0xC0) == 0x80)
			continue;
		if (n++ == max) {
			jv out = jv_string_sized(p, (int)i);

			jv_free(s);
			return jv_string_append_str(out, "…");
		}
	}
	return s;
}

jv
art_treeview_summary(const jv *message, int max)
{
	const char *role = art_json_str(message, "role");
	jv text = content_text(message), out, tcs;

	out = squeeze(jv_string_value(text));
	jv_free(text);
	if (role != NULL && strcmp(role, "tool") == 0)
		out = jv_string_concat(jv_string("← "), out);
	tcs = art_json_field(message, "tool_calls");
	if (jv_get_kind(tcs) == JV_KIND_ARRAY) {
		jv_array_foreach(tcs, i, tc) {
			if (jv_string_length_bytes(jv_copy(out)) > 0)
				out = jv_string_append_str(out, " ");
			out = jv_string_append_str(out, "→ ");
			out = jv_string_concat(out, call_text(&tc));
			jv_free(tc);
		}
	}
	jv_free(tcs);
	return cut(out, max);
}

static jv
node_line(const jv *msg, const char *graph, int abbrev, const char *head)
{
	const char *id = art_json_str(msg, "id"), *role;
	jv sum = art_treeview_summary(msg, ART_TREEVIEW_TEXT), line;

	role = art_json_str(msg, "role");
	if (head != NULL && id != NULL && strcmp(id, head) == 0)
		sum = jv_string_append_str(sum, jv_string_length_bytes(
		    jv_copy(sum)) > 0 ? " (head)" : "(head)");
	line = jv_string_fmt("%s* %-9s %.*s%s%s", graph,
	    role != NULL ? role : "?", abbrev, id != NULL ? id : "?",
	    jv_string_length_bytes(jv_copy(sum)) > 0 ? " " : "",
	    jv_string_value(sum));
	jv_free(sum);
	return line;
}

/* Pushes ids (consumed) on stack as [id, graph, below], first on top. */
static jv
push(jv stack, jv ids, const char *below)
{
	int i, n = jv_array_length(jv_copy(ids));
	jv id, item;

	for (i = n - 1; i >= 0; i--) {
		id = jv_array_get(jv_copy(ids), i);
		item = jv_array_append(jv_array(), id);
		if (n == 1) {
			item = jv_array_append(item, jv_string(below));
			item = jv_array_append(item, jv_string(below));
		} else {
			item = jv_array_append(item, jv_string_fmt("%s%s",
			    below, i == n - 1 ? "`-" : "|-"));
			item = jv_array_append(item, jv_string_fmt("%s%s",
			    below, i == n - 1 ? "  " : "| "));
		}
		stack = jv_array_append(stack, item);
	}
	jv_free(ids);
	return stack;
}

jv
art_treeview_lines(const jv *nodes, const char *head)
{
	jv kids = children(nodes), msgs = by_id(nodes), out = jv_array();
	jv stack = push(jv_array(), kids_of(&kids, ""), ""), item, msg;
	int abbrev = art_treeview_abbrev(nodes), n;
	jv id, graph, below;

	while ((n = jv_array_length(jv_copy(stack))) > 0) {
		item = jv_array_get(jv_copy(stack), n - 1);
		stack = jv_array_slice(stack, 0, n - 1);
		id = jv_array_get(jv_copy(item), 0);
		graph = jv_array_get(jv_copy(item), 1);
		below = jv_array_get(item, 2);
		msg = jv_object_get(jv_copy(msgs), jv_copy(id));
		out = jv_array_append(out, node_line(&msg,
		    jv_string_value(graph), abbrev, head));
		stack = push(stack, kids_of(&kids, jv_string_value(id)),
		    jv_string_value(below));
		jv_free(msg);
		jv_free(id);
		jv_free(graph);
		jv_free(below);
	}
	jv_free(stack);
	jv_free(kids);
	jv_free(msgs);
	return out;
}

/* s as a DOT quoted string. */
static jv
dot_quote(const char *s)
{
	jv out = jv_string("\"");
	size_t n;

	/*
	 * Whole runs between the quotes and backslashes, which are ASCII:
	 * appended a byte at a time, a character of several bytes would
	 * become as many U+FFFD, jv checking each piece as UTF-8.
	 */
	for (;;) {
		n = strcspn(s, "\"\\");
		out = jv_string_append_buf(out, s, (int)n);
		if (s[n] == '\0')
			break;
		out = jv_string_append_str(out, "\\");
		out = jv_string_append_buf(out, s + n, 1);
		s += n + 1;
	}
	return jv_string_append_str(out, "\"");
}

static bool
on_path(const jv *set, const char *id)
{
	jv v = jv_object_get(jv_copy(*set), jv_string(id));
	bool on = jv_is_valid(v);

	jv_free(v);
	return on;
}

static jv
dot_node(jv out, const jv *msg, bool bold, const char *head)
{
	const char *id = art_json_str(msg, "id"), *role;
	jv sum = art_treeview_summary(msg, ART_TREEVIEW_TEXT), label, q, qi;
	bool is_head = head != NULL && strcmp(id, head) == 0;

	role = art_json_str(msg, "role");
	label = jv_string_fmt("%s: %s%s", role != NULL ? role : "?",
	    jv_string_value(sum), is_head ? " (head)" : "");
	q = dot_quote(jv_string_value(label));
	qi = dot_quote(id);
	out = jv_string_append_str(out, "\t");
	out = jv_string_concat(out, qi);
	out = jv_string_append_str(out, " [label=");
	out = jv_string_concat(out, q);
	out = jv_string_append_str(out, bold ? ", style=bold];\n" : "];\n");
	jv_free(label);
	jv_free(sum);
	return out;
}

jv
art_treeview_dot(const jv *nodes, const jv *path_ids, const char *name,
    const char *head)
{
	jv out = jv_string("digraph "), set = jv_object(), m;
	const char *id, *parent;

	jv_array_foreach(*path_ids, i, pid) {
		set = jv_object_set(set, pid, jv_true());
	}
	out = jv_string_concat(out, dot_quote(name));
	out = jv_string_append_str(out, " {\n\tnode [shape=box];\n");
	jv_array_foreach(*nodes, i, n) {
		m = art_json_field(&n, "message");
		if ((id = art_json_str(&m, "id")) != NULL)
			out = dot_node(out, &m, on_path(&set, id), head);
		jv_free(m);
		jv_free(n);
	}
	jv_array_foreach(*nodes, i, n) {
		m = art_json_field(&n, "message");
		id = art_json_str(&m, "id");
		parent = art_json_str(&n, "parent_id");
		if (id != NULL && parent != NULL) {
			out = jv_string_append_str(out, "\t");
			out = jv_string_concat(out, dot_quote(parent));
			out = jv_string_append_str(out, " -> ");
			out = jv_string_concat(out, dot_quote(id));
			out = jv_string_append_str(out, on_path(&set, id) ?
			    " [style=bold];\n" : ";\n");
		}
		jv_free(m);
		jv_free(n);
	}
	jv_free(set);
	return jv_string_append_str(out, "}\n");
}

jv
art_treeview_branches(const jv *nodes, const char *head)
{
	jv kids = children(nodes), out = jv_array(), m, row, k;
	const char *id, *role;

	jv_array_foreach(*nodes, i, n) {
		m = art_json_field(&n, "message");
		id = art_json_str(&m, "id");
		k = id != NULL ? jv_object_get(jv_copy(kids), jv_string(id)) :
		    jv_null();
		if (id != NULL && !jv_is_valid(k)) {
			role = art_json_str(&m, "role");
			row = jv_object_set(jv_object(), jv_string("id"),
			    jv_string(id));
			row = jv_object_set(row, jv_string("depth"),
			    art_json_field(&n, "depth"));
			row = jv_object_set(row, jv_string("role"),
			    role != NULL ? jv_string(role) : jv_null());
			row = jv_object_set(row, jv_string("text"),
			    art_treeview_summary(&m, ART_TREEVIEW_TEXT));
			row = jv_object_set(row, jv_string("head"), jv_bool(
			    head != NULL && strcmp(id, head) == 0));
			out = jv_array_append(out, row);
		}
		jv_free(k);
		jv_free(m);
		jv_free(n);
	}
	jv_free(kids);
	return out;
}

/* The messages of path from index from on, each as {type, message}. */
static jv
tail(jv out, const jv *path, int from, const char *type)
{
	int i, n = jv_array_length(jv_copy(*path));

	for (i = from; i < n; i++)
		out = jv_array_append(out, jv_object_set(jv_object_set(
		    jv_object(), jv_string("type"), jv_string(type)),
		    jv_string("message"), jv_array_get(jv_copy(*path), i)));
	return out;
}

jv
art_treeview_diff(const jv *a, const jv *b)
{
	int na = jv_array_length(jv_copy(*a));
	int nb = jv_array_length(jv_copy(*b)), common = 0;
	jv ma, mb, anc = jv_null(), out;
	const char *ia, *ib;
	bool same;

	while (common < na && common < nb) {
		ma = jv_array_get(jv_copy(*a), common);
		mb = jv_array_get(jv_copy(*b), common);
		ia = art_json_str(&ma, "id");
		ib = art_json_str(&mb, "id");
		same = ia != NULL && ib != NULL && strcmp(ia, ib) == 0;
		if (same) {
			jv_free(anc);
			anc = art_json_field(&ma, "id");
		}
		jv_free(ma);
		jv_free(mb);
		if (!same)
			break;
		common++;
	}
	out = jv_object_set(jv_object(), jv_string("type"),
	    jv_string("ancestor"));
	out = jv_object_set(out, jv_string("id"), anc);
	out = jv_object_set(out, jv_string("depth"), jv_number(common));
	out = tail(jv_array_append(jv_array(), out), a, common, "a");
	return tail(out, b, common, "b");
}

static jv
fenced(jv text, jv v)
{
	jv d = jv_dump_string(v, JV_PRINT_INDENT_FLAGS(2));

	text = jv_string_append_str(text, "```json\n");
	text = jv_string_concat(text, d);
	return jv_string_append_str(text, "\n```\n\n");
}

static jv
markdown_message(jv out, const jv *m)
{
	const char *role = art_json_str(m, "role");
	const char *call = art_json_str(m, "tool_call_id");
	jv c = art_json_field(m, "content"), tcs,
	    answer = art_json_field(m, "structured_answer");

	out = jv_string_concat(out, jv_string_fmt("## %s", role != NULL ?
	    role : "?"));
	if (call != NULL)
		out = jv_string_concat(out, jv_string_fmt(" (%s)", call));
	out = jv_string_append_str(out, "\n\n");
	/* A structured answer's content is its raw JSON: draw the answer. */
	if (jv_get_kind(answer) == JV_KIND_OBJECT) {
		out = jv_string_concat(out, art_answer_markdown(&answer));
		out = jv_string_append_str(out, "\n");
		jv_free(c);
	} else if (jv_get_kind(c) == JV_KIND_STRING && jv_string_length_bytes(
	    jv_copy(c)) > 0) {
		out = jv_string_concat(out, c);
		out = jv_string_append_str(out, "\n\n");
	} else if (jv_get_kind(c) == JV_KIND_ARRAY ||
	    jv_get_kind(c) == JV_KIND_OBJECT)
		out = fenced(out, c);
	else
		jv_free(c);
	tcs = art_json_field(m, "tool_calls");
	if (jv_get_kind(tcs) == JV_KIND_ARRAY) {
		jv_array_foreach(tcs, i, tc) {
			out = fenced(out, tc);
		}
	}
	jv_free(tcs);
	jv_free(answer);
	return out;
}

static jv
markdown(const jv *path)
{
	jv out = jv_string("");
	int n;

	jv_array_foreach(*path, i, m) {
		out = markdown_message(out, &m);
		jv_free(m);
	}
	/* One newline at the end, not the blank line between messages. */
	n = jv_string_length_bytes(jv_copy(out));
	if (n > 0) {
		jv s = jv_string_sized(jv_string_value(out), n - 1);

		jv_free(out);
		out = s;
	}
	return out;
}

/* A provider's request body for path, kept to keys. */
static jv
wire_shape(const struct art_wire *w, const jv *path, const char *const *keys,
    struct art_err *err)
{
	jv req = jv_object_set(jv_object(), jv_string("model"),
	    jv_string("x")), body, out = jv_object(), v;

	req = jv_object_set(req, jv_string("messages"), jv_copy(*path));
	body = w->request(&req, "export", false, err);
	jv_free(req);
	if (!jv_is_valid(body))
		return body;
	for (; *keys != NULL; keys++) {
		v = jv_object_get(jv_copy(body), jv_string(*keys));
		if (jv_is_valid(v))
			out = jv_object_set(out, jv_string(*keys), v);
		else
			jv_free(v);
	}
	jv_free(body);
	return out;
}

jv
art_treeview_export(const jv *path, const char *format, struct art_err *err)
{
	static const char *const openai[] = { "messages", NULL };
	static const char *const anthropic[] = { "system", "messages", NULL };

	if (strcmp(format, "openai") == 0)
		return wire_shape(&art_openai_wire, path, openai, err);
	if (strcmp(format, "anthropic") == 0)
		return wire_shape(&art_anthropic_wire, path, anthropic, err);
	if (strcmp(format, "markdown") == 0)
		return markdown(path);
	art_err_set(err, "bad_format", "unknown format '%s'", format);
	return jv_invalid();
}
