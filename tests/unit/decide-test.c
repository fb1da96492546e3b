/* decide-test - proposals, jq programs, answers and the raw line reader */
#include "decide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tap.h"
#include "testjv.h"

#define REQ(did, rest) "{\"type\":\"decision.request\",\"session_id\":\"s1\"," \
	"\"decision_id\":\"" did "\",\"agent_id\":\"calc\"" rest "}"

static jv
parse(const char *text)
{
	struct art_err err;
	jv v = art_json_parse_str(text, &err);

	if (!jv_is_valid(v))
		printf("# bad test JSON: %s\n", err.msg);
	return v;
}

static struct art_decide *
decider(const char *program, const char *vars)
{
	struct art_decide_conf c = { .program = program, .vars = jv_null() };
	struct art_decide *d;
	struct art_err err;

	if (vars != NULL)
		c.vars = parse(vars);
	d = art_decide_new(&c, NULL, &err);
	if (d == NULL)
		printf("# does not compile: %s\n", program);
	jv_free(c.vars);
	return d;
}

/* Runs one line through d; *out is jv_null() when the verdict is PASS. */
static enum art_decide_verdict
decide(struct art_decide *d, const char *text, jv *out, bool *extra,
    struct art_err *err)
{
	jv line = parse(text);
	bool ex;
	enum art_decide_verdict v;

	*out = jv_null();
	v = art_decide_line(d, &line, out, extra != NULL ? extra : &ex, err);
	jv_free(line);
	return v;
}

/*
 * Error line out (consumed) less its "input", which must quote the
 * request, libjq's text of text cut at ART_NDJSON_EXCERPT bytes;
 * jv_invalid() when it does not.
 */
static jv
quoting(jv out, const char *text)
{
	jv req = parse(text), dump = jv_dump_string(req, 0);
	const char *in = art_json_str(&out, "input"), *s = jv_string_value(dump);
	size_t n = strlen(s) < ART_NDJSON_EXCERPT ? strlen(s) :
	    ART_NDJSON_EXCERPT;
	int ok = in != NULL && strlen(in) == n && memcmp(in, s, n) == 0;

	if (!ok)
		printf("#   input %s, want %.*s\n", in != NULL ? in : "(none)",
		    (int)n, s);
	jv_free(dump);
	if (!ok) {
		jv_free(out);
		return jv_invalid();
	}
	return jv_object_delete(out, jv_string("input"));
}

/*
 * True when running text through d gives verdict want and line (JSON);
 * an error line must quote the request as its "input", and line leaves
 * that out.
 */
static int
gives(struct art_decide *d, const char *text, enum art_decide_verdict want,
    const char *line)
{
	struct art_err err;
	jv out;
	enum art_decide_verdict v = decide(d, text, &out, NULL, &err);

	if (v != want) {
		printf("#   verdict %d, want %d\n", v, want);
		jv_free(out);
		return 0;
	}
	if (v == ART_DECIDE_FAIL && !jv_is_valid(out = quoting(out, text)))
		return 0;
	return line != NULL ? is_json(out, line) : (jv_free(out), 1);
}

static void
test_proposal_is_the_answer(void)
{
	struct art_decide *d = decider(NULL, NULL);

	ok(gives(d, REQ("d1", ",\"trigger\":{\"type\":\"session.start\"},"
	    "\"proposed\":{\"agent\":{\"model\":\"mock/echo\"}}"),
	    ART_DECIDE_ANSWER, "{\"type\":\"decision.response\","
	    "\"session_id\":\"s1\",\"decision_id\":\"d1\","
	    "\"agent\":{\"model\":\"mock/echo\"}}"),
	    "a proposal is answered as it is, completed with type and ids");
	ok(gives(d, REQ("d2", ",\"proposed\":{\"state\":null}"),
	    ART_DECIDE_ANSWER, "{\"type\":\"decision.response\","
	    "\"session_id\":\"s1\",\"decision_id\":\"d2\",\"state\":null}"),
	    "a proposal holding only state: null is still a proposal");
	art_decide_free(d);
}

static void
test_answer_puts_type_and_ids_first(void)
{
	struct art_decide *d = decider("{actions: [], messages: []}", NULL);
	struct art_err err;
	jv out, s;

	decide(d, REQ("d1", ""), &out, NULL, &err);
	s = jv_dump_string(out, 0);
	ok(strcmp(jv_string_value(s), "{\"type\":\"decision.response\","
	    "\"session_id\":\"s1\",\"decision_id\":\"d1\",\"actions\":[],"
	    "\"messages\":[]}") == 0, "type, session_id, decision_id come "
	    "first, then the answer's members in its order");
	jv_free(s);
	art_decide_free(d);
}

static void
test_empty_proposals_pass(void)
{
	struct art_decide *d = decider(NULL, NULL);

	ok(gives(d, REQ("d1", ",\"trigger\":{\"type\":\"tool.execute\"},"
	    "\"proposed\":{}"), ART_DECIDE_PASS, NULL),
	    "an empty proposal is passed on");
	ok(gives(d, REQ("d2", ""), ART_DECIDE_PASS, NULL),
	    "an absent proposal is passed on");
	ok(gives(d, REQ("d3", ",\"proposed\":null"), ART_DECIDE_PASS, NULL),
	    "a null proposal is passed on");
	ok(gives(d, REQ("d4", ",\"proposed\":{\"note\":1}"), ART_DECIDE_PASS,
	    NULL), "a proposal with no response member is passed on");
	art_decide_free(d);
}

static void
test_other_lines_pass(void)
{
	struct art_decide *d = decider(NULL, NULL), *p = decider("{}", NULL);
	const char *lines[] = {
		"{\"type\":\"llm.request\",\"session_id\":\"s1\","
		    "\"id\":\"c1\"}",
		"{\"type\":\"no.such.type\",\"proposed\":{\"actions\":[]}}",
		"{\"type\":\"decision.response\",\"session_id\":\"s1\","
		    "\"decision_id\":\"d1\",\"actions\":[]}",
		"{\"type\":\"error\",\"code\":\"x\",\"message\":\"y\"}",
	};
	size_t i;
	int all = 1;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		all &= gives(d, lines[i], ART_DECIDE_PASS, NULL) &&
		    gives(p, lines[i], ART_DECIDE_PASS, NULL);
	ok(all, "lines other than decision.request pass, in both modes, "
	    "without running the program");
	art_decide_free(d);
	art_decide_free(p);
}

static void
test_bad_requests_fail(void)
{
	struct art_decide *d = decider(NULL, NULL);
	struct art_err err;
	jv out;

	ok(gives(d, REQ("d1", ",\"proposed\":\"yes\""), ART_DECIDE_FAIL,
	    "{\"type\":\"error\",\"code\":\"bad_request\",\"message\":"
	    "\"decision 'd1': \\\"proposed\\\" is string, not an object\","
	    "\"session_id\":\"s1\"}"), "a proposal that is not an object "
	    "is an error line");
	ok(decide(d, "{\"type\":\"decision.request\",\"session_id\":\"s1\","
	    "\"proposed\":{\"actions\":[]}}", &out, NULL, &err) ==
	    ART_DECIDE_FAIL && art_err_is(&err, "bad_request") &&
	    strstr(err.msg, "decision_id") != NULL,
	    "a request without a decision_id is an error");
	jv_free(out);
	ok(decide(d, "{\"type\":\"decision.request\",\"decision_id\":7}",
	    &out, NULL, &err) == ART_DECIDE_FAIL &&
	    art_err_is(&err, "bad_request"),
	    "a decision_id that is not a string is an error");
	jv_free(out);
	ok(decide(d, "{\"type\":\"decision.request\",\"decision_id\":\"d9\","
	    "\"proposed\":{\"actions\":[]}}", &out, NULL, &err) ==
	    ART_DECIDE_FAIL && strstr(err.msg, "'d9'") != NULL &&
	    strstr(err.msg, "session_id") != NULL,
	    "a request without a session_id is an error naming the decision");
	ok(is_json(quoting(out, "{\"type\":\"decision.request\","
	    "\"decision_id\":\"d9\",\"proposed\":{\"actions\":[]}}"),
	    "{\"type\":\"error\",\"code\":\"bad_request\","
	    "\"message\":\"decision 'd9': no string \\\"session_id\\\"\"}"),
	    "and its error line carries no session_id");
	art_decide_free(d);
}

static void
test_program_answers_with_its_first_value(void)
{
	struct art_decide *d = decider("{actions: [{type: \"done\", "
	    "data: .trigger.type}]}, {actions: []}", NULL);
	struct art_decide *one = decider("{actions: []}", NULL);
	struct art_err err;
	bool extra = false;
	jv out;

	ok(decide(d, REQ("d1", ",\"trigger\":{\"type\":\"tool.execute\"}"),
	    &out, &extra, &err) == ART_DECIDE_ANSWER && is_json(out,
	    "{\"type\":\"decision.response\",\"session_id\":\"s1\","
	    "\"decision_id\":\"d1\",\"actions\":[{\"type\":\"done\","
	    "\"data\":\"tool.execute\"}]}"),
	    "the program's first value answers, even a tool.execute");
	ok(extra, "a second value is reported");
	extra = true;
	ok(decide(one, REQ("d2", ""), &out, &extra, &err) ==
	    ART_DECIDE_ANSWER && !extra, "one value: nothing to report");
	jv_free(out);
	art_decide_free(d);
	art_decide_free(one);
}

static void
test_response_members_are_checked(void)
{
	struct art_decide *full = decider("{type: \"decision.response\", "
	    "session_id: .session_id, decision_id: .decision_id, "
	    "actions: []}", NULL);
	struct art_decide *other = decider("{decision_id: \"zz\"}", NULL);
	struct art_decide *same = decider(".", NULL);
	struct art_err err;
	jv out;

	ok(gives(full, REQ("d1", ""), ART_DECIDE_ANSWER,
	    "{\"type\":\"decision.response\",\"session_id\":\"s1\","
	    "\"decision_id\":\"d1\",\"actions\":[]}"),
	    "a whole decision.response line is taken as it is");
	ok(decide(other, REQ("d1", ""), &out, NULL, &err) ==
	    ART_DECIDE_FAIL && art_err_is(&err, "bad_response") &&
	    strstr(err.msg, "decision_id") != NULL,
	    "an answer naming another decision is a bad_response");
	jv_free(out);
	ok(decide(same, REQ("d1", ""), &out, NULL, &err) ==
	    ART_DECIDE_FAIL && art_err_is(&err, "bad_response") &&
	    strstr(err.msg, "use empty") != NULL,
	    "yielding the request itself is a bad_response, not a pass");
	jv_free(out);
	art_decide_free(full);
	art_decide_free(other);
	art_decide_free(same);
}

static void
test_null_and_empty_pass(void)
{
	struct art_decide *e = decider("empty", NULL);
	struct art_decide *n = decider("null", NULL);
	struct art_decide *s = decider("select(.agent_id == \"x\") | {}",
	    NULL);

	ok(gives(e, REQ("d1", ",\"proposed\":{\"actions\":[]}"),
	    ART_DECIDE_PASS, NULL), "empty passes the request on");
	ok(gives(n, REQ("d1", ",\"proposed\":{\"actions\":[]}"),
	    ART_DECIDE_PASS, NULL), "null passes the request on");
	ok(gives(s, REQ("d1", ""), ART_DECIDE_PASS, NULL) &&
	    gives(s, "{\"type\":\"decision.request\",\"session_id\":\"s\","
	    "\"decision_id\":\"d\",\"agent_id\":\"x\"}", ART_DECIDE_ANSWER,
	    "{\"type\":\"decision.response\",\"session_id\":\"s\","
	    "\"decision_id\":\"d\"}"), "select passes some on and answers "
	    "others, an empty object included");
	art_decide_free(e);
	art_decide_free(n);
	art_decide_free(s);
}

/* agentrt(7): an error line's "input" is the first 256 bytes of the line. */
static void
test_error_lines_quote_the_raw_request(void)
{
	struct art_decide *d = decider(NULL, NULL);
	struct art_err err;
	char raw[600];
	bool extra;
	jv line, out, keys;
	const char *in;
	int n;

	n = snprintf(raw, sizeof(raw), "{ \"type\": \"decision.request\", "
	    "\"session_id\": \"s1\", \"decision_id\": \"d1\", "
	    "\"proposed\": \"yes\", \"pad\": \"%0400d\" }", 0);
	line = parse(raw);
	ok(art_decide_raw(d, &line, raw, (size_t)n, &out, &extra, &err) ==
	    ART_DECIDE_FAIL, "a malformed request fails");
	in = art_json_str(&out, "input");
	ok(in != NULL && strlen(in) == ART_NDJSON_EXCERPT &&
	    memcmp(in, raw, ART_NDJSON_EXCERPT) == 0,
	    "its error line quotes the bytes as read, cut at 256");
	keys = jv_keys_unsorted(jv_copy(out));
	ok(is_json(keys, "[\"type\",\"code\",\"message\",\"input\","
	    "\"session_id\"]"), "input comes after message, as other "
	    "stages place it");
	jv_free(out);
	jv_free(line);
	art_decide_free(d);
}

static void
test_runtime_errors_are_error_lines(void)
{
	struct art_decide *d = decider("if .n then .n.x else {} end", NULL);
	struct art_decide *o = decider("error({a: 1})", NULL);
	struct art_err err;
	jv out;

	ok(decide(d, REQ("d1", ",\"n\":5"), &out, NULL, &err) ==
	    ART_DECIDE_FAIL && art_err_is(&err, "jq_error"),
	    "a jq runtime error fails the request");
	ok(strcmp(err.msg, "decision 'd1': jq error: Cannot index number "
	    "with string \"x\"") == 0, "the message names the decision and "
	    "says what jq said");
	ok(is_json(quoting(out, REQ("d1", ",\"n\":5")), "{\"type\":\"error\","
	    "\"code\":\"jq_error\","
	    "\"message\":\"decision 'd1': jq error: Cannot index number "
	    "with string \\\"x\\\"\",\"session_id\":\"s1\"}"),
	    "the error line carries the message and the session");
	ok(gives(d, REQ("d2", ""), ART_DECIDE_ANSWER, "{\"type\":"
	    "\"decision.response\",\"session_id\":\"s1\",\"decision_id\":"
	    "\"d2\"}"), "the next request runs afresh");
	ok(decide(o, REQ("d3", ""), &out, NULL, &err) == ART_DECIDE_FAIL &&
	    strcmp(err.msg, "decision 'd3': jq error: (not a string): "
	    "{\"a\":1}") == 0, "an error value that is not a string is "
	    "shown as JSON");
	jv_free(out);
	art_decide_free(d);
	art_decide_free(o);
}

static void
test_values_that_are_not_objects_are_bad_responses(void)
{
	const char *progs[] = { "\"yes\"", "42", "[1]", "true" };
	struct art_decide *d;
	struct art_err err;
	size_t i;
	int all = 1;
	jv out;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		d = decider(progs[i], NULL);
		all &= decide(d, REQ("d1", ""), &out, NULL, &err) ==
		    ART_DECIDE_FAIL && art_err_is(&err, "bad_response") &&
		    strstr(err.msg, "'d1'") != NULL;
		jv_free(out);
		art_decide_free(d);
	}
	ok(all, "a string, number, array or boolean is a bad_response");
}

static void
test_halt(void)
{
	struct art_decide *h = decider("halt", NULL);
	struct art_decide *he = decider("\"stop here\\n\" | halt_error", NULL);
	struct art_decide *h0 = decider("\"fine\" | halt_error(0)", NULL);
	struct art_err err;
	jv out;

	ok(gives(h, REQ("d1", ""), ART_DECIDE_PASS, NULL),
	    "halt with no value passes the request on");
	ok(decide(he, REQ("d1", ""), &out, NULL, &err) == ART_DECIDE_FAIL &&
	    strcmp(err.msg, "decision 'd1': halt_error: stop here") == 0,
	    "halt_error is an error line with its message");
	jv_free(out);
	ok(gives(h0, REQ("d1", ""), ART_DECIDE_PASS, NULL),
	    "halt_error(0) passes the request on");
	ok(gives(he, REQ("d2", ""), ART_DECIDE_FAIL, NULL) &&
	    gives(h, REQ("d3", ""), ART_DECIDE_PASS, NULL),
	    "a halted program runs again on the next request");
	art_decide_free(h);
	art_decide_free(he);
	art_decide_free(h0);
}

static void
test_input_is_not_available(void)
{
	struct art_decide *d = decider("input", NULL);
	struct art_err err;
	jv out;

	ok(decide(d, REQ("d1", ""), &out, NULL, &err) == ART_DECIDE_FAIL &&
	    strstr(err.msg, "no input to read") != NULL,
	    "input raises an error instead of reading the stream");
	jv_free(out);
	art_decide_free(d);
}

static void
test_vars_and_args(void)
{
	struct art_decide *d = decider("{actions: [{type: \"done\", data: "
	    "[$who, $n, $ARGS.named.n, $ARGS.positional]}]}",
	    "{\"who\":\"me\",\"n\":{\"k\":2}}");
	struct art_decide *dflt = decider("{state: ($ARGS.named.max // 8)}",
	    NULL);

	ok(gives(d, REQ("d1", ""), ART_DECIDE_ANSWER, "{\"type\":"
	    "\"decision.response\",\"session_id\":\"s1\",\"decision_id\":"
	    "\"d1\",\"actions\":[{\"type\":\"done\",\"data\":[\"me\","
	    "{\"k\":2},{\"k\":2},[]]}]}"),
	    "variables are $name and $ARGS.named, as jq's CLI has them");
	ok(gives(dflt, REQ("d1", ""), ART_DECIDE_ANSWER, "{\"type\":"
	    "\"decision.response\",\"session_id\":\"s1\",\"decision_id\":"
	    "\"d1\",\"state\":8}"), "$ARGS exists with no variables");
	art_decide_free(d);
	art_decide_free(dflt);
}

static void
test_env_is_visible(void)
{
	struct art_decide *d;

	/* $ENV is read when the program compiles, env when it runs. */
	setenv("ART_DECIDE_TEST", "seen", 1);
	d = decider("{state: [$ENV.ART_DECIDE_TEST, env.ART_DECIDE_TEST]}",
	    NULL);
	ok(gives(d, REQ("d1", ""), ART_DECIDE_ANSWER, "{\"type\":"
	    "\"decision.response\",\"session_id\":\"s1\",\"decision_id\":"
	    "\"d1\",\"state\":[\"seen\",\"seen\"]}"),
	    "$ENV and env are jq's");
	art_decide_free(d);
}

/* True when message i of msgs (borrowed) holds text. */
static int
has_msg(const jv *msgs, int i, const char *text)
{
	jv m = jv_array_get(jv_copy(*msgs), i);
	int found = jv_get_kind(m) == JV_KIND_STRING &&
	    strstr(jv_string_value(m), text) != NULL;

	jv_free(m);
	return found;
}

static void
test_compile_errors_keep_every_message(void)
{
	struct art_decide_conf c = { .program = "$nope | nofunc(1)",
	    .vars = jv_null() };
	struct art_decide *d;
	struct art_err err;
	jv msgs;

	d = art_decide_new(&c, &msgs, &err);
	ok(d == NULL && art_err_is(&err, "jq_compile"),
	    "a program that does not compile makes no decider");
	ok(jv_array_length(jv_copy(msgs)) == 3, "jq's two errors and its "
	    "count are kept");
	ok(has_msg(&msgs, 0, "$nope is not defined") &&
	    has_msg(&msgs, 1, "nofunc/1 is not defined") &&
	    has_msg(&msgs, 2, "jq: 2 compile errors"), "in jq's order");
	jv_free(msgs);
	c.program = ".a";
	d = art_decide_new(&c, &msgs, &err);
	ok(d != NULL && jv_array_length(msgs) == 0,
	    "a good program has no messages");
	art_decide_free(d);
}

static void
test_import_is_a_compile_error(void)
{
	struct art_decide_conf c = { .program = "import \"x\" as x; .",
	    .vars = jv_null() };
	struct art_err err;
	jv msgs;

	ok(art_decide_new(&c, &msgs, &err) == NULL &&
	    has_msg(&msgs, 0, "module not found"),
	    "import fails to compile instead of aborting");
	jv_free(msgs);
}

static void
test_agent_filter(void)
{
	static const char *const agents[] = { "calc", "math" };
	struct art_decide_conf c = { .vars = jv_null(), .agents = agents,
	    .nagents = 2 };
	struct art_decide *pd, *jd;
	struct art_err err;

	pd = art_decide_new(&c, NULL, &err);
	c.program = "error(\"ran\")";
	jd = art_decide_new(&c, NULL, &err);
	ok(gives(pd, REQ("d1", ",\"proposed\":{\"actions\":[]}"),
	    ART_DECIDE_ANSWER, NULL), "a listed agent's request is answered");
	ok(gives(pd, "{\"type\":\"decision.request\",\"session_id\":\"s1\","
	    "\"decision_id\":\"d2\",\"agent_id\":\"other\",\"proposed\":"
	    "{\"actions\":[]}}", ART_DECIDE_PASS, NULL) &&
	    gives(pd, "{\"type\":\"decision.request\",\"session_id\":\"s1\","
	    "\"decision_id\":\"d3\",\"proposed\":{\"actions\":[]}}",
	    ART_DECIDE_PASS, NULL), "other agents' requests, and those "
	    "naming none, are passed on");
	ok(gives(jd, "{\"type\":\"decision.request\",\"session_id\":\"s1\","
	    "\"decision_id\":\"d2\",\"agent_id\":\"other\"}", ART_DECIDE_PASS,
	    NULL) && gives(jd, "{\"type\":\"decision.request\",\"session_id\":"
	    "\"s1\",\"decision_id\":\"d2\",\"agent_id\":\"math\"}",
	    ART_DECIDE_FAIL, NULL), "the program runs only for listed agents");
	art_decide_free(pd);
	art_decide_free(jd);
}

static void
debug_seen(void *arg, jv v)
{
	jv *seen = arg;

	*seen = jv_array_append(*seen, v);
}

static void
test_debug_goes_to_the_callback(void)
{
	jv seen = jv_array();
	struct art_decide_conf c = { .program = ".decision_id | debug | "
	    "{state: .}", .vars = jv_null(), .debug = debug_seen,
	    .debug_arg = &seen };
	struct art_decide *d;
	struct art_err err;

	d = art_decide_new(&c, NULL, &err);
	ok(gives(d, REQ("d1", ""), ART_DECIDE_ANSWER, NULL) &&
	    is_json(seen, "[\"d1\"]"), "debug hands its value over");
	art_decide_free(d);
}

/* The reader's filter: requests are parsed, the rest pass by raw. */
static void
test_only_requests_are_wanted(void)
{
	ok(art_decide_wants("decision.request", "tool.execute", NULL) &&
	    art_decide_wants("decision.request", "", NULL) &&
	    !art_decide_wants("llm.request", "", NULL) &&
	    !art_decide_wants("decision.response", "", NULL),
	    "decision.request lines are wanted, whatever the trigger; no other");
}

int
main(void)
{
	test_proposal_is_the_answer();
	test_answer_puts_type_and_ids_first();
	test_empty_proposals_pass();
	test_other_lines_pass();
	test_bad_requests_fail();
	test_program_answers_with_its_first_value();
	test_response_members_are_checked();
	test_null_and_empty_pass();
	test_runtime_errors_are_error_lines();
	test_error_lines_quote_the_raw_request();
	test_values_that_are_not_objects_are_bad_responses();
	test_halt();
	test_input_is_not_available();
	test_vars_and_args();
	test_env_is_visible();
	test_compile_errors_keep_every_message();
	test_import_is_a_compile_error();
	test_agent_filter();
	test_debug_goes_to_the_callback();

	test_only_requests_are_wanted();
	return tap_done();
}
