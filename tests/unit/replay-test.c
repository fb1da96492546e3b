/* replay-test - an export's cassette, tape, agent files, inputs; the compare */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cassette.h"
#include "json.h"
#include "log.h"
#include "portable.h"
#include "replay.h"
#include "request.h"
#include "session.h"
#include "tap.h"
#include "testdb.h"
#include "testjv.h"
#include "tooltape.h"

#define CONFIG "{\"model\":\"mock/calc\",\"system\":\"add things\"}"
#define ASK "{\"role\":\"user\",\"content\":\"1+2?\"}"
#define ADD_CALL "{\"id\":\"c1\",\"type\":\"function\",\"function\":" \
	"{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1,\\\"b\\\":2}\"}}"

/*
 * One recorded tool loop, as the engine records it: the session starts,
 * the user asks, the model calls add, add answers 3, the model replies.
 * Every id the session minted starts with the session's own letter (%1$s),
 * so two recordings differ in their ids as two runs do; %2$s is the reply.
 */
static const char *const tool_loop[] = {
	"{\"type\":\"decision.queued\",\"id\":\"%1$s-d1\",\"priority\":1,"
	    "\"trigger\":{\"type\":\"session.start\"},\"agent_file\":" CONFIG "}",
	"{\"type\":\"decision.queued\",\"id\":\"%1$s-d2\",\"priority\":0,"
	    "\"trigger\":{\"type\":\"client.messages\",\"messages\":[" ASK "]}}",
	"{\"type\":\"turn.started\",\"turn_id\":\"%1$s-t1\"}",
	"{\"type\":\"message.new\",\"parent_id\":null,\"message\":"
	    "{\"id\":\"%1$s-m1\",\"role\":\"user\",\"content\":\"1+2?\"}}",
	"{\"type\":\"llm.call.requested\",\"id\":\"%1$s-l1\",\"attempt\":1,"
	    "\"stream\":false,\"request\":{\"model\":\"mock/calc\","
	    "\"messages\":[{\"id\":\"%1$s-m1\",\"role\":\"user\","
	    "\"content\":\"1+2?\"}]}}",
	"{\"type\":\"llm.call.completed\",\"id\":\"%1$s-l1\",\"response\":"
	    "{\"model\":\"mock/calc\",\"tool_calls\":[" ADD_CALL "]}}",
	"{\"type\":\"message.new\",\"parent_id\":\"%1$s-m1\",\"message\":"
	    "{\"id\":\"%1$s-m2\",\"role\":\"assistant\",\"tool_calls\":["
	    ADD_CALL "]}}",
	"{\"type\":\"tool.call.requested\",\"id\":\"c1\",\"name\":\"add\","
	    "\"arguments\":\"{\\\"a\\\":1,\\\"b\\\":2}\"}",
	"{\"type\":\"tool.call.completed\",\"id\":\"c1\",\"result\":\"3\"}",
	"{\"type\":\"message.new\",\"parent_id\":\"%1$s-m2\",\"message\":"
	    "{\"id\":\"%1$s-m3\",\"role\":\"tool\",\"tool_call_id\":\"c1\","
	    "\"content\":\"3\"}}",
	"{\"type\":\"llm.call.requested\",\"id\":\"%1$s-l2\",\"attempt\":1,"
	    "\"stream\":false,\"request\":{\"model\":\"mock/calc\","
	    "\"messages\":[" ASK ",{\"role\":\"tool\",\"tool_call_id\":"
	    "\"c1\",\"content\":\"3\"}]}}",
	"{\"type\":\"llm.call.completed\",\"id\":\"%1$s-l2\",\"response\":"
	    "{\"model\":\"mock/calc\",\"content\":\"%2$s\"}}",
	"{\"type\":\"message.new\",\"parent_id\":\"%1$s-m3\",\"message\":"
	    "{\"id\":\"%1$s-m4\",\"role\":\"assistant\",\"content\":"
	    "\"%2$s\"}}",
	"{\"type\":\"turn.completed\",\"turn_id\":\"%1$s-t1\",\"data\":"
	    "\"%2$s\"}",
	NULL
};

struct recording {
	const char	*sid;
	const char	*reply;	/* to record; NULL to read back */
	const char	*what;	/* read back: "export" or "events" */
	jv		 out;
};

static int
record_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct recording *r = ctx;
	const char *const *tmpl;
	char text[1024];
	jv p;

	if (art_session_create(t, r->sid, "calc", jv_null(), jv_array(),
	    err) == -1)
		return -1;
	for (tmpl = tool_loop; *tmpl != NULL; tmpl++) {
		snprintf(text, sizeof(text), *tmpl, r->sid, r->reply);
		p = art_json_parse_str(text, err);
		if (!jv_is_valid(p) ||
		    art_session_record(t, r->sid, p, NULL, err) == -1)
			return -1;
	}
	return 0;
}

/* The export of r->sid, or when r->what is "events" its events. */
static int
read_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct recording *r = ctx;

	r->out = strcmp(r->what, "events") == 0 ? art_request_log_read(t,
	    r->sid, 0, 0, err) : art_export(t, r->sid, false, err);
	return jv_is_valid(r->out) ? 0 : -1;
}

/*
 * r through the store: its tool loop recorded when it has a reply, else
 * read back into r->out.  Exits the test when the store fails.
 */
static void
through(struct testdb *db, struct recording *r)
{
	struct art_err err;

	if ((r->reply != NULL ? art_store_write(db->st, record_fn, r, &err) :
	    art_store_read(db->st, read_fn, r, &err)) == -1) {
		fprintf(stderr, "replay-test: %s: %s\n", r->sid, err.msg);
		exit(99);
	}
}

/* Records session sid's tool loop ending in reply. */
static void
record(struct testdb *db, const char *sid, const char *reply)
{
	struct recording r = { sid, reply, NULL, jv_invalid() };

	through(db, &r);
}

/* sid's export lines, or with what "events" its events. */
static jv
read_back(struct testdb *db, const char *sid, const char *what)
{
	struct recording r = { sid, NULL, what, jv_invalid() };

	through(db, &r);
	return r.out;
}

/* Element i of a (borrowed), field key; jv_null() where it is none. */
static jv
item(const jv *a, int i, const char *key)
{
	jv e = jv_array_get(jv_copy(*a), i), v;

	if (!jv_is_valid(e)) {
		jv_free(e);
		return jv_null();
	}
	v = art_json_field(&e, key);
	jv_free(e);
	return v;
}

/*
 * Whether an exchange line (borrowed) has the key agentrt-llm --replay
 * (or agentrt-tool --replay, for a tool.exchange) looks it up by.
 */
static int
keyed_right(const jv *line)
{
	char hex[ART_CASSETTE_KEY_LEN + ART_TOOLTAPE_KEY_LEN + 1];
	const char *k = art_json_str(line, "key");
	const char *type = art_json_str(line, "type");
	int tool = type != NULL && strcmp(type, "tool.exchange") == 0;
	jv what = art_json_field(line, tool ? "arguments" : "request");

	if (tool)
		art_tooltape_key(art_json_str(line, "name"), &what, hex);
	else
		art_cassette_key(art_json_str(line, "model"), &what, hex);
	jv_free(what);
	return k != NULL && strcmp(k, hex) == 0;
}

/* The export of recording "a", the tool loop replying 3, from a store. */
static jv
exported(void)
{
	struct testdb db;
	jv lines;

	testdb_open(&db, 0, 0);
	record(&db, "a", "3");
	lines = read_back(&db, "a", "export");
	testdb_close(&db);
	return lines;
}

/* The events of recording "a" replying 3 and of "b" replying b_says. */
static void
two_runs(const char *b_says, jv *a, jv *b)
{
	struct testdb db;

	testdb_open(&db, 0, 0);
	record(&db, "a", "3");
	record(&db, "b", b_says);
	*a = read_back(&db, "a", "events");
	*b = read_back(&db, "b", "events");
	testdb_close(&db);
}

static void
test_an_export_makes_the_cassette(void)
{
	jv lines = exported(), c = art_replay_cassette(&lines), l;

	ok(jv_array_length(jv_copy(c)) == 2, "one exchange per model call");
	ok(is_json(item(&c, 0, "type"), "\"llm.exchange\"") &&
	    is_json(item(&c, 0, "model"), "\"mock/calc\"") &&
	    is_json(item(&c, 0, "stream"), "false"),
	    "an llm.exchange of the request's model, not streamed");
	ok(is_json(item(&c, 0, "request"), "{\"model\":\"mock/calc\","
	    "\"messages\":[{\"id\":\"a-m1\",\"role\":\"user\",\"content\":"
	    "\"1+2?\"}]}"), "the first holds the request as recorded");
	ok(is_json(item(&c, 0, "response"), "{\"model\":\"mock/calc\","
	    "\"tool_calls\":[" ADD_CALL "]}"), "and the answer it got");
	ok(is_json(item(&c, 1, "response"), "{\"model\":\"mock/calc\","
	    "\"content\":\"3\"}"), "the second, the reply, in order");
	l = jv_array_get(jv_copy(c), 1);
	ok(keyed_right(&l), "keyed as agentrt-llm --replay looks it up");
	jv_free(l);
	jv_free(c);
	jv_free(lines);
}

static void
test_an_export_makes_the_tape(void)
{
	jv lines = exported(), tape = art_replay_tape(&lines);
	jv l = jv_array_get(jv_copy(tape), 0);

	ok(jv_array_length(jv_copy(tape)) == 1, "one exchange per tool call");
	ok(is_json(jv_object_delete(jv_copy(l), jv_string("key")),
	    "{\"type\":\"tool.exchange\",\"name\":\"add\",\"arguments\":"
	    "{\"a\":1,\"b\":2},\"result\":\"3\"}"),
	    "the call's name, its arguments parsed, and its result");
	ok(keyed_right(&l), "keyed as agentrt-tool --replay looks it up");
	jv_free(l);
	jv_free(tape);
	jv_free(lines);
}

static void
test_an_errored_call_is_taped_and_an_unasked_one_is_not(void)
{
	jv lines = art_json_parse_str("[{\"type\":\"agentrt.export\"},"
	    "{\"session_id\":\"a\",\"seq\":1,\"payload\":{\"type\":"
	    "\"tool.call.requested\",\"id\":\"c1\",\"name\":\"add\","
	    "\"arguments\":\"{}\"}},"
	    "{\"session_id\":\"a\",\"seq\":2,\"payload\":{\"type\":"
	    "\"tool.call.errored\",\"id\":\"c1\",\"error\":\"boom\","
	    "\"retryable\":false}},"
	    "{\"session_id\":\"a\",\"seq\":3,\"payload\":{\"type\":"
	    "\"tool.call.completed\",\"id\":\"c9\",\"result\":\"x\"}}]", NULL);
	jv tape = art_replay_tape(&lines);

	ok(jv_array_length(jv_copy(tape)) == 1 &&
	    is_json(item(&tape, 0, "error"), "{\"error\":\"boom\","
	    "\"retryable\":false}"), "an error is taped as one");
	ok(jv_array_length(art_replay_cassette(&lines)) == 0,
	    "tool calls make no cassette");
	jv_free(tape);
	jv_free(lines);
}

static void
test_an_export_keeps_its_agent_files_and_inputs(void)
{
	jv lines = exported(), events, in;

	ok(is_json(art_replay_agent_files(&lines), "{\"calc\":" CONFIG "}"),
	    "the agent file session.start carried, by agent id");
	events = art_replay_events(&lines, "a");
	ok(jv_array_length(jv_copy(events)) == 15 &&
	    is_json(item(&events, 0, "seq"), "1"),
	    "the session's events, header aside, from seq 1");
	in = art_replay_inputs(&events);
	ok(is_json(in, "[{\"type\":\"client.messages\",\"messages\":["
	    ASK "]}]"), "the client input is the queued trigger");
	ok(jv_array_length(art_replay_events(&lines, "b")) == 0,
	    "no events of a session not in the file");
	jv_free(events);
	jv_free(lines);
}

static void
test_a_resumed_interrupt_is_an_input(void)
{
	jv evs = art_json_parse_str("[{\"payload\":{\"type\":"
	    "\"session.interrupted\",\"reason\":\"approval\"}},"
	    "{\"payload\":{\"type\":\"session.interrupt_resumed\","
	    "\"payload\":{\"approved\":true}}},"
	    "{\"payload\":{\"type\":\"decision.queued\",\"trigger\":"
	    "{\"type\":\"llm.finished\"}}}]", NULL);

	ok(is_json(art_replay_inputs(&evs), "[{\"resume\":"
	    "{\"approved\":true}}]"),
	    "a resume is sent again with its payload; other decisions are not");
	jv_free(evs);
}

static void
test_an_identical_run_passes(void)
{
	jv want, got, v;
	bool passed = false;

	two_runs("3", &want, &got);
	v = art_replay_verdict(&want, &got, "b", "a", &passed);
	ok(passed && is_json(v, "{\"type\":\"replay.passed\",\"session\":"
	    "\"b\",\"recorded\":\"a\",\"events\":8}"),
	    "new ids, the same behaviour: passed, 8 events compared");
	jv_free(want);
	jv_free(got);
}

static void
test_a_changed_reply_diverges(void)
{
	jv want, got, bw, bg, v;
	bool passed = true;

	two_runs("4", &want, &got);
	bw = art_replay_behaviour(&want);
	bg = art_replay_behaviour(&got);
	v = art_replay_diverges(&bw, &bg, "b");
	ok(is_json(art_json_field(&v, "event"), "{\"index\":6,\"type\":"
	    "\"message.new\",\"expected_seq\":14,\"actual_seq\":14}"),
	    "the first difference is the reply's message");
	ok(is_json(art_json_field(&v, "expected"), "{\"type\":"
	    "\"message.new\",\"message\":{\"role\":\"assistant\","
	    "\"content\":\"3\"}}") && is_json(art_json_field(&v, "actual"),
	    "{\"type\":\"message.new\",\"message\":{\"role\":\"assistant\","
	    "\"content\":\"4\"}}"), "what was expected and what came, "
	    "ids and seq aside");
	ok(is_json(art_json_field(&v, "type"), "\"replay.divergence\"") &&
	    is_json(art_json_field(&v, "session"), "\"b\""),
	    "a replay.divergence line for the new session");
	jv_free(v);
	v = art_replay_verdict(&want, &got, "b", "a", &passed);
	ok(!passed && is_json(art_json_field(&v, "type"),
	    "\"replay.divergence\""), "the verdict is that divergence");
	jv_free(v);
	jv_free(bw);
	jv_free(bg);
	jv_free(want);
	jv_free(got);
}

static void
test_a_replay_that_stops_short_diverges(void)
{
	jv want = art_json_parse_str("[{\"type\":\"turn.completed\","
	    "\"data\":1,\"error\":null,\"seq\":5}]", NULL);
	jv none = jv_array(), v = art_replay_diverges(&want, &none, "b");

	ok(is_json(art_json_field(&v, "event"), "{\"index\":0,\"type\":"
	    "\"turn.completed\",\"expected_seq\":5,\"actual_seq\":null}") &&
	    is_json(art_json_field(&v, "actual"), "null"),
	    "what the replay never did is null");
	jv_free(v);
	ok(is_json(art_replay_diverges(&want, &want, "b"), "null"),
	    "a behaviour agrees with itself");
	jv_free(want);
	jv_free(none);
}

/* Tool messages of two calls, answered in the order given. */
static jv
answers(const char *first, const char *second)
{
	char text[512];

	snprintf(text, sizeof(text), "[{\"seq\":1,\"payload\":{\"type\":"
	    "\"message.new\",\"message\":{\"id\":\"x\",\"role\":\"tool\","
	    "\"tool_call_id\":\"%s\",\"content\":\"%s\"}}},{\"seq\":2,"
	    "\"payload\":{\"type\":\"message.new\",\"message\":{\"role\":"
	    "\"tool\",\"tool_call_id\":\"%s\",\"content\":\"%s\"}}},"
	    "{\"seq\":3,\"payload\":{\"type\":\"decision.queued\"}}]",
	    first, first, second, second);
	return art_json_parse_str(text, NULL);
}

static void
test_parallel_answers_compare_in_call_order(void)
{
	jv ab = answers("c1", "c2"), ba = answers("c2", "c1");
	jv b1 = art_replay_behaviour(&ab), b2 = art_replay_behaviour(&ba);

	ok(jv_array_length(jv_copy(b1)) == 2 &&
	    is_json(item(&b1, 0, "message"), "{\"role\":\"tool\","
	    "\"tool_call_id\":\"c1\",\"content\":\"c1\"}"),
	    "a run of tool answers is sorted by tool_call_id; bookkeeping "
	    "is left out");
	ok(is_json(art_replay_diverges(&b1, &b2, "s"), "null"),
	    "parallel answers finishing in another order agree");
	jv_free(b1);
	jv_free(b2);
	jv_free(ab);
	jv_free(ba);
}

static void
test_what_an_event_shows(void)
{
	jv ev = art_json_parse_str("{\"seq\":7,\"payload\":{\"type\":"
	    "\"tool.call.requested\",\"id\":\"c1\",\"name\":\"add\","
	    "\"arguments\":\"{}\",\"deadline\":\"x\"}}", NULL);
	jv bk = art_json_parse_str("{\"seq\":8,\"payload\":{\"type\":"
	    "\"decision.dispatched\",\"id\":\"d\"}}", NULL);

	ok(is_json(art_replay_observed(&ev), "{\"type\":"
	    "\"tool.call.requested\",\"name\":\"add\",\"arguments\":\"{}\","
	    "\"seq\":7}"), "a tool call shows its name and arguments");
	ok(!jv_is_valid(art_replay_observed(&bk)),
	    "bookkeeping shows nothing");
	jv_free(ev);
	jv_free(bk);
}

int
main(void)
{
	test_an_export_makes_the_cassette();
	test_an_export_makes_the_tape();
	test_an_errored_call_is_taped_and_an_unasked_one_is_not();
	test_an_export_keeps_its_agent_files_and_inputs();
	test_a_resumed_interrupt_is_an_input();
	test_an_identical_run_passes();
	test_a_changed_reply_diverges();
	test_a_replay_that_stops_short_diverges();
	test_parallel_answers_compare_in_call_order();
	test_what_an_event_shows();
	return tap_done();
}
