/* propose-test - what an ordinary tool loop would do next, per trigger */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "propose.h"
#include "tap.h"
#include "testjv.h"

static jv
J(const char *text)
{
	struct art_err err;
	jv v = art_json_parse_str(text, &err);

	if (!jv_is_valid(v)) {
		fprintf(stderr, "propose-test: bad JSON in the test:"
		    " %s\n", text);
		exit(99);
	}
	return v;
}

/* The stored llm calls the callback knows: {id: call}. */
static jv
llm_call_cb(void *ctx, const char *id)
{
	const jv *calls = ctx;
	jv c = jv_object_get(jv_copy(*calls), jv_string(id));

	return jv_is_valid(c) ? c : (jv_free(c), jv_null());
}

/* What the callbacks read: the stored calls and the path. */
struct fixture {
	jv	calls;
	jv	path;
};

static jv
fixture_llm_call(void *ctx, const char *id)
{
	return llm_call_cb(&((struct fixture *)ctx)->calls, id);
}

/* The path from the last assistant message asking for call id on. */
static jv
since_call_cb(void *ctx, const char *id)
{
	const struct fixture *fx = ctx;
	int at = -1, n = jv_array_length(jv_copy(fx->path));

	jv_array_foreach(fx->path, i, m) {
		jv calls = art_json_field(&m, "tool_calls");

		if (jv_get_kind(calls) == JV_KIND_ARRAY) {
			jv_array_foreach(calls, k, c) {
				const char *cid = art_json_str(&c, "id");

				if (cid != NULL && strcmp(cid, id) == 0)
					at = i;
				jv_free(c);
				(void)k;
			}
		}
		jv_free(calls);
		jv_free(m);
	}
	return at < 0 ? jv_null() : jv_array_slice(jv_copy(fx->path), at, n);
}

static jv
prompt_cb(void *ctx, const jv *req)
{
	(void)ctx;
	return art_json_field(req, "messages");
}

/* Does the trigger's view continue the path (ids before new_from)? */
static int
view_continues(const jv *tr, const jv *path)
{
	jv view = art_json_field(tr, "messages");
	int64_t from = -1;
	int n = jv_array_length(jv_copy(*path)), yes;

	art_json_get_int(tr, "new_from", -1, &from, NULL);
	yes = jv_get_kind(view) == JV_KIND_ARRAY && from == n;
	for (int i = 0; yes && i < n; i++) {
		jv a = jv_array_get(jv_copy(view), i);
		jv b = jv_array_get(jv_copy(*path), i);

		yes = art_json_str(&a, "id") != NULL && art_json_str(&b,
		    "id") != NULL && strcmp(art_json_str(&a, "id"),
		    art_json_str(&b, "id")) == 0;
		jv_free(a);
		jv_free(b);
	}
	jv_free(view);
	return yes;
}

/* The head: the last message on the path, NULL for none (borrowed). */
static const char *
head_of(const jv *path, jv *last)
{
	int n = jv_array_length(jv_copy(*path));

	*last = n > 0 ? jv_array_get(jv_copy(*path), n - 1) : jv_null();
	return art_json_str(last, "id");
}

/*
 * Runs art_propose over JSON texts, then makes its by-reference
 * proposal whole with the path (art_propose_expand), so the proposals
 * read as the seed's; calls may be NULL (none stored).
 */
static jv
propose_with(const char *trigger, const char *path, const char *config,
    const char *file, int64_t pending, const char *calls,
    const char *interrupt)
{
	jv tr = J(trigger), p = J(path), cfg = J(config), f = J(file);
	jv it = J(interrupt), out, last;
	struct fixture fx = { J(calls != NULL ? calls : "{}"), jv_copy(p) };
	struct art_propose_in in = { .trigger = &tr, .config = &cfg,
	    .file_config = &f, .interrupt = &it, .head = head_of(&p, &last),
	    .pending_calls = pending, .view_continues = view_continues(&tr,
	    &p), .llm_call = fixture_llm_call, .since_call = since_call_cb,
	    .prompt = prompt_cb, .ctx = &fx };

	jv tools = art_propose_llm_tools(&cfg);

	/* As the ring carries it (tools by version), then whole again. */
	out = art_propose_expand(art_propose_by_version(art_propose(&in),
	    &tools), &p, &cfg);
	jv_free(tools);
	jv_free(last);
	jv_free(fx.calls);
	jv_free(fx.path);
	jv_free(it);
	jv_free(tr);
	jv_free(p);
	jv_free(cfg);
	jv_free(f);
	return out;
}

static jv
propose(const char *trigger, const char *path, const char *config,
    const char *file, int64_t pending, const char *calls)
{
	return propose_with(trigger, path, config, file, pending, calls,
	    "null");
}

#define CONFIG "{\"model\":\"mock/calc\",\"system\":\"be brief\"," \
	"\"stream\":true,\"tools\":[" \
	"{\"name\":\"add\",\"input\":{\"type\":\"object\"}}," \
	"{\"name\":\"ask\",\"description\":\"Ask the user\"," \
	"\"handler\":\"client\",\"output\":{\"type\":\"string\"}}]}"
#define LLM_TOOLS "[{\"name\":\"add\",\"description\":\"\"," \
	"\"input\":{\"type\":\"object\"}},{\"name\":\"ask\"," \
	"\"description\":\"Ask the user\",\"output\":{\"type\":\"string\"}}]"
#define U1 "{\"id\":\"u1\",\"role\":\"user\",\"content\":\"1+2?\"}"
#define SYS "{\"role\":\"system\",\"content\":\"be brief\"}"

static void
test_session_start_proposes_the_file_config(void)
{
	ok(is_json(propose("{\"type\":\"session.start\"}", "[]", "null",
	    "{\"model\":\"mock/calc\"}", 0, NULL),
	    "{\"agent\":{\"model\":\"mock/calc\"}}"),
	    "the agent file's config, whole");
	ok(is_json(propose("{\"type\":\"session.start\"}", "[]", "null",
	    "null", 0, NULL), "{}"), "no file config: no proposal");
	ok(is_json(propose("{\"type\":\"session.start\"}", "[]",
	    "{\"model\":\"other\"}", CONFIG, 0, NULL), "{\"agent\":" CONFIG ""
	    "}"),
	    "the file's, not the resolved one");
}

static void
test_client_messages_calls_the_model_with_the_config(void)
{
	ok(is_json(propose("{\"type\":\"client.messages\",\"messages\":[" U1
	    "],\"new_from\":0,\"client\":{}}", "[]", CONFIG, "null", 0, NULL),
	    "{\"messages\":[" U1 "],\"actions\":[{\"type\":\"llm.call\","
	    "\"model\":\"mock/calc\",\"messages\":[" SYS "," U1 "],"
	    "\"tools\":" LLM_TOOLS ",\"stream\":true,\"handler\":"
	    "\"server\"}]}"),
	    "the view, then an llm.call: system prompt first, tools as "
	    "LlmTools, stream from the config, handler server, no retry");
	ok(is_json(propose("{\"type\":\"client.messages\",\"messages\":[" U1
	    "],\"new_from\":0}", "[]", "{\"model\":\"m\",\"retry\":"
	    "{\"max_retries\":2}}", "null", 0, NULL),
	    "{\"messages\":[" U1 "],\"actions\":[{\"type\":\"llm.call\","
	    "\"model\":\"m\",\"messages\":[" U1 "],\"stream\":false,"
	    "\"retry\":{\"max_retries\":2},\"handler\":\"server\"}]}"),
	    "no system prompt, no tools: none sent; stream defaults false; "
	    "the config's retry is copied");
	ok(is_json(propose("{\"type\":\"client.messages\",\"messages\":[" U1
	    "],\"new_from\":0}", "[]", "{\"model\":\"m\",\"system\":\"\"}",
	    "null", 0, NULL), "{\"messages\":[" U1 "],\"actions\":[{\"type\":"
	    "\"llm.call\",\"model\":\"m\",\"messages\":[" U1 "],"
	    "\"stream\":false,\"handler\":\"server\"}]}"),
	    "an empty system prompt adds nothing");
	ok(is_json(propose("{\"type\":\"client.messages\",\"messages\":[" U1
	    "],\"new_from\":0}", "[]", "null", "null", 0, NULL), "{}"),
	    "no config: no proposal (the seed's rule)");
}

static void
test_client_tools_are_layered_onto_the_config(void)
{
	jv p = propose("{\"type\":\"client.messages\",\"messages\":[" U1
	    "],\"new_from\":0,\"client\":{\"tools\":[{\"name\":\"pick\","
	    "\"description\":\"the page's\",\"handler\":\"worker\"},"
	    "{\"name\":\"add\",\"description\":\"not this one\"}]}}", "[]",
	    CONFIG, "null", 0, NULL);

	ok(is_json(jv_object_get(jv_copy(p), jv_string("agent")),
	    "{\"model\":\"mock/calc\",\"system\":\"be brief\",\"stream\":"
	    "true,\"tools\":[{\"name\":\"add\",\"input\":{\"type\":"
	    "\"object\"}},{\"name\":\"ask\",\"description\":\"Ask the "
	    "user\",\"handler\":\"client\",\"output\":{\"type\":\"string\"}},"
	    "{\"name\":\"pick\",\"description\":\"the page's\",\"handler\":"
	    "\"client\"}]}"),
	    "the client's tool joins the config as a client tool; a declared "
	    "name keeps its meaning");
	ok(is_json(jv_array_get(jv_object_get(jv_array_get(jv_object_get(
	    jv_copy(p), jv_string("actions")), 0), jv_string("tools")), 2),
	    "{\"name\":\"pick\",\"description\":\"the page's\"}"),
	    "the model call offers it");
	jv_free(p);
	ok(is_json(propose("{\"type\":\"client.messages\",\"messages\":[" U1
	    "],\"new_from\":0,\"client\":{\"tools\":[{\"name\":\"add\"}]}}",
	    "[]", "{\"model\":\"m\",\"tools\":[{\"name\":\"add\"}]}",
	    "null", 0, NULL), "{\"messages\":[" U1 "],\"actions\":[{\"type\":"
	    "\"llm.call\",\"model\":\"m\",\"messages\":[" U1 "],\"tools\":"
	    "[{\"name\":\"add\",\"description\":\"\"}],\"stream\":false,"
	    "\"handler\":\"server\"}]}"),
	    "tools that add nothing write no config");
	ok(is_json(propose("{\"type\":\"client.messages\",\"messages\":[" U1
	    "],\"new_from\":0,\"client\":{\"tools\":[{\"name\":\"x\"}]}}",
	    "[]", "null", "null", 0, NULL), "{}"),
	    "no config: still no proposal");
}

static void
test_client_action_proposes_nothing(void)
{
	ok(is_json(propose("{\"type\":\"client.action\",\"name\":\"approve\"}",
	    "[" U1 "]", CONFIG, "null", 0, NULL), "{}"),
	    "client.action: only the worker knows");
	ok(is_json(propose("{\"type\":\"llm.execute\",\"id\":\"x\"}", "[]",
	    CONFIG, "null", 0, NULL), "{}"), "llm.execute: none");
	ok(is_json(propose("{\"no\":\"type\"}", "[]", CONFIG, "null", 0, NULL),
	    "{}"), "a trigger without a type: none");
}

#define EXEC(name, input) "{\"type\":\"tool.execute\",\"id\":\"c1\"," \
	"\"name\":\"" name "\",\"arguments\":\"{}\",\"input\":" input \
	",\"attempt\":1}"

static void
test_tool_execute_checks_the_tool_and_its_input(void)
{
	ok(is_json(propose(EXEC("add", "{\"status\":\"valid\",\"value\":{}}"),
	    "[" U1 "]", CONFIG, "null", 0, NULL), "{}"),
	    "a declared tool with valid input: only the worker can run it");
	ok(is_json(propose(EXEC("sub", "{\"status\":\"valid\",\"value\":{}}"),
	    "[" U1 "]", CONFIG, "null", 0, NULL), "{\"messages\":[" U1 "],"
	    "\"actions\":[{\"type\":"
	    "\"tool.error\",\"id\":\"c1\",\"error\":\"unknown tool: sub\","
	    "\"retryable\":false}]}"), "an undeclared tool: a terminal error");
	ok(is_json(propose(EXEC("add", "{\"status\":\"malformed\",\"error\":"
	    "\"arguments are array, not a JSON object\"}"), "[" U1 "]", CONFIG,
	    "null", 0, NULL), "{\"messages\":[" U1 "],\"actions\":[{\"type\":"
	    "\"tool.error\",\"id\":"
	    "\"c1\",\"error\":\"invalid tool arguments: arguments are array, "
	    "not a JSON object\",\"retryable\":false}]}"),
	    "malformed input: a terminal error with the reason");
	ok(is_json(propose(EXEC("add", "{\"status\":\"invalid\",\"value\":{},"
	    "\"error\":\"a is required\"}"), "[]", CONFIG, "null", 0, NULL),
	    "{\"messages\":[],\"actions\":[{\"type\":\"tool.error\",\"id\":\"c1\",\"error\":"
	    "\"invalid tool arguments: a is required\",\"retryable\":false}]}"),
	    "invalid input too");
	ok(is_json(propose(EXEC("add", "{\"status\":\"valid\",\"value\":{}}"),
	    "[]", "null", "null", 0, NULL), "{\"messages\":[],\"actions\":[{\"type\":"
	    "\"tool.error\",\"id\":\"c1\",\"error\":\"unknown tool: add\","
	    "\"retryable\":false}]}"), "no config: every tool is unknown");
}

/*
 * propose.h: "Every non-empty proposal carries the whole transcript in
 * "messages", so echoing it records only what is new."
 */
static void
test_every_non_empty_proposal_carries_the_transcript(void)
{
	jv p = propose(EXEC("sub", "{\"status\":\"valid\",\"value\":{}}"),
	    "[" U1 "]", CONFIG, "null", 0, NULL);

	ok(is_json(art_json_field(&p, "messages"), "[" U1 "]"),
	    "tool.execute's tool.error proposal carries the transcript");
	jv_free(p);
}

/* Path: u1, then the model's reply a1 asking for two tools. */
#define A1 "{\"id\":\"a1\",\"role\":\"assistant\",\"tool_calls\":[" \
	"{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"add\"," \
	"\"arguments\":\"{\\\"a\\\":1}\"}}," \
	"{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"add\"," \
	"\"arguments\":\"{}\"}}]}"
#define T2 "{\"id\":\"t2\",\"role\":\"tool\",\"tool_call_id\":\"c2\"," \
	"\"name\":\"add\",\"content\":\"0\"}"
#define FIN(ok, field) "{\"type\":\"tool.finished\",\"id\":\"c1\"," \
	"\"ok\":" ok ",\"name\":\"add\"," field "}"
#define TOOL_MSG(content) "{\"role\":\"tool\",\"tool_call_id\":\"c1\"," \
	"\"name\":\"add\",\"content\":" content "}"
/* The stored call a1: what was sent to the model. */
#define CALLS "{\"a1\":{\"id\":\"a1\",\"kind\":\"llm_call\"," \
	"\"request\":{\"model\":\"mock/calc\",\"messages\":[" SYS ",{\"id\":" \
	"\"u1\",\"role\":\"user\",\"content\":\"shaped\"}],\"tools\":" \
	LLM_TOOLS ",\"temperature\":0.5,\"max_completion_tokens\":99," \
	"\"reasoning\":{\"effort\":\"low\"}},\"stream\":true,\"retry\":" \
	"{\"timeout_secs\":9,\"max_retries\":1,\"backoff_base_secs\":0," \
	"\"backoff_max_secs\":0},\"handler\":\"worker\",\"anchor\":\"u1\"," \
	"\"status\":\"completed\"}}"

static void
test_tool_finished_waits_for_siblings(void)
{
	ok(is_json(propose(FIN("true", "\"result\":\"3\""), "[" U1 "," A1 "]",
	    CONFIG, "null", 1, CALLS), "{\"messages\":[" U1 "," A1 ","
	    TOOL_MSG("\"3\"") "],\"actions\":[]}"),
	    "pending_calls > 0: fold the result in, call nothing");
	ok(is_json(propose(FIN("false", "\"error\":\"boom\""), "[" U1 "," A1
	    "]", CONFIG, "null", 2, CALLS), "{\"messages\":[" U1 "," A1 ","
	    TOOL_MSG("\"boom\"") "],\"actions\":[]}"),
	    "a failed tool's error is the tool message's content");
}

static void
test_tool_finished_reissues_the_parent_call(void)
{
	ok(is_json(propose(FIN("true", "\"result\":\"3\""), "[" U1 "," A1 ","
	    T2 "]", CONFIG, "null", 0, CALLS), "{\"messages\":[" U1 "," A1 ","
	    T2 "," TOOL_MSG("\"3\"") "],\"actions\":[{\"type\":\"llm.call\","
	    "\"model\":\"mock/calc\",\"tools\":" LLM_TOOLS ","
	    "\"temperature\":0.5,\"max_completion_tokens\":99,\"reasoning\":"
	    "{\"effort\":\"low\"},\"messages\":[" SYS ",{\"id\":\"u1\","
	    "\"role\":\"user\",\"content\":\"shaped\"}," A1 "," T2 ","
	    TOOL_MSG("\"3\"") "],\"stream\":true,\"retry\":{\"timeout_secs\":9,"
	    "\"max_retries\":1,\"backoff_base_secs\":0,\"backoff_max_secs\":0},"
	    "\"handler\":\"worker\"}]}"),
	    "the stored prompt verbatim, the transcript from the assistant "
	    "on, the tool message; model, tools, sampling, stream, retry and "
	    "handler copied; no id");
	ok(is_json(propose(FIN("true", "\"result\":\"3\""), "[" U1 "]",
	    CONFIG, "null", 0, CALLS), "{}"),
	    "no assistant on the path asked for c1: no proposal");
	ok(is_json(propose(FIN("true", "\"result\":\"3\""), "[" U1 "," A1 "]",
	    CONFIG, "null", 0, "{}"), "{}"),
	    "the parent call is not stored: no proposal");
	ok(is_json(propose(FIN("true", "\"result\":\"3\""), "[" U1 "," A1 "]",
	    CONFIG, "null", 0, "{\"a1\":{\"id\":\"a1\",\"kind\":"
	    "\"llm_call\"}}"),
	    "{}"), "a stored call without a request: no proposal");
}

static void
test_tool_finished_finds_the_last_asking_assistant(void)
{
	jv p = propose(FIN("true", "\"result\":\"3\""), "[" U1 ","
	    "{\"id\":\"a0\",\"role\":\"assistant\",\"tool_calls\":[{\"id\":"
	    "\"c1\","
	    "\"function\":{\"name\":\"add\",\"arguments\":\"{}\"}}]}," A1 "]",
	    CONFIG, "null", 0, "{\"a0\":{\"request\":{\"model\":\"old\","
	    "\"messages\":[]}},\"a1\":{\"request\":{\"model\":\"new\","
	    "\"messages\":[]}}}"), a = art_json_field(&p, "actions");
	jv call = jv_array_get(a, 0);

	ok(is_json(art_json_field(&call, "model"), "\"new\""),
	    "the last assistant holding the call id is the parent");
	ok(is_json(art_json_field(&call, "messages"), "[" A1 ","
	    TOOL_MSG("\"3\"") "]"), "its transcript starts there");
	jv_free(call);
	jv_free(p);
}

#define LLM_FIN(msg) "{\"type\":\"llm.finished\",\"id\":\"a2\",\"ok\":true," \
	"\"truncated\":false,\"message\":" msg "}"

static void
test_llm_finished_without_tool_calls_is_done(void)
{
	ok(is_json(propose(LLM_FIN("{\"id\":\"a2\",\"role\":\"assistant\","
	    "\"content\":\"3\"}"), "[" U1 "]", CONFIG, "null", 0, NULL),
	    "{\"messages\":[" U1 ",{\"id\":\"a2\",\"role\":\"assistant\","
	    "\"content\":\"3\"}],\"actions\":[{\"type\":\"done\",\"data\":"
	    "\"3\"}]}"), "record the reply, done with its content");
	ok(is_json(propose(LLM_FIN("{\"id\":\"a2\",\"role\":\"assistant\","
	    "\"content\":\"3\",\"tool_calls\":[]}"), "[]", CONFIG, "null", 0,
	    NULL), "{\"messages\":[{\"id\":\"a2\",\"role\":\"assistant\","
	    "\"content\":\"3\",\"tool_calls\":[]}],\"actions\":[{\"type\":"
	    "\"done\",\"data\":\"3\"}]}"), "an empty tool_calls is no call");
}

static void
test_llm_finished_with_tool_calls_calls_the_tools(void)
{
	const char *msg = "{\"id\":\"a2\",\"role\":\"assistant\","
	    "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":"
	    "{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1}\"}},{\"id\":"
	    "\"c2\","
	    "\"type\":\"function\",\"function\":{\"name\":\"ask\","
	    "\"arguments\":\"{}\"}},{\"id\":\"c3\",\"type\":\"function\","
	    "\"function\":{\"name\":\"nope\",\"arguments\":\"\"}}]}";
	char trigger[1024], want[1024];
	jv p;

	snprintf(trigger, sizeof(trigger), "{\"type\":\"llm.finished\","
	    "\"id\":\"a2\",\"ok\":true,\"truncated\":false,\"message\":"
	    "%s}", msg);
	snprintf(want, sizeof(want), "[" U1 ",%s]", msg);
	p = propose(trigger, "[" U1 "]", CONFIG, "null", 0, NULL);
	ok(is_json(art_json_field(&p, "messages"), want),
	    "the reply is recorded after the transcript");
	ok(is_json(art_json_field(&p, "actions"), "[{\"type\":\"tool.call\","
	    "\"id\":\"c1\",\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1}\"},"
	    "{\"type\":\"tool.call\",\"id\":\"c2\",\"name\":\"ask\","
	    "\"arguments\":\"{}\",\"handler\":\"client\"},{\"type\":"
	    "\"tool.call\",\"id\":\"c3\",\"name\":\"nope\",\"arguments\":"
	    "\"\"}]"),
	    "a tool.call per call in order, the raw argument string, handler "
	    "client for a client-handled tool");
	jv_free(p);
}

static void
test_a_failed_or_truncated_model_call_interrupts(void)
{
	ok(is_json(propose("{\"type\":\"llm.finished\",\"id\":\"a2\","
	    "\"ok\":false,\"truncated\":false,\"error\":\"boom\",\"code\":"
	    "\"provider_error\"}", "[" U1 "]", CONFIG, "null", 0, NULL),
	    "{\"messages\":[" U1 "],\"actions\":[{\"type\":\"interrupt\","
	    "\"reason\":\"llm call failed: boom\",\"payload\":{\"type\":"
	    "\"llm.failed\",\"id\":\"a2\",\"error\":\"boom\",\"code\":"
	    "\"provider_error\",\"truncated\":false}}]}"),
	    "failed: the transcript without a reply, an llm.failed interrupt");
	ok(is_json(propose("{\"type\":\"llm.finished\",\"id\":\"a2\","
	    "\"ok\":true,\"truncated\":true,\"message\":{\"id\":\"a2\","
	    "\"role\":\"assistant\",\"content\":\"3 and\"}}", "[" U1 "]",
	    CONFIG, "null", 0, NULL), "{\"messages\":[" U1 "],\"actions\":[{"
	    "\"type\":\"interrupt\",\"reason\":\"llm call truncated\","
	    "\"payload\":{\"type\":\"llm.failed\",\"id\":\"a2\",\"error\":null,"
	    "\"code\":null,\"truncated\":true}}]}"),
	    "truncated: the partial reply is not recorded");
	ok(is_json(propose("{\"type\":\"llm.finished\",\"id\":\"a2\","
	    "\"ok\":false,\"truncated\":false}", "[]", CONFIG, "null", 0, NULL),
	    "{\"messages\":[],\"actions\":[{\"type\":\"interrupt\",\"reason\":"
	    "\"llm call failed\",\"payload\":{\"type\":\"llm.failed\",\"id\":"
	    "\"a2\",\"error\":null,\"code\":null,\"truncated\":false}}]}"),
	    "failed without an error text");
}

static void
test_a_refused_reply_fails_the_turn_showing_it(void)
{
	ok(is_json(propose("{\"type\":\"llm.finished\",\"id\":\"a2\","
	    "\"ok\":true,\"truncated\":false,\"code\":\"refused\",\"error\":"
	    "\"the model refused: No.\",\"message\":{\"id\":\"a2\",\"role\":"
	    "\"assistant\",\"content\":\"Well\"}}", "[" U1 "]", CONFIG,
	    "null", 0, NULL), "{\"messages\":[" U1 ",{\"id\":\"a2\","
	    "\"role\":\"assistant\",\"content\":\"Well\"}],\"actions\":[{"
	    "\"type\":\"done\",\"data\":\"Well\",\"error\":\"the model "
	    "refused: No.\",\"code\":\"refused\"}]}"),
	    "refused: the reply recorded, done with its text, error and code");
	ok(is_json(propose("{\"type\":\"llm.finished\",\"id\":\"a2\","
	    "\"ok\":true,\"truncated\":false,\"code\":\"refused\",\"error\":"
	    "\"f\",\"message\":{\"id\":\"a2\",\"role\":\"assistant\","
	    "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
	    "\"function\":{\"name\":\"add\",\"arguments\":\"{}\"}}]}}",
	    "[]", CONFIG, "null", 0, NULL), "{\"messages\":[{\"id\":\"a2\","
	    "\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"add\",\"arguments\":"
	    "\"{}\"}}]}],\"actions\":[{\"type\":\"done\",\"error\":\"f\","
	    "\"code\":\"refused\"}]}"),
	    "a refused reply's tool calls are not run");
}

static void
test_a_config_error_fails_the_turn_not_parks(void)
{
	jv p;

	ok(is_json(propose("{\"type\":\"llm.finished\",\"id\":\"a2\","
	    "\"ok\":false,\"truncated\":false,\"error\":\"OPENAI_API_KEY is "
	    "not set\",\"detail\":{\"config\":\"no_api_key\"}}", "[" U1 "]",
	    CONFIG, "null", 0, NULL), "{\"messages\":[" U1 "],\"actions\":"
	    "[{\"type\":\"done\",\"error\":\"OPENAI_API_KEY is not set\","
	    "\"code\":\"config\"}]}"),
	    "detail.config: a failed done, code config, no interrupt");
	p = propose("{\"type\":\"llm.finished\",\"id\":\"a2\",\"ok\":false,"
	    "\"truncated\":false,\"error\":\"x\",\"detail\":{\"status\":500}}",
	    "[]", CONFIG, "null", 0, NULL);
	ok(is_json(art_json_field(&p, "actions"), "[{\"type\":\"interrupt\",\"reason\":\"llm call "
	    "failed: x\",\"payload\":{\"type\":\"llm.failed\",\"id\":\"a2\","
	    "\"error\":\"x\",\"code\":null,\"truncated\":false}}]"),
	    "any other detail still interrupts");
	jv_free(p);
}

#define RESUMED "{\"type\":\"interrupt.resumed\",\"interrupt_id\":\"i1\"}"

static void
test_a_resumed_model_failure_calls_the_model_again(void)
{
	ok(is_json(propose_with(RESUMED, "[" U1 "]", CONFIG, "null", 0, NULL,
	    "{\"interrupt_id\":\"i1\",\"reason\":\"llm call failed\","
	    "\"payload\":{\"type\":\"llm.failed\",\"id\":\"a2\"}}"),
	    "{\"messages\":[" U1 "],\"actions\":[{\"type\":\"llm.call\","
	    "\"model\":\"mock/calc\",\"messages\":[" SYS "," U1 "],\"tools\":"
	    LLM_TOOLS ",\"stream\":true,\"handler\":\"server\"}]}"),
	    "an llm.failed interrupt: the model again over the transcript");
	ok(is_json(propose_with(RESUMED, "[" U1 "]", CONFIG, "null", 0, NULL,
	    "{\"interrupt_id\":\"i1\",\"reason\":\"look\"}"),
	    "{\"messages\":[" U1 "],\"actions\":[{\"type\":\"llm.call\","
	    "\"model\":\"mock/calc\",\"messages\":[" SYS "," U1 "],\"tools\":"
	    LLM_TOOLS ",\"stream\":true,\"handler\":\"server\"}]}"),
	    "any other interrupt: the turn goes on, the model again");
	ok(is_json(propose_with(RESUMED, "[" U1 "]", CONFIG, "null", 0, NULL,
	    "{\"interrupt_id\":\"i1\",\"payload\":{\"type\":\"approval\"}}"),
	    "{\"messages\":[" U1 "]}") && is_json(propose_with(RESUMED, "["
	    U1 "]", CONFIG, "null", 0, NULL, "{\"interrupt_id\":\"i1\","
	    "\"payload\":{\"type\":\"input_required\"}}"),
	    "{\"messages\":[" U1 "]}"),
	    "a held call's interrupt: the engine answered it; the transcript "
	    "alone (not empty, so a decide stage answers it)");
	ok(is_json(propose_with(RESUMED, "[" U1 "]", "null", "null", 0, NULL,
	    "{\"interrupt_id\":\"i1\",\"payload\":{\"type\":\"llm.failed\"}}"),
	    "{}"), "no config: no proposal");
}

#define TEAM "{\"model\":\"mock/boss\",\"tools\":[{\"name\":\"add\"}]," \
	"\"sub_agents\":[\"alpha\",{\"id\":\"beta\",\"description\":\"B\"}," \
	"{\"id\":\"add\"}],\"ask_user\":true}"

static void
test_sub_agents_and_ask_user_are_tools(void)
{
	jv cfg = J(TEAM), tools = art_propose_llm_tools(&cfg), t;

	ok(is_json(jv_copy(tools), "[{\"name\":\"add\",\"description\":\"\"},"
	    "{\"name\":\"alpha\",\"description\":\"Delegate a task to the "
	    "alpha agent and get its answer\",\"input\":{\"type\":\"object\","
	    "\"properties\":{\"message\":{\"type\":\"string\",\"description\":"
	    "\"What to ask the alpha agent\"}},\"required\":[\"message\"]}},"
	    "{\"name\":\"beta\",\"description\":\"B\",\"input\":{\"type\":"
	    "\"object\",\"properties\":{\"message\":{\"type\":\"string\","
	    "\"description\":\"What to ask the beta agent\"}},\"required\":"
	    "[\"message\"]}},{\"name\":\"ask_user\",\"description\":\"Ask the "
	    "user a question and wait for the answer. Use it when only the "
	    "user can give the information or make the decision.\",\"input\":"
	    "{\"type\":\"object\",\"properties\":{\"question\":{\"type\":"
	    "\"string\"},\"options\":{\"type\":\"array\",\"items\":{\"type\":"
	    "\"string\"}},\"allow_text\":{\"type\":\"boolean\"}},\"required\":"
	    "[\"question\"]}}]"),
	    "sub-agents are tools with one message argument (a declared tool "
	    "of the same name wins), then ask_user");
	t = art_propose_sub_agent(&cfg, "alpha");
	ok(is_json(t, "{\"id\":\"alpha\"}") && is_json(
	    art_propose_sub_agent(&cfg, "gamma"), "null"),
	    "sub_agent: a bare id reads as {id}; an unknown one is null");
	ok(art_propose_asks_user(&cfg) && !art_propose_asks_user(&tools),
	    "asks_user: only \"ask_user\": true");
	jv_free(tools);
	jv_free(cfg);
}

static void
test_a_call_of_a_sub_agent_spawns_and_sends(void)
{
	char child[37], again[37];
	const char *msg = "{\"id\":\"a2\",\"role\":\"assistant\","
	    "\"tool_calls\":[{\"id\":\"t1\",\"type\":\"function\","
	    "\"function\":{\"name\":\"beta\",\"arguments\":"
	    "\"{\\\"message\\\":\\\"hi\\\"}\"}},{\"id\":\"t2\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"add\",\"arguments\":"
	    "\"{}\"}},{\"id\":\"t3\",\"type\":\"function\",\"function\":{"
	    "\"name\":\"alpha\",\"arguments\":\"plain\"}}]}";
	jv tr = jv_object_set(J("{\"type\":\"llm.finished\",\"id\":\"a2\","
	    "\"ok\":true,\"truncated\":false}"), jv_string("message"), J(msg));
	jv p = J("[" U1 "]"), cfg = J(TEAM), f = jv_null(), it = jv_null(), out;
	jv want;
	struct fixture fx = { J("{}"), jv_copy(p) };
	struct art_propose_in in = { .trigger = &tr, .config = &cfg,
	    .file_config = &f, .interrupt = &it, .head = "u1",
	    .decision_id = "d1", .pending_calls = 0,
	    .llm_call = fixture_llm_call, .since_call = since_call_cb,
	    .prompt = prompt_cb, .ctx = &fx };

	art_propose_child_id("d1", "t1", child);
	art_propose_child_id("d1", "t1", again);
	ok(strcmp(child, again) == 0 && strlen(child) == 36 &&
	    child[14] == '5', "child id: a UUIDv5, the same every time");
	art_propose_child_id("d2", "t1", again);
	ok(strcmp(child, again) != 0, "child id: another decision, another "
	    "child");
	out = art_propose(&in);
	art_propose_child_id("d1", "t1", child);
	art_propose_child_id("d1", "t3", again);
	want = jv_string_fmt("[{\"type\":\"sub_agent.spawn\",\"session_id\":"
	    "\"%s\",\"agent_id\":\"beta\",\"tool_call_id\":\"t1\"},{\"type\":"
	    "\"message.send\",\"session_id\":\"%s\",\"message\":{\"role\":"
	    "\"user\",\"content\":\"hi\"}},{\"type\":\"tool.call\",\"id\":"
	    "\"t2\",\"name\":\"add\",\"arguments\":\"{}\"},{\"type\":"
	    "\"sub_agent.spawn\",\"session_id\":\"%s\",\"agent_id\":\"alpha\","
	    "\"tool_call_id\":\"t3\"},{\"type\":\"message.send\",\"session_id\":"
	    "\"%s\",\"message\":{\"role\":\"user\",\"content\":\"plain\"}}]",
	    child, child, again, again);
	ok(is_json(art_json_field(&out, "actions"), jv_string_value(want)),
	    "llm.finished: a sub-agent call is spawn + message.send (the "
	    "message argument, else the raw arguments); a declared tool of "
	    "the same name stays a tool call");
	jv_free(want);
	jv_free(out);
	jv_free(tr);
	jv_free(p);
	jv_free(cfg);
	jv_free(fx.calls);
	jv_free(fx.path);
}

static void
test_sub_agent_finished_folds_in_like_a_tool(void)
{
	const char *fin = "{\"type\":\"sub_agent.finished\",\"id\":\"t1\","
	    "\"ok\":true,\"session_id\":\"s2\",\"agent_id\":\"beta\","
	    "\"result\":\"beta says hi\"}";
	const char *path = "[" U1 ",{\"id\":\"a2\",\"role\":\"assistant\","
	    "\"tool_calls\":[{\"id\":\"t1\",\"type\":\"function\","
	    "\"function\":{\"name\":\"beta\",\"arguments\":\"{}\"}}]}]";
	jv out = propose(fin, path, TEAM, "null", 1, NULL);
	jv m = art_json_field(&out, "messages");

	ok(is_json(jv_array_get(m, 2), "{\"role\":\"tool\",\"tool_call_id\":"
	    "\"t1\",\"name\":\"beta\",\"content\":\"beta says hi\"}") &&
	    is_json(art_json_field(&out, "actions"), "[]"),
	    "sub_agent.finished: a tool message named by the agent; waits "
	    "for the siblings");
	jv_free(out);
	out = propose("{\"type\":\"sub_agent.finished\",\"id\":\"t1\","
	    "\"ok\":false,\"session_id\":\"s2\",\"agent_id\":\"beta\","
	    "\"error\":\"sub-agent beta failed: boom\"}", path, TEAM, "null", 1,
	    NULL);
	m = jv_array_get(art_json_field(&out, "messages"), 2);
	ok(is_json(art_json_field(&m, "content"),
	    "\"sub-agent beta failed: boom\""), "a failed child: its error");
	jv_free(m);
	jv_free(out);
}

static void
test_the_helpers(void)
{
	jv cfg = J(CONFIG), none = jv_null(), bare = J("{\"model\":\"m\"}");

	ok(is_json(art_propose_llm_tools(&cfg), LLM_TOOLS),
	    "llm_tools: name, description (default \"\"), input, output only");
	ok(is_json(art_propose_llm_tools(&bare), "null") &&
	    is_json(art_propose_llm_tools(&none), "null"),
	    "llm_tools: none declared gives null");
	ok(is_json(art_propose_tool(&cfg, "ask"), "{\"name\":\"ask\","
	    "\"description\":\"Ask the user\",\"handler\":\"client\","
	    "\"output\":{\"type\":\"string\"}}"), "tool: the declaration");
	ok(is_json(art_propose_tool(&cfg, "nope"), "null") &&
	    is_json(art_propose_tool(&none, "add"), "null"),
	    "tool: an unknown name, or no config, gives null");
	ok(is_json(art_propose_llm_call(&cfg, J("[" U1 "]")), "{\"type\":"
	    "\"llm.call\",\"model\":\"mock/calc\",\"messages\":[" SYS "," U1
	    "],\"tools\":" LLM_TOOLS ",\"stream\":true,\"handler\":"
	    "\"server\"}"),
	    "llm_call: what client.messages proposes");
	jv_free(cfg);
	jv_free(bare);
}

static void
test_by_version_leaves_out_the_configs_tools(void)
{
	jv cfg = J(CONFIG), tools = art_propose_llm_tools(&cfg), p, a, path;
	char v1[ART_CONFIG_VERSION_LEN + 1], v2[ART_CONFIG_VERSION_LEN + 1];

	p = J("{\"messages_after\":\"u1\",\"messages\":[],\"actions\":["
	    "{\"type\":\"llm.call\",\"model\":\"m\",\"tools\":" LLM_TOOLS "},"
	    "{\"type\":\"llm.call\",\"model\":\"m\",\"tools\":[]},"
	    "{\"type\":\"tool.call\",\"id\":\"c\",\"name\":\"add\","
	    "\"tools\":" LLM_TOOLS "}]}");
	p = art_propose_by_version(p, &tools);
	a = art_json_field(&p, "actions");
	ok(!jv_object_has(jv_array_get(jv_copy(a), 0), jv_string("tools")),
	    "an llm.call with the config's tools leaves them out");
	ok(jv_object_has(jv_array_get(jv_copy(a), 1), jv_string("tools")),
	    "an llm.call with other tools keeps them");
	ok(jv_object_has(jv_array_get(jv_copy(a), 2), jv_string("tools")),
	    "other actions are left alone");
	jv_free(a);
	path = J("[" U1 "]");
	p = art_propose_expand(p, &path, &cfg);
	a = art_json_field(&p, "actions");
	ok(is_json(jv_array_get(jv_copy(a), 0), "{\"type\":\"llm.call\","
	    "\"model\":\"m\",\"messages\":[" SYS "," U1 "],\"tools\":"
	    LLM_TOOLS "}"), "made whole, the call has the config's tools again");
	jv_free(a);
	jv_free(p);
	p = J("{\"actions\":[{\"type\":\"llm.call\",\"tools\":" LLM_TOOLS
	    "}]}");
	p = art_propose_by_version(p, &tools);
	a = art_json_field(&p, "actions");
	ok(jv_object_has(jv_array_get(jv_copy(a), 0), jv_string("tools")),
	    "a proposal made whole (no messages_after) is left whole");
	jv_free(a);
	jv_free(p);
	art_propose_config_version(&cfg, v1);
	jv_free(cfg);
	cfg = J(CONFIG);
	art_propose_config_version(&cfg, v2);
	ok(strlen(v1) == ART_CONFIG_VERSION_LEN && strcmp(v1, v2) == 0,
	    "a config's version is %d hex digits, the same for the same "
	    "config", ART_CONFIG_VERSION_LEN);
	cfg = jv_object_set(cfg, jv_string("system"), jv_string("be long"));
	art_propose_config_version(&cfg, v2);
	ok(strcmp(v1, v2) != 0, "another system prompt, another version");
	jv_free(path);
	jv_free(tools);
	jv_free(cfg);
}

int
main(void)
{
	test_session_start_proposes_the_file_config();
	test_client_messages_calls_the_model_with_the_config();
	test_client_tools_are_layered_onto_the_config();
	test_client_action_proposes_nothing();
	test_tool_execute_checks_the_tool_and_its_input();
	test_every_non_empty_proposal_carries_the_transcript();
	test_tool_finished_waits_for_siblings();
	test_tool_finished_reissues_the_parent_call();
	test_tool_finished_finds_the_last_asking_assistant();
	test_llm_finished_without_tool_calls_is_done();
	test_llm_finished_with_tool_calls_calls_the_tools();
	test_a_failed_or_truncated_model_call_interrupts();
	test_a_refused_reply_fails_the_turn_showing_it();
	test_a_config_error_fails_the_turn_not_parks();
	test_a_resumed_model_failure_calls_the_model_again();
	test_the_helpers();
	test_sub_agents_and_ask_user_are_tools();
	test_a_call_of_a_sub_agent_spawns_and_sends();
	test_sub_agent_finished_folds_in_like_a_tool();
	test_by_version_leaves_out_the_configs_tools();
	return tap_done();
}
