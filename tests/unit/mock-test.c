/* mock-test - the offline model: steps, templates, tool calls, errors */
#include "mock.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "llm.h"
#include "tap.h"
#include "testjv.h"

/* A parsed value for a test; aborts on a typo in the test itself. */
static jv
parse(const char *text)
{
	struct art_err err;
	jv v = art_json_parse_str(text, &err);

	if (!jv_is_valid(v)) {
		fprintf(stderr, "bad test input %s: %s\n", text, err.msg);
		abort();
	}
	return v;
}

/*
 * An llm.request line for call id, attempt and stream, as text; extra
 * ("" or ",\"member\":...") goes in its request after the messages.
 */
static void
call_of(struct art_llm_call *call, const char *id, int attempt, int stream,
    const char *messages, const char *extra, const char *mock)
{
	char buf[8192];
	struct art_err err;
	jv line;

	snprintf(buf, sizeof(buf), "{\"type\":\"llm.request\",\"session_id\":"
	    "\"s\",\"id\":\"%s\",\"attempt\":%d,\"stream\":%s,\"request\":"
	    "{\"model\":\"mock/script\",\"messages\":%s%s},\"mock\":%s}",
	    id, attempt, stream ? "true" : "false", messages, extra,
	    mock != NULL ? mock : "null");
	line = parse(buf);
	if (art_llm_call_init(call, &line, &err) == -1) {
		fprintf(stderr, "bad test call: %s\n", err.msg);
		abort();
	}
	jv_free(line);
}

/*
 * Answers messages with model at attempt under the mock settings; returns
 * what art_mock_answer() did, the outcome in *out (to release).
 */
static int
answer_with(struct art_mock *m, const char *model, int attempt, int stream,
    const char *messages, const char *extra, const char *mock,
    struct art_llm_outcome *out, struct art_err *err)
{
	struct art_llm_call call;
	int r;

	call_of(&call, "0197ab12-0000-7000-8000-0000deadbeef", attempt, stream,
	    messages, extra, mock);
	art_llm_outcome_init(out);
	r = art_mock_answer(m, &call, model, out, err);
	art_llm_call_release(&call);
	return r;
}

static int
answer(struct art_mock *m, const char *model, int attempt, int stream,
    const char *messages, const char *mock, struct art_llm_outcome *out,
    struct art_err *err)
{
	return answer_with(m, model, attempt, stream, messages, "", mock, out,
	    err);
}

static struct art_mock *
mock_new(void)
{
	struct art_err err;
	struct art_mock *m = art_mock_new(jv_null(), &err);

	if (m == NULL)
		abort();
	return m;
}

#define USER(t)		"{\"role\":\"user\",\"content\":\"" t "\"}"
#define ASSISTANT	"{\"role\":\"assistant\",\"content\":\"\"}"
#define TOOL(t)		"{\"role\":\"tool\",\"tool_call_id\":\"c\"," \
			"\"content\":\"" t "\"}"

/* --- step selection --- */

static int64_t
step_of(const char *request)
{
	jv r = parse(request);
	int64_t n = art_mock_step(&r);

	jv_free(r);
	return n;
}

static void
test_step_counts_assistant_messages_after_the_last_user_message(void)
{
	ok(step_of("{}") == 0, "a request without messages is at step 0");
	ok(step_of("{\"messages\":[" USER("a") "]}") == 0,
	    "a new turn is at step 0");
	ok(step_of("{\"messages\":[" USER("a") "," ASSISTANT "," TOOL("1")
	    "]}") == 1, "one model call into a tool loop is step 1");
	ok(step_of("{\"messages\":[" USER("a") "," ASSISTANT "," TOOL("1")
	    "," ASSISTANT "," TOOL("2") "]}") == 2, "two calls: step 2");
	ok(step_of("{\"messages\":[" USER("a") "," ASSISTANT "," TOOL("1")
	    "," ASSISTANT "," USER("b") "]}") == 0,
	    "an earlier turn's replies do not count");
	ok(step_of("{\"messages\":[" ASSISTANT "," ASSISTANT "]}") == 2,
	    "with no user message every assistant message counts");
	ok(step_of("{\"messages\":\"nope\"}") == 0,
	    "messages that are not an array count as none");
	ok(step_of("{\"answer_retry\":true,\"messages\":[" USER("a") ","
	    ASSISTANT "," USER("that does not fit") "]}") == 1,
	    "an answer asked for again plays the step after the reply it "
	    "mends");
	ok(step_of("{\"messages\":[" USER("a") "," ASSISTANT ","
	    USER("that does not fit") "]}") == 0,
	    "without answer_retry the correction is a new turn");
}

/* --- echo --- */

static void
test_echo_repeats_the_last_user_message(void)
{
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_err err;

	ok(answer(m, "mock/echo", 1, 0, "[" USER("first") "," ASSISTANT ","
	    USER("hello") "]", NULL, &out, &err) == 0, "echo answers");
	ok(is_json(jv_copy(out.response), "{\"model\":\"mock/echo\","
	    "\"content\":\"hello\",\"finish_reason\":\"stop\",\"usage\":"
	    "{\"input\":3,\"output\":2,\"total\":5},\"cost\":\"0\"}"),
	    "content is the last user text; usage counts bytes / 4 up");
	ok(jv_get_kind(out.error) == JV_KIND_NULL, "no error");
	ok(jv_array_length(jv_copy(out.deltas)) == 0,
	    "no deltas when not streaming");
	art_llm_outcome_release(&out);

	ok(answer(m, "mock/echo", 1, 0, "[{\"role\":\"user\",\"content\":["
	    "{\"type\":\"text\",\"text\":\"ab\"},{\"type\":\"image_url\","
	    "\"image_url\":{\"url\":\"x\"}},{\"type\":\"text\",\"text\":\"cd\"}"
	    "]}]", NULL, &out, &err) == 0, "echo of content parts");
	ok(strcmp(art_json_str(&out.response, "content"), "abcd") == 0,
	    "the text parts are joined, other parts skipped");
	art_llm_outcome_release(&out);

	ok(answer(m, "mock/echo", 1, 0, "[{\"role\":\"system\",\"content\":"
	    "\"be brief\"}]", NULL, &out, &err) == 0, "echo with no user");
	ok(strcmp(art_json_str(&out.response, "content"), "") == 0,
	    "no user message: the empty string");
	art_llm_outcome_release(&out);
	art_mock_free(m);
}

/* --- scripts --- */

static void
test_script_text_fills_the_templates(void)
{
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_err err;
	const char *mock = "{\"script\":[{\"content\":\"x\"},{\"content\":"
	    "\"{{user}} = {{tool}}, {{other}} {{tool\"}]}";

	ok(answer(m, "mock/script", 1, 0, "[" USER("17*23") "," ASSISTANT ","
	    TOOL("1") "," TOOL("391") "]", mock, &out, &err) == 0,
	    "step 1 answers");
	ok(strcmp(art_json_str(&out.response, "content"),
	    "17*23 = 391, {{other}} {{tool") == 0,
	    "{{user}} and {{tool}} (the last tool result) are filled, "
	    "others kept");
	ok(strcmp(art_json_str(&out.response, "finish_reason"), "stop") == 0,
	    "a text reply stops");
	art_llm_outcome_release(&out);

	ok(answer(m, "mock/script", 1, 0, "[" USER("hi") "," ASSISTANT "]",
	    mock, &out, &err) == 0, "step 1 with no tool result");
	ok(strcmp(art_json_str(&out.response, "content"),
	    "hi = , {{other}} {{tool") == 0, "no tool result fills ''");
	art_llm_outcome_release(&out);
	art_mock_free(m);
}

static void
test_script_tool_calls_have_ids_and_compact_arguments(void)
{
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_err err;
	const char *mock = "{\"script\":[{\"content\":\"go\"},"
	    "{\"tool_calls\":[{\"name\":\"calc\",\"arguments\":"
	    "{ \"a\" : 1, \"b\" : [2, 3] }},{\"name\":\"echo\",\"arguments\":"
	    "\"not json\"},{\"name\":\"now\"}]}]}";

	/* Out: calc {"a":1,"b":[2,3]} echo not json now {}: 38 bytes. */
	ok(answer(m, "mock/script", 1, 0, "[" USER("q") "," ASSISTANT "]",
	    mock, &out, &err) == 0, "a step of three tool calls answers");
	ok(is_json(jv_copy(out.response), "{\"model\":\"mock/script\","
	    "\"tool_calls\":["
	    "{\"id\":\"call_deadbeef_1_0\",\"type\":\"function\",\"function\":"
	    "{\"name\":\"calc\",\"arguments\":"
	    "\"{\\\"a\\\":1,\\\"b\\\":[2,3]}\"}},"
	    "{\"id\":\"call_deadbeef_1_1\",\"type\":\"function\",\"function\":"
	    "{\"name\":\"echo\",\"arguments\":\"not json\"}},"
	    "{\"id\":\"call_deadbeef_1_2\",\"type\":\"function\",\"function\":"
	    "{\"name\":\"now\",\"arguments\":\"{}\"}}],"
	    "\"finish_reason\":\"tool_calls\",\"usage\":{\"input\":1,"
	    "\"output\":10,\"total\":11},\"cost\":\"0\"}"),
	    "ids call_<id tail>_<step>_<i>; arguments compact, raw or {}; "
	    "no content");
	art_llm_outcome_release(&out);
	art_mock_free(m);
}

static void
test_script_tool_calls_may_come_with_content(void)
{
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_err err;

	ok(answer(m, "mock/script", 1, 0, "[" USER("q") "]", "{\"script\":"
	    "[{\"content\":\"let me see\",\"tool_calls\":[{\"name\":\"t\"}]}]}",
	    &out, &err) == 0, "content and tool calls answer");
	ok(strcmp(art_json_str(&out.response, "content"), "let me see") == 0 &&
	    strcmp(art_json_str(&out.response, "finish_reason"),
	    "tool_calls") == 0, "both are in the reply, which asks for tools");
	art_llm_outcome_release(&out);
	art_mock_free(m);
}

static void
test_script_error_steps_fail_the_first_times_attempts(void)
{
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_err err;
	const char *mock = "{\"script\":[{\"error\":\"slow down\","
	    "\"retryable\":true,\"code\":\"rate_limited\","
	    "\"retry_after_ms\":250,\"times\":2,\"content\":\"at last\"}]}";
	const char *always = "{\"script\":[{\"error\":\"down\"}]}";

	ok(answer(m, "mock/script", 1, 0, "[" USER("q") "]", mock, &out,
	    &err) == 0, "attempt 1 answers");
	ok(is_json(jv_copy(out.error), "{\"error\":\"slow down\","
	    "\"retryable\":true,\"code\":\"rate_limited\","
	    "\"retry_after_ms\":250}"), "attempt 1 is the error");
	ok(jv_get_kind(out.response) == JV_KIND_NULL, "and no response");
	art_llm_outcome_release(&out);
	answer(m, "mock/script", 2, 0, "[" USER("q") "]", mock, &out, &err);
	ok(jv_get_kind(out.error) == JV_KIND_OBJECT, "attempt 2 too");
	art_llm_outcome_release(&out);
	answer(m, "mock/script", 3, 0, "[" USER("q") "]", mock, &out, &err);
	ok(jv_get_kind(out.error) == JV_KIND_NULL &&
	    strcmp(art_json_str(&out.response, "content"), "at last") == 0,
	    "attempt 3 gets the step's content");
	art_llm_outcome_release(&out);

	answer(m, "mock/script", 9, 0, "[" USER("q") "]", always, &out, &err);
	ok(is_json(jv_copy(out.error), "{\"error\":\"down\","
	    "\"retryable\":false}"),
	    "without times every attempt fails; retryable defaults to false");
	art_llm_outcome_release(&out);
	art_mock_free(m);
}

static void
test_script_length_and_delay(void)
{
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_err err;

	answer(m, "mock/script", 1, 0, "[" USER("q") "]", "{\"script\":[{"
	    "\"content\":\"cut sh\",\"finish_reason\":\"length\","
	    "\"delay_ms\":40}]}", &out, &err);
	ok(strcmp(art_json_str(&out.response, "finish_reason"), "length") ==
	    0, "finish_reason length makes a truncated reply");
	ok(out.delay_ms == 40, "delay_ms holds the answer back");
	art_llm_outcome_release(&out);

	answer(m, "mock/script", 1, 0, "[" USER("q") "]", "{\"script\":[{"
	    "\"error\":\"e\",\"delay_ms\":7}]}", &out, &err);
	ok(out.delay_ms == 7 && jv_get_kind(out.error) == JV_KIND_OBJECT,
	    "an error is delayed too");
	art_llm_outcome_release(&out);

	answer(m, "mock/script", 1, 0, "[" USER("q") "]", "{\"script\":[{}]}",
	    &out, &err);
	ok(strcmp(art_json_str(&out.response, "content"), "") == 0 &&
	    out.delay_ms == 0, "an empty step is an empty reply at once");
	art_llm_outcome_release(&out);
	art_mock_free(m);
}

static void
test_usage_counts_bytes_in_quarters_rounded_up(void)
{
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_err err;

	/* 9 + 0 + 3 = 12 bytes in, 5 out; tool calls: 4 + 2 = 6 bytes. */
	answer(m, "mock/script", 1, 0, "[" USER("123456789") "," ASSISTANT ","
	    TOOL("abc") "]", "{\"script\":[{},{\"content\":\"12345\"}]}", &out,
	    &err);
	ok(is_json(art_json_field(&out.response, "usage"), "{\"input\":3,"
	    "\"output\":2,\"total\":5}"), "12 bytes in: 3; 5 out: 2");
	art_llm_outcome_release(&out);
	answer(m, "mock/script", 1, 0, "[]", "{\"script\":[{\"tool_calls\":"
	    "[{\"name\":\"calc\",\"arguments\":{}}]}]}", &out, &err);
	ok(is_json(art_json_field(&out.response, "usage"), "{\"input\":0,"
	    "\"output\":2,\"total\":2}"), "a tool call counts name and "
	    "arguments");
	art_llm_outcome_release(&out);
	art_mock_free(m);
}

/* --- what cannot be answered --- */

static void
test_past_the_end_of_the_script_is_an_error(void)
{
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_err err;

	ok(answer(m, "mock/script", 1, 0, "[" USER("q") "," ASSISTANT ","
	    ASSISTANT "]", "{\"script\":[{},{}]}", &out, &err) == -1,
	    "step 2 of a two-step script fails");
	ok(strcmp(err.msg, "mock script has no step 2") == 0,
	    "the message names the step: %s", err.msg);
	art_llm_outcome_release(&out);
	art_mock_free(m);
}

static void
test_bad_scripts_and_steps_are_named(void)
{
	static const struct {
		const char *mock, *msg;
	} cases[] = {
		{ "null", "mock/script has no script: set mock.script or "
		  "mock.script_file in the agent, or give --script" },
		{ "{\"script\":{}}", "mock: field 'script': expected array, "
		  "got object" },
		{ "{\"script\":[3]}", "mock script step 0: expected object, "
		  "got number" },
		{ "{\"script\":[{\"contents\":\"x\"}]}", "mock script step 0: "
		  "unknown field 'contents'" },
		{ "{\"script\":[{\"content\":1}]}", "mock script step 0: "
		  "field 'content': expected string, got number" },
		{ "{\"script\":[{\"times\":-1,\"error\":\"x\"}]}", "mock "
		  "script step 0: field 'times': expected 0 or more, got -1" },
		{ "{\"script\":[{\"tool_calls\":[{\"arguments\":{}}]}]}",
		  "mock script step 0: tool call 0: missing field 'name'" },
		{ "{\"script\":[{\"tool_calls\":[\"calc\"]}]}", "mock script "
		  "step 0: tool call 0: expected object, got string" },
		{ "{\"script\":[{\"content\":\"y\",\"json\":{}}]}", "mock "
		  "script step 0: fields 'content' and 'json' together: a "
		  "reply is one or the other" },
		{ "{\"script\":[{\"images\":\"x.png\"}]}", "mock script "
		  "step 0: field 'images': expected an array of {\"url\": "
		  "STRING}" },
		{ "{\"script\":[{\"images\":[{\"url\":\"a\"},{}]}]}", "mock "
		  "script step 0: images[1]: expected {\"url\": STRING}" },
		{ "{\"script_file\":\"/nonexistent/s.json\"}", "read mock "
		  "script '/nonexistent/s.json': No such file or directory" },
	};
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_err err;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ok(answer(m, "mock/script", 1, 0, "[" USER("q") "]",
		    cases[i].mock, &out, &err) == -1 &&
		    strcmp(err.msg, cases[i].msg) == 0, "%s: %s",
		    cases[i].mock, err.msg);
		art_llm_outcome_release(&out);
	}
	ok(answer(m, "mock/nope", 1, 0, "[]", NULL, &out, &err) == -1 &&
	    strcmp(err.msg, "unknown mock model 'mock/nope' (there are "
	    "mock/echo and mock/script)") == 0, "an unknown mock model");
	art_llm_outcome_release(&out);
	art_mock_free(m);
}

static void
test_a_format_or_bad_messages_are_refused(void)
{
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_llm_call call;
	struct art_err err;
	jv line = parse("{\"type\":\"llm.request\",\"id\":\"r\",\"format\":"
	    "\"openai\",\"request\":{\"model\":\"mock/echo\","
	    "\"messages\":[]}}");

	art_llm_call_init(&call, &line, &err);
	jv_free(line);
	art_llm_outcome_init(&out);
	ok(art_mock_answer(m, &call, "mock/echo", &out, &err) == -1 &&
	    strcmp(err.msg, "mock models take no format ('openai')") == 0,
	    "a provider-native format is refused");
	art_llm_call_release(&call);
	art_llm_outcome_release(&out);

	ok(answer(m, "mock/echo", 1, 0, "{}", NULL, &out, &err) == -1 &&
	    strcmp(err.msg, "request field 'messages': expected array, got "
	    "object") == 0, "messages must be an array");
	art_llm_outcome_release(&out);
	art_mock_free(m);
}

/* --- where the script comes from --- */

static void
test_the_mock_s_own_script_overrides_the_call_s(void)
{
	struct art_llm_outcome out;
	struct art_err err;
	struct art_mock *m = art_mock_new(parse("[{\"content\":\"mine\"}]"),
	    &err);

	answer(m, "mock/script", 1, 0, "[" USER("q") "]",
	    "{\"script\":[{\"content\":\"theirs\"}]}", &out, &err);
	ok(strcmp(art_json_str(&out.response, "content"), "mine") == 0,
	    "the --script script wins");
	art_llm_outcome_release(&out);
	art_mock_free(m);
	ok(art_mock_new(parse("{}"), &err) == NULL &&
	    strcmp(err.code, "bad_script") == 0, "a script must be an array");
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fputs(text, f) == EOF || fclose(f) == EOF)
		abort();
}

static void
test_script_files_are_read_once_per_path(void)
{
	char dir[] = "/tmp/mock-test.XXXXXX", path[64], mock[128];
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_err err;

	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(path, sizeof(path), "%s/s.json", dir);
	snprintf(mock, sizeof(mock), "{\"script_file\":\"%s\"}", path);
	write_file(path, "[{\"content\":\"from the file\"}]\n");
	answer(m, "mock/script", 1, 0, "[" USER("q") "]", mock, &out, &err);
	ok(strcmp(art_json_str(&out.response, "content"), "from the file") ==
	    0, "script_file is played");
	art_llm_outcome_release(&out);
	write_file(path, "[{\"content\":\"changed\"}]\n");
	answer(m, "mock/script", 1, 0, "[" USER("q") "]", mock, &out, &err);
	ok(strcmp(art_json_str(&out.response, "content"), "from the file") ==
	    0, "and read once: a change is not seen");
	art_llm_outcome_release(&out);
	art_mock_free(m);

	write_file(path, "{\"content\":\"x\"}");
	ok(!jv_is_valid(art_mock_read_script(path, &err)) &&
	    strcmp(err.code, "bad_script") == 0 && strstr(err.msg,
	    "expected an array, got object") != NULL, "a file holding an "
	    "object is refused: %s", err.msg);
	write_file(path, "[{\"content\":");
	ok(!jv_is_valid(art_mock_read_script(path, &err)) &&
	    strcmp(err.code, "bad_json") == 0, "a file of bad JSON is "
	    "refused: %s", err.msg);
	unlink(path);
	ok(!jv_is_valid(art_mock_read_script(path, &err)) &&
	    strcmp(err.code, "io") == 0, "a missing file is refused");
	rmdir(dir);
}

/* --- streaming --- */

/* --- structured answers --- */

#define RF(props) \
	",\"response_format\":{\"name\":\"f\",\"schema\":{\"type\":" \
	"\"object\",\"properties\":" props "}}"

/* The content mock/echo gives messages under extra; "" on failure. */
static const char *
echo_content(struct art_mock *m, const char *messages, const char *extra,
    int stream, struct art_llm_outcome *out)
{
	struct art_err err;
	const char *c;

	if (answer_with(m, "mock/echo", 1, stream, messages, extra, NULL, out,
	    &err) == -1)
		return "";
	c = art_json_str(&out->response, "content");
	return c != NULL ? c : "";
}

static void
test_echo_answers_a_response_format_in_json(void)
{
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	const char *msgs = "[" USER("first") "," ASSISTANT ","
	    USER("say \\\"hi\\\"") "]";

	ok(strcmp(echo_content(m, msgs, RF("{\"todos\":{},\"summary\":{}}"), 0,
	    &out), "{\"todos\":[{\"title\":\"say \\\"hi\\\"\"}]}") == 0,
	    "echo for a schema with todos: a plan of one todo, the user text");
	art_llm_outcome_release(&out);
	ok(strcmp(echo_content(m, msgs, RF("{\"summary\":{},\"note\":{}}"), 0,
	    &out), "{\"summary\":\"say \\\"hi\\\"\"}") == 0,
	    "echo for a schema with summary: an answer of that summary");
	art_llm_outcome_release(&out);
	ok(strcmp(echo_content(m, msgs, RF("{\"x\":{}}"), 0, &out),
	    "\"say \\\"hi\\\"\"") == 0,
	    "echo for another schema: the text as a JSON string");
	art_llm_outcome_release(&out);
	ok(strcmp(echo_content(m, msgs, ",\"response_format\":{\"name\":"
	    "\"f\"}", 0, &out), "\"say \\\"hi\\\"\"") == 0,
	    "echo for a format without a schema: the text as a JSON string");
	art_llm_outcome_release(&out);
	ok(strcmp(echo_content(m, msgs, "", 0, &out), "say \"hi\"") == 0,
	    "echo without a response_format: the text as it is");
	art_llm_outcome_release(&out);

	echo_content(m, msgs, RF("{\"summary\":{}}"), 1, &out);
	ok(is_json(jv_copy(out.deltas), "[{\"text\":\"{\\\"summary\\\":"
	    "\\\"say \"},{\"text\":\"\\\\\\\"hi\\\\\\\"\\\"}\"}]") &&
	    strcmp(art_json_str(&out.response, "finish_reason"), "stop") == 0,
	    "a streamed echo's deltas join to the JSON; it stops");
	art_llm_outcome_release(&out);
	art_mock_free(m);
}

static void
test_script_json_steps_give_compact_json(void)
{
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_err err;
	const char *mock = "{\"script\":[{\"json\":{\"todos\": [{\"title\": "
	    "\"one\"}, {\"title\": \"{{user}}\"}]}},{\"json\":\"plain\","
	    "\"tool_calls\":[{\"name\":\"calc\"}]},{\"json\":null}]}";

	ok(answer(m, "mock/script", 1, 0, "[" USER("q") "]", mock, &out,
	    &err) == 0 && strcmp(art_json_str(&out.response, "content"),
	    "{\"todos\":[{\"title\":\"one\"},{\"title\":\"q\"}]}") == 0 &&
	    strcmp(art_json_str(&out.response, "finish_reason"), "stop") == 0,
	    "a json step: the value dumped compactly, its strings' "
	    "placeholders filled, and it stops");
	art_llm_outcome_release(&out);
	ok(answer(m, "mock/script", 1, 0, "[" USER("say \\\"hi\\\"") "]",
	    mock, &out, &err) == 0 && strcmp(art_json_str(&out.response,
	    "content"), "{\"todos\":[{\"title\":\"one\"},{\"title\":"
	    "\"say \\\"hi\\\"\"}]}") == 0,
	    "a placeholder's quotes are escaped: the JSON stays whole");
	art_llm_outcome_release(&out);
	ok(answer(m, "mock/script", 1, 0, "[" USER("q") "," ASSISTANT "]",
	    mock, &out, &err) == 0 && strcmp(art_json_str(&out.response,
	    "content"), "\"plain\"") == 0 && strcmp(art_json_str(
	    &out.response, "finish_reason"), "tool_calls") == 0,
	    "a json string is its JSON text; tool calls may come beside it");
	art_llm_outcome_release(&out);
	ok(answer(m, "mock/script", 1, 0, "[" USER("q") "," ASSISTANT ","
	    ASSISTANT "]", mock, &out, &err) == 0 &&
	    strcmp(art_json_str(&out.response, "content"), "null") == 0,
	    "json null is the text null, not a missing reply");
	art_llm_outcome_release(&out);
	art_mock_free(m);
}


static void
test_deltas_join_to_the_content(void)
{
	jv r = parse("{\"content\":\"Hello,  big world \",\"tool_calls\":[{"
	    "\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"t\","
	    "\"arguments\":\"{}\"}}]}");

	ok(is_json(art_mock_deltas(&r), "[{\"text\":\"Hello,  \"},"
	    "{\"text\":\"big \"},{\"text\":\"world \"},{\"tool_calls\":[{"
	    "\"id\":\"c1\",\"name\":\"t\",\"arguments\":\"{}\"}]}]"),
	    "text cut after each run of spaces, then one delta per tool call");
	jv_free(r);
	r = parse("{\"content\":\"\"}");
	ok(is_json(art_mock_deltas(&r), "[]"), "no text, no deltas");
	jv_free(r);
}

static void
test_a_streaming_call_gets_deltas(void)
{
	struct art_mock *m = mock_new();
	struct art_llm_outcome out;
	struct art_err err;

	answer(m, "mock/echo", 1, 1, "[" USER("one two") "]", NULL, &out,
	    &err);
	ok(is_json(jv_copy(out.deltas), "[{\"text\":\"one \"},"
	    "{\"text\":\"two\"}]"), "echo streams its words");
	art_llm_outcome_release(&out);
	answer(m, "mock/script", 1, 1, "[" USER("q") "]", "{\"script\":[{"
	    "\"error\":\"no\"}]}", &out, &err);
	ok(is_json(jv_copy(out.deltas), "[]"), "an error streams nothing");
	art_llm_outcome_release(&out);
	art_mock_free(m);
}

/* --- through the dispatcher --- */

/* What the dispatcher answered, in order. */
static jv caught;

static void
catch_lines(void *ctx, jv lines, int64_t delay_ms)
{
	(void)ctx;
	(void)delay_ms;
	jv_array_foreach(lines, i, l)
		caught = jv_array_append(caught, l);
	jv_free(lines);
}

static jv
lines_for(struct art_llm *llm, const char *text)
{
	struct art_llm_call call;
	struct art_err err;
	jv line = parse(text), lines;

	if (art_llm_call_init(&call, &line, &err) == -1) {
		jv_free(line);
		return jv_string(err.msg);
	}
	jv_free(line);
	caught = jv_array();
	art_llm_submit(llm, &call);
	art_llm_call_release(&call);
	lines = caught;
	caught = jv_null();
	return lines;
}

static void
test_the_dispatcher_finds_the_mock_by_prefix(void)
{
	struct art_llm_opts o = { .mock_script = jv_null(), .record_fd = -1 };
	struct art_llm *llm = art_llm_new(&o, catch_lines, NULL);

	ok(is_json(lines_for(llm, "{\"type\":\"llm.request\",\"id\":\"r\","
	    "\"request\":{\"model\":\"mock/echo\",\"messages\":["
	    USER("hi") "]}}"), "[{\"type\":\"llm.result\",\"id\":\"r\","
	    "\"attempt\":1,\"response\":{\"model\":\"mock/echo\",\"content\":"
	    "\"hi\",\"finish_reason\":\"stop\",\"usage\":{\"input\":1,"
	    "\"output\":1,\"total\":2},\"cost\":\"0\"}}]"),
	    "mock/echo answers an llm.request");
	ok(is_json(lines_for(llm, "{\"type\":\"llm.request\",\"id\":\"r\","
	    "\"session_id\":\"s\",\"attempt\":2,\"request\":{\"model\":"
	    "\"x/y\",\"messages\":[]}}"), "[{\"type\":\"llm.error\","
	    "\"session_id\":\"s\",\"id\":\"r\",\"attempt\":2,\"error\":"
	    "\"unknown provider 'x' in model 'x/y'\",\"retryable\":false,"
	    "\"detail\":{\"config\":\"bad_model\"}}]"),
	    "an unknown provider is a terminal llm.error, a config error");
	ok(is_json(lines_for(llm, "{\"type\":\"llm.request\",\"id\":\"r\","
	    "\"request\":{\"model\":\"echo\"}}"), "[{\"type\":\"llm.error\","
	    "\"id\":\"r\",\"attempt\":1,\"error\":\"model 'echo' is not "
	    "provider/name\",\"retryable\":false,\"detail\":{\"config\":"
	    "\"bad_model\"}}]"), "a model without a provider is an llm.error, "
	    "a config error");
	ok(is_json(lines_for(llm, "{\"type\":\"llm.request\",\"id\":\"r\","
	    "\"request\":{}}"), "[{\"type\":\"llm.error\",\"id\":\"r\","
	    "\"attempt\":1,\"error\":\"request has no model\","
	    "\"retryable\":false}]"), "so is no model at all");
	ok(is_json(lines_for(llm, "{\"type\":\"decision.request\","
	    "\"session_id\":\"s\",\"decision_id\":\"d\",\"agent\":{\"mock\":"
	    "{\"script\":[{\"error\":\"busy\",\"retryable\":true}]}},"
	    "\"trigger\":{\"type\":\"llm.execute\",\"id\":\"c\",\"attempt\":3,"
	    "\"stream\":true,\"request\":{\"model\":\"mock/script\","
	    "\"messages\":[]}}}"), "[{\"type\":\"decision.response\","
	    "\"session_id\":\"s\",\"decision_id\":\"d\",\"actions\":[{\"type\":"
	    "\"llm.error\",\"id\":\"c\",\"attempt\":3,\"error\":\"busy\","
	    "\"retryable\":true}]}]"),
	    "an llm.execute takes agent.mock and answers with a decision");
	art_llm_free(llm);

	o.model = "mock/echo";
	llm = art_llm_new(&o, catch_lines, NULL);
	ok(is_json(lines_for(llm, "{\"type\":\"llm.request\",\"id\":\"r\","
	    "\"stream\":true,\"request\":{\"model\":\"openai/gpt-4o\","
	    "\"messages\":[" USER("a b") "]}}"), "[{\"type\":"
	    "\"llm.token.delta\",\"id\":\"r\",\"delta\":{\"text\":\"a \"}},"
	    "{\"type\":\"llm.token.delta\",\"id\":\"r\",\"delta\":{\"text\":"
	    "\"b\"}},{\"type\":\"llm.result\",\"id\":\"r\",\"attempt\":1,"
	    "\"response\":{\"model\":\"mock/echo\",\"content\":\"a b\","
	    "\"finish_reason\":\"stop\",\"usage\":{\"input\":1,\"output\":1,"
	    "\"total\":2},\"cost\":\"0\"}}]"),
	    "--model overrides the request's; deltas come first");
	art_llm_free(llm);
}

static void
test_malformed_calls_are_bad_requests(void)
{
	static const struct {
		const char *line, *msg;
	} cases[] = {
		{ "{\"type\":\"llm.request\",\"request\":{}}",
		  "llm.request: missing field 'id'" },
		{ "{\"type\":\"llm.request\",\"id\":\"r\",\"request\":[]}",
		  "llm.request: field 'request': expected object, got array" },
		{ "{\"type\":\"llm.request\",\"id\":\"r\",\"attempt\":0,"
		  "\"request\":{}}", "llm.request: field 'attempt': expected "
		  "1 or more, got 0" },
		{ "{\"type\":\"llm.request\",\"id\":\"r\","
		  "\"deadline\":\"soon\",\"request\":{}}", NULL },
		{ "{\"type\":\"llm.request\",\"id\":\"r\",\"mock\":[],"
		  "\"request\":{}}", "llm.request: field 'mock': expected "
		  "object, got array" },
		{ "{\"type\":\"decision.request\",\"trigger\":{\"type\":"
		  "\"llm.execute\"}}", "llm.execute decision: missing field "
		  "'decision_id'" },
		{ "{\"type\":\"decision.request\",\"decision_id\":\"d\","
		  "\"trigger\":{\"type\":\"llm.execute\",\"id\":\"c\"}}",
		  "llm.execute decision: trigger: missing field 'request'" },
	};
	struct art_llm_call call;
	struct art_err err;
	size_t i;
	jv line;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		line = parse(cases[i].line);
		ok(art_llm_call_init(&call, &line, &err) == -1 &&
		    strcmp(err.code, "bad_request") == 0 &&
		    (cases[i].msg == NULL ? strncmp(err.msg, "llm.request: "
		    "field 'deadline': ", 30) == 0 :
		    strcmp(err.msg, cases[i].msg) == 0), "%s", err.msg);
		jv_free(line);
	}
	line = parse("{\"type\":\"decision.request\",\"trigger\":{\"type\":"
	    "\"tool.execute\"}}");
	ok(art_llm_kind_of(&line) == ART_LLM_NONE,
	    "other decisions are no model calls");
	jv_free(line);
}

int
main(void)
{
	test_step_counts_assistant_messages_after_the_last_user_message();
	test_echo_repeats_the_last_user_message();
	test_script_text_fills_the_templates();
	test_script_tool_calls_have_ids_and_compact_arguments();
	test_script_tool_calls_may_come_with_content();
	test_script_error_steps_fail_the_first_times_attempts();
	test_script_length_and_delay();
	test_echo_answers_a_response_format_in_json();
	test_script_json_steps_give_compact_json();
	test_usage_counts_bytes_in_quarters_rounded_up();
	test_past_the_end_of_the_script_is_an_error();
	test_bad_scripts_and_steps_are_named();
	test_a_format_or_bad_messages_are_refused();
	test_the_mock_s_own_script_overrides_the_call_s();
	test_script_files_are_read_once_per_path();
	test_deltas_join_to_the_content();
	test_a_streaming_call_gets_deltas();
	test_the_dispatcher_finds_the_mock_by_prefix();
	test_malformed_calls_are_bad_requests();
	return tap_done();
}
