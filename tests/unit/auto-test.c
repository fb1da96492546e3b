/* auto-test - autonomous mode's plan, steps and verdicts */
#include "auto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sha.h"
#include "tap.h"

static const struct art_auto defaults = { 12, 3, 40, 0 };

static jv
J(const char *text)
{
	struct art_err e;
	jv v = art_json_parse_str(text, &e);

	if (!jv_is_valid(v)) {
		printf("# bad test JSON: %s\n", text);
		exit(1);
	}
	return v;
}

/* The plan's todo titles joined by "|", statuses by "," into buf. */
static const char *
titles(const jv *plan, char *buf, size_t n)
{
	jv todos = art_json_field(plan, "todos");

	buf[0] = '\0';
	jv_array_foreach(todos, i, t) {
		snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i > 0 ?
		    "|" : "", art_json_str(&t, "title"));
		jv_free(t);
	}
	jv_free(todos);
	return buf;
}

static const char *
statuses(const jv *plan, char *buf, size_t n)
{
	jv todos = art_json_field(plan, "todos");

	buf[0] = '\0';
	jv_array_foreach(todos, i, t) {
		snprintf(buf + strlen(buf), n - strlen(buf), "%s%s=%s", i > 0 ?
		    "," : "", art_json_str(&t, "id"), art_json_str(&t, "status"));
		jv_free(t);
	}
	jv_free(todos);
	return buf;
}

static int
str_is(const jv *o, const char *key, const char *want)
{
	const char *s = art_json_str(o, key);

	if (s == NULL || strcmp(s, want) != 0) {
		printf("#   %s: got '%s', want '%s'\n", key, s ? s : "(none)",
		    want);
		return 0;
	}
	return 1;
}

static void
test_a_plan_from_a_normal_reply(void)
{
	char b[512];
	int64_t dropped = -1;
	jv plan = art_auto_plan_new("ship it", "{\"todos\":[{\"title\":"
	    "\"Build\",\"id\":\"x\"},{\"title\":\"Test\",\"acceptance\":"
	    "\"green\"},{\"title\":\"Release\"}]}", &defaults, &dropped);
	jv d, active, want;

	ok(strcmp(titles(&plan, b, sizeof(b)), "Build|Test|Release") == 0,
	    "the reply's todos, in order (%s)", b);
	ok(strcmp(statuses(&plan, b, sizeof(b)), "todo-1=active,"
	    "todo-2=pending,todo-3=pending") == 0,
	    "ids re-minted, the first active (%s)", b);
	ok(str_is(&plan, "status", "running") && str_is(&plan, "active",
	    "todo-1") && str_is(&plan, "goal", "ship it"),
	    "running, todo-1 active, the goal kept");
	ok(dropped == 0, "nothing dropped");
	active = art_auto_active(&plan);
	ok(str_is(&active, "title", "Build"), "art_auto_active: the todo");
	jv_free(active);
	d = art_auto_decomposition(&plan);
	want = J("{\"goal\":\"ship it\",\"todos\":["
	    "{\"id\":\"todo-1\",\"title\":\"Build\",\"ordering\":0},"
	    "{\"id\":\"todo-2\",\"title\":\"Test\",\"ordering\":1},"
	    "{\"id\":\"todo-3\",\"title\":\"Release\",\"ordering\":2}]}");
	ok(art_json_equal(&d, &want), "the decomposition event's body");
	jv_free(want);
	jv_free(d);
	jv_free(plan);
}

static void
test_ordering_is_a_stable_sort(void)
{
	char b[512];
	jv plan = art_auto_plan_new("g", "{\"todos\":["
	    "{\"title\":\"none1\"},"
	    "{\"title\":\"two-a\",\"ordering\":2},"
	    "{\"title\":\"zero\",\"ordering\":0},"
	    "{\"title\":\"none2\",\"ordering\":\"x\"},"
	    "{\"title\":\"two-b\",\"ordering\":2},"
	    "{\"title\":\"one\",\"ordering\":1}]}", &defaults, NULL);

	ok(strcmp(titles(&plan, b, sizeof(b)),
	    "zero|one|two-a|two-b|none1|none2") == 0,
	    "by ordering, ties in reply order, unordered last (%s)", b);
	jv_free(plan);
}

static void
test_empty_titles_dropped_and_clamped(void)
{
	struct art_auto s = defaults;
	char b[512];
	int64_t dropped = -1;
	jv plan;

	plan = art_auto_plan_new("g", "{\"todos\":[{\"title\":\"\"},"
	    "{\"title\":\"  a  \"},{\"id\":\"no-title\"},{\"title\":\" \\n\"},"
	    "{\"title\":7},\"b\",{\"title\":\"c\"}]}", &s, &dropped);
	ok(strcmp(titles(&plan, b, sizeof(b)), "a|c") == 0,
	    "empty, blank, missing and non-string titles dropped (%s)", b);
	ok(dropped == 5, "*dropped counts them (%lld)", (long long)dropped);
	jv_free(plan);
	s.max_todos = 2;
	plan = art_auto_plan_new("g", "{\"todos\":[{\"title\":\"1\"},"
	    "{\"title\":\"\"},{\"title\":\"2\"},{\"title\":\"3\"},"
	    "{\"title\":\"4\"}]}", &s, &dropped);
	ok(strcmp(titles(&plan, b, sizeof(b)), "1|2") == 0,
	    "clamped to max_todos (%s)", b);
	ok(dropped == 3, "*dropped: the clamp and the empty title (%lld)",
	    (long long)dropped);
	jv_free(plan);
}

static void
test_a_fenced_reply(void)
{
	char b[512];
	jv plan = art_auto_plan_new("g", "Here is the plan:\n```json\n"
	    "{\"todos\":[{\"title\":\"one\"},{\"title\":\"two\"}]}\n```\n"
	    "Good luck.", &defaults, NULL);

	ok(strcmp(titles(&plan, b, sizeof(b)), "one|two") == 0,
	    "the JSON inside a ``` fence (%s)", b);
	jv_free(plan);
}

static void
test_no_plan_is_the_goal(void)
{
	static const char *const replies[] = { "", "not JSON at all",
	    "{\"todos\":[]}", "{\"steps\":[{\"title\":\"x\"}]}", "[1,2]",
	    "{\"todos\":\"x\"}", "```\n{oops}\n```", NULL };
	char b[512];
	int64_t dropped;
	int i;
	jv plan;

	for (i = 0; replies[i] != NULL; i++) {
		plan = art_auto_plan_new("do the thing", replies[i], &defaults,
		    &dropped);
		ok(strcmp(titles(&plan, b, sizeof(b)), "do the thing") == 0 &&
		    str_is(&plan, "active", "todo-1") && dropped == 0,
		    "reply %d: one todo, the goal (%s)", i, b);
		jv_free(plan);
	}
	plan = art_auto_plan_new("do the thing", NULL, &defaults, NULL);
	ok(strcmp(titles(&plan, b, sizeof(b)), "do the thing") == 0,
	    "no reply: one todo, the goal");
	jv_free(plan);
}

static jv
three(void)
{
	return art_auto_plan_new("g", "{\"todos\":[{\"title\":\"a\"},"
	    "{\"title\":\"b\"},{\"title\":\"c\"}]}", &defaults, NULL);
}

static void
test_mark_done(void)
{
	char b[512], why[128];
	jv plan = three(), before;

	ok(art_auto_mark_done(&plan, "todo-1", why, sizeof(why)) == 0 &&
	    why[0] == '\0', "the active todo can be marked");
	ok(strcmp(statuses(&plan, b, sizeof(b)), "todo-1=done,todo-2=active,"
	    "todo-3=pending") == 0 && str_is(&plan, "active", "todo-2"),
	    "it is done, the next active (%s)", b);
	before = jv_copy(plan);
	ok(art_auto_mark_done(&plan, "todo-3", why, sizeof(why)) == -1 &&
	    strcmp(why, "todo-3 is not the active todo (todo-2 is)") == 0,
	    "a todo not active is refused (%s)", why);
	ok(art_json_equal(&plan, &before), "and the plan is unchanged");
	ok(art_auto_mark_done(&plan, "todo-1", why, sizeof(why)) == -1 &&
	    strcmp(why, "todo-1 is not the active todo (todo-2 is)") == 0,
	    "a todo already done is refused (%s)", why);
	ok(art_auto_mark_done(&plan, "x", why, sizeof(why)) == -1 &&
	    strcmp(why, "no todo 'x'") == 0, "an unknown id (%s)", why);
	ok(art_json_equal(&plan, &before), "the plan still unchanged");
	jv_free(before);
	ok(art_auto_mark_done(&plan, NULL, why, sizeof(why)) == 0 &&
	    art_auto_mark_done(&plan, "", why, sizeof(why)) == 0,
	    "NULL and \"\" mark the active one");
	ok(strcmp(statuses(&plan, b, sizeof(b)), "todo-1=done,todo-2=done,"
	    "todo-3=done") == 0, "all done (%s)", b);
	{
		jv a = art_json_field(&plan, "active");

		ok(jv_get_kind(a) == JV_KIND_NULL, "none left: active null");
		jv_free(a);
	}
	plan = jv_object_set(plan, jv_string("status"),
	    jv_string("completed"));
	ok(art_auto_mark_done(&plan, NULL, why, sizeof(why)) == -1 &&
	    strcmp(why, "the plan is not running") == 0,
	    "a completed plan takes none (%s)", why);
	jv_free(plan);
}

static void
sha_hex(const char *s, char out[65])
{
	unsigned char d[ART_SHA256_LEN];

	art_sha256(s, strlen(s), d);
	art_hex(d, sizeof(d), out);
}

static int
flag(const jv *o, const char *key)
{
	jv v = art_json_field(o, key);
	int yes = jv_get_kind(v) == JV_KIND_TRUE;

	jv_free(v);
	return yes;
}

static void
test_progress(void)
{
	jv plan = three(), calls = J("[{\"id\":\"c1\",\"type\":\"function\","
	    "\"function\":{\"name\":\"ls\",\"arguments\":\"{\\\"dir\\\": "
	    "\\\".\\\"}\"}}]"), calls2 = J("[{\"id\":\"c9\",\"function\":{"
	    "\"name\":\"ls\",\"arguments\":\"{\\\"dir\\\":\\\".\\\"}\"}}]"),
	    calls3 = J("[{\"id\":\"c1\",\"function\":{\"name\":\"ls\","
	    "\"arguments\":\"{\\\"dir\\\":\\\"/\\\"}\"}}]"),
	    results = J("[\"a.txt\"]"), p, q, arts, first;
	struct art_auto_step st = { .text = "looking", .tool_calls = &calls,
	    .results = &results, .errored = 2 };
	char h[65];
	int64_t n = -1;

	p = art_auto_progress(&plan, &st);
	ok(flag(&p, "made_tool_calls") && art_json_get_int(&p,
	    "tool_calls_errored", 1, &n, NULL) == 0 && n == 2,
	    "made_tool_calls, tool_calls_errored");
	ok(art_json_get_int(&p, "step", 1, &n, NULL) == 0 && n == 1 &&
	    str_is(&p, "todo", "todo-1"), "step 1, of todo-1");
	ok(flag(&p, "produced_new_artifacts"), "a new result is an artifact");
	arts = art_json_field(&p, "artifacts");
	sha_hex("a.txt", h);
	first = jv_array_get(jv_copy(arts), 0);
	ok(jv_array_length(jv_copy(arts)) == 2 && jv_get_kind(first) ==
	    JV_KIND_STRING && strcmp(jv_string_value(first), h) == 0,
	    "artifacts: the result's and the reply's SHA-256");
	jv_free(first);
	jv_free(arts);
	ok(!flag(&p, "todo_marked_complete_by_model") &&
	    !flag(&p, "todo_completed"), "no todo marked");
	/* The same step again, call ids and argument spacing aside. */
	st.tool_calls = &calls2;
	q = art_auto_progress(&plan, &st);
	ok(strcmp(art_json_str(&p, "response_delta_hash"),
	    art_json_str(&q, "response_delta_hash")) == 0 &&
	    strlen(art_json_str(&p, "response_delta_hash")) == 64,
	    "same reply and calls: the same hash");
	jv_free(q);
	st.tool_calls = &calls3;
	q = art_auto_progress(&plan, &st);
	ok(strcmp(art_json_str(&p, "response_delta_hash"),
	    art_json_str(&q, "response_delta_hash")) != 0,
	    "other arguments: another hash");
	jv_free(q);
	st.tool_calls = &calls;
	st.text = "looking again";
	q = art_auto_progress(&plan, &st);
	ok(strcmp(art_json_str(&p, "response_delta_hash"),
	    art_json_str(&q, "response_delta_hash")) != 0,
	    "other text: another hash");
	jv_free(q);
	/* Once folded in, the same outputs are seen, not new. */
	{
		const char *v;

		plan = art_auto_after_step(plan, &p, &defaults, &v);
		arts = art_json_field(&p, "artifacts");
		ok(jv_get_kind(arts) == JV_KIND_NULL && strcmp(v, "continue") ==
		    0, "after_step takes artifacts out; continue");
		jv_free(arts);
	}
	st.text = "looking";
	q = art_auto_progress(&plan, &st);
	ok(!flag(&q, "produced_new_artifacts"),
	    "a result and reply already seen are no artifact");
	jv_free(q);
	st = (struct art_auto_step){ .text = "" };
	q = art_auto_progress(&plan, &st);
	ok(!flag(&q, "made_tool_calls") && !flag(&q,
	    "produced_new_artifacts"), "no calls, empty text: nothing");
	jv_free(q);
	ok(art_auto_mark_done(&plan, NULL, h, sizeof(h)) == 0, "mark todo-1");
	st = (struct art_auto_step){ .marked = 1, .confirmed = 1 };
	q = art_auto_progress(&plan, &st);
	ok(flag(&q, "todo_marked_complete_by_model") && flag(&q,
	    "todo_completed") && str_is(&q, "todo", "todo-1"),
	    "confirmed: the record names the todo finished");
	jv_free(q);
	jv_free(p);
	jv_free(plan);
	jv_free(calls);
	jv_free(calls2);
	jv_free(calls3);
	jv_free(results);
}

/* One step of plan that says text and finds result (NULL: nothing). */
static jv
step(jv plan, const struct art_auto *s, const char *text, const char *result,
    int done, const char **verdict)
{
	jv results = jv_array(), p;
	struct art_auto_step st = { .text = text, .results = &results };
	char why[128];

	if (result != NULL)
		results = jv_array_append(results, jv_string(result));
	if (done)
		st.marked = st.confirmed = art_auto_mark_done(&plan, NULL, why,
		    sizeof(why)) == 0;
	p = art_auto_progress(&plan, &st);
	plan = art_auto_after_step(plan, &p, s, verdict);
	jv_free(p);
	jv_free(results);
	return plan;
}

static void
test_verdicts(void)
{
	struct art_auto s = defaults;
	const char *v = "?";
	char b[64];
	int i;
	jv plan;

	plan = three();
	plan = step(plan, &s, "a1", "r1", 1, &v);
	plan = step(plan, &s, "b1", "r2", 1, &v);
	ok(strcmp(v, "continue") == 0, "two of three done: continue");
	plan = step(plan, &s, "c1", "r3", 1, &v);
	ok(strcmp(v, "completed") == 0 && str_is(&plan, "status", "completed"),
	    "all done: completed");
	jv_free(plan);

	/* The same no-progress step: stalled once the window is full. */
	plan = three();
	plan = step(plan, &s, "same", NULL, 0, &v);
	ok(strcmp(v, "continue") == 0, "step 1: continue (a new reply)");
	plan = step(plan, &s, "same", NULL, 0, &v);
	ok(strcmp(v, "continue") == 0, "step 2: window not yet full");
	plan = step(plan, &s, "same", NULL, 0, &v);
	ok(strcmp(v, "continue") == 0,
	    "step 3: window full, but step 1 produced an artifact");
	plan = step(plan, &s, "same", NULL, 0, &v);
	ok(strcmp(v, "stalled") == 0 && str_is(&plan, "status", "stalled"),
	    "step 4: three idle repeating steps: stalled");
	plan = art_auto_resume(plan);
	ok(str_is(&plan, "status", "running"), "resume: running");
	{
		jv w = art_json_field(&plan, "window");

		ok(jv_array_length(w) == 0, "resume: the window emptied");
	}
	plan = step(plan, &s, "same", NULL, 0, &v);
	plan = step(plan, &s, "same", NULL, 0, &v);
	ok(strcmp(v, "continue") == 0,
	    "after resume: two idle repeats, the window not full: continue");
	plan = step(plan, &s, "same", NULL, 0, &v);
	ok(strcmp(v, "stalled") == 0, "a whole window again: stalled");
	jv_free(plan);

	/* Idle steps that each say something different do not stall. */
	plan = three();
	plan = step(plan, &s, "x", NULL, 0, &v);
	plan = step(plan, &s, "x", NULL, 0, &v);	/* x seen: idle */
	for (i = 0; i < 3; i++) {
		jv calls = jv_array_append(jv_array(), J(i == 0 ?
		    "{\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}}" :
		    i == 1 ? "{\"function\":{\"name\":\"b\",\"arguments\":"
		    "\"{}\"}}" : "{\"function\":{\"name\":\"c\",\"arguments\":"
		    "\"{}\"}}"));
		struct art_auto_step st = { .text = "x", .tool_calls = &calls };
		jv p = art_auto_progress(&plan, &st);

		plan = art_auto_after_step(plan, &p, &s, &v);
		jv_free(p);
		jv_free(calls);
	}
	ok(strcmp(v, "continue") == 0,
	    "idle but all hashes distinct: continue");
	jv_free(plan);

	/* One step of the window with an artifact keeps it going. */
	plan = three();
	plan = step(plan, &s, "y", NULL, 0, &v);
	plan = step(plan, &s, "y", NULL, 0, &v);
	plan = step(plan, &s, "y", "new result", 0, &v);
	plan = step(plan, &s, "y", NULL, 0, &v);
	ok(strcmp(v, "continue") == 0, "an artifact in the window: continue");
	plan = step(plan, &s, "y", NULL, 0, &v);
	ok(strcmp(v, "continue") == 0, "still in the window: continue");
	plan = step(plan, &s, "y", NULL, 0, &v);
	ok(strcmp(v, "stalled") == 0, "once it leaves the window: stalled");
	jv_free(plan);

	/* A window of one stalls when a step repeats the one before. */
	s.stall_window = 1;
	plan = three();
	plan = step(plan, &s, "z", NULL, 0, &v);
	plan = step(plan, &s, "w", NULL, 0, &v);
	plan = step(plan, &s, "z", NULL, 0, &v);	/* seen, new hash */
	ok(strcmp(v, "continue") == 0, "window 1, a new hash: continue");
	plan = step(plan, &s, "z", NULL, 0, &v);
	ok(strcmp(v, "stalled") == 0, "window 1, the same again: stalled");
	jv_free(plan);

	s = defaults;
	s.max_steps = 3;
	plan = three();
	for (i = 0; i < 3; i++) {
		snprintf(b, sizeof(b), "new %d", i);
		plan = step(plan, &s, b, NULL, 0, &v);
		ok(strcmp(v, i < 2 ? "continue" : "max_steps") == 0,
		    "max_steps 3, step %d: %s", i + 1, v);
	}
	ok(str_is(&plan, "status", "max_steps"), "status max_steps");
	plan = art_auto_resume(plan);
	ok(str_is(&plan, "status", "max_steps"), "resume leaves it as it is");
	jv_free(plan);

	/* completed wins over max_steps on the last step. */
	s.max_steps = 1;
	plan = art_auto_plan_new("g", NULL, &s, NULL);
	plan = step(plan, &s, "done", NULL, 1, &v);
	ok(strcmp(v, "completed") == 0, "completed before max_steps");
	jv_free(plan);
}

static void
test_bounds(void)
{
	struct art_auto s = defaults;
	const char *v;
	char b[64], r[64];
	int i;
	jv plan = three(), a;

	s.max_steps = 1000;
	for (i = 0; i < 40; i++) {
		snprintf(b, sizeof(b), "text %d", i);
		snprintf(r, sizeof(r), "result %d", i);
		plan = step(plan, &s, b, r, 0, &v);	/* two hashes each */
	}
	a = art_json_field(&plan, "seen");
	ok(jv_array_length(a) == ART_AUTO_SEEN_MAX, "seen bounded to 64");
	a = art_json_field(&plan, "window");
	ok(jv_array_length(jv_copy(a)) == 3, "window bounded to stall_window");
	{
		jv last = jv_array_get(a, 2);
		int64_t n = 0;

		ok(art_json_get_int(&last, "step", 1, &n, NULL) == 0 && n == 40,
		    "the window holds the latest step");
		jv_free(last);
	}
	a = art_json_field(&plan, "step");
	ok(jv_number_value(a) == 40, "step counts the steps");
	jv_free(a);
	/* The newest hashes stay: "text 39" is seen. */
	plan = step(plan, &s, "text 39", NULL, 0, &v);
	a = art_json_field(&plan, "window");
	{
		jv last = jv_array_get(a, 2);

		ok(!flag(&last, "produced_new_artifacts"),
		    "the newest artifacts are kept");
		jv_free(last);
	}
	jv_free(plan);
}

static void
test_prompts_and_tools(void)
{
	struct art_err e;
	char why[64];
	jv plan = three(), s, f, t, schema;

	s = art_auto_plan_prompt("build a house", &defaults);
	ok(strstr(jv_string_value(s), "build a house") != NULL &&
	    strstr(jv_string_value(s), "at most 12 todos") != NULL &&
	    strstr(jv_string_value(s), "\"todos\"") != NULL,
	    "the plan prompt: the goal, the bound, the shape");
	jv_free(s);
	art_auto_mark_done(&plan, NULL, why, sizeof(why));
	s = art_auto_step_prompt(&plan);
	ok(strstr(jv_string_value(s), "[x] todo-1: a") != NULL &&
	    strstr(jv_string_value(s), "[>] todo-2: b") != NULL &&
	    strstr(jv_string_value(s), "[ ] todo-3: c") != NULL &&
	    strstr(jv_string_value(s), "Work now on todo-2 only: b") != NULL &&
	    strstr(jv_string_value(s), ART_AUTO_DONE_TOOL) != NULL,
	    "the step prompt: the todos, the active one, todo_done");
	jv_free(s);
	f = art_auto_plan_format();
	schema = art_json_field(&f, "schema");
	ok(str_is(&f, "name", ART_AUTO_PLAN_FORMAT) &&
	    art_json_str(&f, "description") != NULL &&
	    jv_get_kind(schema) == JV_KIND_OBJECT, "the plan format");
	jv_free(schema);
	jv_free(f);
	t = art_auto_done_tool();
	schema = art_json_field(&t, "input");
	ok(str_is(&t, "name", ART_AUTO_DONE_TOOL) &&
	    art_json_str(&t, "description") != NULL &&
	    str_is(&schema, "type", "object"), "the todo_done tool");
	(void)e;
	jv_free(schema);
	jv_free(t);
	jv_free(plan);
}

static void
test_settings(void)
{
	struct art_auto s;
	jv c = J("{\"model\":\"m\",\"execution_mode\":\"autonomous\","
	    "\"autonomous\":{\"max_todos\":5,\"on_stall\":\"park\"}}");

	ok(art_auto_is(&c), "autonomous");
	art_auto_settings(&c, &s);
	ok(s.max_todos == 5 && s.stall_window == 3 && s.max_steps == 40 &&
	    s.park_on_stall, "settings over the defaults");
	jv_free(c);
	c = J("{\"model\":\"m\"}");
	ok(!art_auto_is(&c), "chat by default");
	art_auto_settings(&c, &s);
	ok(s.max_todos == 12 && s.stall_window == 3 && s.max_steps == 40 &&
	    !s.park_on_stall, "the defaults");
	jv_free(c);
}

static void
test_check(void)
{
	static const struct {
		const char *config, *msg;
	} bad[] = {
		{ "{\"execution_mode\":\"auto\"}", "execution_mode: expected "
		    "\"chat\" or \"autonomous\", got \"auto\"" },
		{ "{\"execution_mode\":1}", "execution_mode: expected "
		    "\"chat\" or \"autonomous\", got 1" },
		{ "{\"autonomous\":[]}", "autonomous: expected an object of "
		    "max_todos, stall_window, max_steps, on_stall" },
		{ "{\"autonomous\":{\"max_todos\":0}}", "autonomous.max_todos: "
		    "expected an integer from 1 to 100, got 0" },
		{ "{\"autonomous\":{\"max_todos\":101}}",
		    "autonomous.max_todos: expected an integer from 1 to 100, "
		    "got 101" },
		{ "{\"autonomous\":{\"max_todos\":2.5}}",
		    "autonomous.max_todos: expected an integer from 1 to 100, "
		    "got 2.5" },
		{ "{\"autonomous\":{\"stall_window\":\"3\"}}",
		    "autonomous.stall_window: expected an integer from 1 to "
		    "100, got \"3\"" },
		{ "{\"autonomous\":{\"max_steps\":10001}}",
		    "autonomous.max_steps: expected an integer from 1 to "
		    "10000, got 10001" },
		{ "{\"autonomous\":{\"on_stall\":\"stop\"}}",
		    "autonomous.on_stall: expected \"end\" or \"park\", got "
		    "\"stop\"" },
		{ "{\"autonomous\":{\"max_todo\":3}}", "autonomous: unknown "
		    "member 'max_todo' (max_todos, stall_window, max_steps, "
		    "on_stall)" },
		{ "{\"answer\":\"json\"}", "answer: expected \"text\" or "
		    "\"structured\", got \"json\"" },
		{ "{\"answer\":true}", "answer: expected \"text\" or "
		    "\"structured\", got true" },
	};
	static const char *const good[] = { "{}", "{\"execution_mode\":"
	    "\"chat\"}", "{\"execution_mode\":\"autonomous\"}",
	    "{\"execution_mode\":\"autonomous\",\"autonomous\":{\"max_todos\":"
	    "1,\"stall_window\":100,\"max_steps\":10000,\"on_stall\":\"end\"}}",
	    "{\"autonomous\":{\"on_stall\":\"park\",\"max_steps\":1}}",
	    "{\"answer\":\"text\"}", "{\"answer\":\"structured\"}",
	    "{\"execution_mode\":null,\"autonomous\":null,\"answer\":null}" };
	struct art_err e;
	size_t i;
	jv c;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = J(bad[i].config);
		e.msg[0] = '\0';
		ok(art_auto_check(&c, &e) == -1 && art_err_is(&e, "bad_agent") &&
		    strcmp(e.msg, bad[i].msg) == 0, "%s: refused (%s)",
		    bad[i].config, e.msg);
		jv_free(c);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		c = J(good[i]);
		ok(art_auto_check(&c, &e) == 0, "%s: fine", good[i]);
		jv_free(c);
	}
}

int
main(void)
{
	test_a_plan_from_a_normal_reply();
	test_ordering_is_a_stable_sort();
	test_empty_titles_dropped_and_clamped();
	test_a_fenced_reply();
	test_no_plan_is_the_goal();
	test_mark_done();
	test_progress();
	test_verdicts();
	test_bounds();
	test_prompts_and_tools();
	test_settings();
	test_check();
	return tap_done();
}
