/* treeview-test - the tree drawn, its leaves, diffs and exports */
#include <string.h>

#include "json.h"
#include "tap.h"
#include "testjv.h"
#include "treeview.h"

/*
 * A tree with a fork under u1 and a second root:
 *
 *	u1 ─┬─ a1 ─ u2 ─ a2
 *	    └─ b1
 *	r1 ─ r2 (head)
 */
static const char NODES[] = "["
    "{\"message\":{\"id\":\"aaaaaaaa-0001\",\"role\":\"user\","
    "\"content\":\"hello\\n  there\"},\"parent_id\":null,\"depth\":1},"
    "{\"message\":{\"id\":\"aaaaaaaa-0002\",\"role\":\"assistant\","
    "\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
    "\"function\":{\"name\":\"calc\",\"arguments\":\"{\\\"x\\\":1}\"}}]},"
    "\"parent_id\":\"aaaaaaaa-0001\",\"depth\":2},"
    "{\"message\":{\"id\":\"aaaaaaaa-0003\",\"role\":\"tool\","
    "\"tool_call_id\":\"c1\",\"content\":\"391\"},"
    "\"parent_id\":\"aaaaaaaa-0002\",\"depth\":3},"
    "{\"message\":{\"id\":\"aaaaaaaa-0004\",\"role\":\"assistant\","
    "\"content\":\"17*23 = 391\"},\"parent_id\":\"aaaaaaaa-0003\",\"depth\":4},"
    "{\"message\":{\"id\":\"aaaaaaaa-0005\",\"role\":\"assistant\","
    "\"content\":\"other\"},\"parent_id\":\"aaaaaaaa-0001\",\"depth\":2},"
    "{\"message\":{\"id\":\"bbbbbbbb-0001\",\"role\":\"user\","
    "\"content\":\"fresh\"},\"parent_id\":null,\"depth\":1},"
    "{\"message\":{\"id\":\"bbbbbbbb-0002\",\"role\":\"assistant\","
    "\"content\":\"\"},\"parent_id\":\"bbbbbbbb-0001\",\"depth\":2}"
    "]";

static jv
parse(const char *text)
{
	struct art_err err;

	return art_json_parse_str(text, &err);
}

/* The message whose id is id, and its parent's id into *parent. */
static jv
node_of(const jv *nodes, const jv *id, jv *parent)
{
	jv found = jv_null(), m;

	jv_array_foreach(*nodes, i, n) {
		m = jv_object_get(jv_copy(n), jv_string("message"));
		if (jv_get_kind(found) == JV_KIND_NULL &&
		    strcmp(art_json_str(&m, "id"), jv_string_value(*id)) == 0) {
			found = jv_copy(m);
			*parent = art_json_field(&n, "parent_id");
		}
		jv_free(m);
		jv_free(n);
	}
	return found;
}

/* The messages root..id, as art_tree_path() reads them. */
static jv
path_of(const jv *nodes, const char *id)
{
	jv out = jv_array(), want = jv_string(id), parent, m;

	while (jv_get_kind(want) == JV_KIND_STRING) {
		parent = jv_null();
		m = node_of(nodes, &want, &parent);
		out = jv_array_concat(jv_array_append(jv_array(), m), out);
		jv_free(want);
		want = parent;
	}
	jv_free(want);
	return out;
}

static void
test_find_takes_an_id_or_a_unique_prefix(const jv *nodes)
{
	struct art_err err;

	ok(is_json(art_treeview_find(nodes, "aaaaaaaa-0003", &err),
	    "\"aaaaaaaa-0003\""), "an id names its node");
	ok(is_json(art_treeview_find(nodes, "bbbbbbbb-0002", &err),
	    "\"bbbbbbbb-0002\""), "another id");
	ok(is_json(art_treeview_find(nodes, "aaaaaaaa-0005", &err),
	    "\"aaaaaaaa-0005\""), "and a third");
	ok(!jv_is_valid(art_treeview_find(nodes, "aaaa", &err)) &&
	    strcmp(err.code, "ambiguous") == 0 &&
	    strcmp(err.msg, "node 'aaaa' is ambiguous: 5 nodes start so") == 0,
	    "a prefix of several is ambiguous: %s", err.msg);
	ok(!jv_is_valid(art_treeview_find(nodes, "bbbbbbbb-00", &err)) &&
	    strcmp(err.code, "ambiguous") == 0, "a prefix of two is ambiguous");
	ok(!jv_is_valid(art_treeview_find(nodes, "zz", &err)) &&
	    strcmp(err.code, "not_found") == 0 &&
	    strcmp(err.msg, "no node 'zz'") == 0, "an unknown node: %s",
	    err.msg);
	ok(!jv_is_valid(art_treeview_find(nodes, "", &err)) &&
	    strcmp(err.code, "not_found") == 0, "an empty name names none");
}

static void
test_abbrev_is_the_shortest_unique_prefix(const jv *nodes)
{
	jv few = parse("[{\"message\":{\"id\":\"0123456789\"}},"
	    "{\"message\":{\"id\":\"abcdefghij\"}}]");

	ok(art_treeview_abbrev(nodes) == 13, "ids alike up to 12 chars: 13");
	ok(art_treeview_abbrev(&few) == ART_TREEVIEW_ABBREV,
	    "never below %d", ART_TREEVIEW_ABBREV);
	jv_free(few);
}

static void
test_summary_is_one_short_line(void)
{
	jv m = parse("{\"role\":\"user\",\"content\":\"  a\\n\\tb  c \"}");
	jv long_m = parse("{\"role\":\"user\",\"content\":\"ééééééééééé\"}");
	jv parts = parse("{\"role\":\"user\",\"content\":[{\"type\":\"text\","
	    "\"text\":\"one \"},{\"type\":\"image_url\"},{\"type\":\"text\","
	    "\"text\":\"two\"}]}");
	jv tool = parse("{\"role\":\"tool\",\"content\":\"391\"}");
	jv call = parse("{\"role\":\"assistant\",\"content\":\"let me\","
	    "\"tool_calls\":[{\"id\":\"c\",\"function\":{\"name\":\"f\","
	    "\"arguments\":{\"a\":1}}}]}");

	ok(is_json(art_treeview_summary(&m, 60), "\"a b c\""),
	    "white space squeezed and trimmed");
	ok(is_json(art_treeview_summary(&long_m, 4), "\"éééé…\""),
	    "cut at 4 characters, not bytes, with an ellipsis");
	ok(is_json(art_treeview_summary(&m, 5), "\"a b c\""),
	    "exactly max characters is not cut");
	ok(is_json(art_treeview_summary(&parts, 60), "\"one two\""),
	    "the text parts of an array");
	ok(is_json(art_treeview_summary(&tool, 60), "\"← 391\""),
	    "a tool message after ←");
	ok(is_json(art_treeview_summary(&call, 60),
	    "\"let me → f({\\\"a\\\":1})\""), "a call after the text");
	jv_free(m);
	jv_free(long_m);
	jv_free(parts);
	jv_free(tool);
	jv_free(call);
}

static void
test_lines_draw_forks_and_roots(const jv *nodes)
{
	ok(is_json(art_treeview_lines(nodes, "bbbbbbbb-0002"), "["
	    "\"|-* user      aaaaaaaa-0001 hello there\","
	    "\"| |-* assistant aaaaaaaa-0002 → calc({\\\"x\\\":1})\","
	    "\"| | * tool      aaaaaaaa-0003 ← 391\","
	    "\"| | * assistant aaaaaaaa-0004 17*23 = 391\","
	    "\"| `-* assistant aaaaaaaa-0005 other\","
	    "\"`-* user      bbbbbbbb-0001 fresh\","
	    "\"  * assistant bbbbbbbb-0002 (head)\"]"),
	    "two roots and a fork, the head marked");
}

static void
test_one_chain_is_drawn_straight(void)
{
	jv n = parse("[{\"message\":{\"id\":\"x1\",\"role\":\"user\","
	    "\"content\":\"hi\"},\"parent_id\":null,\"depth\":1},"
	    "{\"message\":{\"id\":\"x2\",\"role\":\"assistant\","
	    "\"content\":\"yo\"},\"parent_id\":\"x1\",\"depth\":2}]");
	jv none = jv_array();

	ok(is_json(art_treeview_lines(&n, "x2"), "["
	    "\"* user      x1 hi\",\"* assistant x2 yo (head)\"]"),
	    "no graph for one chain; short ids print whole");
	ok(is_json(art_treeview_lines(&none, NULL), "[]"),
	    "no nodes, no lines");
	jv_free(n);
	jv_free(none);
}

static void
test_dot_makes_the_active_path_bold(void)
{
	jv n = parse("[{\"message\":{\"id\":\"x1\",\"role\":\"user\","
	    "\"content\":\"say \\\"hi\\\"\"},\"parent_id\":null,\"depth\":1},"
	    "{\"message\":{\"id\":\"x2\",\"role\":\"assistant\","
	    "\"content\":\"yo\"},\"parent_id\":\"x1\",\"depth\":2},"
	    "{\"message\":{\"id\":\"x3\",\"role\":\"assistant\","
	    "\"content\":\"no\"},\"parent_id\":\"x1\",\"depth\":2}]");
	jv ids = parse("[\"x1\",\"x3\"]");
	jv dot = art_treeview_dot(&n, &ids, "s\"1", "x3");

	ok(strcmp(jv_string_value(dot),
	    "digraph \"s\\\"1\" {\n"
	    "\tnode [shape=box];\n"
	    "\t\"x1\" [label=\"user: say \\\"hi\\\"\", style=bold];\n"
	    "\t\"x2\" [label=\"assistant: yo\"];\n"
	    "\t\"x3\" [label=\"assistant: no (head)\", style=bold];\n"
	    "\t\"x1\" -> \"x2\";\n"
	    "\t\"x1\" -> \"x3\" [style=bold];\n"
	    "}\n") == 0, "DOT: quotes escaped, the path bold");
	if (tap_failed)
		printf("# %s", jv_string_value(dot));
	jv_free(dot);
	jv_free(ids);
	jv_free(n);
}

static void
test_dot_keeps_characters_of_several_bytes_whole(void)
{
	jv n = parse("[{\"message\":{\"id\":\"x1\",\"role\":\"user\","
	    "\"content\":\"a \\u2192 b, \\u6f22\\u5b57, \\ud83d\\ude00 \\\\ \\\"\"},"
	    "\"parent_id\":null,\"depth\":1}]");
	jv ids = parse("[\"x1\"]");
	jv dot = art_treeview_dot(&n, &ids, "s\xc3\xa9", "x1");

	ok(strcmp(jv_string_value(dot),
	    "digraph \"s\xc3\xa9\" {\n"
	    "\tnode [shape=box];\n"
	    "\t\"x1\" [label=\"user: a \xe2\x86\x92 b, \xe6\xbc\xa2\xe5\xad\x97, "
	    "\xf0\x9f\x98\x80 \\\\ \\\" (head)\", style=bold];\n"
	    "}\n") == 0, "DOT: an arrow, CJK and an emoji kept whole, "
	    "beside escapes");
	if (tap_failed)
		printf("# %s", jv_string_value(dot));
	jv_free(dot);
	jv_free(ids);
	jv_free(n);
}

static void
test_branches_are_the_leaves(const jv *nodes)
{
	ok(is_json(art_treeview_branches(nodes, "bbbbbbbb-0002"), "["
	    "{\"id\":\"aaaaaaaa-0004\",\"depth\":4,\"role\":\"assistant\","
	    "\"text\":\"17*23 = 391\",\"head\":false},"
	    "{\"id\":\"aaaaaaaa-0005\",\"depth\":2,\"role\":\"assistant\","
	    "\"text\":\"other\",\"head\":false},"
	    "{\"id\":\"bbbbbbbb-0002\",\"depth\":2,\"role\":\"assistant\","
	    "\"text\":\"\",\"head\":true}]"), "three leaves, one the head");
}

static void
test_diff_gives_the_ancestor_and_both_tails(const jv *nodes)
{
	jv a = path_of(nodes, "aaaaaaaa-0004"), b = path_of(nodes,
	    "aaaaaaaa-0005"), r = path_of(nodes, "bbbbbbbb-0002");

	ok(jv_array_length(jv_copy(a)) == 4, "the test's path has 4 messages");
	ok(is_json(art_treeview_diff(&a, &b), "["
	    "{\"type\":\"ancestor\",\"id\":\"aaaaaaaa-0001\",\"depth\":1},"
	    "{\"type\":\"a\",\"message\":{\"id\":\"aaaaaaaa-0002\","
	    "\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":"
	    "\"c1\",\"type\":\"function\",\"function\":{\"name\":\"calc\","
	    "\"arguments\":\"{\\\"x\\\":1}\"}}]}},"
	    "{\"type\":\"a\",\"message\":{\"id\":\"aaaaaaaa-0003\","
	    "\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"391\"}},"
	    "{\"type\":\"a\",\"message\":{\"id\":\"aaaaaaaa-0004\","
	    "\"role\":\"assistant\",\"content\":\"17*23 = 391\"}},"
	    "{\"type\":\"b\",\"message\":{\"id\":\"aaaaaaaa-0005\","
	    "\"role\":\"assistant\",\"content\":\"other\"}}]"),
	    "a fork: the ancestor, then a's tail, then b's");
	ok(jv_array_length(art_treeview_diff(&a, &a)) == 1,
	    "a node against itself: the ancestor alone");
	ok(is_json(jv_array_get(art_treeview_diff(&a, &r), 0),
	    "{\"type\":\"ancestor\",\"id\":null,\"depth\":0}"),
	    "two roots share no ancestor");
	ok(is_json(jv_array_get(art_treeview_diff(&b, &a), 0),
	    "{\"type\":\"ancestor\",\"id\":\"aaaaaaaa-0001\",\"depth\":1}"),
	    "the ancestor either way round");
	jv_free(a);
	jv_free(b);
	jv_free(r);
}

static void
test_export_speaks_each_format(const jv *nodes)
{
	jv p = path_of(nodes, "aaaaaaaa-0004"), sys, md;
	struct art_err err;

	ok(is_json(art_treeview_export(&p, "openai", &err), "{\"messages\":["
	    "{\"role\":\"user\",\"content\":\"hello\\n  there\"},"
	    "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":"
	    "\"c1\",\"type\":\"function\",\"function\":{\"name\":\"calc\","
	    "\"arguments\":\"{\\\"x\\\":1}\"}}]},"
	    "{\"role\":\"tool\",\"content\":\"391\",\"tool_call_id\":\"c1\"},"
	    "{\"role\":\"assistant\",\"content\":\"17*23 = 391\"}]}"),
	    "openai: Chat Completions messages, no ids");
	ok(is_json(art_treeview_export(&p, "anthropic", &err), "{\"messages\":["
	    "{\"role\":\"user\",\"content\":\"hello\\n  there\"},"
	    "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\","
	    "\"id\":\"c1\",\"name\":\"calc\",\"input\":{\"x\":1}}]},"
	    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
	    "\"tool_use_id\":\"c1\",\"content\":\"391\"}]},"
	    "{\"role\":\"assistant\",\"content\":\"17*23 = 391\"}]}"),
	    "anthropic: Messages API turns, no system without one");
	sys = jv_array_concat(parse("[{\"id\":\"s\",\"role\":\"system\","
	    "\"content\":\"be brief\"}]"), path_of(nodes, "bbbbbbbb-0001"));
	ok(is_json(art_treeview_export(&sys, "anthropic", &err),
	    "{\"system\":\"be brief\",\"messages\":[{\"role\":\"user\","
	    "\"content\":\"fresh\"}]}"), "anthropic: the system on top");
	md = art_treeview_export(&p, "markdown", &err);
	ok(strcmp(jv_string_value(md),
	    "## user\n\nhello\n  there\n\n"
	    "## assistant\n\n```json\n{\n  \"id\": \"c1\",\n"
	    "  \"type\": \"function\",\n  \"function\": {\n"
	    "    \"name\": \"calc\",\n    \"arguments\": \"{\\\"x\\\":1}\"\n"
	    "  }\n}\n```\n\n"
	    "## tool (c1)\n\n391\n\n"
	    "## assistant\n\n17*23 = 391\n") == 0,
	    "markdown: headings, content, calls fenced");
	if (tap_failed)
		printf("# %s", jv_string_value(md));
	ok(is_json(art_treeview_export(&sys, "markdown", &err),
	    "\"## system\\n\\nbe brief\\n\\n## user\\n\\nfresh\\n\""),
	    "markdown: every role");
	jv_free(sys);
	sys = parse("[{\"id\":\"u\",\"role\":\"user\",\"content\":\"ls\"},"
	    "{\"id\":\"a\",\"role\":\"assistant\",\"content\":"
	    "\"{\\\"summary\\\":\\\"raw\\\"}\",\"structured_answer\":"
	    "{\"summary\":\"Two files.\",\"columns\":[\"name\"],\"rows\":"
	    "[{\"cells\":[\"a|b\"]}],\"note\":\"n\",\"followups\":"
	    "[\"More\"]}}]");
	ok(is_json(art_treeview_export(&sys, "markdown", &err),
	    "\"## user\\n\\nls\\n\\n## assistant\\n\\nTwo files.\\n\\n"
	    "| name |\\n| --- |\\n| a\\\\|b |\\n\\n*n*\\n\\n- More\\n\""),
	    "markdown: a structured answer as its table, not its JSON");
	ok(!jv_is_valid(art_treeview_export(&p, "yaml", &err)) &&
	    strcmp(err.code, "bad_format") == 0, "another format is refused");
	jv_free(md);
	jv_free(sys);
	jv_free(p);
}

int
main(void)
{
	jv nodes = parse(NODES);

	if (!ok(jv_get_kind(nodes) == JV_KIND_ARRAY, "the test tree parses"))
		return tap_done();
	test_find_takes_an_id_or_a_unique_prefix(&nodes);
	test_abbrev_is_the_shortest_unique_prefix(&nodes);
	test_summary_is_one_short_line();
	test_lines_draw_forks_and_roots(&nodes);
	test_one_chain_is_drawn_straight();
	test_dot_makes_the_active_path_bold();
	test_dot_keeps_characters_of_several_bytes_whole();
	test_branches_are_the_leaves(&nodes);
	test_diff_gives_the_ancestor_and_both_tails(&nodes);
	test_export_speaks_each_format(&nodes);
	jv_free(nodes);
	return tap_done();
}
