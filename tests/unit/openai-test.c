/* openai-test - Chat Completions both ways, over recorded and built bodies */
#include "wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jv.h>

#include "json.h"
#include "sse.h"
#include "tap.h"
#include "testjv.h"

#define W		(&art_openai_wire)
#define SSE_DIR		"tests/fixtures/sse"
#define OPENAI_DIR	"tests/fixtures/openai"
/* Wed, 21 Oct 2015 07:28:00 GMT */
#define OCT21		INT64_C(1445412480000)

/* --- helpers --------------------------------------------------------- */

static const char *
srcdir(void)
{
	const char *d = getenv("top_srcdir");

	return d != NULL && *d != '\0' ? d : ".";
}

/* A fixture's bytes, NUL-terminated; the caller frees it. */
static char *
load(const char *dir, const char *file, size_t *len)
{
	char path[4096], *buf;
	long sz;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", srcdir(), dir, file);
	if ((f = fopen(path, "rb")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "openai-test: open %s failed\n", path);
		exit(99);
	}
	if ((buf = malloc((size_t)sz + 1)) == NULL)
		abort();
	*len = fread(buf, 1, (size_t)sz, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

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

/* The error object's "error" text; valid while e is. */
static const char *
message(const jv *e)
{
	const char *s = art_json_str(e, "error");

	return s != NULL ? s : "";
}

static bool
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* e has this code and retryable, and its message starts with prefix. */
static bool
is_error(const jv *e, const char *code, bool retryable, const char *prefix)
{
	jv r = art_json_field(e, "retryable");
	const char *c = art_json_str(e, "code");
	bool good = jv_get_kind(r) == (retryable ? JV_KIND_TRUE :
	    JV_KIND_FALSE) && c != NULL && strcmp(c, code) == 0 &&
	    starts(message(e), prefix);

	if (!good)
		printf("#   got %s\n", message(e));
	jv_free(r);
	return good;
}

/* Calls of response() that set both of resp and error, or neither. */
static int nboth;

/* response() on text; resp or error back, the other left null. */
static int
respond(const char *text, size_t len, jv *resp, jv *error)
{
	int rc;

	*resp = jv_null();
	*error = jv_null();
	rc = W->response(text, len, resp, error);
	if ((rc == 0) != (jv_get_kind(*error) == JV_KIND_NULL) ||
	    (rc == 0) == (jv_get_kind(*resp) == JV_KIND_NULL)) {
		printf("#   response() set both or neither\n");
		nboth++;
	}
	return rc;
}

/* The LlmResponse for a fixture body; aborts if there is none. */
static jv
response_of_file(const char *file)
{
	size_t len;
	char *body = load(OPENAI_DIR, file, &len);
	jv resp, error;

	if (respond(body, len, &resp, &error) != 0) {
		fprintf(stderr, "openai-test: %s gave an error\n", file);
		abort();
	}
	free(body);
	jv_free(error);
	return resp;
}

/* --- art_wire_find and art_wire_retry_after -------------------------- */

static void
test_find_names_each_format(void)
{
	ok(art_wire_find("openai") == &art_openai_wire &&
	    strcmp(art_openai_wire.name, "openai") == 0,
	    "\"openai\" is art_openai_wire");
	ok(art_wire_find("anthropic") == &art_anthropic_wire,
	    "\"anthropic\" is art_anthropic_wire");
	ok(art_wire_find("OpenAI") == NULL && art_wire_find("") == NULL &&
	    art_wire_find("openrouter") == NULL && art_wire_find(NULL) == NULL,
	    "any other name, a capital, \"\" and NULL find nothing");
}

static void
test_retry_after_reads_seconds(void)
{
	ok(art_wire_retry_after("2", 0) == 2000, "\"2\" is 2000 ms");
	ok(art_wire_retry_after("1.5", OCT21) == 1500, "\"1.5\" is 1500 ms");
	ok(art_wire_retry_after("0", 0) == 0, "\"0\" is 0");
	ok(art_wire_retry_after(" 120\t", 0) == 120000,
	    "spaces around the value are allowed");
	ok(art_wire_retry_after("0.0001", 0) == 1 &&
	    art_wire_retry_after("1.0001", 0) == 1001 &&
	    art_wire_retry_after("0.25", 0) == 250,
	    "fractions below a millisecond round up, never early");
	ok(art_wire_retry_after("99999999999999999999999", 0) > 0,
	    "an absurd count is clamped, not negative");
}

static void
test_retry_after_reads_http_dates(void)
{
	const char *imf = "Wed, 21 Oct 2015 07:28:00 GMT";

	ok(art_wire_retry_after(imf, OCT21 - 2000) == 2000,
	    "an IMF-fixdate 2 s ahead is 2000 ms");
	ok(art_wire_retry_after(imf, OCT21) == 0 &&
	    art_wire_retry_after(imf, OCT21 + 5000) == 0,
	    "a date now or past is 0, never negative");
	ok(art_wire_retry_after("Wednesday, 21-Oct-15 07:28:00 GMT",
	    OCT21 - 1000) == 1000, "the obsolete RFC 850 form is read");
	ok(art_wire_retry_after("Wed Oct 21 07:28:00 2015", OCT21 - 1) == 1,
	    "the asctime form is read");
	ok(art_wire_retry_after("Sun Nov  6 08:49:37 1994",
	    INT64_C(784111777000) - 7) == 7,
	    "asctime with a one-digit day");
	ok(art_wire_retry_after("Sun, 29 Feb 2004 00:00:00 GMT",
	    INT64_C(1078012800000) - 10) == 10, "a leap day is a day");
}

static void
test_retry_after_rejects_everything_else(void)
{
	static const char *const bad[] = {
		"", "  ", "soon", "-1", "+1", "1e3", "1.2.3", "0x10", ".",
		"2 s", "Wed, 32 Oct 2015 07:28:00 GMT",
		"Wed, 21 Oct 2015 07:28:00 UTC",
		"Wed, 21 Oct 2015 24:00:00 GMT",
		"Wed, 21 Oct 2015 07:28:60 GMT",
		"wed, 21 Oct 2015 07:28:00 GMT",
		"Wed, 29 Feb 2015 07:28:00 GMT",
		"Wed, 21 Oct 2015 07:28:00 GMT extra",
		"2015-10-21T07:28:00Z",
	};
	size_t i, nbad = 0;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (art_wire_retry_after(bad[i], OCT21) != -1) {
			printf("#   '%s' was read\n", bad[i]);
			nbad++;
		}
	ok(nbad == 0 && art_wire_retry_after(NULL, 0) == -1,
	    "signs, exponents, bad dates, other zones and NULL are -1");
}

/* --- request --------------------------------------------------------- */

#define FULL_REQUEST \
	"{\"model\":\"openai/gpt-4o\",\"messages\":[" \
	"{\"id\":\"m1\",\"role\":\"system\",\"content\":\"Be brief.\"}," \
	"{\"id\":\"m2\",\"role\":\"user\",\"extra\":1,\"content\":[" \
	"{\"type\":\"text\",\"text\":\"Weather?\"},{\"type\":\"image_url\"," \
	"\"image_url\":{\"url\":\"https://example.com/sky.png\"}}]}," \
	"{\"id\":\"m3\",\"role\":\"assistant\",\"tool_calls\":[{\"id\":" \
	"\"call_1\",\"type\":\"function\",\"function\":{\"name\":" \
	"\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]}," \
	"{\"id\":\"m4\",\"role\":\"tool\",\"tool_call_id\":\"call_1\"," \
	"\"content\":\"{\\\"temp\\\":18}\"}," \
	"{\"role\":\"assistant\",\"name\":\"bot\",\"content\":\"18.\"}]," \
	"\"tools\":[{\"name\":\"get_weather\",\"description\":\"Look it up\"," \
	"\"input\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":" \
	"\"string\"}},\"required\":[\"city\"]},\"output\":{\"type\":" \
	"\"object\"}},{\"name\":\"now\",\"description\":\"The time\"}]," \
	"\"temperature\":0.2,\"max_completion_tokens\":256," \
	"\"reasoning\":{\"effort\":\"low\",\"max_tokens\":100}}"

#define FULL_BODY_MESSAGES \
	"\"model\":\"gpt-4o\",\"messages\":[" \
	"{\"role\":\"system\",\"content\":\"Be brief.\"}," \
	"{\"role\":\"user\",\"content\":[" \
	"{\"type\":\"text\",\"text\":\"Weather?\"},{\"type\":\"image_url\"," \
	"\"image_url\":{\"url\":\"https://example.com/sky.png\"}}]}," \
	"{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":" \
	"\"call_1\",\"type\":\"function\",\"function\":{\"name\":" \
	"\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]}," \
	"{\"role\":\"tool\",\"tool_call_id\":\"call_1\"," \
	"\"content\":\"{\\\"temp\\\":18}\"}," \
	"{\"role\":\"assistant\",\"name\":\"bot\",\"content\":\"18.\"}]," \
	"\"tools\":[{\"type\":\"function\",\"function\":{\"name\":" \
	"\"get_weather\",\"description\":\"Look it up\",\"parameters\":" \
	"{\"type\":\"object\",\"properties\":{\"city\":{\"type\":" \
	"\"string\"}},\"required\":[\"city\"]}}},{\"type\":\"function\"," \
	"\"function\":{\"name\":\"now\",\"description\":\"The time\"," \
	"\"parameters\":{\"type\":\"object\",\"properties\":{}}}}]," \
	"\"temperature\":0.2,\"max_completion_tokens\":256," \
	"\"reasoning_effort\":\"low\""

static void
test_request_says_everything_the_seed_can(void)
{
	struct art_err err;
	jv req = parse(FULL_REQUEST), body;

	body = W->request(&req, "gpt-4o", false, &err);
	ok(is_json(body, "{" FULL_BODY_MESSAGES "}"),
	    "a full request: ids and unknown fields dropped, parts as they "
	    "are, content null beside tool_calls, tools nested, "
	    "reasoning_effort, no stream key");
	body = W->request(&req, "gpt-4o", true, &err);
	ok(is_json(body, "{" FULL_BODY_MESSAGES ",\"stream\":true,"
	    "\"stream_options\":{\"include_usage\":true}}"),
	    "streamed: stream and stream_options.include_usage as well");
	jv_free(req);
}

static void
test_request_leaves_out_what_is_not_there(void)
{
	struct art_err err;
	jv req, body;
	char *text;
	size_t len;

	req = parse("{\"model\":\"openai/m\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"hi\"}],\"tools\":[],\"temperature\":null}");
	body = W->request(&req, "m", false, &err);
	ok(is_json(body, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\","
	    "\"content\":\"hi\"}]}"),
	    "no tools for [], no temperature for null, nothing unasked");
	body = W->request(&req, NULL, false, &err);
	ok(is_json(body, "{\"model\":\"openai/m\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"hi\"}]}"),
	    "with no model given, the request's own");
	body = W->request(&req, "m", true, &err);
	text = art_json_dump(&body, &len);
	ok(text != NULL && starts(text, "{\"model\":\"m\",\"messages\":"),
	    "the body opens with model and messages: %s", text);
	free(text);
	jv_free(body);
	jv_free(req);
	req = parse("{\"messages\":[{\"role\":\"assistant\",\"content\":null,"
	    "\"tool_calls\":[]},{\"role\":\"user\",\"content\":null}]}");
	body = W->request(&req, "m", false, &err);
	ok(is_json(body, "{\"model\":\"m\",\"messages\":[{\"role\":"
	    "\"assistant\",\"content\":null},{\"role\":\"user\",\"content\":"
	    "null}]}"), "an empty tool_calls is dropped; null content kept");
	jv_free(req);
}

static void
test_tool_images_follow_in_a_user_message(void)
{
	struct art_err err;
	jv req, body;

	req = parse("{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":["
	    "{\"id\":\"t1\",\"type\":\"function\",\"function\":{\"name\":"
	    "\"img\",\"arguments\":\"{}\"}},{\"id\":\"t2\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"n\",\"arguments\":"
	    "\"{}\"}}]},"
	    "{\"role\":\"tool\",\"tool_call_id\":\"t1\",\"content\":["
	    "{\"type\":\"text\",\"text\":\"here\"},{\"type\":\"image_url\","
	    "\"image_url\":{\"url\":\"data:image/png;base64,AAAA\"}}]},"
	    "{\"role\":\"tool\",\"tool_call_id\":\"t2\",\"content\":\"2\"},"
	    "{\"role\":\"user\",\"content\":\"next\"}]}");
	body = W->request(&req, "m", false, &err);
	ok(is_json(body, "{\"model\":\"m\",\"messages\":["
	    "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
	    "{\"id\":\"t1\",\"type\":\"function\",\"function\":{\"name\":"
	    "\"img\",\"arguments\":\"{}\"}},{\"id\":\"t2\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"n\",\"arguments\":"
	    "\"{}\"}}]},"
	    "{\"role\":\"tool\",\"content\":\"here\\n[image 1: in the user "
	    "message after the tool results]\",\"tool_call_id\":\"t1\"},"
	    "{\"role\":\"tool\",\"content\":\"2\",\"tool_call_id\":\"t2\"},"
	    "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
	    "\"[image 1, from tool call t1]\"},{\"type\":\"image_url\","
	    "\"image_url\":{\"url\":\"data:image/png;base64,AAAA\"}}]},"
	    "{\"role\":\"user\",\"content\":\"next\"}]}"),
	    "a tool message keeps the text; its image goes in a user message "
	    "after the run of tool messages");
	jv_free(req);

	/* Parts with no text beside the image are named, not a crash. */
	req = parse("{\"messages\":[{\"role\":\"tool\",\"tool_call_id\":"
	    "\"t1\",\"content\":[{\"type\":\"file\",\"file\":{}},\"bare\","
	    "{\"type\":\"text\",\"text\":7},{\"type\":\"image_url\","
	    "\"image_url\":{\"url\":\"data:image/png;base64,AAAA\"}}]}]}");
	body = W->request(&req, "m", false, &err);
	ok(is_json(body, "{\"model\":\"m\",\"messages\":["
	    "{\"role\":\"tool\",\"content\":\"[file part]\\n[unknown part]"
	    "\\n[text part]\\n[image 1: in the user message after the tool "
	    "results]\",\"tool_call_id\":\"t1\"},"
	    "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
	    "\"[image 1, from tool call t1]\"},{\"type\":\"image_url\","
	    "\"image_url\":{\"url\":\"data:image/png;base64,AAAA\"}}]}]}"),
	    "a tool message's parts of other kinds beside an image are named");
	jv_free(req);
}

static void
test_assistant_images_stay_home(void)
{
	struct art_err err;
	jv req, body;

	/* A reply's own images (LlmResponse.images, recorded as parts) do
	 * not go back: Chat Completions takes no image from an assistant. */
	req = parse("{\"messages\":[{\"role\":\"user\",\"content\":"
	    "\"draw\"},{\"role\":\"assistant\",\"content\":[{\"type\":"
	    "\"text\",\"text\":\"here\"},{\"type\":\"image_url\","
	    "\"image_url\":{\"url\":\"data:image/png;base64,AAAA\"}}]},"
	    "{\"role\":\"assistant\",\"content\":[{\"type\":\"image_url\","
	    "\"image_url\":{\"url\":\"https://example.com/a.png\"}}]},"
	    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
	    "\"text\":\"plain parts\"}]}]}");
	body = W->request(&req, "m", false, &err);
	ok(is_json(body, "{\"model\":\"m\",\"messages\":["
	    "{\"role\":\"user\",\"content\":\"draw\"},"
	    "{\"role\":\"assistant\",\"content\":\"here\"},"
	    "{\"role\":\"assistant\",\"content\":null},"
	    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\","
	    "\"text\":\"plain parts\"}]}]}"),
	    "an assistant's image parts are left out, its text kept");
	jv_free(req);
}

/* request() on text fails with bad_request naming want. */
static bool
refused_request(const char *text, const char *want)
{
	struct art_err err = { NULL, "" };
	jv req = parse(text), body;
	bool bad;

	body = W->request(&req, "m", false, &err);
	bad = !jv_is_valid(body) && art_err_is(&err, "bad_request") &&
	    starts(err.msg, "openai: ") && strstr(err.msg, want) != NULL;
	if (!bad)
		printf("#   %s: %s\n", text, err.msg);
	jv_free(body);
	jv_free(req);
	return bad;
}

static void
test_request_refuses_what_it_cannot_say(void)
{
	ok(refused_request("{}", "'messages'") &&
	    refused_request("{\"messages\":\"hi\"}", "'messages'"),
	    "no messages array is bad_request");
	ok(refused_request("{\"messages\":[{\"content\":\"x\"}]}",
	    "messages[0]: no string 'role'") &&
	    refused_request("{\"messages\":[{\"role\":\"user\",\"content\":"
	    "\"x\"},{\"role\":7}]}", "messages[1]: no string 'role'") &&
	    refused_request("{\"messages\":[\"hi\"]}", "messages[0]"),
	    "a message without a string role names its index");
	ok(refused_request("{\"messages\":[{\"role\":\"user\",\"content\":5}]}",
	    "messages[0]: content") &&
	    refused_request("{\"messages\":[{\"role\":\"tool\",\"content\":"
	    "\"x\",\"tool_call_id\":3}]}", "messages[0]: field "
	    "'tool_call_id'") &&
	    refused_request("{\"messages\":[{\"role\":\"assistant\","
	    "\"tool_calls\":{}}]}", "messages[0]: tool_calls"),
	    "content, tool_call_id and tool_calls of the wrong kind");
	ok(refused_request("{\"messages\":[],\"tools\":[{\"name\":\"a\"},"
	    "{\"description\":\"d\"}]}", "tools[1]: missing field 'name'") &&
	    refused_request("{\"messages\":[],\"tools\":[{\"name\":\"\"}]}",
	    "tools[0]: empty 'name'") &&
	    refused_request("{\"messages\":[],\"tools\":{}}", "tools") &&
	    refused_request("{\"messages\":[],\"tools\":[{\"name\":\"a\","
	    "\"input\":true}]}", "tools[0]: input"),
	    "a tool without a name, tools not an array, a schema not an "
	    "object");
	ok(refused_request("{\"messages\":[],\"temperature\":\"hot\"}",
	    "'temperature'") &&
	    refused_request("{\"messages\":[],\"max_completion_tokens\":1.5}",
	    "'max_completion_tokens'") &&
	    refused_request("{\"messages\":[],\"reasoning\":{\"effort\":1}}",
	    "'effort'"), "options of the wrong kind");
	{
		struct art_err err;
		jv req = jv_string("hi"), body;

		body = W->request(&req, "m", false, &err);
		ok(!jv_is_valid(body) && art_err_is(&err, "bad_request"),
		    "a request that is no object: %s", err.msg);
		jv_free(body);
		jv_free(req);
	}
}

/* --- structured answers ---------------------------------------------- */

#define RF_SCHEMA \
	"{\"type\":\"object\",\"properties\":{\"summary\":" \
	"{\"type\":\"string\"}},\"required\":[\"summary\"]}"
#define HI	"\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"

static void
test_request_sends_response_format_as_json_schema(void)
{
	struct art_err err;
	jv req, body;

	req = parse("{" HI ",\"response_format\":{\"name\":"
	    "\"structured_answer\",\"description\":\"The answer\","
	    "\"schema\":" RF_SCHEMA "}}");
	body = W->request(&req, "gpt-4o", false, &err);
	ok(is_json(body, "{\"model\":\"gpt-4o\"," HI ",\"response_format\":"
	    "{\"type\":\"json_schema\",\"json_schema\":{\"name\":"
	    "\"structured_answer\",\"description\":\"The answer\","
	    "\"schema\":" RF_SCHEMA ",\"strict\":false}}}"),
	    "response_format: json_schema with name, description, schema, "
	    "strict false");
	jv_free(req);

	req = parse("{" HI ",\"tools\":[{\"name\":\"now\"}],"
	    "\"response_format\":{\"name\":\"todo_plan\",\"schema\":"
	    RF_SCHEMA "}}");
	body = W->request(&req, "gpt-4o", true, &err);
	ok(is_json(body, "{\"model\":\"gpt-4o\"," HI ",\"tools\":[{\"type\":"
	    "\"function\",\"function\":{\"name\":\"now\",\"parameters\":"
	    "{\"type\":\"object\",\"properties\":{}}}}],\"response_format\":"
	    "{\"type\":\"json_schema\",\"json_schema\":{\"name\":"
	    "\"todo_plan\",\"schema\":" RF_SCHEMA ",\"strict\":false}},"
	    "\"stream\":true,\"stream_options\":{\"include_usage\":true}}"),
	    "response_format beside tools, streamed, no description: the "
	    "tools as ever, no description sent");
	jv_free(req);

	ok(refused_request("{" HI ",\"response_format\":\"json\"}",
	    "field 'response_format': expected object") &&
	    refused_request("{" HI ",\"response_format\":{\"name\":\"a\"}}",
	    "openai: response_format: missing field 'schema'") &&
	    refused_request("{" HI ",\"response_format\":{\"name\":\"a\","
	    "\"schema\":true}}", "response_format: field 'schema'") &&
	    refused_request("{" HI ",\"response_format\":{\"schema\":{}}}",
	    "response_format: missing field 'name'") &&
	    refused_request("{" HI ",\"response_format\":{\"name\":\"\","
	    "\"schema\":{}}}", "response_format: empty 'name'"),
	    "a response_format not an object, without a schema object or a "
	    "name is bad_request, named");
	ok(W->answer == NULL && W->stream_answer == NULL,
	    "the reply's content is the answer already: no answer() step");
}

static void
test_response_reads_a_structured_answer(void)
{
	jv resp = response_of_file("chat-nonstream-structured-answer.json");

	ok(is_json(art_json_field(&resp, "content"),
	    "\"{\\\"summary\\\":\\\"Paris is 18C and sunny; Oslo is 4C with "
	    "rain.\\\",\\\"columns\\\":[\\\"city\\\",\\\"weather\\\"],"
	    "\\\"rows\\\":[{\\\"cells\\\":[\\\"Paris\\\",\\\"18C, sunny\\\"]},"
	    "{\\\"cells\\\":[\\\"Oslo\\\",\\\"4C, rain\\\"]}],"
	    "\\\"followups\\\":[\\\"Show tomorrow's forecast\\\"]}\"") &&
	    is_json(art_json_field(&resp, "finish_reason"), "\"stop\"") &&
	    !jv_object_has(jv_copy(resp), jv_string("tool_calls")),
	    "chat-nonstream-structured-answer.json: the content is the "
	    "answer's JSON text as it came, no tool_calls");
	jv_free(resp);
}

/* --- response and native --------------------------------------------- */

static void
test_response_reads_a_text_answer(void)
{
	size_t len;
	char *text = load(OPENAI_DIR, "chat-nonstream-text.json", &len);
	jv resp = response_of_file("chat-nonstream-text.json");
	jv raw = parse(text), choice, want;

	choice = jv_array_get(art_json_field(&raw, "choices"), 0);
	want = parse("{\"model\":\"gpt-4.1-nano-2025-04-14\",\"finish_reason\":"
	    "\"stop\",\"usage\":{\"input\":16,\"uncached_input\":16,"
	    "\"cache_read\":0,\"cache_write\":0,\"output\":363,"
	    "\"total\":379}}");
	want = jv_object_set(want, jv_string("content"),
	    jv_object_get(jv_object_get(choice, jv_string("message")),
	    jv_string("content")));
	want = jv_setpath(want, parse("[\"usage\",\"provider\"]"),
	    art_json_field(&raw, "usage"));
	want = jv_object_set(want, jv_string("id"), art_json_field(&raw,
	    "id"));
	ok(art_json_equal(&resp, &want), "chat-nonstream-text.json: id, "
	    "model, content, finish_reason, usage normalised with the "
	    "provider's");
	jv_free(want);
	jv_free(raw);
	jv_free(resp);
	free(text);
}

#define PARALLEL_CALLS \
	"[{\"id\":\"call_fdNz3vOBKYgOIpMdWotB9MjY\",\"type\":\"function\"," \
	"\"function\":{\"name\":\"GetWeatherArgs\",\"arguments\":" \
	"\"{\\\"city\\\": \\\"Edinburgh\\\", \\\"country\\\": \\\"GB\\\", " \
	"\\\"units\\\": \\\"c\\\"}\"}},{\"id\":" \
	"\"call_h1DWI1POMJLb0KwIyQHWXD4p\",\"type\":\"function\"," \
	"\"function\":{\"name\":\"get_stock_price\",\"arguments\":" \
	"\"{\\\"ticker\\\": \\\"AAPL\\\", \\\"exchange\\\": " \
	"\\\"NASDAQ\\\"}\"}}]"

#define USAGE_149_60 \
	"{\"input\":149,\"uncached_input\":149,\"cache_read\":0," \
	"\"cache_write\":0,\"output\":60,\"total\":209,\"provider\":" \
	"{\"prompt_tokens\":149,\"completion_tokens\":60,\"total_tokens\":" \
	"209,\"completion_tokens_details\":{\"reasoning_tokens\":0}}}"

static void
test_response_reads_parallel_tool_calls(void)
{
	jv resp = response_of_file("chat-nonstream-parallel-tool-calls.json");

	ok(is_json(resp, "{\"id\":\"chatcmpl-ABfvyvfNWKcl7Ohqos4UFrmMs1v4C\","
	    "\"model\":\"gpt-4o-2024-08-06\",\"tool_calls\":"
	    PARALLEL_CALLS ",\"finish_reason\":\"tool_calls\",\"usage\":"
	    USAGE_149_60 "}"),
	    "two tool calls, content null left out, refusal null ignored");
}

static void
test_response_reads_what_compatible_servers_send(void)
{
	jv resp, error;
	const char *deepseek = "{\"model\":\"deepseek-reasoner\",\"choices\":"
	    "[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
	    "\"4\",\"reasoning_content\":\"2+2 is 4\"},\"finish_reason\":"
	    "\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":"
	    "5,\"total_tokens\":15,\"prompt_cache_hit_tokens\":6,"
	    "\"prompt_cache_miss_tokens\":4}}";
	const char *ollama = "{\"model\":\"qwen3\",\"choices\":[{\"index\":0,"
	    "\"message\":{\"role\":\"assistant\",\"content\":\"\","
	    "\"reasoning\":\"hmm\",\"tool_calls\":[{\"id\":\"c1\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"f\",\"arguments\":"
	    "{\"city\":\"Paris\"}}}]},\"finish_reason\":\"tool_calls\"}]}";
	const char *cached = "{\"model\":\"m\",\"choices\":[{\"index\":0,"
	    "\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},"
	    "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":2006,"
	    "\"completion_tokens\":300,\"total_tokens\":2306,"
	    "\"prompt_tokens_details\":{\"cached_tokens\":1920}}}";

	respond(deepseek, strlen(deepseek), &resp, &error);
	ok(is_json(resp, "{\"model\":\"deepseek-reasoner\",\"content\":\"4\","
	    "\"reasoning\":\"2+2 is 4\",\"finish_reason\":\"stop\",\"usage\":"
	    "{\"input\":10,\"uncached_input\":4,\"cache_read\":6,"
	    "\"cache_write\":0,\"output\":5,\"total\":15,\"provider\":"
	    "{\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15,"
	    "\"prompt_cache_hit_tokens\":6,\"prompt_cache_miss_tokens\":4}}}"),
	    "reasoning_content is reasoning; DeepSeek's cache hits are read");
	jv_free(error);
	respond(ollama, strlen(ollama), &resp, &error);
	ok(is_json(resp, "{\"model\":\"qwen3\",\"reasoning\":\"hmm\","
	    "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":"
	    "{\"name\":\"f\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}],"
	    "\"finish_reason\":\"tool_calls\"}"),
	    "reasoning is reasoning, \"\" content is left out, and arguments "
	    "sent as an object become a string");
	jv_free(error);
	respond(cached, strlen(cached), &resp, &error);
	ok(is_json(jv_object_get(resp, jv_string("usage")), "{\"input\":2006,"
	    "\"uncached_input\":86,\"cache_read\":1920,\"cache_write\":0,"
	    "\"output\":300,\"total\":2306,\"provider\":{"
	    "\"prompt_tokens\":2006,"
	    "\"completion_tokens\":300,\"total_tokens\":2306,"
	    "\"prompt_tokens_details\":{\"cached_tokens\":1920}}}"),
	    "cached tokens are inside input; uncached_input is the rest");
	jv_free(error);
}

/* response() of text gives an error object equal to want. */
static bool
response_error_is(const char *text, const char *want)
{
	jv resp, error;
	int rc = respond(text, strlen(text), &resp, &error);

	jv_free(resp);
	return rc == -1 && is_json(error, want);
}

static void
test_response_errors(void)
{
	const char *refusal = "{\"model\":\"m\",\"choices\":[{\"index\":0,"
	    "\"message\":{\"role\":\"assistant\",\"content\":\"Well\","
	    "\"refusal\":\"I can't help with that.\"},\"finish_reason\":"
	    "\"stop\"}]}";
	const char *filtered = "{\"model\":\"m\",\"choices\":[{\"index\":0,"
	    "\"message\":{\"role\":\"assistant\",\"content\":\"\"},"
	    "\"finish_reason\":\"content_filter\"}]}";
	jv resp, error;
	int rc;

	rc = respond("<html>oops</html>", 17, &resp, &error);
	ok(rc == -1 && is_error(&error, "provider_error", true,
	    "openai: response is not JSON: "),
	    "a body that is not JSON is a retryable provider_error");
	jv_free(error);
	rc = respond(NULL, 0, &resp, &error);
	ok(rc == -1 && is_error(&error, "provider_error", true,
	    "openai: response is not JSON"), "so is an empty body");
	jv_free(error);
	ok(response_error_is("[1]", "{\"error\":\"openai: response is array, "
	    "not an object\",\"retryable\":false,\"code\":\"provider_error\"}"),
	    "JSON that is no object is not retryable");
	ok(response_error_is("{}", "{\"error\":\"openai: response has no "
	    "choices\",\"retryable\":false,\"code\":\"provider_error\"}") &&
	    response_error_is("{\"choices\":[]}", "{\"error\":\"openai: "
	    "response has no choices[0]\",\"retryable\":false,\"code\":"
	    "\"provider_error\"}") &&
	    response_error_is("{\"choices\":[{\"index\":0,\"message\":\"x\"}]}",
	    "{\"error\":\"openai: response has no choices[0].message\","
	    "\"retryable\":false,\"code\":\"provider_error\"}"),
	    "a missing choices, choices[0] or message is named");
	rc = respond(refusal, strlen(refusal), &resp, &error);
	ok(rc == 0 && is_json(resp, "{\"model\":\"m\",\"content\":"
	    "\"Well\",\"finish_reason\":\"refusal\",\"refusal\":"
	    "\"I can't help with that.\"}"), "a refusal is an answer: the "
	    "partial content, the model's words, finish_reason refusal");
	jv_free(error);
	rc = respond(filtered, strlen(filtered), &resp, &error);
	ok(rc == 0 && is_json(resp, "{\"model\":\"m\",\"finish_reason\":"
	    "\"content_filter\"}"), "finish_reason content_filter comes as "
	    "sent");
	jv_free(error);
	ok(response_error_is("{\"error\":{\"message\":\"boom\",\"type\":"
	    "\"server_error\"}}", "{\"error\":\"openai: error: boom\","
	    "\"retryable\":true,\"code\":\"provider_error\",\"detail\":"
	    "{\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}}"),
	    "an error inside a 2xx body is read as one");
	rc = respond("{\"choices\":[]}, and then garbage", 14, &resp, &error);
	ok(rc == -1 && is_error(&error, "provider_error", false,
	    "openai: response has no choices[0]"),
	    "only len bytes of the body are read");
	jv_free(error);
}

/* response(native(x)) for x (borrowed) equals x. */
static bool
round_trips(const jv *x)
{
	jv body = W->native(x), back, error;
	size_t len;
	char *text = art_json_dump(&body, &len);
	bool same;

	same = respond(text, len, &back, &error) == 0 &&
	    art_json_equal(&back, x);
	if (!same)
		printf("#   native: %s\n", text);
	free(text);
	jv_free(back);
	jv_free(error);
	jv_free(body);
	return same;
}

static void
test_native_writes_a_completion_that_reads_back(void)
{
	jv x = parse("{\"id\":\"chatcmpl-1\",\"model\":\"gpt-4o\","
	    "\"content\":\"Hi\","
	    "\"finish_reason\":\"stop\",\"usage\":{\"input\":3,"
	    "\"uncached_input\":3,\"cache_read\":0,\"cache_write\":0,"
	    "\"output\":1,\"total\":4,\"provider\":{\"prompt_tokens\":3,"
	    "\"completion_tokens\":1,\"total_tokens\":4}}}");

	ok(is_json(W->native(&x), "{\"id\":\"chatcmpl-1\",\"object\":"
	    "\"chat.completion\",\"model\":\"gpt-4o\",\"choices\":["
	    "{\"index\":0,"
	    "\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},"
	    "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,"
	    "\"completion_tokens\":1,\"total_tokens\":4}}"),
	    "native: a chat.completion with the provider's usage");
	ok(round_trips(&x), "and response() reads it back");
	jv_free(x);
	x = response_of_file("chat-nonstream-text.json");
	ok(round_trips(&x), "chat-nonstream-text.json round-trips");
	jv_free(x);
	x = response_of_file("chat-nonstream-parallel-tool-calls.json");
	ok(round_trips(&x), "its tool calls round-trip");
	jv_free(x);
	x = parse("{\"id\":\"c-2\",\"model\":\"m\",\"content\":\"4\","
	    "\"reasoning\":\"think\","
	    "\"finish_reason\":\"length\"}");
	ok(round_trips(&x), "reasoning round-trips, and no usage stays none");
	jv_free(x);
	x = parse("{\"id\":\"c-3\",\"model\":\"m\",\"content\":\"So\","
	    "\"finish_reason\":\"refusal\",\"refusal\":\"No.\"}");
	ok(round_trips(&x) && is_json(jv_getpath(W->native(&x), parse(
	    "[\"choices\",0,\"finish_reason\"]")), "\"stop\""),
	    "a refusal round-trips, its finish_reason stop on the wire");
	jv_free(x);
	x = parse("{\"model\":\"m\",\"tool_calls\":[{\"id\":\"c\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"f\",\"arguments\":"
	    "\"{}\"}}]}");
	ok(is_json(W->native(&x), "{\"id\":\"chatcmpl-agentrt\",\"object\":"
	    "\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
	    "\"message\":{\"role\":\"assistant\",\"content\":null,"
	    "\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\",\"function\":"
	    "{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":"
	    "\"tool_calls\"}]}"),
	    "no content is null; no finish_reason after tool calls is "
	    "tool_calls; no usage, no usage key");
	jv_free(x);
	x = parse("{\"model\":\"m\",\"content\":\"x\",\"finish_reason\":"
	    "\"stop\","
	    "\"usage\":{\"input\":30,\"uncached_input\":5,\"cache_read\":20,"
	    "\"cache_write\":5,\"output\":7,\"total\":37,\"provider\":"
	    "{\"input_tokens\":5,\"output_tokens\":7}}}");
	ok(is_json(jv_object_get(W->native(&x), jv_string("usage")),
	    "{\"prompt_tokens\":30,\"completion_tokens\":7,\"total_tokens\":37,"
	    "\"prompt_tokens_details\":{\"cached_tokens\":20}}"),
	    "another provider's usage is rebuilt from the normalised counts");
	jv_free(x);
}

/* --- error ----------------------------------------------------------- */

/* error() for a fixture body at status, with headers as JSON text. */
static jv
error_of_file(long status, const char *file, const char *headers)
{
	size_t len;
	char *body = load(OPENAI_DIR, file, &len);
	jv h = parse(headers), e;

	e = W->error(status, &h, body, len, OCT21);
	jv_free(h);
	free(body);
	return e;
}

#define MSG_400 "Unsupported parameter: 'max_tokens' is not supported " \
	"with this model. Use 'max_completion_tokens' instead."
#define MSG_QUOTA "You exceeded your current quota, please check your " \
	"plan and billing details. For more information on this error, read " \
	"the docs: https://platform.openai.com/docs/guides/error-codes/" \
	"api-errors."
#define MSG_500 "The server had an error while processing your request. " \
	"Sorry about that!"

static void
test_error_reads_the_recorded_bodies(void)
{
	ok(is_json(error_of_file(400, "error-400-unsupported-parameter.json",
	    "{\"retry-after\":\"1\"}"), "{\"error\":\"openai 400: " MSG_400
	    "\",\"retryable\":false,\"code\":\"provider_error\",\"detail\":"
	    "{\"status\":400,\"error\":{\"message\":\"" MSG_400 "\",\"type\":"
	    "\"invalid_request_error\",\"param\":\"max_tokens\",\"code\":"
	    "\"unsupported_parameter\"}}}"),
	    "400: not retryable, the provider's message and error object, "
	    "no delay for a final error");
	ok(is_json(error_of_file(429, "error-429-insufficient-quota.json",
	    "{\"retry-after\":\"20\"}"), "{\"error\":\"openai 429: " MSG_QUOTA
	    "\",\"retryable\":false,\"code\":\"budget_exceeded\",\"detail\":"
	    "{\"status\":429,\"error\":{\"message\":\"" MSG_QUOTA "\","
	    "\"type\":\"insufficient_quota\",\"param\":null,\"code\":"
	    "\"insufficient_quota\"}}}"),
	    "429 insufficient_quota: budget_exceeded, never retried");
	ok(is_json(error_of_file(500, "error-500-server-error.json",
	    "{\"x-ratelimit-reset-requests\":\"1s\"}"), "{\"error\":\"openai "
	    "500: " MSG_500 "\",\"retryable\":true,\"code\":\"provider_error\","
	    "\"detail\":{\"status\":500,\"error\":{\"message\":\"" MSG_500
	    "\",\"type\":\"server_error\",\"param\":null,\"code\":null}}}"),
	    "500: retryable; reset headers explain only a 429");
}

/* Reads a raw HTTP response: its status, headers (lower-cased) and body. */
static long
read_http(const char *raw, jv *headers, const char **body)
{
	const char *p = strstr(raw, "\r\n"), *end = strstr(raw, "\r\n\r\n");
	const char *line, *colon, *v;
	char name[128];
	size_t i, n;
	long status = strtol(raw + strlen("HTTP/1.1 "), NULL, 10);

	if (p == NULL || end == NULL || !starts(raw, "HTTP/1.1 ")) {
		fprintf(stderr, "openai-test: not an HTTP response\n");
		exit(99);
	}
	*headers = jv_object();
	for (line = p + 2; line < end; line = strstr(line, "\r\n") + 2) {
		if ((colon = strchr(line, ':')) == NULL || colon > end)
			exit(99);
		n = (size_t)(colon - line) < sizeof(name) - 1 ?
		    (size_t)(colon - line) : sizeof(name) - 1;
		for (i = 0; i < n; i++)
			name[i] = (char)(line[i] >= 'A' && line[i] <= 'Z' ?
			    line[i] - 'A' + 'a' : line[i]);
		name[n] = '\0';
		for (v = colon + 1; *v == ' '; v++)
			;
		*headers = jv_object_set(*headers, jv_string(name),
		    jv_string_sized(v, (int)(strstr(v, "\r\n") - v)));
	}
	*body = end + 4;
	return status;
}

#define MSG_429 "Rate limit reached for o4-mini in organization " \
	"org-******* on tokens per min (TPM): Limit 200000, Used 162960, " \
	"Requested 42288. Please try again in 1.574s. Visit " \
	"https://platform.openai.com/account/rate-limits to learn more."

/* retry_after_ms of a 429 with the fixture's body and these headers. */
static int64_t
delay_429(const char *headers)
{
	jv h = parse(headers), e, d;
	const char *body = "{}";
	int64_t ms = -2;

	e = W->error(429, &h, body, strlen(body), OCT21);
	d = art_json_field(&e, "retry_after_ms");
	if (jv_get_kind(d) == JV_KIND_NUMBER)
		ms = (int64_t)jv_number_value(d);
	else if (jv_get_kind(d) == JV_KIND_NULL)
		ms = -1;
	jv_free(d);
	jv_free(e);
	jv_free(h);
	return ms;
}

static void
test_error_reads_a_rate_limit_and_its_delay(void)
{
	size_t len;
	char *raw = load(OPENAI_DIR, "error-429-rate-limit.http", &len);
	const char *body;
	long status;
	jv headers, e;

	status = read_http(raw, &headers, &body);
	e = W->error(status, &headers, body, len - (size_t)(body - raw),
	    OCT21);
	ok(is_json(e, "{\"error\":\"openai 429: " MSG_429 "\",\"retryable\":"
	    "true,\"code\":\"rate_limited\",\"retry_after_ms\":2000,\"detail\":"
	    "{\"status\":429,\"error\":{\"message\":\"" MSG_429 "\",\"type\":"
	    "\"tokens\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}}"),
	    "error-429-rate-limit.http: rate_limited, retry-after 2 is 2000 "
	    "ms, and no header is copied");
	headers = jv_object_delete(headers, jv_string("retry-after"));
	e = W->error(status, &headers, body, strlen(body), OCT21);
	ok(is_json(jv_object_get(e, jv_string("retry_after_ms")), "360000"),
	    "without retry-after, the larger reset: 6m0s over 1s");
	jv_free(headers);
	free(raw);
	ok(delay_429("{\"retry-after-ms\":\"1500\",\"retry-after\":\"2\"}") ==
	    1500, "retry-after-ms comes first");
	ok(delay_429("{\"retry-after-ms\":\"soon\",\"retry-after\":\"2\"}") ==
	    2000, "a retry-after-ms that is no number is passed over");
	ok(delay_429("{\"retry-after\":\"Wed, 21 Oct 2015 07:28:30 GMT\"}") ==
	    30000, "an HTTP-date retry-after counts from now_ms");
	ok(delay_429("{\"retry-after\":\"later\",\"x-ratelimit-reset-tokens\":"
	    "\"20ms\"}") == 20, "a bad retry-after falls to the resets");
	ok(delay_429("{\"x-ratelimit-reset-requests\":\"1.5s\"}") == 1500 &&
	    delay_429("{\"x-ratelimit-reset-tokens\":\"1h2m3.5s\"}") ==
	    3723500 && delay_429("{\"x-ratelimit-reset-tokens\":\"7.66\"}") ==
	    7660 && delay_429("{\"x-ratelimit-reset-requests\":\"250us\"}") ==
	    1, "reset durations: 1.5s, 1h2m3.5s, a bare 7.66, 250us rounded "
	    "up");
	ok(delay_429("{\"x-ratelimit-reset-tokens\":\"5x\"}") == -1 &&
	    delay_429("{\"x-ratelimit-reset-tokens\":\"s\"}") == -1 &&
	    delay_429("{}") == -1, "no delay that can be read, none given");
}

/* A string and its length, for error_of(). */
#define STR(s)	(s), strlen(s)

/* error() on a body given as bytes, with no headers. */
static jv
error_of(long status, const char *body, size_t len)
{
	jv h = jv_object(), e = W->error(status, &h, body, len, OCT21);

	jv_free(h);
	return e;
}

static void
test_error_status_decides_retry(void)
{
	static const long again[] = { 408, 409, 500, 502, 503, 504, 529 };
	static const long final[] = { 400, 401, 403, 404, 422, 300 };
	const char *body = "{\"error\":{\"message\":\"m\"}}";
	size_t i, nbad = 0;
	jv e;

	for (i = 0; i < sizeof(again) / sizeof(again[0]); i++) {
		e = error_of(again[i], body, strlen(body));
		nbad += !is_error(&e, "provider_error", true, "openai ");
		jv_free(e);
	}
	ok(nbad == 0, "408, 409 and 5xx are retryable provider_errors");
	for (nbad = 0, i = 0; i < sizeof(final) / sizeof(final[0]); i++) {
		e = error_of(final[i], body, strlen(body));
		nbad += !is_error(&e, "provider_error", false, "openai ");
		jv_free(e);
	}
	ok(nbad == 0, "other statuses are final provider_errors");
	ok(is_json(error_of(429, STR("{\"error\":{\"message\":\"slow\","
	    "\"type\":\"requests\"}}")), "{\"error\":\"openai 429: slow\","
	    "\"retryable\":true,\"code\":\"rate_limited\",\"detail\":"
	    "{\"status\":429,\"error\":{\"message\":\"slow\",\"type\":"
	    "\"requests\"}}}"),
	    "any other 429 is rate_limited; no delay known, none given");
}

static void
test_error_quotes_a_body_that_is_not_json(void)
{
	const char *html = "<html>\n<body>Service Unavailable</body>\r\n"
	    "</html>\n";
	char big[300], want[400];
	jv e;

	ok(is_json(error_of(503, html, strlen(html)), "{\"error\":\"openai "
	    "503: <html> <body>Service Unavailable</body>  </html>\","
	    "\"retryable\":true,\"code\":\"provider_error\",\"detail\":"
	    "{\"status\":503,\"error\":null}}"),
	    "HTML is quoted on one line; the provider's error is null");
	memset(big, 'x', sizeof(big));
	memcpy(want, "openai 502: ", 12);
	memset(want + 12, 'x', 200);
	want[212] = '\0';
	e = error_of(502, big, sizeof(big));
	ok(strcmp(message(&e), want) == 0, "only the first 200 bytes, read "
	    "without a NUL after them");
	jv_free(e);
	ok(is_json(jv_object_get(error_of(400, "bad\001gate\0way\377", 13),
	    jv_string("error")), "\"openai 400: bad?gate?way?\""),
	    "control, NUL and non-ASCII bytes are '?'");
	ok(is_json(error_of(504, NULL, 0), "{\"error\":\"openai 504: empty "
	    "body\",\"retryable\":true,\"code\":\"provider_error\",\"detail\":"
	    "{\"status\":504,\"error\":null}}"), "an empty body says so");
	ok(is_json(jv_object_get(error_of(404, STR("{\"error\":\"model 'x' "
	    "not found\"}")), jv_string("error")),
	    "\"openai 404: model 'x' not found\""),
	    "an error given as a string (Ollama) is the message");
	ok(is_json(jv_object_get(error_of(400,
	    STR("{\"error\":{\"type\":\"x\"}}")), jv_string("error")),
	    "\"openai 400: {\\\"error\\\":{\\\"type\\\":\\\"x\\\"}}\""),
	    "an error without a message quotes the body");
}

static void
test_error_never_copies_request_headers(void)
{
	jv h = parse("{\"authorization\":\"Bearer sk-SECRET\",\"retry-after\":"
	    "\"1\"}"), e;
	const char *body = "{\"error\":{\"message\":\"m\"}}";
	char *text;
	size_t len;

	e = W->error(500, &h, body, strlen(body), OCT21);
	text = art_json_dump(&e, &len);
	ok(text != NULL && strstr(text, "SECRET") == NULL &&
	    strstr(text, "authorization") == NULL,
	    "no header lands in the error object: %s", text);
	free(text);
	jv_free(e);
	jv_free(h);
}

/* --- streams --------------------------------------------------------- */

struct run {
	struct art_wire_stream	*st;
	jv			 deltas;
	jv			 error;
	int			 last;		/* stream_event's last rc */
	int			 events;
	int			 finish;	/* art_sse_finish's rc */
};

static int
on_event(const struct art_sse_event *ev, void *ctx)
{
	struct run *r = ctx;

	r->events++;
	r->last = W->stream_event(r->st, ev, &r->deltas, &r->error);
	return r->last;
}

/* Feeds an SSE fixture in pieces of step bytes (0: whole) to a stream. */
static void
run_file(const char *file, size_t step, struct run *r)
{
	struct art_sse *sse = art_sse_new(0);
	struct art_err err;
	size_t len, off, n;
	char *text = load(SSE_DIR, file, &len);
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->st = W->stream_new();
	r->deltas = jv_array();
	r->error = jv_null();
	for (off = 0; off < len && rc == 0; off += n) {
		n = step == 0 || len - off < step ? len - off : step;
		rc = art_sse_feed(sse, text + off, n, on_event, r, &err);
	}
	r->finish = art_sse_finish(sse, NULL, NULL, &err);
	art_sse_free(sse);
	free(text);
}

static void
run_free(struct run *r)
{
	W->stream_free(r->st);
	jv_free(r->deltas);
	jv_free(r->error);
}

/* stream_result as one value: the LlmResponse or the error object. */
static jv
result(struct art_wire_stream *st, int *rc)
{
	jv resp = jv_null(), error = jv_null();

	*rc = W->stream_result(st, &resp, &error);
	if (*rc == 0) {
		jv_free(error);
		return resp;
	}
	jv_free(resp);
	return error;
}

static const char *const words[] = {
	"I'm", " unable", " to", " provide", " real", "-time", " weather",
	" updates", ".", " To", " get", " the", " current", " weather", " in",
	" San", " Francisco", ",", " I", " recommend", " checking", " a",
	" reliable", " weather", " website", " or", " a", " weather", " app",
	".",
};
#define NWORDS	(sizeof(words) / sizeof(words[0]))

/* The text deltas for the first n words, then finish when not NULL. */
static jv
text_deltas(size_t n, const char *finish)
{
	jv d = jv_array();
	size_t i;

	for (i = 0; i < n; i++)
		d = jv_array_append(d, jv_object_set(jv_object(),
		    jv_string("text"), jv_string(words[i])));
	if (finish != NULL)
		d = jv_array_append(d, jv_object_set(jv_object(),
		    jv_string("finish_reason"), jv_string(finish)));
	return d;
}

static jv
text_response(void)
{
	jv r = parse("{\"id\":\"chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL\","
	    "\"model\":\"gpt-4o-2024-08-06\",\"finish_reason\":"
	    "\"stop\",\"usage\":{\"input\":14,\"uncached_input\":14,"
	    "\"cache_read\":0,\"cache_write\":0,\"output\":30,\"total\":44,"
	    "\"provider\":{\"prompt_tokens\":14,\"completion_tokens\":30,"
	    "\"total_tokens\":44,\"completion_tokens_details\":"
	    "{\"reasoning_tokens\":0}}}}"), text = jv_string("");
	size_t i;

	for (i = 0; i < NWORDS; i++)
		text = jv_string_append_str(text, words[i]);
	return jv_object_set(r, jv_string("content"), text);
}

static void
test_stream_of_text_with_usage(void)
{
	static const size_t steps[] = { 0, 7, 1 };
	jv want_d = text_deltas(NWORDS, "stop"), want_r = text_response(), got;
	struct run r;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		run_file("chat-stream-text-with-usage.sse", steps[i], &r);
		ok(r.events == 34 && r.last == 1 && r.finish == 0,
		    "all 34 events, the last ([DONE]) returning 1 (step %zu)",
		    steps[i]);
		ok(art_json_equal(&r.deltas, &want_d), "30 text deltas, then "
		    "finish_reason; none for the role or usage chunks "
		    "(step %zu)", steps[i]);
		got = result(r.st, &rc);
		ok(rc == 0 && art_json_equal(&got, &want_r), "stream_result: "
		    "the text joined, stop, usage normalised (step %zu)",
		    steps[i]);
		jv_free(got);
		got = result(r.st, &rc);
		ok(rc == 0 && art_json_equal(&got, &want_r),
		    "and the same when asked again");
		jv_free(got);
		run_free(&r);
	}
	jv_free(want_d);
	jv_free(want_r);
}

/* resp (consumed) with its id and each tool call's id taken out. */
static jv
without_ids(jv resp)
{
	resp = jv_object_delete(resp, jv_string("id"));
	jv calls = jv_object_get(jv_copy(resp), jv_string("tool_calls"));
	jv out = jv_array();

	jv_array_foreach(calls, i, c)
		out = jv_array_append(out, jv_object_delete(c,
		    jv_string("id")));
	jv_free(calls);
	return jv_object_set(resp, jv_string("tool_calls"), out);
}

static void
test_stream_of_parallel_tool_calls(void)
{
	struct run r;
	jv got, want, d;
	int rc, nbad = 0;

	run_file("chat-stream-parallel-tool-calls.sse", 0, &r);
	ok(r.last == 1 && jv_array_length(jv_copy(r.deltas)) == 23,
	    "22 tool call fragments and a finish_reason: 23 deltas");
	ok(is_json(jv_array_get(jv_copy(r.deltas), 0), "{\"tool_calls\":"
	    "[{\"id\":\"call_JMW1whyEaYG438VE1OIflxA2\",\"name\":"
	    "\"GetWeatherArgs\"}]}"),
	    "the first fragment: id and name; its empty arguments left out");
	ok(is_json(jv_array_get(jv_copy(r.deltas), 1), "{\"tool_calls\":"
	    "[{\"id\":\"call_JMW1whyEaYG438VE1OIflxA2\",\"arguments\":"
	    "\"{\\\"ci\"}]}"), "a later one: the id remembered, arguments");
	jv_array_foreach(r.deltas, i, x) {
		d = jv_object_get(x, jv_string("tool_calls"));
		if (jv_get_kind(d) == JV_KIND_ARRAY) {
			jv f = jv_array_get(jv_copy(d), 0);

			nbad += art_json_str(&f, "id") == NULL;
			jv_free(f);
		} else
			nbad += i != 22;
		jv_free(d);
	}
	ok(nbad == 0, "every fragment names its call's id");
	ok(is_json(jv_array_get(jv_copy(r.deltas), 22),
	    "{\"finish_reason\":\"tool_calls\"}"), "then tool_calls");
	got = result(r.st, &rc);
	ok(rc == 0 && is_json(jv_object_get(jv_copy(got),
	    jv_string("tool_calls")), "[{\"id\":"
	    "\"call_JMW1whyEaYG438VE1OIflxA2\",\"type\":\"function\","
	    "\"function\":{\"name\":\"GetWeatherArgs\",\"arguments\":"
	    "\"{\\\"city\\\": \\\"Edinburgh\\\", \\\"country\\\": \\\"GB\\\", "
	    "\\\"units\\\": \\\"c\\\"}\"}},{\"id\":"
	    "\"call_DNYTawLBoN8fj3KN6qU9N1Ou\",\"type\":\"function\","
	    "\"function\":{\"name\":\"get_stock_price\",\"arguments\":"
	    "\"{\\\"ticker\\\": \\\"AAPL\\\", \\\"exchange\\\": "
	    "\\\"NASDAQ\\\"}\"}}]"), "stream_result: both calls in index "
	    "order, arguments joined");
	want = without_ids(response_of_file(
	    "chat-nonstream-parallel-tool-calls.json"));
	got = without_ids(got);
	ok(art_json_equal(&got, &want), "the same LlmResponse as "
	    "chat-nonstream-parallel-tool-calls.json through response(), but "
	    "for the ids the two recordings were given");
	jv_free(got);
	jv_free(want);
	run_free(&r);
}

static void
test_stream_finish_length(void)
{
	struct run r;
	int rc;

	run_file("chat-stream-finish-length.sse", 0, &r);
	ok(is_json(jv_copy(r.deltas), "[{\"text\":\"{\\\"\"},"
	    "{\"finish_reason\":\"length\"}]"), "one token, then length");
	ok(is_json(result(r.st, &rc), "{\"id\":"
	    "\"chatcmpl-ABfw3Oqj8RD0z6aJiiX37oTjV2HFh\","
	    "\"model\":\"gpt-4o-2024-08-06\","
	    "\"content\":\"{\\\"\",\"finish_reason\":\"length\",\"usage\":"
	    "{\"input\":79,\"uncached_input\":79,\"cache_read\":0,"
	    "\"cache_write\":0,\"output\":1,\"total\":80,\"provider\":"
	    "{\"prompt_tokens\":79,\"completion_tokens\":1,\"total_tokens\":80,"
	    "\"completion_tokens_details\":{\"reasoning_tokens\":0}}}}") &&
	    rc == 0, "a truncated answer is still an answer, with its usage");
	run_free(&r);
}

static void
test_stream_midstream_error(void)
{
	struct run r;
	jv want_d = text_deltas(2, NULL);
	int rc;

	run_file("chat-stream-midstream-error.sse", 0, &r);
	ok(r.events == 4 && r.last == -1 &&
	    art_json_equal(&r.deltas, &want_d),
	    "two text deltas, then -1 at the error event");
	ok(is_json(jv_copy(r.error), "{\"error\":\"openai: stream error: "
	    MSG_500 "\",\"retryable\":true,\"code\":\"provider_error\","
	    "\"detail\":{\"error\":{\"message\":\"" MSG_500 "\",\"type\":"
	    "\"server_error\",\"param\":null,\"code\":null}}}"),
	    "a server_error in the stream is a retryable provider_error");
	ok(is_json(result(r.st, &rc), "{\"error\":\"openai: stream ended "
	    "early\",\"retryable\":true,\"code\":\"provider_error\"}") &&
	    rc == -1, "and the partial text is no result");
	jv_free(want_d);
	run_free(&r);
}

static void
test_stream_truncated_mid_event(void)
{
	struct run r;
	jv want_d = text_deltas(4, NULL);
	int rc;

	run_file("chat-stream-truncated-mid-event.sse", 0, &r);
	ok(r.finish == 1 && r.last == 0 && art_json_equal(&r.deltas, &want_d),
	    "four text deltas, then the bytes stop mid-event");
	ok(is_json(result(r.st, &rc), "{\"error\":\"openai: stream ended "
	    "early\",\"retryable\":true,\"code\":\"provider_error\"}") &&
	    rc == -1, "stream_result: ended early, never a short success");
	jv_free(want_d);
	run_free(&r);
}

static void
test_stream_non_json_data(void)
{
	struct run r;

	run_file("openai-non-json-data.sse", 0, &r);
	ok(r.events == 2 && r.last == -1 &&
	    is_json(jv_copy(r.deltas), "[{\"text\":\"x\"}]"),
	    "the text before, then -1 at the data that is not JSON");
	ok(is_error(&r.error, "provider_error", true,
	    "openai: stream: bad chunk: "), "a retryable provider_error");
	run_free(&r);
}

/* Feeds one data line to st as an event. */
static int
event(struct art_wire_stream *st, const char *data, jv *deltas, jv *error)
{
	struct art_sse_event ev = { "message", data, strlen(data), "", -1 };

	return W->stream_event(st, &ev, deltas, error);
}

#define CHUNK(delta, finish) \
	"{\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":" \
	"[{\"index\":0,\"delta\":" delta ",\"finish_reason\":" finish "}]}"

static void
test_stream_reasoning_and_combined_chunks(void)
{
	struct art_wire_stream *st = W->stream_new();
	jv deltas = jv_array(), error = jv_null();
	int rc = 0;

	rc |= event(st, CHUNK("{\"role\":\"assistant\",\"reasoning_content\":"
	    "\"Let me \"}", "null"), &deltas, &error);
	rc |= event(st, CHUNK("{\"reasoning\":\"think.\"}", "null"), &deltas,
	    &error);
	rc |= event(st, "{\"model\":\"m\",\"choices\":[{\"index\":1,\"delta\":"
	    "{\"content\":\"other\"},\"finish_reason\":null}]}", &deltas,
	    &error);
	rc |= event(st, CHUNK("{\"content\":\"4\"}", "\"stop\""), &deltas,
	    &error);
	ok(rc == 0 && is_json(jv_copy(deltas), "[{\"reasoning\":\"Let me \"},"
	    "{\"reasoning\":\"think.\"},{\"text\":\"4\",\"finish_reason\":"
	    "\"stop\"}]"), "reasoning under both names; a second choice "
	    "ignored; text and finish in one chunk are one delta");
	ok(is_json(result(st, &rc), "{\"model\":\"m\",\"content\":\"4\","
	    "\"reasoning\":\"Let me think.\",\"finish_reason\":\"stop\"}") &&
	    rc == 0, "stream_result: the reasoning joined, and no usage "
	    "when none came");
	ok(event(st, "[DONE]", &deltas, &error) == 1, "[DONE] returns 1");
	W->stream_free(st);
	jv_free(deltas);
	jv_free(error);
}

static void
test_stream_refusal_and_content_filter(void)
{
	struct art_wire_stream *st = W->stream_new();
	jv deltas = jv_array(), error = jv_null();
	int rc = 0;

	rc |= event(st, CHUNK("{\"refusal\":\"I can't\"}", "null"), &deltas,
	    &error);
	rc |= event(st, CHUNK("{\"refusal\":\" help.\"}", "null"), &deltas,
	    &error);
	ok(rc == 0 && jv_array_length(jv_copy(deltas)) == 0,
	    "refusal deltas are no StreamDelta");
	ok(is_json(result(st, &rc), "{\"model\":\"m\",\"finish_reason\":"
	    "\"refusal\",\"refusal\":\"I can't help.\"}") && rc == 0,
	    "a refusal is an answer: its words in refusal, finish_reason "
	    "refusal, even with no finish");
	event(st, CHUNK("{}", "\"stop\""), &deltas, &error);
	ok(is_json(result(st, &rc), "{\"model\":\"m\",\"finish_reason\":"
	    "\"refusal\",\"refusal\":\"I can't help.\"}") && rc == 0,
	    "and with one");
	W->stream_free(st);
	st = W->stream_new();
	rc = event(st, "{\"id\":\"chatcmpl-9\",\"model\":\"m\",\"choices\":"
	    "[{\"index\":0,\"delta\":{\"content\":\"Here is\"},"
	    "\"finish_reason\":null}]}", &deltas, &error);
	rc |= event(st, CHUNK("{\"refusal\":\"Sorry, no.\"}", "\"stop\""),
	    &deltas, &error);
	ok(rc == 0 && is_json(result(st, &rc), "{\"id\":\"chatcmpl-9\","
	    "\"model\":\"m\",\"content\":\"Here is\",\"finish_reason\":"
	    "\"refusal\",\"refusal\":\"Sorry, no.\"}") && rc == 0,
	    "the text said before a refusal is kept, with the chunks' id");
	W->stream_free(st);
	st = W->stream_new();
	event(st, CHUNK("{\"content\":\"Sure\"}", "\"content_filter\""),
	    &deltas, &error);
	ok(is_json(result(st, &rc), "{\"model\":\"m\",\"content\":\"Sure\","
	    "\"finish_reason\":\"content_filter\"}") && rc == 0,
	    "finish_reason content_filter comes as sent, the partial text "
	    "kept");
	W->stream_free(st);
	jv_free(deltas);
	jv_free(error);
}

/* The error object stream_event gives for data, which must fail. */
static jv
stream_error(const char *data)
{
	struct art_wire_stream *st = W->stream_new();
	jv deltas = jv_array(), error = jv_null();

	if (event(st, data, &deltas, &error) != -1) {
		jv_free(error);
		error = jv_string("no error");
	}
	W->stream_free(st);
	jv_free(deltas);
	return error;
}

static void
test_stream_error_events_are_classified(void)
{
	jv e;

	e = stream_error("{\"error\":{\"message\":\"Rate limit reached\","
	    "\"type\":\"tokens\",\"code\":\"rate_limit_exceeded\"}}");
	ok(is_error(&e, "rate_limited", true, "openai: stream error: Rate "
	    "limit reached"), "a rate limit in the stream is rate_limited");
	jv_free(e);
	e = stream_error("{\"error\":{\"message\":\"q\",\"type\":"
	    "\"insufficient_quota\"}}");
	ok(is_error(&e, "budget_exceeded", false, "openai: stream error: q"),
	    "a quota is budget_exceeded");
	jv_free(e);
	e = stream_error("{\"error\":{\"message\":\"Overloaded\",\"type\":"
	    "\"overloaded_error\"}}");
	ok(is_error(&e, "provider_error", true, "openai: stream error: "
	    "Overloaded"), "overloaded is retryable");
	jv_free(e);
	e = stream_error("{\"error\":{\"message\":\"no\",\"type\":"
	    "\"invalid_request_error\"}}");
	ok(is_error(&e, "provider_error", false, "openai: stream error: no"),
	    "an invalid request is not");
	jv_free(e);
	e = stream_error("{\"error\":{\"message\":\"x\",\"type\":"
	    "\"BadRequestError\",\"code\":503}}");
	ok(is_error(&e, "provider_error", true, "openai: stream error: x"),
	    "a status in code (vLLM) decides by the status rules");
	jv_free(e);
	e = stream_error("{\"error\":\"gone\"}");
	ok(is_error(&e, "provider_error", true, "openai: stream error: gone"),
	    "an error with no type is retryable");
	jv_free(e);
	e = stream_error("42");
	ok(is_error(&e, "provider_error", false, "openai: stream: bad chunk: "
	    "number, not an object"), "JSON that is no chunk is final");
	jv_free(e);
	e = stream_error(CHUNK("{\"tool_calls\":[{\"index\":5000,\"id\":"
	    "\"a\"}]}", "null"));
	ok(is_error(&e, "provider_error", false, "openai: stream: bad chunk: "
	    "tool call index"), "a tool call index out of range is final");
	jv_free(e);
}

static void
test_stream_tool_calls_from_compatible_servers(void)
{
	struct art_wire_stream *st = W->stream_new();
	jv deltas = jv_array(), error = jv_null(), got;
	int rc = 0;

	rc |= event(st, CHUNK("{\"tool_calls\":[{\"id\":\"a\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}},"
	    "{\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":"
	    "{\"x\":1}}}]}", "null"), &deltas, &error);
	rc |= event(st, CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"c\","
	    "\"function\":{\"name\":\"h\"}}]}", "null"), &deltas, &error);
	rc |= event(st, CHUNK("{\"tool_calls\":[{\"index\":0,\"function\":"
	    "{\"arguments\":\"\"}}]}", "null"), &deltas, &error);
	rc |= event(st, CHUNK("{\"tool_calls\":[{\"index\":3,\"function\":"
	    "{\"name\":\"k\",\"arguments\":\"[\"}}]}", "\"tool_calls\""),
	    &deltas, &error);
	ok(rc == 0 && is_json(jv_copy(deltas), "[{\"tool_calls\":[{\"id\":"
	    "\"a\",\"name\":\"f\",\"arguments\":\"{}\"},{\"id\":\"b\",\"name\":"
	    "\"g\",\"arguments\":\"{\\\"x\\\":1}\"}]},{\"tool_calls\":[{\"id\":"
	    "\"c\",\"name\":\"h\"}]},{\"tool_calls\":[{\"id\":\"call_3\","
	    "\"name\":\"k\",\"arguments\":\"[\"}],\"finish_reason\":"
	    "\"tool_calls\"}]"), "whole calls without an index, a new id at "
	    "a taken index, an empty fragment and a call with no id");
	got = result(st, &rc);
	ok(rc == 0 && is_json(jv_object_get(got, jv_string("tool_calls")),
	    "[{\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"f\","
	    "\"arguments\":\"{}\"}},{\"id\":\"b\",\"type\":\"function\","
	    "\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"x\\\":1}\"}},"
	    "{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"h\","
	    "\"arguments\":\"\"}},{\"id\":\"call_3\",\"type\":\"function\","
	    "\"function\":{\"name\":\"k\",\"arguments\":\"[\"}}]"),
	    "stream_result keeps them all, in slot order");
	W->stream_free(st);
	W->stream_free(NULL);
	jv_free(deltas);
	jv_free(error);
}

int
main(void)
{
	test_find_names_each_format();
	test_retry_after_reads_seconds();
	test_retry_after_reads_http_dates();
	test_retry_after_rejects_everything_else();

	test_request_says_everything_the_seed_can();
	test_request_leaves_out_what_is_not_there();
	test_tool_images_follow_in_a_user_message();
	test_assistant_images_stay_home();
	test_request_refuses_what_it_cannot_say();
	test_request_sends_response_format_as_json_schema();
	test_response_reads_a_structured_answer();

	test_response_reads_a_text_answer();
	test_response_reads_parallel_tool_calls();
	test_response_reads_what_compatible_servers_send();
	test_response_errors();
	test_native_writes_a_completion_that_reads_back();
	ok(nboth == 0, "response() set exactly one of resp and error, always");

	test_error_reads_the_recorded_bodies();
	test_error_reads_a_rate_limit_and_its_delay();
	test_error_status_decides_retry();
	test_error_quotes_a_body_that_is_not_json();
	test_error_never_copies_request_headers();

	test_stream_of_text_with_usage();
	test_stream_of_parallel_tool_calls();
	test_stream_finish_length();
	test_stream_midstream_error();
	test_stream_truncated_mid_event();
	test_stream_non_json_data();
	test_stream_reasoning_and_combined_chunks();
	test_stream_refusal_and_content_filter();
	test_stream_error_events_are_classified();
	test_stream_tool_calls_from_compatible_servers();
	return tap_done();
}
