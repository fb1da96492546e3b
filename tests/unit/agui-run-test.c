/* agui-run-test - an AG-UI run's input and envelope (lib/agui-run.h) */
#include "agui-run.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "tap.h"
#include "testjv.h"

static struct art_err e_;

/* True when v (consumed) dumps as want; says what it was when not. */
static bool
same(jv v, const char *want)
{
	size_t len;
	char *s = art_json_dump(&v, &len);
	bool eq = s != NULL && strcmp(s, want) == 0;

	if (!eq)
		printf("# got  %s\n# want %s\n", s != NULL ? s : "(null)",
		    want);
	free(s);
	jv_free(v);
	return eq;
}

/* art_agui_input on the JSON text body; its line, or its error's message. */
static jv
input(const char *body, struct art_agui_ids *ids)
{
	struct art_err err = { 0 };
	jv in = art_json_parse_str(body, &e_), line;

	if (art_agui_input(&in, "calc", ids, &line, &err) == -1) {
		jv_free(in);
		jv_free(line);
		return jv_string_fmt("%s: %s", err.code, err.msg);
	}
	jv_free(in);
	return line;
}

static void
test_input(void)
{
	struct art_agui_ids ids;

	ok(same(input("{\"threadId\":\"t1\",\"runId\":\"r1\",\"messages\":"
	    "[{\"id\":\"d\",\"role\":\"developer\",\"content\":\"be brief\"},"
	    "{\"id\":\"m1\",\"role\":\"user\",\"content\":[{\"type\":\"text\","
	    "\"text\":\"What is \"},{\"type\":\"text\",\"text\":\"17*23?\"}]},"
	    "{\"id\":\"x\",\"role\":\"activity\",\"content\":\"-\"}]}", &ids),
	    "{\"type\":\"client.messages\",\"session_id\":\"t1\",\"agent_id\":"
	    "\"calc\",\"turn_id\":\"r1\",\"messages\":[{\"id\":\"d\",\"role\":"
	    "\"system\",\"content\":\"be brief\"},{\"id\":\"m1\",\"role\":"
	    "\"user\",\"content\":\"What is 17*23?\"}]}") &&
	    strcmp(ids.thread, "t1") == 0 && strcmp(ids.run, "r1") == 0,
	    "messages as a client.messages view: developer is system, parts "
	    "are text, a role with no place is left out");
	ok(same(input("{\"threadId\":\"t1\",\"runId\":\"r2\",\"messages\":"
	    "[{\"id\":\"a\",\"role\":\"assistant\",\"toolCalls\":[{\"id\":"
	    "\"c1\",\"type\":\"function\",\"function\":{\"name\":\"pick\","
	    "\"arguments\":\"{}\"}}]},{\"id\":\"t\",\"role\":\"tool\","
	    "\"toolCallId\":\"c1\",\"content\":\"red\"}],\"tools\":[{\"name\":"
	    "\"pick\",\"description\":\"pick one\",\"parameters\":{\"type\":"
	    "\"object\"}}],\"state\":{\"k\":1},\"context\":[],"
	    "\"forwardedProps\":{\"p\":true}}", &ids),
	    "{\"type\":\"client.messages\",\"session_id\":\"t1\",\"agent_id\":"
	    "\"calc\",\"turn_id\":\"r2\",\"messages\":[{\"id\":\"a\",\"role\":"
	    "\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
	    "\"function\":{\"name\":\"pick\",\"arguments\":\"{}\"}}]},{\"id\":"
	    "\"t\",\"role\":\"tool\",\"content\":\"red\",\"tool_call_id\":"
	    "\"c1\"}],\"client\":{\"tools\":[{\"name\":\"pick\",\"description\":"
	    "\"pick one\",\"input\":{\"type\":\"object\"},\"handler\":"
	    "\"client\"}],\"context\":[],\"state\":{\"k\":1},"
	    "\"forwarded_props\":{\"p\":true}}}"),
	    "tool calls, a tool result, and ClientContext: client tools");
	ok(same(input("{\"threadId\":\"t1\",\"runId\":\"r3\",\"messages\":[],"
	    "\"resume\":[{\"interruptId\":\"I\",\"status\":\"resolved\","
	    "\"payload\":{\"approved\":true}}]}", &ids),
	    "{\"type\":\"interrupt.resume\",\"interrupt_id\":\"I\",\"payload\":"
	    "{\"approved\":true},\"session_id\":\"t1\"}"),
	    "a resume is an interrupt.resume; the messages are not read");
	ok(same(input("{\"threadId\":\"t1\",\"runId\":\"r3\",\"resume\":"
	    "[{\"interruptId\":\"I\",\"status\":\"cancelled\"}]}", &ids),
	    "{\"type\":\"interrupt.resume\",\"interrupt_id\":\"I\",\"payload\":"
	    "{\"approved\":false,\"cancelled\":true,\"reason\":\"cancelled by "
	    "the client\"},\"session_id\":\"t1\"}"),
	    "a cancelled entry is answered as a refusal");
}

static void
test_bad_input(void)
{
	static const struct { const char *body, *why; } bad[] = {
		{ "[1]", "bad_input: the body is not a RunAgentInput object" },
		{ "{\"runId\":\"r\",\"messages\":[]}",
		    "bad_input: threadId must be a string" },
		{ "{\"threadId\":\"t\",\"messages\":[]}",
		    "bad_input: runId must be a string" },
		{ "{\"threadId\":\"\",\"runId\":\"r\"}",
		    "bad_input: threadId must be 1 to 255 bytes" },
		{ "{\"threadId\":\"a/b\",\"runId\":\"r\"}", "bad_input: "
		    "threadId must have no spaces, control characters or '/'" },
		{ "{\"threadId\":\"t\",\"runId\":\"r 1\"}", "bad_input: "
		    "runId must have no spaces, control characters or '/'" },
		{ "{\"threadId\":\"t\",\"runId\":\"r\",\"messages\":{}}",
		    "bad_input: messages must be an array" },
		{ "{\"threadId\":\"t\",\"runId\":\"r\",\"messages\":[{\"role\":"
		    "\"user\"},{\"content\":\"x\"}]}",
		    "bad_input: messages[1]: not a message with a role" },
		{ "{\"threadId\":\"t\",\"runId\":\"r\",\"messages\":[],"
		    "\"tools\":{}}", "bad_input: tools must be an array" },
		{ "{\"threadId\":\"t\",\"runId\":\"r\",\"resume\":[{},{}]}",
		    "bad_input: resume must be an array of one entry: agentrt "
		    "parks a run on one interrupt" },
		{ "{\"threadId\":\"t\",\"runId\":\"r\",\"resume\":[{"
		    "\"interruptId\":\"I\",\"status\":\"maybe\"}]}",
		    "bad_input: resume[0] needs an interruptId and a status, "
		    "resolved or cancelled" },
	};
	struct art_agui_ids ids;
	char want[600], big[400];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "\"%s\"", bad[i].why);
		ok(same(input(bad[i].body, &ids), want), "refused: %s",
		    bad[i].why);
	}
	memset(big, 'x', 256);
	big[256] = '\0';
	snprintf(want, sizeof(want), "{\"threadId\":\"t\",\"runId\":\"%s\"}",
	    big);
	ok(same(input(want, &ids), "\"bad_input: runId must be 1 to 255 "
	    "bytes\""), "a 256-byte runId is refused");
}

/*
 * A run of thread S, run R fed the client events of ndjson, then ended
 * as how (when how >= 0); its AG-UI lines as one array.
 */
static jv
run(const char *ndjson, int how, const char *why, const char **outcome)
{
	struct art_agui_opts o = { NULL, NULL };
	struct art_agui_run *r = art_agui_run_new("S", "R", &o);
	struct art_buf out = ART_BUF_INIT;
	const char *p = ndjson, *nl;
	jv ev, all;

	if (r == NULL || art_agui_run_start(r, &out) == -1 ||
	    art_agui_run_start(r, &out) == -1)
		exit(1);
	for (; *p != '\0'; p = *nl != '\0' ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		if (nl == p)
			continue;
		ev = art_json_parse(p, (size_t)(nl - p), &e_);
		if (!jv_is_valid(ev) || art_agui_run_event(r, &ev, &out) == -1)
			exit(1);
		jv_free(ev);
	}
	if (how >= 0 && art_agui_run_end(r, (enum art_agui_end_how)how, why,
	    &out) == -1)
		exit(1);
	/* Ended: a second end, and more events, add nothing. */
	if (how >= 0 && art_agui_run_end(r, ART_AGUI_END_FAILED, "again",
	    &out) == -1)
		exit(1);
	*outcome = art_agui_run_outcome(r);
	all = json_lines(out.p);
	art_buf_release(&out);
	art_agui_run_free(r);
	return all;
}

/* The types of the events (borrowed), space-separated, as a jv string. */
static jv
types(const jv *all)
{
	jv s = jv_string("");

	jv_array_foreach(*all, i, v) {
		if (i > 0)
			s = jv_string_append_str(s, " ");
		s = jv_string_append_str(s, art_json_str(&v, "type"));
		jv_free(v);
	}
	return s;
}

static jv
last(const jv *all)
{
	return jv_array_get(jv_copy(*all), jv_array_length(jv_copy(*all)) -
	    1);
}

#define S "\"session_id\":\"S\""

static void
test_envelope(void)
{
	const char *how;
	jv all;

	all = run("{\"type\":\"turn.started\"," S ",\"turn_id\":\"X\"}\n"
	    "{\"type\":\"completion\"," S ",\"text\":\"391\"}\n",
	    ART_AGUI_END_IDLE, NULL, &how);
	ok(same(types(&all), "\"RUN_STARTED RUN_FINISHED\"") &&
	    strcmp(how, "success") == 0, "one RUN_STARTED, though started "
	    "twice and the turn started too; success");
	ok(same(jv_array_get(jv_copy(all), 0), "{\"type\":\"RUN_STARTED\","
	    "\"threadId\":\"S\",\"runId\":\"R\"}") && same(last(&all),
	    "{\"type\":\"RUN_FINISHED\",\"result\":\"391\",\"outcome\":{"
	    "\"type\":\"success\"},\"threadId\":\"S\",\"runId\":\"R\"}"),
	    "the envelope's ids are the request's, not the turn's");
	jv_free(all);

	all = run("{\"type\":\"message\"," S ",\"message\":{\"id\":\"m1\","
	    "\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\","
	    "\"function\":{\"name\":\"pick\",\"arguments\":\"{}\"}}]}}\n"
	    "{\"type\":\"tool_call\"," S ",\"id\":\"c1\",\"handler\":"
	    "\"client\"}\n", ART_AGUI_END_IDLE, NULL, &how);
	ok(same(last(&all), "{\"type\":\"RUN_FINISHED\",\"outcome\":{\"type\":"
	    "\"success\",\"pendingToolCallIds\":[\"c1\"]},\"threadId\":\"S\","
	    "\"runId\":\"R\"}") && strcmp(how, "interrupt") == 0,
	    "parked on a client tool: the call pending is named");
	jv_free(all);

	all = run("{\"type\":\"status\"," S ",\"status\":\"suspended\","
	    "\"interrupt_id\":\"I\",\"reason\":\"input\",\"payload\":{\"type\":"
	    "\"ask_user\",\"question\":\"Which?\"}}\n", ART_AGUI_END_IDLE,
	    NULL, &how);
	ok(same(last(&all), "{\"type\":\"RUN_FINISHED\",\"outcome\":{\"type\":"
	    "\"interrupt\",\"interrupts\":[{\"id\":\"I\",\"reason\":\"input\","
	    "\"message\":\"Which?\"}]},"
	    "\"threadId\":\"S\",\"runId\":\"R\"}") && strcmp(how,
	    "interrupt") == 0, "parked on a question: outcome interrupt");
	jv_free(all);

	all = run("{\"type\":\"status\"," S ",\"status\":\"thinking\"}\n",
	    ART_AGUI_END_CANCELLED, NULL, &how);
	ok(same(types(&all), "\"RUN_STARTED STEP_STARTED RUN_FINISHED\"") &&
	    same(last(&all), "{\"type\":\"RUN_FINISHED\",\"threadId\":\"S\","
	    "\"runId\":\"R\",\"outcome\":{\"type\":\"cancelled\"}}") &&
	    strcmp(how, "cancelled") == 0, "a run its client left: cancelled");
	jv_free(all);

	all = run("", ART_AGUI_END_FAILED, "the ring closed", &how);
	ok(same(types(&all), "\"RUN_STARTED RUN_ERROR\"") && same(last(&all),
	    "{\"type\":\"RUN_ERROR\",\"message\":\"the ring closed\","
	    "\"code\":\"run_failed\"}") && strcmp(how, "error") == 0,
	    "a run its engine dropped: RUN_ERROR with why; a second end adds "
	    "nothing");
	jv_free(all);

	all = run("{\"type\":\"completion\"," S ",\"text\":null,\"error\":"
	    "\"capped\",\"code\":\"max_loops\"}\n"
	    "{\"type\":\"completion\"," S ",\"text\":\"more\"}\n",
	    ART_AGUI_END_IDLE, NULL, &how);
	ok(same(types(&all), "\"RUN_STARTED RUN_ERROR\"") &&
	    strcmp(how, "error") == 0, "a failed turn ends the run; what "
	    "comes after it is not written");
	jv_free(all);

	all = run("{\"type\":\"status\"," S ",\"status\":\"thinking\"}\n", -1,
	    NULL, &how);
	ok(same(types(&all), "\"RUN_STARTED STEP_STARTED\""),
	    "a run not ended has no last event yet");
	jv_free(all);
}

int
main(void)
{
	test_input();
	test_bad_input();
	test_envelope();
	return tap_done();
}
