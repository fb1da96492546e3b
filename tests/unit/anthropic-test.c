/* anthropic-test - the Messages API wire format, on recorded bytes */
#include "wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jv.h>

#include "json.h"
#include "sse.h"
#include "tap.h"
#include "testjv.h"

#define W		(&art_anthropic_wire)
#define FIXTURES	"tests/fixtures/anthropic"
#define STREAMS		"tests/fixtures/sse"
#define MODEL		"claude-sonnet-4"
#define NOW		1735689600000LL		/* 2025-01-01T00:00:00Z */

static const char *
srcdir(void)
{
	const char *d = getenv("top_srcdir");

	return d != NULL && *d != '\0' ? d : ".";
}

/* The fixture's bytes followed by extra; the caller frees it. */
static char *
load(const char *dir, const char *file, const char *extra, size_t *len)
{
	char path[4096], *buf;
	size_t n, x = strlen(extra);
	long sz;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", srcdir(), dir, file);
	if ((f = fopen(path, "rb")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "anthropic-test: open %s failed\n", path);
		exit(99);
	}
	if ((buf = malloc((size_t)sz + x + 1)) == NULL)
		abort();
	n = fread(buf, 1, (size_t)sz, f);
	fclose(f);
	memcpy(buf + n, extra, x + 1);
	*len = n + x;
	return buf;
}

static jv
parse(const char *text)
{
	struct art_err err;
	jv v = art_json_parse_str(text, &err);

	if (!jv_is_valid(v)) {
		fprintf(stderr, "anthropic-test: bad JSON in test: %s\n", text);
		exit(99);
	}
	return v;
}

/* True when got equals want (both consumed); prints both when not. */
static int
same(jv got, jv want)
{
	jv d = jv_dump_string(jv_copy(want), 0);
	int eq = is_json(got, jv_string_value(d));

	jv_free(d);
	jv_free(want);
	return eq;
}

/* --- request ---------------------------------------------------------- */

static jv
request(const char *req, bool stream, struct art_err *err)
{
	jv r = parse(req), body;

	body = W->request(&r, MODEL, stream, err);
	jv_free(r);
	return body;
}

static int
request_is(const char *req, bool stream, const char *want)
{
	struct art_err err = { NULL, "" };
	jv body = request(req, stream, &err);

	if (!jv_is_valid(body)) {
		printf("#   failed: %s\n", err.msg);
		jv_free(body);
		return 0;
	}
	return is_json(body, want);
}

#define FULL_REQUEST \
	"{\"model\":\"anthropic/claude-sonnet-4\",\"messages\":[" \
	"{\"role\":\"system\",\"content\":\"You are terse.\"}," \
	"{\"role\":\"system\",\"content\":[{\"type\":\"text\"," \
	    "\"text\":\"Answer in English.\"}]}," \
	"{\"role\":\"user\",\"content\":\"Weather in Paris and Oslo?\"}," \
	"{\"role\":\"assistant\",\"content\":\"Checking both.\"," \
	    "\"tool_calls\":[" \
	    "{\"id\":\"call_1\",\"type\":\"function\",\"function\":" \
	    "{\"name\":\"get_weather\"," \
	    "\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}," \
	    "{\"id\":\"call_2\",\"type\":\"function\",\"function\":" \
	    "{\"name\":\"get_weather\",\"arguments\":\"\"}}]}," \
	"{\"role\":\"tool\",\"tool_call_id\":\"call_1\"," \
	    "\"content\":\"18C, sunny\"}," \
	"{\"role\":\"tool\",\"tool_call_id\":\"call_2\"," \
	    "\"content\":[{\"type\":\"text\",\"text\":\"no city\"}]}," \
	"{\"role\":\"user\",\"content\":\"Thanks. And tomorrow?\"}]," \
	"\"tools\":[{\"name\":\"get_weather\"," \
	    "\"description\":\"Weather for a city\",\"input\":" \
	    "{\"type\":\"object\",\"properties\":{\"city\":" \
	    "{\"type\":\"string\"}},\"required\":[\"city\"]}}," \
	    "{\"name\":\"now\",\"description\":\"The time\"}]," \
	"\"temperature\":1,\"max_completion_tokens\":8000," \
	"\"reasoning\":{\"max_tokens\":2048}}"

#define FULL_BODY \
	"{\"model\":\"claude-sonnet-4\",\"max_tokens\":8000," \
	"\"temperature\":1," \
	"\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2048}," \
	"\"system\":\"You are terse.\\n\\nAnswer in English.\"," \
	"\"messages\":[" \
	"{\"role\":\"user\",\"content\":\"Weather in Paris and Oslo?\"}," \
	"{\"role\":\"assistant\",\"content\":[" \
	    "{\"type\":\"text\",\"text\":\"Checking both.\"}," \
	    "{\"type\":\"tool_use\",\"id\":\"call_1\"," \
	    "\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}}," \
	    "{\"type\":\"tool_use\",\"id\":\"call_2\"," \
	    "\"name\":\"get_weather\",\"input\":{}}]}," \
	"{\"role\":\"user\",\"content\":[" \
	    "{\"type\":\"tool_result\",\"tool_use_id\":\"call_1\"," \
	    "\"content\":\"18C, sunny\"}," \
	    "{\"type\":\"tool_result\",\"tool_use_id\":\"call_2\"," \
	    "\"content\":\"no city\"}," \
	    "{\"type\":\"text\",\"text\":\"Thanks. And tomorrow?\"}]}]," \
	"\"tools\":[{\"name\":\"get_weather\"," \
	    "\"description\":\"Weather for a city\",\"input_schema\":" \
	    "{\"type\":\"object\",\"properties\":{\"city\":" \
	    "{\"type\":\"string\"}},\"required\":[\"city\"]}}," \
	    "{\"name\":\"now\",\"description\":\"The time\"," \
	    "\"input_schema\":{\"type\":\"object\",\"properties\":{}}}]"

static void
test_full_request_lifts_system_and_merges_turns(void)
{
	ok(request_is(FULL_REQUEST, false, FULL_BODY "}"),
	    "request: system lifted, tool results and the next user message "
	    "merged into one turn, tools, temperature, max_tokens, thinking");
	ok(request_is(FULL_REQUEST, true, FULL_BODY ",\"stream\":true}"),
	    "request with stream: the same body plus stream:true");
}

static void
test_minimal_request_gets_defaults(void)
{
	ok(request_is("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
	    false, "{\"model\":\"claude-sonnet-4\",\"max_tokens\":4096,"
	    "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"),
	    "request: max_tokens 4096, no system, tools, temperature, "
	    "thinking or stream");
	ok(request_is("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},"
	    "{\"role\":\"user\",\"content\":\"b\"},{\"role\":\"assistant\"},"
	    "{\"role\":\"user\",\"content\":\"c\"}],\"tools\":[]}", false,
	    "{\"model\":\"claude-sonnet-4\",\"max_tokens\":4096,\"messages\":"
	    "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
	    "\"a\"},{\"type\":\"text\",\"text\":\"b\"}]},{\"role\":"
	    "\"assistant\",\"content\":\"\"},{\"role\":\"user\",\"content\":"
	    "\"c\"}]}"),
	    "request: two user messages merge, strings becoming text blocks; "
	    "no content is \"\"; empty tools are left out");
	ok(request_is("{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":"
	    "[{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":"
	    "\"f\",\"arguments\":\"{}\"}}]}]}", false,
	    "{\"model\":\"claude-sonnet-4\",\"max_tokens\":4096,\"messages\":"
	    "[{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\","
	    "\"id\":\"c\",\"name\":\"f\",\"input\":{}}]}]}"),
	    "request: an assistant message of tool calls only");
}

static void
test_reasoning_becomes_thinking(void)
{
	static const struct {
		const char	*reasoning;
		const char	*thinking;	/* NULL: none */
	} cases[] = {
		{ "{\"enabled\":true}", "{\"type\":\"enabled\","
		    "\"budget_tokens\":1024}" },
		{ "{\"enabled\":true,\"max_tokens\":3000}", "{\"type\":"
		    "\"enabled\",\"budget_tokens\":3000}" },
		{ "{\"max_tokens\":2000}", "{\"type\":\"enabled\","
		    "\"budget_tokens\":2000}" },
		{ "{\"enabled\":false,\"max_tokens\":2000}", NULL },
		{ "{\"effort\":\"high\"}", NULL },
		{ "{}", NULL },
	};
	char req[512], want[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(req, sizeof(req), "{\"messages\":[{\"role\":\"user\","
		    "\"content\":\"x\"}],\"reasoning\":%s}",
		    cases[i].reasoning);
		snprintf(want, sizeof(want), "{\"model\":\"claude-sonnet-4\","
		    "\"max_tokens\":4096,%s%s%s\"messages\":[{\"role\":"
		    "\"user\",\"content\":\"x\"}]}",
		    cases[i].thinking != NULL ? "\"thinking\":" : "",
		    cases[i].thinking != NULL ? cases[i].thinking : "",
		    cases[i].thinking != NULL ? "," : "");
		ok(request_is(req, false, want), "reasoning %s: thinking %s",
		    cases[i].reasoning, cases[i].thinking != NULL ?
		    cases[i].thinking : "none");
	}
}

/* What the API refuses with thinking on is fixed up, or refused here. */
static void
test_thinking_fixes_its_limits(void)
{
	struct art_err err = { NULL, "" };
	jv body;

	ok(request_is("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
	    "\"max_completion_tokens\":77,\"temperature\":0.3,"
	    "\"reasoning\":{\"max_tokens\":1024}}", false,
	    "{\"model\":\"claude-sonnet-4\",\"max_tokens\":1101,\"thinking\":"
	    "{\"type\":\"enabled\",\"budget_tokens\":1024},\"messages\":"
	    "[{\"role\":\"user\",\"content\":\"x\"}]}"),
	    "max_completion_tokens under the budget: the answer's tokens go "
	    "on top of it; a temperature but 1 is dropped");
	ok(request_is("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
	    "\"reasoning\":{\"max_tokens\":5000}}", false,
	    "{\"model\":\"claude-sonnet-4\",\"max_tokens\":9096,\"thinking\":"
	    "{\"type\":\"enabled\",\"budget_tokens\":5000},\"messages\":"
	    "[{\"role\":\"user\",\"content\":\"x\"}]}"),
	    "a budget over the default max_tokens: 4096 on top of it");
	body = request("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
	    "\"reasoning\":{\"max_tokens\":500}}", false, &err);
	ok(!jv_is_valid(body) && art_err_is(&err, "bad_request") &&
	    strcmp(err.msg, "reasoning.max_tokens 500: Anthropic's thinking "
	    "budget is 1024 tokens at least") == 0,
	    "a budget under 1024 is refused before the call, saying why");
	jv_free(body);
}

static void
test_user_parts_become_blocks(void)
{
	ok(request_is("{\"messages\":[{\"role\":\"user\",\"content\":["
	    "{\"type\":\"text\",\"text\":\"What are these?\"},"
	    "{\"type\":\"image_url\",\"image_url\":{\"url\":"
	    "\"data:image/png;base64,iVBORw0KGgo=\"}},"
	    "{\"type\":\"image_url\",\"image_url\":{\"url\":"
	    "\"https://example.com/cat.jpg\"}}]}]}", false,
	    "{\"model\":\"claude-sonnet-4\",\"max_tokens\":4096,\"messages\":"
	    "[{\"role\":\"user\",\"content\":["
	    "{\"type\":\"text\",\"text\":\"What are these?\"},"
	    "{\"type\":\"image\",\"source\":{\"type\":\"base64\","
	    "\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}},"
	    "{\"type\":\"image\",\"source\":{\"type\":\"url\","
	    "\"url\":\"https://example.com/cat.jpg\"}}]}]}"),
	    "request: text, data: URL and https URL parts as blocks");
}

static void
test_tool_result_images_become_blocks(void)
{
	ok(request_is("{\"messages\":[{\"role\":\"user\",\"content\":\"draw\"},"
	    "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"t1\","
	    "\"type\":\"function\",\"function\":{\"name\":\"img\","
	    "\"arguments\":\"{}\"}}]},"
	    "{\"role\":\"tool\",\"tool_call_id\":\"t1\",\"content\":["
	    "{\"type\":\"text\",\"text\":\"here\"},"
	    "{\"type\":\"image_url\",\"image_url\":{\"url\":"
	    "\"data:image/png;base64,iVBORw0KGgo=\"}}]}]}", false,
	    "{\"model\":\"claude-sonnet-4\",\"max_tokens\":4096,\"messages\":"
	    "[{\"role\":\"user\",\"content\":\"draw\"},"
	    "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\","
	    "\"id\":\"t1\",\"name\":\"img\",\"input\":{}}]},"
	    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
	    "\"tool_use_id\":\"t1\",\"content\":["
	    "{\"type\":\"text\",\"text\":\"here\"},"
	    "{\"type\":\"image\",\"source\":{\"type\":\"base64\","
	    "\"media_type\":\"image/png\",\"data\":\"iVBORw0KGgo=\"}}]}]}]}"),
	    "request: a tool result's image parts as image blocks inside "
	    "its tool_result");
	ok(request_is("{\"messages\":[{\"role\":\"tool\",\"tool_call_id\":"
	    "\"t1\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
	    "{\"type\":\"text\",\"text\":\"b\"}]}]}", false,
	    "{\"model\":\"claude-sonnet-4\",\"max_tokens\":4096,\"messages\":"
	    "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
	    "\"tool_use_id\":\"t1\",\"content\":\"ab\"}]}]}"),
	    "request: a tool result of text parts alone stays one string");
	ok(request_is("{\"messages\":[{\"role\":\"user\",\"content\":["
	    "{\"type\":\"file\",\"file\":{\"filename\":\"r.pdf\","
	    "\"file_data\":\"data:application/pdf;base64,JVBERi0=\"}},"
	    "{\"type\":\"file\",\"file\":{\"filename\":\"n.md\","
	    "\"file_data\":\"data:text/markdown;base64,IyBoaQo=\"}}]}]}",
	    false,
	    "{\"model\":\"claude-sonnet-4\",\"max_tokens\":4096,\"messages\":"
	    "[{\"role\":\"user\",\"content\":[{\"type\":\"document\","
	    "\"source\":{\"type\":\"base64\",\"media_type\":"
	    "\"application/pdf\",\"data\":\"JVBERi0=\"},\"title\":\"r.pdf\"},"
	    "{\"type\":\"document\",\"source\":{\"type\":\"text\","
	    "\"media_type\":\"text/plain\",\"data\":\"# hi\\n\"},"
	    "\"title\":\"n.md\"}]}]}"),
	    "request: a PDF file part is a base64 document, a text file a "
	    "text document, each titled with its filename");
}

static void
test_bad_requests_are_named(void)
{
	static const struct {
		const char	*req;
		const char	*says;
	} cases[] = {
		{ "[]", "request: expected an object, got array" },
		{ "{}", "missing field 'messages'" },
		{ "{\"messages\":\"hi\"}",
		    "field 'messages': expected array, got string" },
		{ "{\"messages\":[{\"content\":\"x\"}]}",
		    "messages[0]: no string role" },
		{ "{\"messages\":[{\"role\":7}]}",
		    "messages[0]: no string role" },
		{ "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"},"
		    "{\"role\":\"developer\",\"content\":\"x\"}]}",
		    "messages[1]: unknown role 'developer'" },
		{ "{\"messages\":[],\"tools\":[{\"name\":\"a\"},"
		    "{\"description\":\"no name\"}]}",
		    "tools[1]: no string name" },
		{ "{\"messages\":[],\"tools\":{}}",
		    "field 'tools': expected array, got object" },
		{ "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
		    "\"input_audio\",\"input_audio\":{\"data\":\"AA\","
		    "\"format\":\"wav\"}}]}]}",
		    "messages[0].content[0]: part type 'input_audio' has no "
		    "Anthropic equivalent" },
		{ "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
		    "\"text\",\"text\":\"x\"},{\"type\":\"file\",\"file\":"
		    "{\"filename\":\"a.pdf\",\"file_data\":\"AA\"}}]}]}",
		    "messages[0].content[1]: file data URL is not base64" },
		{ "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
		    "\"file\",\"file\":{\"filename\":\"a.png\",\"file_data\":"
		    "\"data:image/png;base64,AAAA\"}}]}]}",
		    "messages[0].content[0]: file 'a.png' is image/png: "
		    "Anthropic reads PDF and text documents only" },
		{ "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
		    "\"file\",\"file\":{\"filename\":\"a.txt\",\"file_data\":"
		    "\"data:text/plain;base64,aGk!\"}}]}]}",
		    "file 'a.txt': its data is not base64" },
		{ "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
		    "\"file\",\"file\":{\"filename\":\"a.txt\",\"file_data\":"
		    "\"data:text/plain;base64,/w==\"}}]}]}",
		    "file 'a.txt': a text file that is not UTF-8" },
		{ "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
		    "\"file\",\"file\":{\"filename\":\"a.txt\"}}]}]}",
		    "messages[0].content[0]: file part without file_data" },
		{ "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
		    "\"video_url\",\"video_url\":{\"url\":\"https://v\"}}]}]}",
		    "part type 'video_url' has no Anthropic equivalent" },
		{ "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
		    "\"image_url\",\"image_url\":{\"url\":"
		    "\"data:image/png,AAAA\"}}]}]}",
		    "messages[0].content[0]: image data URL is not base64" },
		{ "{\"messages\":[{\"role\":\"system\",\"content\":[{\"type\":"
		    "\"image_url\",\"image_url\":{\"url\":\"https://i\"}}]}]}",
		    "messages[0].content[0]: a system message holds only "
		    "text, not part type 'image_url'" },
		{ "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":["
		    "{\"id\":\"call_9\",\"type\":\"function\",\"function\":"
		    "{\"name\":\"f\",\"arguments\":\"[1,2]\"}}]}]}",
		    "messages[0].tool_calls[0]: arguments of call 'call_9' are "
		    "not a JSON object" },
		{ "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":["
		    "{\"id\":\"call_8\",\"type\":\"function\",\"function\":"
		    "{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\"}}]}]}",
		    "arguments of call 'call_8' are not a JSON object" },
		{ "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":["
		    "{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]}]}",
		    "messages[0].tool_calls[0]: call without an id" },
		{ "{\"messages\":[{\"role\":\"tool\",\"content\":\"r\"}]}",
		    "messages[0]: tool message without a tool_call_id" },
		{ "{\"messages\":[{\"role\":\"user\",\"content\":5}]}",
		    "messages[0]: content must be a string or an array" },
		{ "{\"messages\":[],\"temperature\":\"hot\"}",
		    "field 'temperature': expected number, got string" },
		{ "{\"messages\":[],\"reasoning\":{\"max_tokens\":1.5}}",
		    "reasoning: field 'max_tokens'" },
	};
	struct art_err err;
	size_t i;
	jv body;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err.code = NULL;
		err.msg[0] = '\0';
		body = request(cases[i].req, false, &err);
		ok(!jv_is_valid(body) && art_err_is(&err, "bad_request") &&
		    strstr(err.msg, cases[i].says) != NULL,
		    "bad request %zu: bad_request \"%s\" (got %s \"%s\")", i,
		    cases[i].says, err.code != NULL ? err.code : "none",
		    err.msg);
		jv_free(body);
	}
}

/* --- response --------------------------------------------------------- */

/* response() on text; exactly one of *resp and *error is set. */
static int
respond(const char *body, size_t len, jv *resp, jv *error)
{
	int rc;

	*resp = jv_null();
	*error = jv_null();
	rc = W->response(body, len, resp, error);
	if (jv_get_kind(rc == 0 ? *error : *resp) != JV_KIND_NULL) {
		printf("#   response() set both outputs\n");
		return -2;
	}
	return rc;
}

static int
response_is(const char *body, const char *want)
{
	jv resp, error;

	if (respond(body, strlen(body), &resp, &error) != 0) {
		jv_free(resp);
		return is_json(error, want);
	}
	jv_free(error);
	return is_json(resp, want);
}

static int
fixture_response(const char *file, jv *resp)
{
	size_t n;
	char *body = load(FIXTURES, file, "", &n);
	jv error;
	int rc = respond(body, n, resp, &error);

	free(body);
	jv_free(error);
	return rc;
}

#define TOOL_USE_TEXT \
	"<thinking>\\nThe updateIssueList tool was provided in the list of " \
	"available functions. The tool has no required parameters, so it " \
	"can be called without any additional information needed from the " \
	"user.\\n</thinking>\\n\\nOkay, I will update the current issue list:"

#define TOOL_USE_RESPONSE \
	"{\"id\":\"msg_01GCBaV8gyWAYgMVggRqZbuQ\"," \
	"\"model\":\"claude-3-opus-20240229\"," \
	"\"content\":\"" TOOL_USE_TEXT "\"," \
	"\"tool_calls\":[{\"id\":\"toolu_01LRmxn9vGM1d2DZSDBowdZ1\"," \
	"\"type\":\"function\",\"function\":{\"name\":\"updateIssueList\"," \
	"\"arguments\":\"{}\"}}],\"finish_reason\":\"tool_calls\"," \
	"\"usage\":{\"input\":602,\"uncached_input\":602,\"cache_read\":0," \
	"\"cache_write\":0,\"output\":93,\"total\":695,\"provider\":" \
	"{\"input_tokens\":602,\"cache_creation_input_tokens\":0," \
	"\"cache_read_input_tokens\":0,\"cache_creation\":" \
	"{\"ephemeral_5m_input_tokens\":0,\"ephemeral_1h_input_tokens\":0}," \
	"\"output_tokens\":93,\"service_tier\":\"standard\"}}}"

#define MULTI_ARGUMENTS \
	"{\\\"elements\\\":[{\\\"location\\\":\\\"San Francisco\\\"," \
	"\\\"temperature\\\":-5,\\\"condition\\\":\\\"snowy\\\"}," \
	"{\\\"location\\\":\\\"London\\\",\\\"temperature\\\":0," \
	"\\\"condition\\\":\\\"snowy\\\"},{\\\"location\\\":\\\"Paris\\\"," \
	"\\\"temperature\\\":23,\\\"condition\\\":\\\"cloudy\\\"}," \
	"{\\\"location\\\":\\\"Berlin\\\",\\\"temperature\\\":-9," \
	"\\\"condition\\\":\\\"snowy\\\"}]}"

static void
test_response_fixtures(void)
{
	jv resp;

	ok(fixture_response("messages-nonstream-tool-use.json", &resp) == 0 &&
	    is_json(resp, TOOL_USE_RESPONSE),
	    "response: text then tool_use with input {} (arguments \"{}\"), "
	    "tool_use is tool_calls, usage normalised");
	ok(fixture_response("messages-nonstream-tool-use-multi-element-input."
	    "json", &resp) == 0 && is_json(resp,
	    "{\"id\":\"msg_0191iYfpERYfS27xLsdW2nbb\","
	    "\"model\":\"claude-haiku-4-5-20251001\",\"tool_calls\":[{\"id\":"
	    "\"toolu_01Q9ExVZnzZj7E2QQYHYtNUa\",\"type\":\"function\","
	    "\"function\":{\"name\":\"json\",\"arguments\":\""
	    MULTI_ARGUMENTS "\"}}],\"finish_reason\":\"tool_calls\","
	    "\"usage\":{\"input\":1151,\"uncached_input\":1151,\"cache_read\":"
	    "0,\"cache_write\":0,\"output\":87,\"total\":1238,\"provider\":"
	    "{\"input_tokens\":1151,\"cache_creation_input_tokens\":0,"
	    "\"cache_read_input_tokens\":0,\"cache_creation\":"
	    "{\"ephemeral_5m_input_tokens\":0,\"ephemeral_1h_input_tokens\":0},"
	    "\"output_tokens\":87,\"service_tier\":\"standard\"}}}"),
	    "response: nested input serialised compactly, no content key "
	    "without a text block");
}

static void
test_response_reasoning_and_cache_usage(void)
{
	ok(response_is("{\"model\":\"m\",\"content\":[{\"type\":\"thinking\","
	    "\"thinking\":\"Hmm.\",\"signature\":\"s\"},{\"type\":\"text\","
	    "\"text\":\"A\"},{\"type\":\"text\",\"text\":\"B\"}],"
	    "\"stop_reason\":\"max_tokens\",\"usage\":{\"input_tokens\":3,"
	    "\"cache_read_input_tokens\":40,\"cache_creation_input_tokens\":7,"
	    "\"output_tokens\":5}}",
	    "{\"model\":\"m\",\"content\":\"AB\",\"reasoning\":\"Hmm.\","
	    "\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":"
	    "\"Hmm.\",\"signature\":\"s\"}],"
	    "\"finish_reason\":\"length\",\"usage\":{\"input\":50,"
	    "\"uncached_input\":3,\"cache_read\":40,\"cache_write\":7,"
	    "\"output\":5,\"total\":55,\"provider\":{\"input_tokens\":3,"
	    "\"cache_read_input_tokens\":40,\"cache_creation_input_tokens\":7,"
	    "\"output_tokens\":5}}}"),
	    "response: text blocks joined, thinking as reasoning, cached "
	    "tokens counted into input");
	ok(response_is("{\"model\":\"m\",\"content\":[]}", "{\"model\":\"m\"}"),
	    "response: no content, tool calls, finish_reason or usage");
}

static void
test_assistant_images_stay_home(void)
{
	/* A reply's own images (LlmResponse.images, recorded as parts)
	 * do not go back: an assistant turn takes text and tool use. */
	ok(request_is("{\"messages\":[{\"role\":\"user\",\"content\":"
	    "\"draw\"},{\"role\":\"assistant\",\"content\":[{\"type\":"
	    "\"text\",\"text\":\"here\"},{\"type\":\"image_url\","
	    "\"image_url\":{\"url\":\"data:image/png;base64,AAAA\"}}]},"
	    "{\"role\":\"user\",\"content\":\"more\"}]}", false,
	    "{\"model\":\"claude-sonnet-4\",\"max_tokens\":4096,"
	    "\"messages\":[{\"role\":\"user\",\"content\":\"draw\"},"
	    "{\"role\":\"assistant\",\"content\":\"here\"},"
	    "{\"role\":\"user\",\"content\":\"more\"}]}"),
	    "an assistant's image parts are left out, its text kept");
}

static void
test_stop_reasons_are_normalised(void)
{
	static const char *const map[][2] = {
		{ "end_turn", "stop" }, { "stop_sequence", "stop" },
		{ "pause_turn", "stop" }, { "tool_use", "tool_calls" },
		{ "max_tokens", "length" },
		{ "model_context_window_exceeded",
		    "model_context_window_exceeded" },
	};
	char body[256], want[256];
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		snprintf(body, sizeof(body), "{\"model\":\"m\",\"content\":[],"
		    "\"stop_reason\":\"%s\"}", map[i][0]);
		snprintf(want, sizeof(want), "{\"model\":\"m\","
		    "\"finish_reason\":\"%s\"}", map[i][1]);
		ok(response_is(body, want), "stop_reason %s is %s", map[i][0],
		    map[i][1]);
	}
}

static void
test_response_failures(void)
{
	size_t n;
	char *body = load(FIXTURES, "error-529-overloaded.json", "", &n);
	jv resp, error;

	ok(respond(body, n, &resp, &error) == -1 && is_json(error,
	    "{\"error\":\"anthropic: Overloaded\",\"retryable\":true,"
	    "\"code\":\"provider_error\",\"detail\":{\"error\":{\"type\":"
	    "\"overloaded_error\",\"message\":\"Overloaded\"}}}"),
	    "response: an error body maps like error(), without a status");
	free(body);
	ok(response_is("<html>502</html>", "{\"error\":\"anthropic: response "
	    "is not valid JSON\",\"retryable\":true,\"code\":"
	    "\"provider_error\"}"), "response: not JSON is retryable");
	ok(respond("", 0, &resp, &error) == -1 && is_json(error,
	    "{\"error\":\"anthropic: response is not valid JSON\","
	    "\"retryable\":true,\"code\":\"provider_error\"}"),
	    "response: an empty body is not JSON");
	ok(response_is("{\"type\":\"message\",\"model\":\"m\"}",
	    "{\"error\":\"anthropic: response has no content array\","
	    "\"retryable\":false,\"code\":\"provider_error\"}"),
	    "response: no content array is not retryable");
	ok(response_is("{\"model\":\"m\",\"content\":[{\"type\":\"tool_use\","
	    "\"name\":\"f\",\"input\":{}}]}", "{\"error\":\"anthropic: "
	    "tool_use block without an id and a name\",\"retryable\":false,"
	    "\"code\":\"provider_error\"}"),
	    "response: a tool_use block without an id");
	ok(response_is("{\"model\":\"m\",\"content\":[{\"type\":\"text\","
	    "\"text\":\"I can't\"}],\"stop_reason\":\"refusal\"}",
	    "{\"model\":\"m\",\"content\":\"I can't\",\"finish_reason\":"
	    "\"refusal\"}"), "response: a refusal keeps what was said, "
	    "finish_reason refusal");
}

/* --- native ----------------------------------------------------------- */

static int
round_trips(jv x, const char *what)
{
	jv body = W->native(&x), d, resp, error;
	int rc;

	d = jv_dump_string(body, 0);
	rc = respond(jv_string_value(d),
	    (size_t)jv_string_length_bytes(jv_copy(d)), &resp, &error);
	jv_free(d);
	jv_free(error);
	if (rc != 0) {
		jv_free(resp);
		jv_free(x);
		return ok(0, "native round trip: %s", what);
	}
	return ok(same(resp, x), "response(native(x)) is x: %s", what);
}

static void
test_native_body(void)
{
	jv x = parse("{\"model\":\"claude-x\",\"content\":\"Two calls.\","
	    "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
	    "\"function\":{\"name\":\"a\",\"arguments\":\"{\\\"q\\\":1}\"}},"
	    "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":"
	    "\"b\",\"arguments\":\"\"}}],\"finish_reason\":\"length\"}");

	ok(is_json(W->native(&x), "{\"id\":\"msg_agentrt\",\"type\":"
	    "\"message\",\"role\":\"assistant\",\"model\":\"claude-x\","
	    "\"content\":[{\"type\":\"text\",\"text\":\"Two calls.\"},"
	    "{\"type\":\"tool_use\",\"id\":\"c1\",\"name\":\"a\",\"input\":"
	    "{\"q\":1}},{\"type\":\"tool_use\",\"id\":\"c2\",\"name\":\"b\","
	    "\"input\":{}}],\"stop_reason\":\"max_tokens\","
	    "\"stop_sequence\":null}"),
	    "native: text block, tool_use inputs parsed (\"\" is {}), "
	    "length is max_tokens, no usage without usage");
	jv_free(x);
	x = parse("{\"model\":\"m\",\"content\":\"hi\",\"finish_reason\":"
	    "\"stop\",\"usage\":{\"input\":5,\"uncached_input\":2,"
	    "\"cache_read\":3,\"cache_write\":0,\"output\":1,\"total\":6}}");
	ok(is_json(W->native(&x), "{\"id\":\"msg_agentrt\",\"type\":"
	    "\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":"
	    "[{\"type\":\"text\",\"text\":\"hi\"}],\"stop_reason\":"
	    "\"end_turn\",\"stop_sequence\":null,\"usage\":{\"input_tokens\":"
	    "2,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":"
	    "3,\"output_tokens\":1}}"),
	    "native: stop is end_turn; usage rebuilt when it has no provider");
	jv_free(x);
}

static void
test_native_round_trips(void)
{
	jv x;

	round_trips(parse("{\"id\":\"msg_1\",\"model\":\"claude-x\","
	    "\"content\":\"Two.\","
	    "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
	    "\"function\":{\"name\":\"a\",\"arguments\":"
	    "\"{\\\"q\\\":[1,\\\"x\\\"]}\"}},{\"id\":\"c2\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"b\",\"arguments\":\"{}\"}}],"
	    "\"finish_reason\":\"tool_calls\"}"), "two tool calls");
	round_trips(parse("{\"id\":\"msg_2\",\"model\":\"m\",\"content\":"
	    "\"\",\"finish_reason\":\"length\"}"), "empty text, length");
	round_trips(parse("{\"id\":\"msg_3\",\"model\":\"m\",\"reasoning\":"
	    "\"think\",\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":"
	    "\"think\",\"signature\":\"c2ln\"},{\"type\":"
	    "\"redacted_thinking\",\"data\":\"ZGF0YQ\"}],"
	    "\"content\":\"ok\",\"finish_reason\":\"stop\"}"),
	    "reasoning and its thinking blocks");
	if (fixture_response("messages-nonstream-tool-use.json", &x) == 0)
		round_trips(x, "messages-nonstream-tool-use.json, usage too");
	if (fixture_response("messages-nonstream-tool-use-multi-element-input."
	    "json", &x) == 0)
		round_trips(x, "multi-element input");
}

/* --- error ------------------------------------------------------------ */

/* error() on text; headers NULL stands for none. */
static jv
error_of(long status, const jv *headers, const char *body, int64_t now)
{
	jv none = jv_object(), e;

	e = W->error(status, headers != NULL ? headers : &none, body,
	    strlen(body), now);
	jv_free(none);
	return e;
}

static jv
fixture_error(long status, const char *file)
{
	size_t n;
	char *body = load(FIXTURES, file, "", &n);
	jv headers = jv_object(), e;

	e = W->error(status, &headers, body, n, NOW);
	free(body);
	jv_free(headers);
	return e;
}

#define MSG_400 \
	"messages.2.content.0: unexpected `tool_use_id` found in " \
	"`tool_result` blocks: srvtoolu_issue_17366_invalid. Each " \
	"`tool_result` block must have a corresponding `tool_use` block in " \
	"the previous message."

static void
test_error_fixtures(void)
{
	ok(is_json(fixture_error(400, "error-400-invalid-request.json"),
	    "{\"error\":\"anthropic 400: " MSG_400 "\",\"retryable\":false,"
	    "\"code\":\"provider_error\",\"detail\":{\"status\":400,\"error\":"
	    "{\"type\":\"invalid_request_error\",\"message\":\"" MSG_400 "\"},"
	    "\"request_id\":\"req_011Cd65WVh8Zrvno3NunpJ73\"}}"),
	    "error 400: not retryable, message and request_id kept");
	ok(is_json(fixture_error(500, "error-500-api-error.json"),
	    "{\"error\":\"anthropic 500: Internal server error\","
	    "\"retryable\":true,\"code\":\"provider_error\",\"detail\":"
	    "{\"status\":500,\"error\":{\"type\":\"api_error\",\"message\":"
	    "\"Internal server error\"},\"request_id\":"
	    "\"req_011CX7HaqAMfRL4GKbdQarW7\"}}"),
	    "error 500 api_error: retryable");
	ok(is_json(fixture_error(529, "error-529-overloaded.json"),
	    "{\"error\":\"anthropic 529: Overloaded\",\"retryable\":true,"
	    "\"code\":\"provider_error\",\"detail\":{\"status\":529,\"error\":"
	    "{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}}"),
	    "error 529 overloaded: retryable");
}

/*
 * A raw HTTP response: *status, the headers as an object of lower-cased
 * names, and where the body starts in text.
 */
static jv
read_http(const char *text, long *status, const char **body)
{
	const char *p = strchr(text, ' '), *eol, *colon, *v;
	jv headers = jv_object();
	char name[128];
	size_t i, n;

	*status = strtol(p + 1, NULL, 10);
	for (p = strchr(p, '\n') + 1; *p != '\r' && *p != '\n'; p = eol + 1) {
		eol = strchr(p, '\n');
		colon = memchr(p, ':', (size_t)(eol - p));
		n = (size_t)(colon - p);
		for (i = 0; i < n && i < sizeof(name) - 1; i++)
			name[i] = (char)(p[i] >= 'A' && p[i] <= 'Z' ?
			    p[i] - 'A' + 'a' : p[i]);
		name[i] = '\0';
		for (v = colon + 1; *v == ' '; v++)
			;
		n = (size_t)(eol - v) - (eol[-1] == '\r');
		headers = jv_object_set(headers, jv_string(name),
		    jv_string_sized(v, (int)n));
	}
	*body = p + (*p == '\r' ? 2 : 1);
	return headers;
}

static jv
expected_429(const char *body, jv retry_ms)
{
	jv b = parse(body), perr = jv_object_get(jv_copy(b),
	    jv_string("error")), e, detail;
	jv msg = jv_object_get(jv_copy(perr), jv_string("message"));

	e = jv_object_set(jv_object(), jv_string("error"),
	    jv_string_concat(jv_string("anthropic 429: "), msg));
	e = jv_object_set(e, jv_string("retryable"), jv_true());
	e = jv_object_set(e, jv_string("code"), jv_string("rate_limited"));
	if (jv_get_kind(retry_ms) == JV_KIND_NUMBER)
		e = jv_object_set(e, jv_string("retry_after_ms"), retry_ms);
	else
		jv_free(retry_ms);
	detail = jv_object_set(jv_object(), jv_string("status"),
	    jv_number(429));
	detail = jv_object_set(detail, jv_string("error"), perr);
	detail = jv_object_set(detail, jv_string("request_id"),
	    jv_string("req_011CSHoEeqs5C35K2UUqR7Fy"));
	jv_free(b);
	return jv_object_set(e, jv_string("detail"), detail);
}

static jv
drop(jv headers, const char *suffix)
{
	jv out = jv_object();
	size_t n, s = strlen(suffix);

	jv_object_foreach(headers, k, v) {
		n = strlen(jv_string_value(k));
		if (n >= s && strcmp(jv_string_value(k) + n - s, suffix) == 0) {
			jv_free(k);
			jv_free(v);
		} else
			out = jv_object_set(out, k, v);
	}
	jv_free(headers);
	return out;
}

static void
test_error_429_and_its_retry_delay(void)
{
	size_t n;
	char *raw = load(FIXTURES, "error-429-rate-limit.http", "", &n);
	const char *body;
	long status;
	jv h = read_http(raw, &status, &body), h2;

	ok(status == 429 && jv_object_length(jv_copy(h)) == 13,
	    "the .http fixture reads as 429 with 13 headers");
	ok(same(error_of(status, &h, body, NOW),
	    expected_429(body, jv_number(7000))),
	    "error 429: rate_limited, retryable, retry-after 7 is 7000 ms");
	h2 = jv_object_set(jv_copy(h), jv_string("retry-after-ms"),
	    jv_string("1500"));
	ok(same(error_of(status, &h2, body, NOW),
	    expected_429(body, jv_number(1500))),
	    "retry-after-ms wins over retry-after");
	jv_free(h2);
	h2 = jv_object_set(jv_copy(h), jv_string("retry-after-ms"),
	    jv_string("250.2"));
	ok(same(error_of(status, &h2, body, NOW),
	    expected_429(body, jv_number(251))),
	    "a fractional retry-after-ms rounds up");
	jv_free(h2);
	h2 = jv_object_set(jv_copy(h), jv_string("retry-after"),
	    jv_string("Wed, 01 Jan 2025 00:00:03 GMT"));
	ok(same(error_of(status, &h2, body, NOW),
	    expected_429(body, jv_number(3000))),
	    "retry-after as an HTTP-date, against now_ms");
	jv_free(h2);

	/* Without Retry-After the used-up limit's reset decides. */
	h2 = jv_object_delete(jv_copy(h), jv_string("retry-after"));
	ok(same(error_of(status, &h2, body, NOW),
	    expected_429(body, jv_number(7000))),
	    "reset headers: the used-up input-tokens limit resets in 7 s");
	ok(same(error_of(status, &h2, body, NOW + 5000),
	    expected_429(body, jv_number(2000))),
	    "reset headers: 2 s left at 00:00:05");
	ok(same(error_of(status, &h2, body, NOW + 60000),
	    expected_429(body, jv_number(0))),
	    "reset headers: a reset in the past is 0, never negative");
	h2 = drop(h2, "-remaining");
	ok(same(error_of(status, &h2, body, NOW - 2000),
	    expected_429(body, jv_number(2000))),
	    "reset headers without remaining counts: the earliest reset");
	h2 = drop(h2, "-reset");
	ok(same(error_of(status, &h2, body, NOW), expected_429(body,
	    jv_null())), "no delay header: no retry_after_ms");
	jv_free(h2);
	jv_free(h);
	free(raw);
}

static void
test_error_bodies_that_are_not_json(void)
{
	jv h = jv_object_set(jv_object(), jv_string("request-id"),
	    jv_string("req_h")), e;
	char big[301];

	ok(is_json(error_of(502, &h, "<html>\r\n<head><title>502 Bad "
	    "Gateway</title></head>\n\n</html>\n", NOW), "{\"error\":"
	    "\"anthropic 502: <html> <head><title>502 Bad Gateway</title>"
	    "</head> </html>\",\"retryable\":true,\"code\":\"provider_error\","
	    "\"detail\":{\"status\":502,\"error\":null,\"request_id\":"
	    "\"req_h\"}}"),
	    "error 502 HTML: its text on one line, request-id header kept");
	memset(big, 'x', 300);
	big[300] = '\0';
	e = error_of(503, NULL, big, NOW);
	ok(strlen(art_json_str(&e, "error")) == strlen("anthropic 503: ") +
	    200, "a long body is cut at 200 bytes");
	jv_free(e);
	memcpy(big + 199, "\xc3\xa9", 3);
	e = error_of(503, NULL, big, NOW);
	ok(strlen(art_json_str(&e, "error")) == strlen("anthropic 503: ") +
	    199, "a cut never splits a UTF-8 sequence");
	jv_free(e);
	ok(is_json(error_of(503, NULL, "", NOW), "{\"error\":\"anthropic 503: "
	    "empty response body\",\"retryable\":true,\"code\":"
	    "\"provider_error\",\"detail\":{\"status\":503,\"error\":null}}"),
	    "error 503 with no body");
	ok(is_json(error_of(404, &h, "{\"detail\":\"Not Found\"}", NOW),
	    "{\"error\":\"anthropic 404: {\\\"detail\\\":\\\"Not Found\\\"}\","
	    "\"retryable\":false,\"code\":\"provider_error\",\"detail\":"
	    "{\"status\":404,\"error\":null,\"request_id\":\"req_h\"}}"),
	    "error 404 with JSON not Anthropic's: the body text");
	jv_free(h);
}

static void
test_error_statuses(void)
{
	static const struct {
		long		 status;
		const char	*type;
		const char	*code;
		bool		 retryable;
	} cases[] = {
		{ 400, "invalid_request_error",	"provider_error", false },
		{ 401, "authentication_error",	"provider_error", false },
		{ 402, "billing_error",		"budget_exceeded", false },
		{ 403, "permission_error",	"provider_error", false },
		{ 404, "not_found_error",	"provider_error", false },
		{ 408, NULL,			"provider_error", true },
		{ 409, NULL,			"provider_error", true },
		{ 413, "request_too_large",	"provider_error", false },
		{ 429, "rate_limit_error",	"rate_limited", true },
		{ 429, NULL,			"rate_limited", true },
		{ 500, "api_error",		"provider_error", true },
		{ 503, NULL,			"provider_error", true },
		{ 504, "timeout_error",		"provider_error", true },
		{ 529, "overloaded_error",	"provider_error", true },
	};
	char body[256];
	size_t i;
	jv e, r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(body, sizeof(body), cases[i].type != NULL ?
		    "{\"type\":\"error\",\"error\":{\"type\":\"%s\","
		    "\"message\":\"m\"}}" : "%s", cases[i].type != NULL ?
		    cases[i].type : "oops");
		e = error_of(cases[i].status, NULL, body, NOW);
		r = jv_object_get(jv_copy(e), jv_string("retryable"));
		ok(strcmp(art_json_str(&e, "code"), cases[i].code) == 0 &&
		    jv_get_kind(r) == (cases[i].retryable ? JV_KIND_TRUE :
		    JV_KIND_FALSE), "status %ld %s: %s, %s", cases[i].status,
		    cases[i].type != NULL ? cases[i].type : "(no JSON)",
		    cases[i].code, cases[i].retryable ? "retryable" :
		    "not retryable");
		jv_free(r);
		jv_free(e);
	}
}

/* --- streams ---------------------------------------------------------- */

struct run {
	struct art_wire_stream	*st;
	jv			 deltas;
	jv			 error;		/* null unless -1 */
	int			 rc;		/* the last stream_event's */
	int			 events;
};

static int
on_event(const struct art_sse_event *ev, void *ctx)
{
	struct run *r = ctx;

	r->events++;
	r->rc = W->stream_event(r->st, ev, &r->deltas, &r->error);
	return r->rc;
}

/*
 * Feeds s[0..n) in chunks of step bytes until an event ends the stream,
 * told the answer tool's name when answer is not NULL.
 */
static void
run_answer_bytes(struct run *r, const char *s, size_t n, size_t step,
    const char *answer)
{
	struct art_sse *sse = art_sse_new(0);
	struct art_err err;
	size_t off, k;

	r->st = W->stream_new();
	if (answer != NULL)
		W->stream_answer(r->st, answer);
	r->deltas = jv_array();
	r->error = jv_null();
	r->rc = 0;
	r->events = 0;
	for (off = 0; off < n && r->rc == 0; off += k) {
		k = n - off < step ? n - off : step;
		art_sse_feed(sse, s + off, k, on_event, r, &err);
	}
	art_sse_finish(sse, NULL, NULL, &err);
	art_sse_free(sse);
}

static void
run_bytes(struct run *r, const char *s, size_t n, size_t step)
{
	run_answer_bytes(r, s, n, step, NULL);
}

/* A stream of dir, whole, told the answer is structured_answer. */
static void
run_answer(struct run *r, const char *dir, const char *file)
{
	size_t n;
	char *s = load(dir, file, "", &n);

	run_answer_bytes(r, s, n, n, "structured_answer");
	free(s);
}

static void
run_fixture(struct run *r, const char *file, const char *extra,
    size_t step)
{
	size_t n;
	char *s = load(STREAMS, file, extra, &n);

	run_bytes(r, s, n, step ? step : n);
	free(s);
}

/* A stream of tests/fixtures/anthropic, whole. */
static void
run_anthropic(struct run *r, const char *file)
{
	size_t n;
	char *s = load(FIXTURES, file, "", &n);

	run_bytes(r, s, n, n);
	free(s);
}

#define USAGE_42(out, total) \
	"{\"input\":42,\"uncached_input\":42,\"cache_read\":0," \
	"\"cache_write\":0,\"output\":" #out ",\"total\":" #total "," \
	"\"provider\":{\"input_tokens\":42," \
	"\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0," \
	"\"output_tokens\":" #out "}}"

static void
run_text(struct run *r, const char *s)
{
	run_bytes(r, s, strlen(s), strlen(s));
}

static void
run_free(struct run *r)
{
	W->stream_free(r->st);
	jv_free(r->deltas);
	jv_free(r->error);
}

/* stream_result as JSON text's equal; exactly one output is set. */
static int
result_is(struct run *r, int want_rc, const char *want)
{
	jv resp = jv_null(), error = jv_null();
	int rc = W->stream_result(r->st, &resp, &error);

	if (rc != want_rc || jv_get_kind(rc == 0 ? error : resp) !=
	    JV_KIND_NULL) {
		printf("#   stream_result gave %d\n", rc);
		jv_free(resp);
		jv_free(error);
		return 0;
	}
	jv_free(rc == 0 ? error : resp);
	return is_json(rc == 0 ? resp : error, want);
}

#define TEXT_DELTAS \
	"[{\"text\":\"Hello\"},{\"text\":\" there\"},{\"text\":\"!\"}," \
	"{\"finish_reason\":\"stop\"}]"
#define TEXT_RESULT \
	"{\"id\":\"msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK\"," \
	"\"model\":\"claude-3-opus-latest\",\"content\":\"Hello there!\"," \
	"\"finish_reason\":\"stop\",\"usage\":{\"input\":11," \
	"\"uncached_input\":11,\"cache_read\":0,\"cache_write\":0," \
	"\"output\":6,\"total\":17,\"provider\":{\"input_tokens\":11," \
	"\"output_tokens\":6}}}"

static void
test_stream_text(void)
{
	struct run r;

	run_fixture(&r, "messages-stream-text.sse", "\n\n", 0);
	ok(r.rc == 1 && r.events == 9, "text stream: message_stop ends it "
	    "(rc %d after %d events)", r.rc, r.events);
	ok(is_json(jv_copy(r.deltas), TEXT_DELTAS),
	    "text stream: three text deltas, then finish_reason stop");
	ok(result_is(&r, 0, TEXT_RESULT), "text stream: the LlmResponse, "
	    "usage merged from message_start and message_delta");
	ok(result_is(&r, 0, TEXT_RESULT), "stream_result twice gives the "
	    "same answer");
	run_free(&r);

	run_fixture(&r, "messages-stream-text.sse", "", 0);
	ok(r.rc == 0 && r.events == 8 && is_json(jv_copy(r.deltas),
	    TEXT_DELTAS) && result_is(&r, 0, TEXT_RESULT),
	    "text stream as the SDK recorded it (message_stop unterminated): "
	    "message_delta already settled it");
	run_free(&r);
}

#define TOOLU	"\"id\":\"toolu_01NRLabsLyVHZPKxbKvkfSMn\""
#define WEATHER_USAGE \
	"{\"input_tokens\":377,\"cache_creation_input_tokens\":0," \
	"\"cache_read_input_tokens\":0,\"output_tokens\":65," \
	"\"service_tier\":\"standard\"}"

#define WEATHER_BODY \
	"{\"id\":\"msg_019Q1hrJbZG26Fb9BQhrkHEr\"," \
	"\"model\":\"claude-sonnet-4-20250514\",\"type\":\"message\"," \
	"\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":" \
	"\"I'll check the current weather in Paris for you.\"}," \
	"{\"type\":\"tool_use\"," TOOLU ",\"name\":\"get_weather\"," \
	"\"input\":{\"location\": \"Paris\"}}],\"stop_reason\":" \
	"\"tool_use\",\"stop_sequence\":null,\"usage\":" WEATHER_USAGE "}"

static void
test_stream_tool_use(void)
{
	struct run r;
	jv resp, error, want;

	run_fixture(&r, "messages-stream-tool-use.sse", "\n\n", 0);
	ok(r.rc == 1 && is_json(jv_copy(r.deltas),
	    "[{\"text\":\"I\"},{\"text\":\"'ll check the current weather in "
	    "Paris for you.\"},"
	    "{\"tool_calls\":[{" TOOLU ",\"name\":\"get_weather\"}]},"
	    "{\"tool_calls\":[{" TOOLU ",\"arguments\":\"{\\\"locati\"}]},"
	    "{\"tool_calls\":[{" TOOLU ",\"arguments\":\"on\\\": \\\"P\"}]},"
	    "{\"tool_calls\":[{" TOOLU ",\"arguments\":\"ar\"}]},"
	    "{\"tool_calls\":[{" TOOLU ",\"arguments\":\"is\\\"}\"}]},"
	    "{\"finish_reason\":\"tool_calls\"}]"),
	    "tool stream: the call's name, then each non-empty fragment "
	    "under its id");
	ok(result_is(&r, 0, "{\"id\":\"msg_019Q1hrJbZG26Fb9BQhrkHEr\","
	    "\"model\":\"claude-sonnet-4-20250514\","
	    "\"content\":\"I'll check the current weather in Paris for you.\","
	    "\"tool_calls\":[{" TOOLU ",\"type\":\"function\",\"function\":"
	    "{\"name\":\"get_weather\",\"arguments\":"
	    "\"{\\\"location\\\":\\\"Paris\\\"}\"}}],"
	    "\"finish_reason\":\"tool_calls\",\"usage\":{\"input\":377,"
	    "\"uncached_input\":377,\"cache_read\":0,\"cache_write\":0,"
	    "\"output\":65,\"total\":442,\"provider\":" WEATHER_USAGE "}}"),
	    "tool stream: arguments compact, as response() gives them");

	/* The same answer, not streamed, must read back the same. */
	W->stream_result(r.st, &want, &error);
	ok(respond(WEATHER_BODY, strlen(WEATHER_BODY), &resp, &error) == 0 &&
	    same(resp, want), "tool stream: the same LlmResponse response() "
	    "gives for the non-streamed body");
	run_free(&r);
}

#define TAXES_ID	"\"id\":\"toolu_01EKqbqmZrGRXy18eN7m9kvY\""

static void
test_stream_max_tokens_drops_the_unfinished_call(void)
{
	struct run r;

	run_fixture(&r, "messages-stream-max-tokens-partial-tool-json.sse",
	    "\n\n", 0);
	ok(r.rc == 1 && is_json(jv_copy(r.deltas),
	    "[{\"text\":\"I\"},"
	    "{\"text\":\"'ll create a comprehensive tax guide for\"},"
	    "{\"text\":\" someone with multiple W2s an\"},"
	    "{\"text\":\"d save it in a file called taxes.txt. Let\"},"
	    "{\"text\":\" me do that for you now.\"},"
	    "{\"tool_calls\":[{" TAXES_ID ",\"name\":\"make_file\"}]},"
	    "{\"tool_calls\":[{" TAXES_ID ",\"arguments\":"
	    "\"{\\\"filename\\\": \\\"taxes.txt\"}]},"
	    "{\"tool_calls\":[{" TAXES_ID ",\"arguments\":"
	    "\"\\\", \\\"lines_of_text\\\": [\\n\\\"# COMPREHENSIVE TAX GUIDE "
	    "FOR INDIVIDUALS WITH MULTIPLE W-2s\\\",\\n\\\"\\\",\\n\\\"## "
	    "INTRODUCTION\\\",\\n\\\"\\\",\"}]},"
	    "{\"tool_calls\":[{" TAXES_ID ",\"arguments\":"
	    "\"\\n\\\"Filing taxes\"}]},"
	    "{\"finish_reason\":\"length\"}]"),
	    "max_tokens stream: text, the call's fragments, finish length");
	ok(result_is(&r, 0, "{\"id\":\"msg_01UdjYBBipA9omjYhicnevgq\","
	    "\"model\":\"claude-3-7-sonnet-20250219\","
	    "\"content\":\"I'll create a comprehensive tax guide for someone "
	    "with multiple W2s and save it in a file called taxes.txt. Let me "
	    "do that for you now.\",\"finish_reason\":\"length\",\"usage\":"
	    "{\"input\":450,\"uncached_input\":450,\"cache_read\":0,"
	    "\"cache_write\":0,\"output\":124,\"total\":574,\"provider\":"
	    "{\"input_tokens\":450,\"cache_creation_input_tokens\":0,"
	    "\"cache_read_input_tokens\":0,\"output_tokens\":124,"
	    "\"service_tier\":\"standard\"}}}"),
	    "max_tokens stream: the call without content_block_stop is "
	    "dropped, never run; finish_reason length");
	run_free(&r);
}

#define OVERLOADED \
	"{\"error\":\"anthropic: stream error: Overloaded\",\"retryable\":" \
	"true,\"code\":\"provider_error\",\"detail\":{\"error\":{\"type\":" \
	"\"overloaded_error\",\"message\":\"Overloaded\"}}}"
#define EARLY \
	"{\"error\":\"anthropic: stream ended early\",\"retryable\":true," \
	"\"code\":\"provider_error\"}"

static void
test_stream_errors(void)
{
	struct run r;

	run_fixture(&r, "messages-stream-error-overloaded.sse", "", 0);
	ok(r.rc == -1 && is_json(jv_copy(r.deltas), "[]") &&
	    is_json(jv_copy(r.error), OVERLOADED),
	    "error event: -1 with a retryable provider_error");
	ok(result_is(&r, -1, EARLY), "error event: no result");
	run_free(&r);

	run_fixture(&r, "messages-stream-text-then-error.sse", "", 0);
	ok(r.rc == -1 && is_json(jv_copy(r.deltas), "[{\"text\":\"Hello\"}]")
	    && is_json(jv_copy(r.error), OVERLOADED),
	    "text then error: the text delta, then -1 with the error");
	ok(result_is(&r, -1, EARLY), "text then error: ended early");
	run_free(&r);

	run_text(&r, "event: error\ndata: {\"type\":\"error\",\"error\":"
	    "{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}\n\n");
	ok(r.rc == -1 && is_json(jv_copy(r.error), "{\"error\":\"anthropic: "
	    "stream error: slow down\",\"retryable\":true,\"code\":"
	    "\"rate_limited\",\"detail\":{\"error\":{\"type\":"
	    "\"rate_limit_error\",\"message\":\"slow down\"}}}"),
	    "rate_limit_error event: rate_limited, retryable");
	run_free(&r);

	run_text(&r, "event: error\ndata: {\"type\":\"error\",\"error\":"
	    "{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}\n\n");
	ok(r.rc == -1 && is_json(jv_copy(r.error), "{\"error\":\"anthropic: "
	    "stream error: bad\",\"retryable\":false,\"code\":"
	    "\"provider_error\",\"detail\":{\"error\":{\"type\":"
	    "\"invalid_request_error\",\"message\":\"bad\"}}}"),
	    "invalid_request_error event: not retryable");
	run_free(&r);

	run_text(&r, "event: content_block_delta\ndata: {\"type\":\n\n");
	ok(r.rc == -1 && is_json(jv_copy(r.error), "{\"error\":\"anthropic: "
	    "stream event 'content_block_delta' is not valid JSON\","
	    "\"retryable\":true,\"code\":\"provider_error\"}"),
	    "data that is not JSON: -1, retryable");
	run_free(&r);

	run_text(&r, "event: message_stop\ndata: {\"type\":"
	    "\"message_stop\"}\n\n");
	ok(r.rc == -1 && is_json(jv_copy(r.error), "{\"error\":\"anthropic: "
	    "stream event 'message_stop' before message_start\",\"retryable\":"
	    "true,\"code\":\"provider_error\"}"),
	    "message_stop with no message_start: an error, as the SDK has it, "
	    "not an empty success");
	ok(result_is(&r, -1, EARLY), "and no result");
	run_free(&r);

	run_text(&r, "event: message_start\ndata: {\"type\":\"message_start\","
	    "\"message\":{\"id\":\"msg_1\",\"model\":\"m\"}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":"
	    "\"content_block_delta\",\"index\":3,\"delta\":{\"type\":"
	    "\"text_delta\",\"text\":\"x\"}}\n\n");
	ok(r.rc == -1 && is_json(jv_copy(r.error), "{\"error\":\"anthropic: "
	    "stream event content_block_delta names a block that never "
	    "started\",\"retryable\":false,\"code\":\"provider_error\"}"),
	    "a delta for a block that never started: not the provider's "
	    "shape, not retryable");
	run_free(&r);
}

#define START \
	"event: message_start\ndata: {\"type\":\"message_start\",\"message\":" \
	"{\"model\":\"claude-x\",\"content\":[],\"usage\":{\"input_tokens\":" \
	"10,\"cache_read_input_tokens\":100,\"cache_creation_input_tokens\":" \
	"5,\"output_tokens\":1}}}\n\n"

static void
test_stream_cut_short(void)
{
	struct run r;

	run_text(&r, START "event: content_block_start\ndata: {\"type\":"
	    "\"content_block_start\",\"index\":0,\"content_block\":{\"type\":"
	    "\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: "
	    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
	    "\"text_delta\",\"text\":\"Hel\"}}\n\n");
	ok(r.rc == 0 && is_json(jv_copy(r.deltas), "[{\"text\":\"Hel\"}]") &&
	    result_is(&r, -1, EARLY),
	    "a stream that stops before message_delta ended early, never a "
	    "truncated success");
	run_free(&r);
}

/* A thinking block cut short (no stop, or no signature) is not kept. */
static void
test_stream_unsigned_thinking_is_not_kept(void)
{
	struct run r;
	jv resp = jv_null(), error = jv_null(), blocks;
	int rc;

	run_text(&r, START
	    "event: content_block_start\ndata: {\"type\":\"content_block_start"
	    "\",\"index\":0,\"content_block\":{\"type\":\"thinking\","
	    "\"thinking\":\"\"}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta"
	    "\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\","
	    "\"thinking\":\"Hmm\"}}\n\n"
	    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\","
	    "\"index\":0}\n\n"
	    "event: content_block_start\ndata: {\"type\":\"content_block_start"
	    "\",\"index\":1,\"content_block\":{\"type\":\"thinking\","
	    "\"thinking\":\"\"}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta"
	    "\",\"index\":1,\"delta\":{\"type\":\"signature_delta\","
	    "\"signature\":\"EqQB\"}}\n\n"
	    "data: {\"type\":\"message_stop\"}\n\n");
	rc = W->stream_result(r.st, &resp, &error);
	blocks = rc == 0 ? art_json_field(&resp, "thinking_blocks") : jv_null();
	ok(rc == 0 && (jv_get_kind(blocks) == JV_KIND_NULL ||
	    jv_array_length(jv_copy(blocks)) == 0) &&
	    is_json(art_json_field(&resp, "reasoning"), "\"Hmm\""),
	    "a thinking block with no signature, or never stopped, is not kept "
	    "to be sent back; its text stays reasoning");
	jv_free(blocks);
	jv_free(resp);
	jv_free(error);
	run_free(&r);
}

static void
test_stream_thinking_and_cache_usage(void)
{
	struct run r;

	run_text(&r, START
	    "event: content_block_start\ndata: {\"type\":\"content_block_start"
	    "\",\"index\":0,\"content_block\":{\"type\":\"thinking\","
	    "\"thinking\":\"\"}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta"
	    "\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\","
	    "\"thinking\":\"Let me\"}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta"
	    "\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\","
	    "\"thinking\":\" think.\"}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta"
	    "\",\"index\":0,\"delta\":{\"type\":\"signature_delta\","
	    "\"signature\":\"EqQB\"}}\n\n"
	    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\","
	    "\"index\":0}\n\n"
	    "event: content_block_start\ndata: {\"type\":\"content_block_start"
	    "\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":"
	    "\"toolu_1\",\"name\":\"now\",\"input\":{}}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta"
	    "\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
	    "\"partial_json\":\"\"}}\n\n"
	    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\","
	    "\"index\":1}\n\n"
	    "event: ping\ndata: {\"type\":\"ping\"}\n\n"
	    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":"
	    "{\"stop_reason\":\"tool_use\"},\"usage\":{\"input_tokens\":10,"
	    "\"cache_read_input_tokens\":100,\"cache_creation_input_tokens\":5,"
	    "\"output_tokens\":20,\"server_tool_use\":null}}\n\n"
	    "data: {\"type\":\"message_stop\"}\n\n");
	ok(r.rc == 1 && is_json(jv_copy(r.deltas),
	    "[{\"reasoning\":\"Let me\"},{\"reasoning\":\" think.\"},"
	    "{\"tool_calls\":[{\"id\":\"toolu_1\",\"name\":\"now\"}]},"
	    "{\"finish_reason\":\"tool_calls\"}]"),
	    "thinking stream: reasoning deltas; no delta for an empty "
	    "partial_json; a data-only message_stop still ends it");
	ok(result_is(&r, 0, "{\"model\":\"claude-x\",\"reasoning\":"
	    "\"Let me think.\",\"thinking_blocks\":[{\"type\":\"thinking\","
	    "\"thinking\":\"Let me think.\",\"signature\":\"EqQB\"}],"
	    "\"tool_calls\":[{\"id\":\"toolu_1\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"now\",\"arguments\":"
	    "\"{}\"}}],\"finish_reason\":\"tool_calls\",\"usage\":{\"input\":"
	    "115,\"uncached_input\":10,\"cache_read\":100,\"cache_write\":5,"
	    "\"output\":20,\"total\":135,\"provider\":{\"input_tokens\":10,"
	    "\"cache_read_input_tokens\":100,\"cache_creation_input_tokens\":5,"
	    "\"output_tokens\":20}}}"),
	    "thinking stream: reasoning, a call with no input is \"{}\", "
	    "cache counts from message_delta merged");
	run_free(&r);
}

static void
test_stream_refusal(void)
{
	struct run r;

	run_text(&r, START "event: message_delta\ndata: {\"type\":"
	    "\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\"},"
	    "\"usage\":{\"output_tokens\":3}}\n\nevent: message_stop\ndata: "
	    "{\"type\":\"message_stop\"}\n\n");
	ok(r.rc == 1 && is_json(jv_copy(r.deltas),
	    "[{\"finish_reason\":\"refusal\"}]") && result_is(&r, 0,
	    "{\"model\":\"claude-x\",\"finish_reason\":\"refusal\","
	    "\"usage\":{\"input\":115,\"uncached_input\":10,\"cache_read\":"
	    "100,\"cache_write\":5,\"output\":3,\"total\":118,\"provider\":"
	    "{\"input_tokens\":10,\"cache_read_input_tokens\":100,"
	    "\"cache_creation_input_tokens\":5,\"output_tokens\":3}}}"),
	    "refusal stream: an answer with finish_reason refusal");
	run_free(&r);

	run_anthropic(&r, "messages-stream-refusal.sse");
	ok(r.rc == 1 && result_is(&r, 0, "{\"id\":\"msg_refusal\",\"model\":"
	    "\"claude-sonnet-4-5-20250929\",\"content\":\"I can help with "
	    "part of\",\"finish_reason\":\"refusal\",\"usage\":"
	    USAGE_42(9, 51) "}"),
	    "refusal stream: the text said before it is kept");
	run_free(&r);
}

static void
test_stream_message_stop_without_message_delta(void)
{
	struct run r;

	run_anthropic(&r, "messages-stream-no-message-delta.sse");
	ok(r.rc == 1 && is_json(jv_copy(r.deltas),
	    "[{\"text\":\"Hello\"},{\"text\":\" there\"}]") &&
	    result_is(&r, 0, "{\"id\":\"msg_nodelta\",\"model\":"
	    "\"claude-sonnet-4-5-20250929\",\"content\":\"Hello there\",\"usage\":" USAGE_42(3, 45) "}"),
	    "message_stop with no message_delta: a whole message, no "
	    "finish_reason, not ended early");
	run_free(&r);
}

#define SIG	"EqQBCkgIBhABGAIiQFAKEsig0thinking0tool0loop0" \
	"SENTINEL0000000000000000"
#define SIG2	"EqQBCkgIBhABGAIiQFAKEsig1second0block0" \
	"SENTINEL00000000000000000000"
#define DATA	"EmwKAhgBEgyFAKEredacted0thinking0data0" \
	"SENTINEL000000000000000000000"
#define THOUGHT	"The user wants a sum. I should call add with 1 and 2."

/* resp (consumed) as the assistant turn of a request, a tool result after. */
static jv
next_request(jv resp, const char *call_id)
{
	jv m = jv_object_delete(resp, jv_string("usage")), msgs;

	m = art_json_set(m, "role", jv_string("assistant"));
	msgs = JV_ARRAY(parse("{\"role\":\"user\",\"content\":\"1+2?\"}"), m,
	    art_json_set(parse("{\"role\":\"tool\",\"content\":\"3\"}"),
	    "tool_call_id", jv_string(call_id)));
	return art_json_set(jv_object(), "messages", msgs);
}

static void
test_stream_thinking_blocks_keep_signatures(void)
{
	struct art_err err = { NULL, "" };
	struct run r;
	jv resp = jv_null(), error = jv_null(), body, req;

	run_anthropic(&r, "messages-stream-thinking-tool-use.sse");
	ok(r.rc == 1 && W->stream_result(r.st, &resp, &error) == 0,
	    "thinking stream with a signature_delta settles");
	ok(is_json(art_json_field(&resp, "thinking_blocks"),
	    "[{\"type\":\"thinking\",\"thinking\":\"" THOUGHT "\","
	    "\"signature\":\"" SIG "\"}]") && is_json(art_json_field(&resp,
	    "reasoning"), "\"" THOUGHT "\""),
	    "thinking stream: the block keeps its signature; reasoning as "
	    "before");
	req = next_request(resp, "toolu_think_1");
	body = W->request(&req, MODEL, true, &err);
	ok(is_json(jv_array_get(art_json_field(&body, "messages"), 1),
	    "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\","
	    "\"thinking\":\"" THOUGHT "\",\"signature\":\"" SIG "\"},"
	    "{\"type\":\"text\",\"text\":\"I'll add them.\"},"
	    "{\"type\":\"tool_use\",\"id\":\"toolu_think_1\",\"name\":"
	    "\"add\",\"input\":{\"a\":1,\"b\":2}}]}"),
	    "request: the thinking block goes back first, unchanged, then "
	    "text, then tool_use");
	jv_free(body);
	jv_free(req);
	jv_free(error);
	run_free(&r);

	run_anthropic(&r, "messages-stream-redacted-thinking-tool-use.sse");
	resp = error = jv_null();
	ok(r.rc == 1 && W->stream_result(r.st, &resp, &error) == 0 &&
	    is_json(art_json_field(&resp, "thinking_blocks"),
	    "[{\"type\":\"redacted_thinking\",\"data\":\"" DATA "\"},"
	    "{\"type\":\"thinking\",\"thinking\":\"Then add.\","
	    "\"signature\":\"" SIG2 "\"}]") && is_json(art_json_field(&resp,
	    "reasoning"), "\"Then add.\""),
	    "redacted_thinking: its data kept in order, no reasoning of it");
	jv_free(resp);
	jv_free(error);
	run_free(&r);
}

static void
test_request_thinking_blocks(void)
{
	struct art_err err = { NULL, "" };
	jv body;

	ok(request_is("{\"messages\":[{\"role\":\"user\",\"content\":"
	    "\"x\"},{\"role\":\"assistant\",\"thinking_blocks\":[{\"type\":"
	    "\"redacted_thinking\",\"data\":\"D\"},{\"type\":\"thinking\","
	    "\"thinking\":\"T\",\"signature\":\"S\"}],\"content\":\"Hi\"}]}",
	    false, "{\"model\":\"" MODEL "\",\"max_tokens\":4096,"
	    "\"messages\":[{\"role\":\"user\",\"content\":\"x\"},"
	    "{\"role\":\"assistant\",\"content\":[{\"type\":"
	    "\"redacted_thinking\",\"data\":\"D\"},{\"type\":\"thinking\","
	    "\"thinking\":\"T\",\"signature\":\"S\"},{\"type\":\"text\","
	    "\"text\":\"Hi\"}]}]}"),
	    "request: thinking blocks before the text, in their order");
	ok(request_is("{\"messages\":[{\"role\":\"assistant\","
	    "\"thinking_blocks\":[],\"content\":\"Hi\"}]}", false,
	    "{\"model\":\"" MODEL "\",\"max_tokens\":4096,\"messages\":"
	    "[{\"role\":\"assistant\",\"content\":\"Hi\"}]}"),
	    "request: no thinking blocks, the content as it was");
	body = request("{\"messages\":[{\"role\":\"assistant\","
	    "\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":"
	    "\"T\"}]}]}", false, &err);
	ok(!jv_is_valid(body) && strcmp(err.code, "bad_request") == 0 &&
	    strcmp(err.msg, "messages[0].thinking_blocks[0]: not a thinking "
	    "block with its signature, nor a redacted_thinking block with its "
	    "data") == 0, "request: a thinking block without its signature "
	    "is named (%s)", err.msg);
	jv_free(body);
	body = request("{\"messages\":[{\"role\":\"assistant\","
	    "\"thinking_blocks\":\"T\"}]}", false, &err);
	ok(!jv_is_valid(body) && strcmp(err.code, "bad_request") == 0 &&
	    strncmp(err.msg, "messages[0]", 11) == 0,
	    "request: thinking_blocks not an array is named (%s)", err.msg);
	jv_free(body);
}

/* Byte by byte, every fixture gives what it gives whole. */
static void
test_stream_chunking_does_not_matter(void)
{
	static const char *const files[] = {
		"messages-stream-text.sse",
		"messages-stream-tool-use.sse",
		"messages-stream-max-tokens-partial-tool-json.sse",
		"messages-stream-error-overloaded.sse",
		"messages-stream-text-then-error.sse",
	};
	struct run whole, bytes;
	jv a, b, ea, eb;
	size_t i;
	int ra, rb;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		run_fixture(&whole, files[i], "\n\n", 0);
		run_fixture(&bytes, files[i], "\n\n", 1);
		a = b = ea = eb = jv_null();
		ra = W->stream_result(whole.st, &a, &ea);
		rb = W->stream_result(bytes.st, &b, &eb);
		ok(whole.rc == bytes.rc && ra == rb &&
		    art_json_equal(&whole.deltas, &bytes.deltas) &&
		    art_json_equal(&whole.error, &bytes.error) &&
		    art_json_equal(&a, &b) && art_json_equal(&ea, &eb),
		    "%s byte by byte: the same deltas and result", files[i]);
		jv_free(a);
		jv_free(b);
		jv_free(ea);
		jv_free(eb);
		run_free(&whole);
		run_free(&bytes);
	}
}

/* --- structured answers: response_format as a forced tool ------------ */

#define RF \
	"\"response_format\":{\"name\":\"structured_answer\"," \
	"\"description\":\"The answer\",\"schema\":{\"type\":\"object\"," \
	"\"properties\":{\"summary\":{\"type\":\"string\"}}}}"
#define ANSWER_TOOL \
	"{\"name\":\"structured_answer\",\"description\":\"The answer\"," \
	"\"input_schema\":{\"type\":\"object\",\"properties\":{\"summary\":" \
	"{\"type\":\"string\"}}}}"
#define HI	"\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
#define HI_OUT \
	"\"model\":\"claude-sonnet-4\",\"max_tokens\":4096," \
	"\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"

static void
test_response_format_becomes_a_forced_tool(void)
{
	ok(request_is("{" HI "," RF "}", false, "{" HI_OUT ",\"tools\":["
	    ANSWER_TOOL "],\"tool_choice\":{\"type\":\"tool\",\"name\":"
	    "\"structured_answer\"}}"),
	    "response_format alone: the answer tool, and tool_choice names it");
	ok(request_is("{" HI "," RF ",\"tools\":[{\"name\":\"now\"}]}", false,
	    "{" HI_OUT ",\"tools\":[{\"name\":\"now\",\"input_schema\":"
	    "{\"type\":\"object\",\"properties\":{}}}," ANSWER_TOOL "],"
	    "\"tool_choice\":{\"type\":\"any\"}}"),
	    "response_format beside tools: the answer tool last, tool_choice "
	    "any (a real call or the answer)");
	ok(request_is("{" HI "," RF ",\"reasoning\":{\"enabled\":true}}",
	    false, "{" HI_OUT ",\"thinking\":{\"type\":\"enabled\","
	    "\"budget_tokens\":1024},\"tools\":[" ANSWER_TOOL "],"
	    "\"tool_choice\":{\"type\":\"auto\"}}"),
	    "response_format with thinking: tool_choice auto, since thinking "
	    "refuses a forced tool");
	ok(request_is("{" HI ",\"response_format\":{\"name\":\"todo_plan\","
	    "\"schema\":{\"type\":\"object\"}}}", true, "{" HI_OUT
	    ",\"tools\":[{\"name\":\"todo_plan\",\"input_schema\":"
	    "{\"type\":\"object\"}}],\"tool_choice\":{\"type\":\"tool\","
	    "\"name\":\"todo_plan\"},\"stream\":true}"),
	    "response_format without a description: none is sent");
}

static void
test_bad_response_formats_are_named(void)
{
	static const struct {
		const char	*req;
		const char	*says;
	} cases[] = {
		{ "{" HI ",\"response_format\":\"json\"}",
		    "field 'response_format': expected object" },
		{ "{" HI ",\"response_format\":{\"name\":\"a\"}}",
		    "response_format: missing field 'schema'" },
		{ "{" HI ",\"response_format\":{\"schema\":{}}}",
		    "response_format: missing field 'name'" },
		{ "{" HI ",\"response_format\":{\"name\":\"\",\"schema\":{}}}",
		    "response_format: empty 'name'" },
		{ "{" HI ",\"tools\":[{\"name\":\"a\"}],\"response_format\":"
		    "{\"name\":\"a\",\"schema\":{}}}",
		    "response_format: name 'a' is a tool's name too" },
	};
	struct art_err err;
	size_t i;
	jv body;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err.code = NULL;
		err.msg[0] = '\0';
		body = request(cases[i].req, false, &err);
		ok(!jv_is_valid(body) && art_err_is(&err, "bad_request") &&
		    strstr(err.msg, cases[i].says) != NULL,
		    "bad response_format %zu: \"%s\" (got \"%s\")", i,
		    cases[i].says, err.msg);
		jv_free(body);
	}
}

/* The answer the structured-answer fixtures carry, compact. */
#define ANSWER_JSON \
	"{\"summary\":\"Paris is 18C and sunny; Oslo is 4C with rain.\"," \
	"\"columns\":[\"city\",\"weather\"],\"rows\":[{\"cells\":[\"Paris\"," \
	"\"18C, sunny\"]},{\"cells\":[\"Oslo\",\"4C, rain\"]}]," \
	"\"followups\":[\"Show tomorrow's forecast\"]}"
/* The same as a JSON string. */
#define ANSWER_TEXT \
	"\"{\\\"summary\\\":\\\"Paris is 18C and sunny; Oslo is 4C with " \
	"rain.\\\",\\\"columns\\\":[\\\"city\\\",\\\"weather\\\"]," \
	"\\\"rows\\\":[{\\\"cells\\\":[\\\"Paris\\\",\\\"18C, sunny\\\"]}," \
	"{\\\"cells\\\":[\\\"Oslo\\\",\\\"4C, rain\\\"]}]," \
	"\\\"followups\\\":[\\\"Show tomorrow's forecast\\\"]}\""

/* resp (consumed) without usage, id and model: what the answer changes. */
static jv
gist(jv resp)
{
	resp = jv_object_delete(resp, jv_string("usage"));
	resp = jv_object_delete(resp, jv_string("id"));
	return jv_object_delete(resp, jv_string("model"));
}

/* response() then answer() for name, on text. */
static jv
answered(const char *body, const char *name)
{
	jv resp, error;

	if (respond(body, strlen(body), &resp, &error) != 0) {
		jv_free(resp);
		return error;
	}
	jv_free(error);
	return gist(W->answer(resp, name));
}

#define MSG(content, stop) \
	"{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\"," \
	"\"model\":\"m\",\"content\":[" content "],\"stop_reason\":\"" stop \
	"\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}"
#define USE(id, name, input) \
	"{\"type\":\"tool_use\",\"id\":\"" id "\",\"name\":\"" name "\"," \
	"\"input\":" input "}"
#define WEATHER_CALL \
	"{\"id\":\"toolu_w\",\"type\":\"function\",\"function\":{\"name\":" \
	"\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}}"

/* {content, finish_reason}: what an answer's gist is. */
static jv
answer_with(const char *content, const char *finish)
{
	return art_json_set(art_json_set(jv_object(), "content",
	    jv_string(content)), "finish_reason", jv_string(finish));
}

static void
test_answer_tool_call_becomes_content(void)
{
	jv resp;

	ok(fixture_response("messages-nonstream-structured-answer.json",
	    &resp) == 0 && same(gist(W->answer(resp, "structured_answer")),
	    answer_with(ANSWER_JSON, "stop")),
	    "fixture: the answer tool's input is the content, compact JSON; "
	    "no tool_calls; finish_reason stop, not tool_calls");
	ok(fixture_response("messages-nonstream-structured-answer.json",
	    &resp) == 0 && is_json(gist(W->answer(resp, "todo_plan")),
	    "{\"tool_calls\":[{\"id\":\"toolu_01Q9ExVZnzZj7E2QQYHYtNUa\","
	    "\"type\":\"function\",\"function\":{\"name\":"
	    "\"structured_answer\",\"arguments\":" ANSWER_TEXT "}}],"
	    "\"finish_reason\":\"tool_calls\"}"),
	    "fixture: answer() for another name leaves the call alone");
	ok(is_json(answered(MSG("{\"type\":\"text\",\"text\":\"Here:\"},"
	    USE("toolu_a", "structured_answer", "{\"summary\": \"s\"}"),
	    "tool_use"), "structured_answer"),
	    "{\"content\":\"{\\\"summary\\\":\\\"s\\\"}\","
	    "\"finish_reason\":\"stop\"}"),
	    "a text block beside the answer is dropped");
	ok(is_json(answered(MSG(USE("toolu_w", "get_weather",
	    "{\"city\":\"Oslo\"}") ","
	    USE("toolu_a", "structured_answer", "{\"summary\":\"s\"}"),
	    "tool_use"), "structured_answer"),
	    "{\"content\":\"{\\\"summary\\\":\\\"s\\\"}\",\"tool_calls\":["
	    WEATHER_CALL "],\"finish_reason\":\"tool_calls\"}"),
	    "beside a real call: the answer is the content, the real call "
	    "stays, finish_reason tool_calls");
	ok(is_json(answered(MSG(USE("toolu_w", "get_weather",
	    "{\"city\":\"Oslo\"}"), "tool_use"), "structured_answer"),
	    "{\"tool_calls\":[" WEATHER_CALL "],\"finish_reason\":"
	    "\"tool_calls\"}"),
	    "a real call alone is left as it is");
	ok(is_json(answered(MSG("{\"type\":\"text\",\"text\":\"{}\"}",
	    "end_turn"), "structured_answer"),
	    "{\"content\":\"{}\",\"finish_reason\":\"stop\"}"),
	    "no answer tool call: the text stays for the caller to check");
	ok(is_json(answered(MSG("{\"type\":\"thinking\",\"thinking\":\"hm\","
	    "\"signature\":\"SIG\"},"
	    USE("toolu_a", "structured_answer", "{\"summary\":\"s\"}"),
	    "tool_use"), "structured_answer"),
	    "{\"content\":\"{\\\"summary\\\":\\\"s\\\"}\","
	    "\"finish_reason\":\"stop\",\"reasoning\":\"hm\","
	    "\"thinking_blocks\":[{\"type\":\"thinking\",\"thinking\":\"hm\","
	    "\"signature\":\"SIG\"}]}"),
	    "thinking beside the answer is kept, as reasoning and its block");
	ok(is_json(answered(MSG(USE("toolu_a", "structured_answer",
	    "{\"summary\":\"s\"}"), "max_tokens"), "structured_answer"),
	    "{\"content\":\"{\\\"summary\\\":\\\"s\\\"}\","
	    "\"finish_reason\":\"length\"}"),
	    "an answer cut short by max_tokens keeps finish_reason length");
}

static void
test_stream_answer_tool(void)
{
	struct run r;
	jv resp = jv_null(), error = jv_null();

	run_answer(&r, FIXTURES, "messages-stream-structured-answer.sse");
	ok(r.rc == 1 && is_json(jv_copy(r.deltas),
	    "[{\"text\":\"{\\\"summary\\\": \\\"\"},"
	    "{\"text\":\"Paris is 18C and sunny; Oslo is 4C with rain.\\\",\"},"
	    "{\"text\":\" \\\"columns\\\": [\\\"city\\\", \\\"weather\\\"], "
	    "\\\"rows\\\": [{\\\"cells\\\": [\\\"Paris\\\",\"},"
	    "{\"text\":\" \\\"18C, sunny\\\"]}, {\\\"cells\\\": [\\\"Oslo\\\", "
	    "\\\"4C, rain\\\"]}], \\\"followups\\\": [\\\"Show tomorrow's "
	    "forecast\\\"]}\"},"
	    "{\"finish_reason\":\"tool_calls\"}]"),
	    "answer stream: the input's fragments as text deltas, no tool "
	    "call delta");
	ok(W->stream_result(r.st, &resp, &error) == 0, "answer stream: it "
	    "settles");
	ok(same(gist(W->answer(resp, "structured_answer")),
	    answer_with(ANSWER_JSON, "stop")),
	    "answer stream: the content is the answer's compact JSON, "
	    "finish_reason stop, no tool_calls");
	jv_free(error);
	run_free(&r);

	/* Without stream_answer the same stream is an ordinary tool call. */
	run_anthropic(&r, "messages-stream-structured-answer.sse");
	ok(is_json(jv_array_get(jv_copy(r.deltas), 0), "{\"tool_calls\":[{"
	    TOOLU ",\"name\":\"structured_answer\"}]}"),
	    "a stream not told the answer's name streams it as a tool call");
	run_free(&r);
}

static void
test_stream_answer_beside_a_real_call(void)
{
	static const char s[] =
	    "event: message_start\ndata: {\"type\":\"message_start\","
	    "\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":"
	    "{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
	    "event: content_block_start\ndata: {\"type\":"
	    "\"content_block_start\",\"index\":0,\"content_block\":"
	    "{\"type\":\"text\",\"text\":\"\"}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":"
	    "\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
	    "\"text_delta\",\"text\":\"Checking.\"}}\n\n"
	    "event: content_block_stop\ndata: {\"type\":"
	    "\"content_block_stop\",\"index\":0}\n\n"
	    "event: content_block_start\ndata: {\"type\":"
	    "\"content_block_start\",\"index\":1,\"content_block\":"
	    "{\"type\":\"tool_use\",\"id\":\"toolu_w\",\"name\":"
	    "\"get_weather\",\"input\":{}}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":"
	    "\"content_block_delta\",\"index\":1,\"delta\":{\"type\":"
	    "\"input_json_delta\",\"partial_json\":"
	    "\"{\\\"city\\\":\\\"Oslo\\\"}\"}}\n\n"
	    "event: content_block_stop\ndata: {\"type\":"
	    "\"content_block_stop\",\"index\":1}\n\n"
	    "event: content_block_start\ndata: {\"type\":"
	    "\"content_block_start\",\"index\":2,\"content_block\":"
	    "{\"type\":\"tool_use\",\"id\":\"toolu_a\",\"name\":"
	    "\"structured_answer\",\"input\":{}}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":"
	    "\"content_block_delta\",\"index\":2,\"delta\":{\"type\":"
	    "\"input_json_delta\",\"partial_json\":"
	    "\"{\\\"summary\\\": \\\"s\\\"}\"}}\n\n"
	    "event: content_block_stop\ndata: {\"type\":"
	    "\"content_block_stop\",\"index\":2}\n\n"
	    "event: message_delta\ndata: {\"type\":\"message_delta\","
	    "\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n"
	    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
	struct run r;
	jv resp = jv_null(), error = jv_null();

	run_answer_bytes(&r, s, strlen(s), strlen(s), "structured_answer");
	ok(is_json(jv_copy(r.deltas), "[{\"text\":\"Checking.\"},"
	    "{\"tool_calls\":[{\"id\":\"toolu_w\",\"name\":\"get_weather\"}]},"
	    "{\"tool_calls\":[{\"id\":\"toolu_w\",\"arguments\":"
	    "\"{\\\"city\\\":\\\"Oslo\\\"}\"}]},"
	    "{\"text\":\"{\\\"summary\\\": \\\"s\\\"}\"},"
	    "{\"finish_reason\":\"tool_calls\"}]"),
	    "answer beside a real call, streamed: the real call's deltas "
	    "stay, the answer's are text");
	W->stream_result(r.st, &resp, &error);
	ok(is_json(gist(W->answer(resp, "structured_answer")),
	    "{\"content\":\"{\\\"summary\\\":\\\"s\\\"}\",\"tool_calls\":["
	    WEATHER_CALL "],\"finish_reason\":\"tool_calls\"}"),
	    "answer beside a real call, streamed: text dropped, the answer "
	    "is the content, the real call kept");
	jv_free(error);
	run_free(&r);
}

static void
test_registered_and_stream_free_null(void)
{
	ok(strcmp(W->name, "anthropic") == 0, "the format is called anthropic");
	/* Not a point: it can only fail by crashing, which fails the
	 * test's plan. */
	W->stream_free(NULL);
}

int
main(void)
{
	test_full_request_lifts_system_and_merges_turns();
	test_minimal_request_gets_defaults();
	test_reasoning_becomes_thinking();
	test_thinking_fixes_its_limits();
	test_user_parts_become_blocks();
	test_tool_result_images_become_blocks();
	test_bad_requests_are_named();
	test_response_fixtures();
	test_response_reasoning_and_cache_usage();
	test_assistant_images_stay_home();
	test_stop_reasons_are_normalised();
	test_response_failures();
	test_native_body();
	test_native_round_trips();
	test_error_fixtures();
	test_error_429_and_its_retry_delay();
	test_error_bodies_that_are_not_json();
	test_error_statuses();
	test_stream_text();
	test_stream_tool_use();
	test_stream_max_tokens_drops_the_unfinished_call();
	test_stream_errors();
	test_stream_cut_short();
	test_stream_thinking_and_cache_usage();
	test_stream_refusal();
	test_stream_message_stop_without_message_delta();
	test_stream_unsigned_thinking_is_not_kept();
	test_stream_thinking_blocks_keep_signatures();
	test_request_thinking_blocks();
	test_stream_chunking_does_not_matter();
	test_response_format_becomes_a_forced_tool();
	test_bad_response_formats_are_named();
	test_answer_tool_call_becomes_content();
	test_stream_answer_tool();
	test_stream_answer_beside_a_real_call();
	test_registered_and_stream_free_null();
	return tap_done();
}
