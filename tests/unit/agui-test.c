/* agui-test - client events as AG-UI events (lib/agui.h) */
#include "agui.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "tap.h"
#include "testjv.h"

static struct art_err e_;

/* A path_of for the snapshot tests: two messages, or none readable. */
static jv
path_two(void *ctx, const char *sid, const char *id)
{
	(void)ctx;
	if (strcmp(sid, "S") != 0 || strcmp(id, "m2") != 0)
		return jv_invalid();
	return art_json_parse_str("[{\"id\":\"u1\",\"role\":\"user\","
	    "\"content\":\"hi\"},{\"id\":\"m1\",\"role\":\"assistant\","
	    "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":"
	    "{\"name\":\"calc\",\"arguments\":\"{}\"}}]},{\"id\":\"t1\","
	    "\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"391\"},"
	    "{\"id\":\"m2\",\"role\":\"assistant\",\"content\":\"done\"}]",
	    NULL);
}

static jv
path_none(void *ctx, const char *sid, const char *id)
{
	(void)ctx, (void)sid, (void)id;
	return jv_invalid();
}

/*
 * Feeds each line of ndjson (then the end, when end) to a new encoder;
 * returns the AG-UI lines as one jv array.
 */
static jv
encode(const char *ndjson, bool end, jv (*path_of)(void *, const char *,
    const char *))
{
	struct art_agui_opts o = { path_of, NULL };
	struct art_agui *t = art_agui_new(&o);
	struct art_buf out = ART_BUF_INIT;
	const char *p = ndjson, *nl;
	char line[4096];
	jv ev, all;

	for (; *p != '\0'; p = *nl != '\0' ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		if (line[0] == '\0')
			continue;
		ev = art_json_parse_str(line, &e_);
		if (!jv_is_valid(ev) || art_agui_event(t, &ev, &out) == -1) {
			printf("# bad test line or out of memory: %s\n", line);
			exit(1);
		}
		jv_free(ev);
	}
	if (end && art_agui_end(t, NULL, &out) == -1)
		exit(1);
	art_agui_free(t);
	all = json_lines(out.p);
	art_buf_release(&out);
	return all;
}

/* The types of the events, space-separated. */
static char *
types(const jv *all)
{
	struct art_buf b = ART_BUF_INIT;

	jv_array_foreach(*all, i, e) {
		if (i > 0)
			art_buf_addc(&b, ' ');
		art_buf_addstr(&b, art_json_str(&e, "type"));
		jv_free(e);
	}
	art_buf_addstr(&b, "");
	return art_buf_detach(&b, NULL);
}

static int
same(char *got, const char *want)
{
	int eq = strcmp(got, want) == 0;

	if (!eq)
		printf("#   got  '%s'\n#   want '%s'\n", got, want);
	free(got);
	return eq;
}

/* The first event of type, compact JSON with its timestamp dropped. */
static char *
first(const jv *all, const char *type)
{
	char *s = NULL;

	jv_array_foreach(*all, i, e) {
		const char *t = art_json_str(&e, "type");

		if (s == NULL && t != NULL && strcmp(t, type) == 0) {
			e = jv_object_delete(e, jv_string("timestamp"));
			s = art_json_dump(&e, NULL);
		}
		jv_free(e);
		(void)i;
	}
	return s != NULL ? s : strdup("");
}

#define S	"\"session_id\":\"S\""
#define AT(ms)	"\"at\":\"2026-12-05T12:00:00." ms "Z\""
#define AT0	1796472000000.0	/* AT("000") in ms */

/* Each event's timestamp less AT0, or "-" for none, space-separated. */
static char *
stamps(const jv *all)
{
	struct art_buf b = ART_BUF_INIT;
	char n[32];

	jv_array_foreach(*all, i, e) {
		jv ts = jv_object_get(e, jv_string("timestamp"));

		if (jv_get_kind(ts) == JV_KIND_NUMBER)
			snprintf(n, sizeof(n), "%.0f", jv_number_value(ts) - AT0);
		else
			snprintf(n, sizeof(n), "-");
		jv_free(ts);
		if (i > 0)
			art_buf_addc(&b, ' ');
		art_buf_addstr(&b, n);
	}
	art_buf_addstr(&b, "");
	return art_buf_detach(&b, NULL);
}

static const char tool_loop[] =
    "{\"type\":\"turn.started\"," S ",\"turn_id\":\"T\","
    "\"at\":\"2026-12-05T12:00:00.000Z\"}\n"
    "{\"type\":\"message\"," S ",\"turn_id\":\"T\",\"message\":{\"id\":"
    "\"u1\",\"role\":\"user\",\"content\":\"hi\"}}\n"
    "{\"type\":\"status\"," S ",\"status\":\"thinking\"}\n"
    "{\"type\":\"metrics\"," S ",\"id\":\"m1\"}\n"
    "{\"type\":\"message\"," S ",\"message\":{\"id\":\"m1\",\"role\":"
    "\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
    "\"function\":{\"name\":\"calc\",\"arguments\":\"{}\"}}]}}\n"
    "{\"type\":\"tool_call\"," S ",\"id\":\"c1\",\"handler\":\"worker\"}\n"
    "{\"type\":\"status\"," S ",\"status\":\"acting\"}\n"
    "{\"type\":\"tool_result\"," S ",\"id\":\"c1\",\"result\":\"391\"}\n"
    "{\"type\":\"message\"," S ",\"message\":{\"id\":\"t1\",\"role\":"
    "\"tool\",\"tool_call_id\":\"c1\",\"content\":\"391\"}}\n"
    "{\"type\":\"status\"," S ",\"status\":\"thinking\"}\n"
    "{\"type\":\"message\"," S ",\"message\":{\"id\":\"m2\",\"role\":"
    "\"assistant\",\"content\":\"done\"}}\n"
    "{\"type\":\"completion\"," S ",\"text\":\"done\",\"usage\":{\"input\":"
    "3,\"output\":2,\"total\":5}}\n"
    "{\"type\":\"status\"," S ",\"status\":\"complete\"}\n"
    "{\"type\":\"turn.finished\"," S ",\"status\":\"completed\"}\n";

static void
test_a_tool_loop(void)
{
	jv all = encode(tool_loop, true, NULL);

	ok(same(types(&all), "RUN_STARTED STEP_STARTED CUSTOM STEP_FINISHED "
	    "TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END STEP_STARTED "
	    "TOOL_CALL_RESULT STEP_FINISHED STEP_STARTED STEP_FINISHED "
	    "TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END "
	    "RUN_FINISHED"), "a tool loop, in AG-UI's order");
	ok(same(first(&all, "RUN_STARTED"),
	    "{\"type\":\"RUN_STARTED\",\"threadId\":\"S\",\"runId\":\"T\"}"),
	    "the run is the turn, the thread the session");
	ok(same(first(&all, "TOOL_CALL_START"), "{\"type\":\"TOOL_CALL_START\","
	    "\"toolCallId\":\"c1\",\"toolCallName\":\"calc\","
	    "\"parentMessageId\":\"m1\"}"), "a call names its message");
	ok(same(first(&all, "TOOL_CALL_RESULT"), "{\"type\":"
	    "\"TOOL_CALL_RESULT\",\"messageId\":\"t1\",\"toolCallId\":\"c1\","
	    "\"content\":\"391\",\"role\":\"tool\"}"), "its result");
	ok(same(first(&all, "TEXT_MESSAGE_CONTENT"), "{\"type\":"
	    "\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m2\",\"delta\":\"done\"}"),
	    "a reply not streamed is one CONTENT");
	ok(same(first(&all, "RUN_FINISHED"), "{\"type\":\"RUN_FINISHED\","
	    "\"result\":\"done\",\"outcome\":{\"type\":\"success\"},\"usage\":"
	    "[{\"inputTokens\":3,\"outputTokens\":2,\"totalTokens\":5}],"
	    "\"threadId\":\"S\",\"runId\":\"T\"}"),
	    "the run's result, outcome and usage");
	ok(same(first(&all, "CUSTOM"), "{\"type\":\"CUSTOM\",\"name\":"
	    "\"agentrt.metrics\",\"value\":{\"type\":\"metrics\","
	    "\"session_id\":\"S\",\"id\":\"m1\"}}"), "metrics are CUSTOM");
	jv_free(all);
	all = encode("{\"type\":\"turn.started\"," S ",\"turn_id\":\"T\","
	    "\"at\":\"2026-12-05T12:00:00.000Z\"}\n", false, NULL);
	ok(same(first(&all, "RUN_STARTED"), "{\"type\":\"RUN_STARTED\","
	    "\"threadId\":\"S\",\"runId\":\"T\"}") && jv_number_value(
	    jv_object_get(jv_array_get(jv_copy(all), 0), jv_string(
	    "timestamp"))) == 1796472000000.0, "at is the timestamp, in ms");
	jv_free(all);
}

static void
test_streamed(void)
{
	jv all = encode("{\"type\":\"turn.started\"," S ",\"turn_id\":\"T\"}\n"
	    "{\"type\":\"token\"," S ",\"id\":\"m1\",\"text\":\"hel\"}\n"
	    "{\"type\":\"token\"," S ",\"id\":\"m1\",\"text\":\"\"}\n"
	    "{\"type\":\"token\"," S ",\"id\":\"m1\",\"reasoning\":\"hm\"}\n"
	    "{\"type\":\"token\"," S ",\"id\":\"m1\",\"text\":\"lo\"}\n"
	    "{\"type\":\"message\"," S ",\"message\":{\"id\":\"m1\",\"role\":"
	    "\"assistant\",\"content\":\"hello\"}}\n"
	    "{\"type\":\"completion\"," S ",\"text\":\"hello\"}\n", true, NULL);

	ok(same(types(&all), "RUN_STARTED TEXT_MESSAGE_START "
	    "TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END "
	    "RUN_FINISHED"), "tokens: one message, a CONTENT a token, no "
	    "empty delta, the message ends it and is not said again");
	jv_free(all);
}

static void
test_ends(void)
{
	jv all = encode("{\"type\":\"turn.started\"," S ",\"turn_id\":\"T\"}\n"
	    "{\"type\":\"status\"," S ",\"status\":\"thinking\"}\n"
	    "{\"type\":\"completion\"," S ",\"text\":null,\"error\":\"capped\","
	    "\"code\":\"max_loops\"}\n", true, NULL);

	ok(same(types(&all), "RUN_STARTED STEP_STARTED STEP_FINISHED "
	    "RUN_ERROR"), "a failed turn: its step finished, then RUN_ERROR");
	ok(same(first(&all, "RUN_ERROR"), "{\"type\":\"RUN_ERROR\","
	    "\"message\":\"capped\",\"code\":\"max_loops\"}"), "with its code");
	jv_free(all);

	all = encode("{\"type\":\"turn.started\"," S ",\"turn_id\":\"T\"}\n"
	    "{\"type\":\"status\"," S ",\"status\":\"acting\"}\n"
	    "{\"type\":\"status\"," S ",\"status\":\"suspended\","
	    "\"interrupt_id\":\"I\",\"reason\":\"approval required: calc\","
	    "\"payload\":{\"type\":\"approval\",\"tool_call_id\":\"c1\","
	    "\"tool_name\":\"calc\"}}\n", true, NULL);
	ok(same(types(&all), "RUN_STARTED STEP_STARTED STEP_FINISHED CUSTOM "
	    "RUN_FINISHED"), "a park: what to ask, then the run's end; "
	    "art_agui_end adds nothing");
	ok(same(first(&all, "RUN_FINISHED"), "{\"type\":\"RUN_FINISHED\","
	    "\"outcome\":{\"type\":\"interrupt\",\"interrupts\":[{\"id\":\"I\","
	    "\"reason\":\"approval required: calc\",\"toolCallId\":\"c1\"}]},"
	    "\"threadId\":\"S\",\"runId\":\"T\"}"), "outcome interrupt");
	ok(same(first(&all, "CUSTOM"), "{\"type\":\"CUSTOM\",\"name\":"
	    "\"agentrt.interrupt\",\"value\":{\"interrupt_id\":\"I\","
	    "\"reason\":\"approval required: calc\",\"payload\":{\"type\":"
	    "\"approval\",\"tool_call_id\":\"c1\",\"tool_name\":\"calc\"}}}"),
	    "CUSTOM agentrt.interrupt carries what to ask");
	jv_free(all);

	all = encode("{\"type\":\"turn.started\"," S ",\"turn_id\":\"T\"}\n"
	    "{\"type\":\"message\"," S ",\"message\":{\"id\":\"m1\",\"role\":"
	    "\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"function\":{"
	    "\"name\":\"pick\",\"arguments\":\"\"}},{\"id\":\"c2\",\"function\":"
	    "{\"name\":\"pick\",\"arguments\":\"{}\"}}]}}\n"
	    "{\"type\":\"tool_call\"," S ",\"id\":\"c1\",\"handler\":\"client\"}\n"
	    "{\"type\":\"tool_call\"," S ",\"id\":\"c2\",\"handler\":\"client\"}\n"
	    "{\"type\":\"message\"," S ",\"message\":{\"id\":\"t2\",\"role\":"
	    "\"tool\",\"tool_call_id\":\"c2\",\"content\":{\"k\":1}}}\n", true,
	    NULL);
	ok(same(types(&all), "RUN_STARTED TOOL_CALL_START TOOL_CALL_END "
	    "TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END TOOL_CALL_RESULT "
	    "RUN_FINISHED"), "client calls; no ARGS for empty arguments; the "
	    "stream's end finishes the run");
	ok(same(first(&all, "RUN_FINISHED"), "{\"type\":\"RUN_FINISHED\","
	    "\"outcome\":{\"type\":\"success\",\"pendingToolCallIds\":[\"c1\"]},"
	    "\"threadId\":\"S\",\"runId\":\"T\"}"), "naming the call still "
	    "pending");
	ok(same(first(&all, "TOOL_CALL_RESULT"), "{\"type\":"
	    "\"TOOL_CALL_RESULT\",\"messageId\":\"t2\",\"toolCallId\":\"c2\","
	    "\"content\":\"{\\\"k\\\":1}\",\"role\":\"tool\"}"),
	    "a result that is not text is its JSON");
	jv_free(all);

	all = encode("", true, NULL);
	ok(jv_array_length(jv_copy(all)) == 0, "no events: nothing at the end");
	jv_free(all);
}

static void
test_runs(void)
{
	jv all = encode("{\"type\":\"error\"," S ",\"code\":\"no_interrupt\","
	    "\"message\":\"no interrupt 'x'\"}\n", true, NULL);

	ok(same(types(&all), "RUN_STARTED RUN_ERROR"), "a refusal with no "
	    "turn going is a run of its own");
	ok(same(first(&all, "RUN_ERROR"), "{\"type\":\"RUN_ERROR\","
	    "\"message\":\"no interrupt 'x'\",\"code\":\"no_interrupt\"}"),
	    "its message and code");
	jv_free(all);

	all = encode("{\"type\":\"turn.started\"," S ",\"turn_id\":\"T\"}\n"
	    "{\"type\":\"error\"," S ",\"code\":\"rate_limited\",\"message\":"
	    "\"slow\",\"retrying\":true}\n"
	    "{\"type\":\"turn.started\"," S ",\"turn_id\":\"U\"}\n"
	    "{\"type\":\"message\",\"session_id\":\"C\",\"message\":{\"id\":"
	    "\"x\",\"role\":\"assistant\",\"content\":\"child\"}}\n"
	    "{\"type\":\"completion\"," S ",\"text\":\"ok\"}\n"
	    "{\"type\":\"message\",\"session_id\":\"C\",\"message\":{\"id\":"
	    "\"y\",\"role\":\"assistant\",\"content\":\"late\"}}\n", true, NULL);
	ok(same(types(&all), "RUN_STARTED CUSTOM RUN_FINISHED RUN_STARTED "
	    "CUSTOM RUN_FINISHED"), "an error retried is CUSTOM; a new turn "
	    "ends the run before; a sub-agent's event is CUSTOM in the run, "
	    "and nothing outside one");
	ok(same(first(&all, "CUSTOM"), "{\"type\":\"CUSTOM\",\"name\":"
	    "\"agentrt.error\",\"value\":{\"type\":\"error\",\"session_id\":"
	    "\"S\",\"code\":\"rate_limited\",\"message\":\"slow\",\"retrying\":"
	    "true}}"), "the error whole");
	jv_free(all);

	all = encode("{\"type\":\"token\"," S ",\"id\":\"m1\",\"text\":\"x\"}\n",
	    true, NULL);
	ok(same(first(&all, "RUN_STARTED"), "{\"type\":\"RUN_STARTED\","
	    "\"threadId\":\"S\",\"runId\":\"run\"}"), "a stream that starts "
	    "mid-turn opens a run");
	ok(same(types(&all), "RUN_STARTED TEXT_MESSAGE_START "
	    "TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END RUN_FINISHED"),
	    "and the end closes what it opened");
	jv_free(all);
}

static void
test_plan(void)
{
	jv all = encode("{\"type\":\"turn.started\"," S ",\"turn_id\":\"T\"}\n"
	    "{\"type\":\"decomposition\"," S ",\"goal\":\"g\",\"todos\":[{\"id\":"
	    "\"a\",\"title\":\"A\"},{\"id\":\"b\",\"title\":\"B\"}]}\n"
	    "{\"type\":\"todo\"," S ",\"id\":\"b\",\"status\":\"active\"}\n"
	    "{\"type\":\"todo\"," S ",\"id\":\"z\",\"status\":\"done\"}\n",
	    true, NULL);

	ok(same(first(&all, "STATE_SNAPSHOT"), "{\"type\":\"STATE_SNAPSHOT\","
	    "\"snapshot\":{\"plan\":{\"goal\":\"g\",\"todos\":[{\"id\":\"a\","
	    "\"title\":\"A\",\"status\":\"pending\"},{\"id\":\"b\",\"title\":"
	    "\"B\",\"status\":\"pending\"}]}}}"), "the plan is the state");
	ok(same(first(&all, "STATE_DELTA"), "{\"type\":\"STATE_DELTA\","
	    "\"delta\":[{\"op\":\"replace\",\"path\":\"/plan/todos/1/status\","
	    "\"value\":\"active\"}]}"), "a todo's change is a JSON Patch");
	ok(same(types(&all), "RUN_STARTED STATE_SNAPSHOT STATE_DELTA CUSTOM "
	    "RUN_FINISHED"), "a todo not in the plan is CUSTOM");
	jv_free(all);
}

static void
test_snapshot(void)
{
	jv all = encode(tool_loop, true, path_two), s;
	char *t = types(&all);

	ok(strstr(t, "TEXT_MESSAGE_END MESSAGES_SNAPSHOT RUN_FINISHED") != NULL,
	    "the snapshot comes just before RUN_FINISHED");
	free(t);
	t = first(&all, "MESSAGES_SNAPSHOT");
	s = art_json_parse_str(t, &e_);
	free(t);
	ok(same(art_json_dump(&s, NULL), "{\"type\":\"MESSAGES_SNAPSHOT\","
	    "\"messages\":[{\"id\":\"u1\",\"role\":\"user\",\"content\":\"hi\"},"
	    "{\"id\":\"m1\",\"role\":\"assistant\",\"toolCalls\":[{\"id\":\"c1\","
	    "\"type\":\"function\",\"function\":{\"name\":\"calc\","
	    "\"arguments\":\"{}\"}}]},{\"id\":\"t1\",\"role\":\"tool\","
	    "\"content\":\"391\",\"toolCallId\":\"c1\"},{\"id\":\"m2\",\"role\":"
	    "\"assistant\",\"content\":\"done\"}]}"), "the path whole, in "
	    "AG-UI's shape");
	jv_free(s);
	jv_free(all);
	all = encode(tool_loop, true, path_none);
	t = types(&all);
	ok(strstr(t, "MESSAGES_SNAPSHOT") == NULL, "a path that cannot be "
	    "read: no snapshot");
	free(t);
	jv_free(all);
}

/*
 * Every AG-UI event has a timestamp; each carries the "at" of the event
 * that caused it, the ENDs and STEP_FINISHED a later event closes too.
 * A token has no "at", and the stream's end no event: no timestamp.
 */
static void
test_timestamps(void)
{
	jv all = encode("{\"type\":\"turn.started\"," S ",\"turn_id\":\"T\","
	    AT("000") "}\n"
	    "{\"type\":\"status\"," S ",\"status\":\"thinking\"," AT("001")
	    "}\n"
	    "{\"type\":\"token\"," S ",\"id\":\"m1\",\"text\":\"hi\"}\n"
	    "{\"type\":\"message\"," S "," AT("002") ",\"message\":{\"id\":"
	    "\"m1\",\"role\":\"assistant\",\"content\":\"hi\",\"tool_calls\":"
	    "[{\"id\":\"c1\",\"function\":{\"name\":\"calc\",\"arguments\":"
	    "\"{}\"}}]}}\n"
	    "{\"type\":\"status\"," S ",\"status\":\"acting\"," AT("003") "}\n"
	    "{\"type\":\"message\"," S "," AT("004") ",\"message\":{\"id\":"
	    "\"t1\",\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":"
	    "\"391\"}}\n"
	    "{\"type\":\"metrics\"," S ",\"id\":\"m2\"," AT("005") "}\n"
	    "{\"type\":\"completion\"," S ",\"text\":\"hi\"," AT("006") "}\n",
	    true, path_none);

	ok(same(types(&all), "RUN_STARTED STEP_STARTED TEXT_MESSAGE_START "
	    "TEXT_MESSAGE_CONTENT STEP_FINISHED TEXT_MESSAGE_END "
	    "TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END STEP_STARTED "
	    "TOOL_CALL_RESULT CUSTOM STEP_FINISHED RUN_FINISHED"),
	    "timestamps: the events");
	ok(same(stamps(&all), "0 1 - - 2 2 2 2 2 3 4 5 6 6"), "each carries "
	    "the time of the event that caused it; tokens none");
	jv_free(all);

	all = encode("{\"type\":\"turn.started\"," S ",\"turn_id\":\"T\","
	    AT("007") "}\n", true, NULL);
	ok(same(stamps(&all), "7 -"), "the run the stream's end finishes "
	    "has no time");
	jv_free(all);
}

int
main(void)
{
	test_a_tool_loop();
	test_streamed();
	test_ends();
	test_runs();
	test_plan();
	test_snapshot();
	test_timestamps();
	return tap_done();
}
