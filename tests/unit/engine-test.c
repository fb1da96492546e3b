/* engine-test - the engine through its public side: lines in, lines out */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "request.h"
#include "json.h"
#include "log.h"
#include "session.h"
#include "tap.h"
#include "testdb.h"
#include "testjv.h"

/*
 * A rig is a store, an id generator and an engine driving one session of
 * agent "calc", whose file config is the rig's config text.  Every step
 * collects what the engine handed out: the lines for the ring (out) and
 * the client events (events).
 */
struct rig {
	struct testdb		 db;
	struct art_ids		 ids;
	struct art_engine	*e;
	const char		*config;
	char			 sid[ART_ID_MAX + 1];
	jv			 out;		/* decision.requests made whole */
	jv			 raw;		/* as the ring carries them */
	jv			 events;
	struct art_err		 err;
};

static jv
J(const char *text)
{
	struct art_err err;
	jv v = art_json_parse_str(text, &err);

	if (!jv_is_valid(v)) {
		fprintf(stderr, "engine-test: bad JSON in the test:"
		    " %s\n", text);
		exit(99);
	}
	return v;
}

static jv
load_agent(void *ctx, const char *name, struct art_err *err)
{
	struct rig *r = ctx;

	if (strcmp(name, "calc") != 0) {
		art_err_set(err, "no_agent", "no agent '%s'", name);
		return jv_invalid();
	}
	return J(r->config);
}

/* A new engine on the rig's store; the old one, if any, is forgotten. */
static void
rig_engine(struct rig *r, long pid, const char *seed)
{
	struct art_engine_opts o = { 0 };

	if (art_ids_init(&r->ids, &r->db.clock, seed, &r->err) == -1)
		exit(99);
	o.store = r->db.st;
	o.ids = &r->ids;
	o.clock = &r->db.clock;
	o.load_agent = load_agent;
	o.agent_ctx = r;
	o.pid = pid;
	r->e = art_engine_new(&o);
	if (r->e == NULL)
		exit(99);
}

struct whole_ctx {
	jv	lines;
};

/* Each by-reference line read back as agentrt-decide reads it. */
static int
whole_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct whole_ctx *w = ctx;
	jv out = jv_array(), l;

	jv_array_foreach(w->lines, i, line) {
		if (jv_get_kind(line) == JV_KIND_STRING) {
			/* Text made from the last call's: the bytes must be
			 * what dumping the line whole gives. */
			jv v = jv_parse(jv_string_value(line)), made, w2;
			size_t n;
			char *d = art_json_dump(&v, &n);
			jv stored = art_store_get(t, ART_DB_REQUESTS,
			    art_json_str(&v, "session_id"), art_json_str(&v,
			    "id"), strlen(art_json_str(&v, "id")), NULL);

			made = art_request_llm(t, art_json_str(&v, "session_id"),
			    stored, err);
			/* Tools named by the config's version come back. */
			w2 = art_request_whole(t, &v, err);
			if (d == NULL || strcmp(d, jv_string_value(line)) != 0 ||
			    !jv_equal(jv_copy(made), art_json_field(&w2,
			    "request"))) {
				fprintf(stderr, "engine-test: a model request's "
				    "text is not its line's: %s\n",
				    jv_string_value(line));
				exit(99);
			}
			free(d);
			jv_free(made);
			jv_free(w2);
			jv_free(line);
			line = v;
		}
		l = art_request_whole(t, &line, err);
		jv_free(line);
		if (!jv_is_valid(l)) {
			jv_free(out);
			return -1;
		}
		out = jv_array_append(out, l);
		(void)i;
	}
	jv_free(w->lines);
	w->lines = out;
	return 0;
}

/*
 * Takes what the engine handed out since the last step: the lines as the
 * ring carries them (raw), and as a worker reads them (out).
 */
static void
take(struct rig *r)
{
	struct whole_ctx w;

	jv_free(r->out);
	jv_free(r->raw);
	jv_free(r->events);
	r->raw = art_engine_output(r->e);
	r->events = art_engine_events(r->e);
	w.lines = jv_copy(r->raw);
	if (art_store_read(r->db.st, whole_fn, &w, &r->err) == -1) {
		fprintf(stderr, "engine-test: %s\n", r->err.msg);
		exit(99);
	}
	r->out = w.lines;
}

static void
rig_open(struct rig *r, const char *config)
{
	memset(r, 0, sizeof(*r));
	r->config = config;
	r->out = jv_array();
	r->raw = jv_array();
	r->events = jv_array();
	testdb_open(&r->db, 0, 0);
	rig_engine(r, (long)getpid(), "engine-test");
}

/* Starts a new session of calc; the result of art_engine_start. */
static int
rig_start(struct rig *r)
{
	int rc = art_engine_start(r->e, NULL, "calc", r->sid, &r->err);

	take(r);
	return rc;
}

static void
rig_close(struct rig *r)
{
	art_engine_free(r->e);
	jv_free(r->out);
	jv_free(r->raw);
	jv_free(r->events);
	testdb_close(&r->db);
}

/* Feeds one line (consumed) to the engine; its result. */
static int
feed(struct rig *r, jv line)
{
	int rc = art_engine_input(r->e, r->sid, line, &r->err);

	take(r);
	return rc;
}

static int
send(struct rig *r, const char *text)
{
	return feed(r, J(text));
}

static int
tick(struct rig *r)
{
	int rc = art_engine_tick(r->e, &r->err);

	take(r);
	return rc;
}

/* The first line of type in what a list holds; jv_null() when none. */
static jv
first(const jv *list, const char *type)
{
	jv found = jv_null();

	jv_array_foreach(*list, i, l) {
		const char *t = art_json_str(&l, "type");

		if (jv_get_kind(found) == JV_KIND_NULL && t != NULL &&
		    strcmp(t, type) == 0) {
			jv_free(found);
			found = jv_copy(l);
		}
		jv_free(l);
	}
	return found;
}

/* The first output line of type; jv_null() when none. */
static jv
line(struct rig *r, const char *type)
{
	return first(&r->out, type);
}

/* How many output lines there are of type. */
static int
count(const jv *list, const char *type)
{
	int n = 0;

	jv_array_foreach(*list, i, l) {
		const char *t = art_json_str(&l, "type");

		if (t != NULL && strcmp(t, type) == 0)
			n++;
		jv_free(l);
	}
	return n;
}

/* A field path ("a.b.c") of v (borrowed); jv_null() where it ends. */
static jv
at(const jv *v, const char *path)
{
	char key[64];
	const char *dot;
	jv cur = jv_copy(*v), next;
	size_t n;

	while (*path != '\0') {
		dot = strchr(path, '.');
		n = dot != NULL ? (size_t)(dot - path) : strlen(path);
		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		if (jv_get_kind(cur) == JV_KIND_ARRAY && key[0] >= '0' &&
		    key[0] <= '9')
			next = jv_array_get(jv_copy(cur), atoi(key));
		else
			next = art_json_field(&cur, key);
		if (!jv_is_valid(next)) {
			jv_free(next);
			next = jv_null();
		}
		jv_free(cur);
		cur = next;
		path += n + (dot != NULL);
	}
	return cur;
}

/*
 * The messages (consumed) with the id of message i taken out, or null
 * when it has none: a message the engine recorded has one, which a test
 * cannot know beforehand.
 */
static jv
recorded_at(jv msgs, int i)
{
	jv m = jv_array_get(jv_copy(msgs), i);

	if (art_json_str(&m, "id") == NULL) {
		jv_free(m);
		jv_free(msgs);
		return jv_null();
	}
	return jv_array_set(msgs, i, jv_object_delete(m, jv_string("id")));
}

/* The string at path of v, copied to buf ("" when not a string). */
static const char *
str(const jv *v, const char *path, char *buf, size_t n)
{
	jv s = at(v, path);

	snprintf(buf, n, "%s", jv_get_kind(s) == JV_KIND_STRING ?
	    jv_string_value(s) : "");
	jv_free(s);
	return buf;
}

/* A decision.response to req (borrowed) holding the fields of text. */
static int
respond(struct rig *r, const jv *req, const char *text)
{
	jv resp = J(text);

	resp = jv_object_set(resp, jv_string("type"),
	    jv_string("decision.response"));
	resp = jv_object_set(resp, jv_string("decision_id"), at(req,
	    "decision_id"));
	return feed(r, resp);
}

/* Answers the decision req (borrowed) with what it proposed. */
static int
echo(struct rig *r, const jv *req)
{
	jv resp = at(req, "proposed");

	resp = jv_object_set(resp, jv_string("type"),
	    jv_string("decision.response"));
	resp = jv_object_set(resp, jv_string("decision_id"), at(req,
	    "decision_id"));
	return feed(r, resp);
}

struct logq {
	const char	*sid;
	jv		 out;
};

static int
log_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct logq *q = ctx;

	q->out = art_log_read(t, q->sid, 0, 0, err);
	return jv_is_valid(q->out) ? 0 : -1;
}

/* The payloads of every event recorded in the session, oldest first. */
static jv
payloads(struct rig *r)
{
	struct logq q = { r->sid, jv_invalid() };
	struct art_err err;
	jv out = jv_array();

	art_store_read(r->db.st, log_fn, &q, &err);
	jv_array_foreach(q.out, i, ev) {
		out = jv_array_append(out, art_json_field(&ev, "payload"));
		jv_free(ev);
	}
	jv_free(q.out);
	return out;
}

static int
nevents(struct rig *r)
{
	return jv_array_length(payloads(r));
}

/* The types of the events recorded after the first n. */
static jv
types_since(struct rig *r, int n)
{
	jv all = payloads(r), out = jv_array();

	jv_array_foreach(all, i, p) {
		if (i >= n)
			out = jv_array_append(out, art_json_field(&p, "type"));
		jv_free(p);
	}
	jv_free(all);
	return out;
}

/* The last recorded payload of type; jv_null() when none. */
static jv
last_of(struct rig *r, const char *type)
{
	jv all = payloads(r), found = jv_null();

	jv_array_foreach(all, i, p) {
		const char *t = art_json_str(&p, "type");

		if (t != NULL && strcmp(t, type) == 0) {
			jv_free(found);
			found = jv_copy(p);
		}
		jv_free(p);
	}
	jv_free(all);
	return found;
}

/* A field of the last recorded payload of type. */
static jv
recorded(struct rig *r, const char *type, const char *path)
{
	jv p = last_of(r, type), v = at(&p, path);

	jv_free(p);
	return v;
}

struct showq {
	const char	*sid;
	jv		 out;
};

static int
show_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct showq *q = ctx;

	q->out = art_session_show(t, q->sid, err);
	return jv_is_valid(q->out) ? 0 : -1;
}

/* A field of the session as `agentrt-session show` resolves it. */
static jv
shown(struct rig *r, const char *path)
{
	struct showq q = { r->sid, jv_invalid() };
	struct art_err err;
	jv v;

	art_store_read(r->db.st, show_fn, &q, &err);
	v = at(&q.out, path);
	jv_free(q.out);
	return v;
}

/* Whether an event of type (and code, when not NULL) was handed out. */
static int
has_event(struct rig *r, const char *type, const char *code)
{
	int found = 0;

	jv_array_foreach(r->events, i, ev) {
		const char *t = art_json_str(&ev, "type");
		const char *c = art_json_str(&ev, "code");

		if (t != NULL && strcmp(t, type) == 0 && (code == NULL ||
		    (c != NULL && strcmp(c, code) == 0)))
			found = 1;
		jv_free(ev);
	}
	return found;
}

/* Prints what the engine handed out, for a failing test's log. */
static void __attribute__((unused))
dump(struct rig *r)
{
	jv s = jv_dump_string(jv_copy(r->out), 0);

	printf("# out: %s\n", jv_string_value(s));
	jv_free(s);
	s = jv_dump_string(jv_copy(r->events), 0);
	printf("# events: %s\n", jv_string_value(s));
	jv_free(s);
}

#define CONFIG "{\"model\":\"mock/calc\",\"system\":\"be brief\"," \
	"\"tools\":[{\"name\":\"add\",\"description\":\"a + b\"," \
	"\"input\":{\"type\":\"object\"}}]}"
#define CONFIG_RETRY "{\"model\":\"mock/calc\",\"retry\":{\"timeout_secs\":180," \
	"\"max_retries\":2,\"backoff_base_secs\":0,\"backoff_max_secs\":30}}"
#define HI "{\"type\":\"client.message\",\"agent_id\":\"calc\"," \
	"\"message\":{\"role\":\"user\",\"content\":\"1+2?\"}}"
#define ADD_CALL "{\"id\":\"c1\",\"type\":\"function\",\"function\":" \
	"{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1,\\\"b\\\":2}\"}}"

static void
test_a_new_session_starts_with_session_start(void)
{
	char buf[ART_ID_MAX + 1];
	struct rig r;
	jv req;

	rig_open(&r, CONFIG);
	ok(rig_start(&r) == 0 && *r.sid != '\0', "a new session is started");
	ok(jv_array_length(jv_copy(r.out)) == 1, "one line goes out");
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger"), "{\"type\":\"session.start\"}"),
	    "a decision.request with trigger session.start");
	ok(is_json(at(&req, "proposed"), "{\"agent\":" CONFIG "}"),
	    "proposing the agent file's config");
	ok(strcmp(str(&req, "session_id", buf, sizeof(buf)), r.sid) == 0 &&
	    is_json(at(&req, "agent_id"), "\"calc\"") &&
	    is_json(at(&req, "attempts"), "1") &&
	    is_json(at(&req, "messages"), "[]") &&
	    is_json(at(&req, "agent"), "null") &&
	    is_json(at(&req, "calls"), "[]") &&
	    is_json(at(&req, "pending_calls"), "0") &&
	    is_json(at(&req, "turn_id"), "null") &&
	    is_json(at(&req, "ancestry"), "[]"),
	    "the rest of a first DecisionRequest");
	ok(is_json(at(&req, "deadline"), "\"2026-01-02T03:09:05.000Z\""),
	    "its deadline is the decision's 300 s");
	ok(echo(&r, &req) == 0, "echoing it is accepted");
	ok(is_json(last_of(&r, "agent.updated"), "{\"type\":\"agent.updated\","
	    "\"config\":" CONFIG ",\"anchor\":null}"),
	    "agent.updated records the config, anchored at null");
	ok(is_json(shown(&r, "config"), CONFIG), "the config resolves");
	ok(jv_array_length(jv_copy(r.out)) == 0, "and nothing more goes out");
	jv_free(req);
	rig_close(&r);
}

static void
test_an_unknown_agent_starts_nothing(void)
{
	struct rig r;
	char sid[ART_ID_MAX + 1];

	rig_open(&r, CONFIG);
	ok(art_engine_start(r.e, NULL, "nope", sid, &r.err) == -1 &&
	    art_err_is(&r.err, "no_agent"), "the loader's error is returned");
	ok(art_engine_start(r.e, "no-such-session", NULL, sid, &r.err) == -1 &&
	    art_err_is(&r.err, "not_found"),
	    "an unknown session without an agent is not_found");
	rig_close(&r);
}

/*
 * The whole loop of an engine-hosted agent, by echoing every proposal:
 * a message, the model asks for a tool, the tool answers, the model
 * answers, the turn completes.
 */
static void
test_a_turn_runs_the_tool_loop(void)
{
	char id[ART_ID_MAX + 1], llm1[ART_ID_MAX + 1], llm2[ART_ID_MAX + 1];
	char want[2048], tid[ART_ID_MAX + 1];
	struct rig r;
	int n;
	jv req, l;

	rig_open(&r, CONFIG);
	rig_start(&r);
	req = line(&r, "decision.request");
	n = nevents(&r);
	ok(send(&r, HI) == 0, "a client.message is taken");
	ok(is_json(types_since(&r, n), "[\"turn.started\","
	    "\"decision.queued\"]"),
	    "it starts a turn and queues its decision");
	ok(has_event(&r, "turn.started", NULL), "clients see turn.started");
	ok(jv_array_length(jv_copy(r.out)) == 0,
	    "nothing goes out while session.start is live");

	/* session.start answered: the client.messages decision goes out. */
	echo(&r, &req);
	jv_free(req);
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.type"), "\"client.messages\"") &&
	    is_json(at(&req, "trigger.new_from"), "0"),
	    "then the client.messages decision goes out, new_from = 0");
	str(&req, "trigger.messages.0.id", id, sizeof(id));
	ok(*id != '\0', "the message was composed with a minted id");
	str(&req, "turn_id", tid, sizeof(tid));
	ok(*tid != '\0', "the request names the running turn");
	snprintf(want, sizeof(want), "{\"messages\":[{\"id\":\"%s\",\"role\":"
	    "\"user\",\"content\":\"1+2?\"}],\"actions\":[{\"type\":"
	    "\"llm.call\","
	    "\"model\":\"mock/calc\",\"messages\":[{\"role\":\"system\","
	    "\"content\":\"be brief\"},{\"id\":\"%s\",\"role\":\"user\","
	    "\"content\":\"1+2?\"}],\"tools\":[{\"name\":\"add\","
	    "\"description\":"
	    "\"a + b\",\"input\":{\"type\":\"object\"}}],\"stream\":false,"
	    "\"handler\":\"server\"}]}", id, id);
	ok(is_json(at(&req, "proposed"), want), "proposing the model call");

	/* Echoed: the message is recorded and the model is called. */
	ok(echo(&r, &req) == 0, "echoing it is accepted");
	jv_free(req);
	l = line(&r, "llm.request");
	str(&l, "id", llm1, sizeof(llm1));
	snprintf(want, sizeof(want), "{\"model\":\"mock/calc\",\"messages\":["
	    "{\"role\":\"system\",\"content\":\"be brief\"},{\"id\":\"%s\","
	    "\"role\":\"user\",\"content\":\"1+2?\"}],\"tools\":[{\"name\":"
	    "\"add\",\"description\":\"a + b\",\"input\":{\"type\":"
	    "\"object\"}}]}",
	    id);
	ok(*llm1 != '\0' && is_json(at(&l, "request"), want),
	    "an llm.request goes out: model, system prompt first, tools");
	ok(is_json(at(&l, "attempt"), "1") && is_json(at(&l, "stream"),
	    "false") && is_json(at(&l, "deadline"),
	    "\"2026-01-02T03:07:05.000Z\""),
	    "attempt 1, not streamed, due in 180 s");
	ok(strcmp(str(&l, "session_id", want, sizeof(want)), r.sid) == 0,
	    "the line names the session");
	jv_free(l);
	snprintf(want, sizeof(want), "\"%s\"", id);
	ok(is_json(shown(&r, "head"), want), "the message is recorded: the "
	    "head is its node");

	/* The model asks for add. */
	snprintf(want, sizeof(want), "{\"type\":\"llm.result\",\"id\":\"%s\","
	    "\"attempt\":1,\"response\":{\"model\":\"mock/calc\","
	    "\"tool_calls\":[" ADD_CALL "]}}", llm1);
	ok(send(&r, want) == 0, "the model's answer is taken");
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.type"), "\"llm.finished\"") &&
	    is_json(at(&req, "trigger.ok"), "true"),
	    "an llm.finished decision goes out");
	ok(is_json(at(&req, "proposed.actions"), "[{\"type\":\"tool.call\","
	    "\"id\":\"c1\",\"name\":\"add\",\"arguments\":"
	    "\"{\\\"a\\\":1,\\\"b\\\":2}\"}]"), "proposing the tool call");
	ok(echo(&r, &req) == 0, "echoed");
	jv_free(req);
	ok(is_json(recorded(&r, "tool.call.requested", "name"),
	    "\"add\""), "tool.call.requested is recorded");
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger"), "{\"type\":\"tool.execute\",\"id\":"
	    "\"c1\",\"name\":\"add\",\"arguments\":\"{\\\"a\\\":1,\\\"b\\\":"
	    "2}\","
	    "\"input\":{\"status\":\"valid\",\"value\":{\"a\":1,\"b\":2}},"
	    "\"attempt\":1,\"deadline\":\"2026-01-02T03:06:05.000Z\"}"),
	    "a tool.execute decision goes out, due in 120 s");
	ok(is_json(at(&req, "proposed"), "{}"), "proposing nothing");
	ok(is_json(at(&req, "pending_calls"), "1") &&
	    is_json(at(&req, "calls.0.id"), "\"c1\"") &&
	    is_json(at(&req, "calls.0.status"), "\"pending\""),
	    "the call is pending and counted");

	/* The worker leaves it open, and settles it later. */
	ok(respond(&r, &req, "{}") == 0 && jv_array_length(jv_copy(r.out)) ==
	    0, "an empty answer leaves the call open");
	jv_free(req);
	ok(send(&r, "{\"type\":\"tool.result\",\"id\":\"c1\",\"result\":\"3\"}")
	    == 0, "a tool.result line settles it");
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger"), "{\"type\":\"tool.finished\",\"id\":"
	    "\"c1\",\"name\":\"add\",\"ok\":true,\"result\":\"3\"}"),
	    "a tool.finished decision goes out");
	ok(echo(&r, &req) == 0, "echoed");
	jv_free(req);
	l = line(&r, "llm.request");
	str(&l, "id", llm2, sizeof(llm2));
	snprintf(want, sizeof(want), "[{\"role\":\"system\",\"content\":"
	    "\"be brief\"},{\"id\":\"%s\",\"role\":\"user\",\"content\":"
	    "\"1+2?\"},{\"id\":\"%s\",\"role\":\"assistant\",\"tool_calls\":["
	    ADD_CALL "]},{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"name\":"
	    "\"add\",\"content\":\"3\"}]", id, llm1);
	/* The recorded messages, as the default call sends them: the tool
	 * message with its id too. */
	ok(*llm2 != '\0' && strcmp(llm1, llm2) != 0 &&
	    is_json(recorded_at(at(&l, "request.messages"), 3), want),
	    "the model is called again: the stored prompt, the reply, the "
	    "tool message");
	jv_free(l);

	/* The model answers: done. */
	snprintf(want, sizeof(want), "{\"type\":\"llm.result\",\"id\":\"%s\","
	    "\"response\":{\"model\":\"mock/calc\",\"content\":\"3\"}}", llm2);
	send(&r, want);
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "proposed.actions"), "[{\"type\":\"done\","
	    "\"data\":\"3\"}]"), "the llm.finished decision proposes done");
	ok(echo(&r, &req) == 0, "echoed");
	jv_free(req);
	ok(is_json(recorded(&r, "turn.completed", "data"), "\"3\""),
	    "turn.completed with the answer");
	ok(has_event(&r, "completion", NULL), "clients see the completion");
	ok(art_engine_state(r.e, &r.err) == ART_ENGINE_DONE, "state DONE");
	ok(is_json(shown(&r, "turn_status"), "\"completed\""),
	    "the turn is completed");
	ok(jv_array_length(shown(&r, "calls")) == 0, "no call is left open");
	rig_close(&r);
}

/*
 * Runs a fresh session up to its first model call: session.start and
 * client.messages echoed.  The call's id is copied to llm.
 */
static void
to_llm_request(struct rig *r, const char *msg, char *llm, size_t n)
{
	jv req, l;

	rig_start(r);
	req = line(r, "decision.request");
	send(r, msg);
	echo(r, &req);
	jv_free(req);
	req = line(r, "decision.request");
	echo(r, &req);
	jv_free(req);
	l = line(r, "llm.request");
	str(&l, "id", llm, n);
	jv_free(l);
}

/* Settles model call llm with a plain answer and echoes the done. */
static void
finish_turn(struct rig *r, const char *llm, const char *content)
{
	char text[512];
	jv req;

	snprintf(text, sizeof(text), "{\"type\":\"llm.result\",\"id\":\"%s\","
	    "\"response\":{\"model\":\"mock/calc\",\"content\":\"%s\"}}", llm,
	    content);
	send(r, text);
	req = line(r, "decision.request");
	echo(r, &req);
	jv_free(req);
}

static void
test_a_response_to_a_decision_not_live_is_stale(void)
{
	struct rig r;
	jv req;
	int n;

	rig_open(&r, CONFIG);
	rig_start(&r);
	req = line(&r, "decision.request");
	echo(&r, &req);
	n = nevents(&r);
	ok(respond(&r, &req, "{\"agent\":{\"model\":\"other\"},\"messages\":"
	    "[{\"role\":\"user\",\"content\":\"x\"}]}") == 0,
	    "a second answer to session.start is taken");
	ok(has_event(&r, "error", "stale_response"),
	    "and reported: stale_response");
	ok(is_json(types_since(&r, n), "[\"error\"]"),
	    "only the error is recorded");
	ok(is_json(shown(&r, "config.model"), "\"mock/calc\"") &&
	    is_json(shown(&r, "nodes"), "0"), "nothing of it was applied");
	n = nevents(&r);
	send(&r, "{\"type\":\"decision.response\",\"decision_id\":\"made-up\","
	    "\"actions\":[{\"type\":\"done\"}]}");
	ok(has_event(&r, "error", "stale_response") &&
	    is_json(types_since(&r, n), "[\"error\"]"),
	    "an id never issued: the same");
	n = nevents(&r);
	send(&r, "{\"type\":\"decision.response\",\"actions\":[]}");
	ok(has_event(&r, "error", "stale_response") &&
	    is_json(types_since(&r, n), "[\"error\"]"),
	    "no decision_id: the same");
	jv_free(req);
	rig_close(&r);
}

static void
test_a_settle_must_name_a_pending_call_and_its_attempt(void)
{
	char llm[ART_ID_MAX + 1], text[512];
	struct rig r;
	int n;

	rig_open(&r, CONFIG);
	to_llm_request(&r, HI, llm, sizeof(llm));
	n = nevents(&r);
	ok(send(&r, "{\"type\":\"llm.result\",\"id\":\"nope\",\"response\":"
	    "{\"content\":\"3\"}}") == 0 && has_event(&r, "error",
	    "stale_settle"), "a settle for an unknown call: an error event");
	ok(is_json(types_since(&r, n), "[\"error\"]"), "and nothing else");
	snprintf(text, sizeof(text), "{\"type\":\"llm.result\",\"id\":\"%s\","
	    "\"attempt\":2,\"response\":{\"content\":\"3\"}}", llm);
	n = nevents(&r);
	ok(send(&r, text) == 0 && has_event(&r, "error", "stale_settle") &&
	    is_json(types_since(&r, n), "[\"error\"]"),
	    "a settle for another attempt: an error event, nothing else");
	snprintf(text, sizeof(text), "{\"type\":\"tool.result\",\"id\":\"%s\","
	    "\"result\":\"3\"}", llm);
	n = nevents(&r);
	ok(send(&r, text) == 0 && has_event(&r, "error", "stale_settle") &&
	    is_json(types_since(&r, n), "[\"error\"]"),
	    "a tool settle naming a model call: refused");
	ok(is_json(shown(&r, "calls.0.status"), "\"pending\""),
	    "the call is still pending");
	send(&r, "{\"type\":\"llm.result\",\"response\":{}}");
	ok(has_event(&r, "error", "bad_input"), "a settle without an id: "
	    "bad_input");
	snprintf(text, sizeof(text), "{\"type\":\"llm.result\",\"id\":\"%s\","
	    "\"attempt\":1,\"response\":\"3\"}", llm);
	send(&r, text);
	ok(has_event(&r, "error", "bad_input") && is_json(shown(&r,
	    "calls.0.status"), "\"pending\""),
	    "a response that is not an object: bad_input");
	snprintf(text, sizeof(text), "{\"type\":\"llm.result\",\"id\":\"%s\","
	    "\"attempt\":1,\"response\":{\"content\":\"3\"}}", llm);
	ok(send(&r, text) == 0 && !has_event(&r, "error", NULL),
	    "the right attempt is taken");
	n = nevents(&r);
	send(&r, text);
	ok(has_event(&r, "error", "stale_settle") &&
	    is_json(types_since(&r, n), "[\"error\"]"),
	    "a second settle of a completed call: refused");
	rig_close(&r);
}

static void
test_a_rejected_response_fails_the_turn(void)
{
	char text[1024], id[ART_ID_MAX + 1];
	struct rig r;
	jv req;
	int n;

	rig_open(&r, CONFIG);
	rig_start(&r);
	req = line(&r, "decision.request");
	send(&r, HI);
	echo(&r, &req);
	jv_free(req);
	req = line(&r, "decision.request");
	str(&req, "trigger.messages.0.id", id, sizeof(id));
	n = nevents(&r);
	snprintf(text, sizeof(text), "{\"messages\":[{\"id\":\"%s\",\"role\":"
	    "\"user\",\"content\":\"1+2?\"},{\"role\":\"assistant\","
	    "\"content\":"
	    "\"hm\"}],\"state\":{\"n\":1},\"agent\":{\"model\":\"other\"},"
	    "\"actions\":[{\"type\":\"llm.call\"},{\"type\":"
	    "\"teleport\"}]}", id);
	ok(respond(&r, &req, text) == 0, "a response with an unknown action "
	    "is taken (not a store failure)");
	jv_free(req);
	ok(is_json(types_since(&r, n), "[\"decision.errored\",\"error\","
	    "\"turn.completed\",\"session.done\"]"),
	    "decision.errored, an error, the turn completed with the error");
	ok(is_json(recorded(&r, "decision.errored", "retryable"), "false"),
	    "the decision failed for good");
	ok(has_event(&r, "error", "bad_response") &&
	    has_event(&r, "error", "decision_error"),
	    "clients see why");
	ok(is_json(recorded(&r, "error", "message"),
	    "\"unsupported action 'teleport'\""), "naming the action");
	ok(is_json(shown(&r, "nodes"), "0") && is_json(shown(&r, "state"),
	    "null") && is_json(shown(&r, "config.model"), "\"mock/calc\"") &&
	    is_json(shown(&r, "calls"), "[]"),
	    "nothing of the response was applied: no message, state, config "
	    "or call");
	ok(art_engine_state(r.e, &r.err) == ART_ENGINE_FAILED, "state FAILED");
	ok(is_json(shown(&r, "turn_status"), "\"failed\""), "the turn failed");
	ok(jv_array_length(jv_copy(r.out)) == 0, "nothing goes out");
	rig_close(&r);
}

static void
test_an_llm_call_without_a_model_is_rejected(void)
{
	struct rig r;
	jv req;

	rig_open(&r, CONFIG);
	rig_start(&r);
	req = line(&r, "decision.request");
	send(&r, HI);
	respond(&r, &req, "{}");
	jv_free(req);
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "agent"), "null") && is_json(at(&req, "proposed"),
	    "{}"), "session.start left unconfigured: client.messages "
	    "proposes nothing");
	respond(&r, &req, "{\"actions\":[{\"type\":\"llm.call\"}]}");
	jv_free(req);
	ok(has_event(&r, "error", "bad_response"), "an llm.call with no model "
	    "anywhere is refused");
	ok(art_engine_state(r.e, &r.err) == ART_ENGINE_FAILED &&
	    is_json(shown(&r, "calls"), "[]"), "the turn failed, no call made");
	rig_close(&r);
}

static void
test_an_action_retry_missing_a_member_is_rejected(void)
{
	struct rig r;
	jv req;

	rig_open(&r, CONFIG);
	rig_start(&r);
	req = line(&r, "decision.request");
	echo(&r, &req);
	jv_free(req);
	send(&r, HI);
	req = line(&r, "decision.request");
	respond(&r, &req, "{\"actions\":[{\"type\":\"llm.call\",\"retry\":"
	    "{\"max_retries\":1,\"backoff_base_secs\":0,"
	    "\"backoff_max_secs\":0}}]}");
	jv_free(req);
	ok(has_event(&r, "error", "bad_response") && is_json(recorded(&r,
	    "error", "message"), "\"retry: missing member 'timeout_secs' (a "
	    "RetryPolicy has all four of timeout_secs, max_retries, "
	    "backoff_base_secs and backoff_max_secs)\""),
	    "a RetryPolicy without timeout_secs is refused, naming it");
	ok(art_engine_state(r.e, &r.err) == ART_ENGINE_FAILED &&
	    is_json(shown(&r, "calls"), "[]"), "the decision failed, no call "
	    "made");
	rig_close(&r);
}

static void
test_a_completed_turn_id_runs_nothing(void)
{
	char llm[ART_ID_MAX + 1];
	struct rig r;
	jv req;
	int n;

	rig_open(&r, CONFIG);
	to_llm_request(&r, "{\"type\":\"client.message\",\"agent_id\":\"calc\","
	    "\"turn_id\":\"t1\",\"message\":{\"role\":\"user\",\"content\":"
	    "\"1+2?\"}}", llm, sizeof(llm));
	finish_turn(&r, llm, "3");
	ok(is_json(shown(&r, "turn_status"), "\"completed\""), "turn t1 done");
	n = nevents(&r);
	ok(send(&r, "{\"type\":\"client.message\",\"agent_id\":\"calc\","
	    "\"turn_id\":\"t1\",\"message\":{\"role\":\"user\",\"content\":"
	    "\"again\"}}") == 0, "t1 sent again is taken");
	ok(nevents(&r) == n, "no turn starts, nothing is recorded");
	ok(jv_array_length(jv_copy(r.out)) == 0, "nothing goes out");
	req = first(&r.events, "completion");
	ok(is_json(at(&req, "text"), "\"3\"") && is_json(at(&req, "turn_id"),
	    "\"t1\""), "the completion is reported again");
	jv_free(req);
	ok(send(&r, "{\"type\":\"client.message\",\"agent_id\":\"calc\","
	    "\"turn_id\":\"t2\",\"message\":{\"role\":\"user\",\"content\":"
	    "\"times 2?\"}}") == 0 && has_event(&r, "turn.started", NULL),
	    "a new turn_id starts a turn");
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.new_from"), "2") &&
	    jv_array_length(at(&req, "trigger.messages")) == 3 &&
	    is_json(at(&req, "trigger.messages.2.content"), "\"times 2?\"") &&
	    is_json(at(&req, "turn_id"), "\"t2\""),
	    "composed against the path: new_from = its length");
	jv_free(req);
	rig_close(&r);
}

static void
test_a_second_message_during_a_turn_is_refused(void)
{
	struct rig r;
	int n;

	rig_open(&r, CONFIG);
	rig_start(&r);
	send(&r, HI);
	n = nevents(&r);
	ok(send(&r, HI) == 0 && has_event(&r, "error", "turn_already_active"),
	    "a second client.message: turn_already_active");
	ok(is_json(types_since(&r, n), "[\"error\"]"),
	    "no turn started, nothing queued");
	ok(send(&r, "{\"type\":\"client.messages\",\"agent_id\":\"calc\","
	    "\"messages\":[]}") == 0 && has_event(&r, "error",
	    "turn_already_active"), "client.messages too");
	rig_close(&r);
}

static void
test_bad_lines_become_error_events(void)
{
	struct rig r;
	int n;

	rig_open(&r, CONFIG);
	rig_start(&r);
	n = nevents(&r);
	ok(send(&r, "{\"type\":\"teleport\"}") == 0 &&
	    has_event(&r, "error", "unknown_type"), "an unknown type");
	ok(send(&r, "{\"no\":\"type\"}") == 0 && has_event(&r, "error",
	    "no_type"), "no type");
	ok(send(&r, "{\"type\":\"client.message\\u0000x\","
	    "\"agent_id\":\"calc\",\"message\":{\"role\":\"user\","
	    "\"content\":\"hi\"}}") == 0 && has_event(&r, "error",
	    "bad_type"), "a type holding a NUL: no client.message");
	ok(send(&r, "{\"type\":\"client.message\",\"agent_id\":\"calc\","
	    "\"message\":{\"role\":\"robot\"}}") == 0 && has_event(&r, "error",
	    "bad_input"), "a message with a bad role");
	ok(is_json(types_since(&r, n), "[\"error\",\"error\",\"error\","
	    "\"error\"]"),
	    "each is recorded as an error event, and nothing starts");
	rig_close(&r);
}

/* The rig's engine is dropped as a killed driver would leave it. */
static void
crash(struct rig *r)
{
	art_engine_free(r->e);
	r->e = NULL;
}

/* A second engine takes the session over; art_engine_start's result. */
static int
restart(struct rig *r, long pid, const char *seed)
{
	char sid[ART_ID_MAX + 1];
	int rc;

	rig_engine(r, pid, seed);
	rc = art_engine_start(r->e, r->sid, NULL, sid, &r->err);
	take(r);
	return rc;
}

/*
 * A driver that is gone: above Linux's PID_MAX_LIMIT (2^22) and the BSDs'
 * 99999, so no process can have it.
 */
#define DEAD_PID	99999999L

static void
test_a_restart_delivers_the_live_decision_again(void)
{
	char did[ART_ID_MAX + 1], again[ART_ID_MAX + 1];
	struct rig r;
	jv req, ev;

	rig_open(&r, CONFIG);
	crash(&r);
	rig_engine(&r, DEAD_PID, "engine-test");
	rig_start(&r);
	req = line(&r, "decision.request");
	str(&req, "decision_id", did, sizeof(did));
	jv_free(req);
	crash(&r);
	ok(restart(&r, (long)getpid(), "engine-test-2") == 0,
	    "a second engine takes over from a dead driver");
	req = line(&r, "decision.request");
	ok(strcmp(str(&req, "decision_id", again, sizeof(again)), did) == 0 &&
	    is_json(at(&req, "trigger.type"), "\"session.start\""),
	    "the live decision is sent again");
	ok(is_json(at(&req, "attempts"), "2"), "with attempts 2");
	ok(is_json(at(&req, "proposed"), "{\"agent\":" CONFIG "}"),
	    "proposing the same");
	ev = last_of(&r, "decision.errored");
	ok(is_json(at(&ev, "error"), "\"dispatch lost on engine restart\"") &&
	    is_json(at(&ev, "retryable"), "true"),
	    "the lost delivery is recorded, retryably");
	jv_free(ev);
	ok(echo(&r, &req) == 0 && is_json(shown(&r, "config.model"),
	    "\"mock/calc\""), "and answering it works");
	jv_free(req);
	rig_close(&r);
}

static void
test_a_restart_retries_a_lost_model_call(void)
{
	char llm[ART_ID_MAX + 1], text[512];
	struct rig r;
	jv l, ev;

	rig_open(&r, CONFIG_RETRY);
	crash(&r);
	rig_engine(&r, DEAD_PID, "engine-test");
	to_llm_request(&r, HI, llm, sizeof(llm));
	ok(*llm != '\0', "a model call is out");
	crash(&r);
	ok(restart(&r, (long)getpid(), "engine-test-2") == 0, "taken over");
	ev = last_of(&r, "llm.call.errored");
	ok(is_json(at(&ev, "error"), "\"dispatch lost on engine restart\"") &&
	    is_json(at(&ev, "retryable"), "true") &&
	    is_json(at(&ev, "attempt"), "1"),
	    "llm.call.errored: dispatch lost on engine restart");
	jv_free(ev);
	l = line(&r, "llm.request");
	ok(strcmp(str(&l, "id", text, sizeof(text)), llm) == 0 &&
	    is_json(at(&l, "attempt"), "2"),
	    "the call goes out again at once (backoff base 0), attempt 2");
	jv_free(l);
	snprintf(text, sizeof(text), "{\"type\":\"llm.result\",\"id\":\"%s\","
	    "\"attempt\":1,\"response\":{\"content\":\"3\"}}", llm);
	send(&r, text);
	ok(has_event(&r, "error", "stale_settle"),
	    "a late answer to attempt 1 is refused");
	snprintf(text, sizeof(text), "{\"type\":\"llm.result\",\"id\":\"%s\","
	    "\"attempt\":2,\"response\":{\"content\":\"3\"}}", llm);
	send(&r, text);
	l = line(&r, "decision.request");
	ok(is_json(at(&l, "trigger.type"), "\"llm.finished\""),
	    "attempt 2's answer is taken");
	jv_free(l);
	rig_close(&r);
}

static void
test_a_restart_with_no_retry_left_fails_the_call(void)
{
	char llm[ART_ID_MAX + 1];
	struct rig r;
	jv req;

	rig_open(&r, "{\"model\":\"mock/calc\",\"retry\":{\"timeout_secs\":180,"
	    "\"max_retries\":0,\"backoff_base_secs\":2,\"backoff_max_secs\":30}}");
	crash(&r);
	rig_engine(&r, DEAD_PID, "engine-test");
	to_llm_request(&r, HI, llm, sizeof(llm));
	crash(&r);
	restart(&r, (long)getpid(), "engine-test-2");
	ok(count(&r.out, "llm.request") == 0, "no retry goes out");
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.type"), "\"llm.finished\"") &&
	    is_json(at(&req, "trigger.ok"), "false") &&
	    is_json(at(&req, "trigger.error"),
	    "\"dispatch lost on engine restart\""),
	    "llm.finished ok:false goes to the worker");
	ok(is_json(at(&req, "proposed.actions.0.type"), "\"interrupt\"") &&
	    is_json(at(&req, "proposed.actions.0.payload.type"),
	    "\"llm.failed\""), "proposing an llm.failed interrupt");
	echo(&r, &req);
	jv_free(req);
	ok(art_engine_state(r.e, &r.err) == ART_ENGINE_PARKED,
	    "echoed: the session is parked");
	rig_close(&r);
}

/*
 * A loader that lets another engine (the rig's) make and drive session
 * "race" first, as a second ring started on the same -s id would between
 * our look and our write.
 */
static jv
racing_loader(void *ctx, const char *name, struct art_err *err)
{
	struct rig *r = ctx;
	char sid[ART_ID_MAX + 1];

	if (art_engine_start(r->e, "race", name, sid, err) == -1)
		return jv_invalid();
	return J(r->config);
}

static void
test_a_raced_start_names_the_driver(void)
{
	struct art_engine_opts o = { 0 };
	struct art_engine *b;
	struct art_ids ids;
	char sid[ART_ID_MAX + 1];
	struct rig r;

	rig_open(&r, CONFIG);
	if (art_ids_init(&ids, &r.db.clock, "engine-test-race", &r.err) == -1)
		exit(99);
	o.store = r.db.st;
	o.ids = &ids;
	o.clock = &r.db.clock;
	o.load_agent = racing_loader;
	o.agent_ctx = &r;
	o.pid = (long)getpid() + 1;
	if ((b = art_engine_new(&o)) == NULL)
		exit(99);
	ok(art_engine_start(b, "race", "calc", sid, &r.err) == -1 &&
	    art_err_is(&r.err, "busy") && strstr(r.err.msg,
	    "driven by process") != NULL,
	    "a session made by another run meanwhile: its driver is named");
	art_engine_free(b);
	take(&r);
	rig_close(&r);
}

static void
test_a_live_driver_keeps_its_session(void)
{
	char sid[ART_ID_MAX + 1];
	struct rig r;

	rig_open(&r, CONFIG);
	rig_start(&r);
	crash(&r);
	ok(restart(&r, (long)getpid() + 1, "engine-test-2") == -1 &&
	    art_err_is(&r.err, "busy"),
	    "a session whose driver lives is busy");
	ok(strstr(r.err.msg, "driven by process") != NULL,
	    "the message names the driver");
	ok(art_engine_stop(r.e, &r.err) == 0, "a stop's commit succeeds");
	crash(&r);
	rig_engine(&r, (long)getpid(), "engine-test-3");
	ok(art_engine_start(r.e, r.sid, NULL, sid, &r.err) == 0 &&
	    strcmp(sid, r.sid) == 0, "the same pid takes it back");
	ok(art_engine_stop(r.e, &r.err) == 0 && art_engine_stop(r.e,
	    &r.err) == 0, "stopped twice: the second has nothing to do");
	crash(&r);
	ok(restart(&r, (long)getpid() + 1, "engine-test-4") == 0,
	    "after a stop, anyone may take it");
	rig_close(&r);
}

/* Pins the rig's clock (the store's and the engine's) at a later time. */
static void
clock_at(struct rig *r, const char *when)
{
	if (art_clock_init(&r->db.clock, when, &r->err) == -1)
		exit(99);
}

static int64_t
ms(const char *when)
{
	int64_t t = -1;

	art_clock_parse(when, &t, NULL);
	return t;
}

/* Whether the engine's wake time is when; prints both when not. */
static int
is_wake(struct rig *r, const char *when)
{
	char buf[ART_CLOCK_BUFSZ];
	int64_t w = art_engine_wake(r->e);

	if (w == ms(when))
		return 1;
	printf("#   got %s\n#  want %s\n", w >= 0 ? art_clock_format(w, buf) :
	    "-1", when);
	return 0;
}

static void
test_a_late_decision_is_delivered_again(void)
{
	char did[ART_ID_MAX + 1], buf[ART_ID_MAX + 1];
	struct rig r;
	jv req;

	rig_open(&r, CONFIG);
	rig_start(&r);
	req = line(&r, "decision.request");
	str(&req, "decision_id", did, sizeof(did));
	jv_free(req);
	ok(is_wake(&r, "2026-01-02T03:09:05Z"),
	    "the engine wakes at the decision's deadline");
	clock_at(&r, "2026-01-02T03:09:04Z");
	ok(tick(&r) == 0 && jv_array_length(jv_copy(r.out)) == 0,
	    "a tick before it does nothing");
	clock_at(&r, "2026-01-02T03:09:05Z");
	tick(&r);
	req = line(&r, "decision.request");
	ok(strcmp(str(&req, "decision_id", buf, sizeof(buf)), did) == 0 &&
	    is_json(at(&req, "attempts"), "2") && is_json(at(&req, "deadline"),
	    "\"2026-01-02T03:14:05.000Z\""),
	    "at the deadline it goes out again: attempts 2, a new deadline");
	ok(is_json(recorded(&r, "decision.errored", "error"),
	    "\"deadline exceeded\"") && is_json(recorded(&r,
	    "decision.errored", "retryable"), "true"),
	    "the lapse is recorded, retryably");
	jv_free(req);
	rig_close(&r);
}

static void
test_a_late_model_call_is_retried_after_its_backoff(void)
{
	char llm[ART_ID_MAX + 1];
	struct rig r;
	jv l;

	rig_open(&r, CONFIG);
	to_llm_request(&r, HI, llm, sizeof(llm));
	ok(is_wake(&r, "2026-01-02T03:07:05Z"),
	    "the engine wakes at the call's deadline (180 s)");
	clock_at(&r, "2026-01-02T03:07:05Z");
	tick(&r);
	ok(is_json(recorded(&r, "llm.call.errored", "code"),
	    "\"deadline_exceeded\"") && is_json(recorded(&r,
	    "llm.call.errored", "next_at"), "\"2026-01-02T03:07:07.000Z\""),
	    "the lapse fails the attempt; the retry is due after 2^1 s");
	ok(count(&r.out, "llm.request") == 0, "nothing goes out yet");
	ok(is_wake(&r, "2026-01-02T03:07:07Z"),
	    "the engine wakes for the retry");
	clock_at(&r, "2026-01-02T03:07:07Z");
	tick(&r);
	l = line(&r, "llm.request");
	ok(is_json(at(&l, "attempt"), "2") && is_json(at(&l, "deadline"),
	    "\"2026-01-02T03:10:07.000Z\""),
	    "then attempt 2 goes out with its own deadline");
	jv_free(l);
	rig_close(&r);
}

/* Runs to the tool.execute decision of the tool loop; leaves it in out. */
static void
to_tool_execute(struct rig *r, const char *tool_calls)
{
	char llm[ART_ID_MAX + 1], text[1024];
	jv req;

	to_llm_request(r, HI, llm, sizeof(llm));
	snprintf(text, sizeof(text), "{\"type\":\"llm.result\",\"id\":\"%s\","
	    "\"response\":{\"model\":\"mock/calc\",\"tool_calls\":%s}}", llm,
	    tool_calls);
	send(r, text);
	req = line(r, "decision.request");
	echo(r, &req);
	jv_free(req);
}

static void
test_a_late_worker_tool_fails_for_good(void)
{
	struct rig r;
	jv req;

	rig_open(&r, CONFIG);
	to_tool_execute(&r, "[" ADD_CALL "]");
	req = line(&r, "decision.request");
	respond(&r, &req, "{}");
	jv_free(req);
	clock_at(&r, "2026-01-02T03:06:05Z");
	tick(&r);
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger"), "{\"type\":\"tool.finished\",\"id\":"
	    "\"c1\",\"name\":\"add\",\"ok\":false,\"error\":"
	    "\"deadline exceeded\"}"),
	    "past 120 s a worker tool fails at once: tool.finished ok:false");
	ok(is_json(at(&req, "proposed.messages.2"), "{\"role\":\"tool\","
	    "\"tool_call_id\":\"c1\",\"name\":\"add\",\"content\":"
	    "\"deadline exceeded\"}"), "the error is what the model reads");
	jv_free(req);
	rig_close(&r);
}

static void
test_an_execute_answer_settles_its_own_call(void)
{
	struct rig r;
	jv req;

	rig_open(&r, CONFIG);
	to_tool_execute(&r, "[" ADD_CALL "]");
	req = line(&r, "decision.request");
	ok(respond(&r, &req, "{\"actions\":[{\"type\":\"tool.result\","
	    "\"result\":{\"sum\":3}}]}") == 0, "a tool.result without an id");
	jv_free(req);
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger"), "{\"type\":\"tool.finished\",\"id\":"
	    "\"c1\",\"name\":\"add\",\"ok\":true,\"result\":\"{\\\"sum\\\":"
	    "3}\"}"),
	    "settles the call the execute was for; JSON becomes text");
	ok(respond(&r, &req, "{\"actions\":[{\"type\":\"tool.result\","
	    "\"result\":\"3\"}]}") == 0 && has_event(&r, "error",
	    "bad_response"), "on a decision that is not an execute it is "
	    "refused (unresolvable settle id)");
	ok(art_engine_state(r.e, &r.err) == ART_ENGINE_FAILED,
	    "and the turn fails");
	jv_free(req);
	rig_close(&r);
}

/* Two tools at once: the first result waits for the second. */
static void
test_tool_results_wait_for_their_siblings(void)
{
	struct rig r;
	jv req, l;

	rig_open(&r, CONFIG);
	to_tool_execute(&r, "[" ADD_CALL ",{\"id\":\"c2\",\"type\":"
	    "\"function\","
	    "\"function\":{\"name\":\"add\",\"arguments\":\"{}\"}}]");
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.id"), "\"c1\"") &&
	    is_json(at(&req, "pending_calls"), "2"),
	    "c1's tool.execute first, both calls pending");
	respond(&r, &req, "{\"actions\":[{\"type\":\"tool.result\",\"result\":"
	    "\"3\"}]}");
	jv_free(req);
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.type"), "\"tool.execute\"") &&
	    is_json(at(&req, "trigger.id"), "\"c2\""), "then c2's");
	respond(&r, &req, "{\"actions\":[{\"type\":\"tool.result\",\"result\":"
	    "\"0\"}]}");
	jv_free(req);
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.type"), "\"tool.finished\"") &&
	    is_json(at(&req, "trigger.id"), "\"c1\"") &&
	    is_json(at(&req, "pending_calls"), "1"),
	    "c1's tool.finished counts c2's result not yet folded in");
	ok(is_json(at(&req, "proposed.actions"), "[]"),
	    "so it proposes no model call");
	echo(&r, &req);
	jv_free(req);
	ok(count(&r.out, "llm.request") == 0, "none is made");
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.id"), "\"c2\"") &&
	    is_json(at(&req, "pending_calls"), "0"),
	    "c2's tool.finished: nothing pending");
	echo(&r, &req);
	jv_free(req);
	l = line(&r, "llm.request");
	ok(is_json(at(&l, "request.messages.3.content"), "\"3\"") &&
	    is_json(at(&l, "request.messages.4.content"), "\"0\"") &&
	    jv_array_length(at(&l, "request.messages")) == 5,
	    "the model is called once, with both results");
	jv_free(l);
	rig_close(&r);
}

static void
test_a_client_tool_parks_until_the_client_answers(void)
{
	struct rig r;
	jv req;

	rig_open(&r, "{\"model\":\"mock/calc\",\"tools\":[{\"name\":\"ask\","
	    "\"handler\":\"client\"}]}");
	to_tool_execute(&r, "[{\"id\":\"k1\",\"type\":\"function\","
	    "\"function\":"
	    "{\"name\":\"ask\",\"arguments\":\"{}\"}}]");
	ok(count(&r.out, "decision.request") == 0,
	    "no tool.execute for a client-handled tool");
	ok(is_json(recorded(&r, "tool.call.requested", "handler"),
	    "\"client\""), "the call is frozen as client-handled");
	ok(is_json(recorded(&r, "tool.call.requested", "retry.timeout_secs"),
	    "null"), "with no deadline");
	ok(art_engine_state(r.e, &r.err) == ART_ENGINE_PARKED,
	    "the session is parked");
	send(&r, "{\"type\":\"tool.result\",\"id\":\"k1\",\"result\":\"yes\"}");
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.type"), "\"tool.finished\"") &&
	    is_json(at(&req, "trigger.result"), "\"yes\""),
	    "the client's answer finishes it");
	jv_free(req);
	rig_close(&r);
}

static void
test_state_is_written_only_when_it_changes(void)
{
	struct rig r;
	jv req;
	int n;

	rig_open(&r, CONFIG);
	rig_start(&r);
	req = line(&r, "decision.request");
	send(&r, HI);
	respond(&r, &req, "{\"agent\":" CONFIG ",\"state\":{\"n\":1}}");
	jv_free(req);
	ok(is_json(shown(&r, "state"), "{\"n\":1}") &&
	    is_json(recorded(&r, "worker.state.updated", "anchor"), "null"),
	    "a response's state is recorded");
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "state"), "{\"n\":1}"), "and sent with the next "
	    "decision");
	n = nevents(&r);
	respond(&r, &req, "{\"state\":{\"n\":1},\"agent\":" CONFIG "}");
	ok(is_json(types_since(&r, n), "[\"decision.completed\"]"),
	    "the same state and config again: nothing new recorded");
	jv_free(req);
	rig_close(&r);
}

static void
test_an_unanswered_request_fails_the_turn(void)
{
	char llm[ART_ID_MAX + 1];
	struct rig r;
	jv req;

	rig_open(&r, CONFIG);
	rig_start(&r);
	req = line(&r, "decision.request");
	send(&r, HI);
	ok(feed(&r, jv_copy(req)) == 0, "a decision.request comes back round "
	    "the ring");
	ok(is_json(recorded(&r, "decision.errored", "retryable"), "false") &&
	    is_json(recorded(&r, "turn.completed", "code"), "\"no_stage\"") &&
	    art_engine_state(r.e, &r.err) == ART_ENGINE_FAILED,
	    "no stage answered it: the decision and the turn fail");
	jv_free(req);
	rig_close(&r);

	rig_open(&r, CONFIG);
	to_llm_request(&r, HI, llm, sizeof(llm));
	req = line(&r, "llm.request");
	ok(feed(&r, jv_copy(req)) == 0, "an llm.request comes back too");
	jv_free(req);
	ok(count(&r.out, "llm.request") == 0 &&
	    count(&r.out, "decision.request") == 0 &&
	    is_json(recorded(&r, "turn.completed", "code"), "\"no_stage\"") &&
	    art_engine_state(r.e, &r.err) == ART_ENGINE_FAILED,
	    "an llm.request back: no model stage, the turn fails, and no "
	    "made-up result goes to the model");
	rig_close(&r);
}

/* A client view that edits the first message forks the conversation. */
static void
test_an_edited_view_forks_the_conversation(void)
{
	char llm[ART_ID_MAX + 1], u1[ART_ID_MAX + 1], text[1024];
	struct rig r;
	jv req, l;

	rig_open(&r, CONFIG);
	to_llm_request(&r, HI, llm, sizeof(llm));
	finish_turn(&r, llm, "3");
	req = payloads(&r);
	l = first(&req, "message.new");
	str(&l, "message.id", u1, sizeof(u1));
	jv_free(l);
	jv_free(req);
	snprintf(text, sizeof(text), "{\"type\":\"client.messages\","
	    "\"agent_id\":\"calc\",\"messages\":[{\"id\":\"%s\",\"role\":"
	    "\"user\",\"content\":\"1+2?\"},{\"role\":\"user\",\"content\":"
	    "\"no, 2+2\"}]}", u1);
	send(&r, text);
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.new_from"), "1"),
	    "new_from is the first message that is news");
	echo(&r, &req);
	jv_free(req);
	l = line(&r, "llm.request");
	snprintf(text, sizeof(text), "[{\"role\":\"system\",\"content\":"
	    "\"be brief\"},{\"id\":\"%s\",\"role\":\"user\",\"content\":"
	    "\"1+2?\"},{\"role\":\"user\",\"content\":\"no, 2+2\"}]", u1);
	ok(is_json(recorded_at(at(&l, "request.messages"), 2), text),
	    "the model sees the forked path, not the old reply");
	ok(is_json(shown(&r, "nodes"), "3"), "the old reply stays in the tree");
	jv_free(l);
	rig_close(&r);
}

static void
test_a_failed_model_call_interrupts_until_resumed(void)
{
	char llm[ART_ID_MAX + 1], text[512], iid[ART_ID_MAX + 1];
	struct rig r;
	jv req;

	rig_open(&r, CONFIG);
	to_llm_request(&r, HI, llm, sizeof(llm));
	snprintf(text, sizeof(text), "{\"type\":\"llm.error\",\"id\":\"%s\","
	    "\"error\":\"boom\",\"code\":\"provider_error\"}", llm);
	send(&r, text);
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.ok"), "false") &&
	    is_json(at(&req, "trigger.error"), "\"boom\"") &&
	    is_json(at(&req, "trigger.code"), "\"provider_error\""),
	    "a terminal llm.error: llm.finished ok:false");
	ok(is_json(at(&req, "proposed.actions.0.reason"),
	    "\"llm call failed: boom\""), "proposing an interrupt");
	echo(&r, &req);
	jv_free(req);
	ok(art_engine_state(r.e, &r.err) == ART_ENGINE_PARKED &&
	    has_event(&r, "status", NULL), "echoed: parked, clients told");
	ok(is_json(shown(&r, "turn_status"), "\"running\""),
	    "an interrupted turn is still running");
	req = last_of(&r, "session.interrupted");
	str(&req, "interrupt_id", iid, sizeof(iid));
	jv_free(req);
	send(&r, "{\"type\":\"interrupt.resume\",\"interrupt_id\":\"nope\"}");
	ok(has_event(&r, "error", "no_interrupt"), "an unknown interrupt: an "
	    "error event");
	snprintf(text, sizeof(text), "{\"type\":\"interrupt.resume\","
	    "\"interrupt_id\":\"%s\",\"payload\":{\"go\":true}}", iid);
	send(&r, text);
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.type"), "\"interrupt.resumed\"") &&
	    strcmp(str(&req, "trigger.interrupt_id", text, sizeof(text)), iid)
	    == 0 && is_json(at(&req, "trigger.payload"), "{\"go\":true}"),
	    "resuming it sends interrupt.resumed");
	ok(art_engine_state(r.e, &r.err) == ART_ENGINE_BUSY,
	    "no longer parked");
	jv_free(req);
	rig_close(&r);
}

static void
test_a_line_for_another_session_is_reported(void)
{
	struct rig r;
	int n;

	rig_open(&r, CONFIG);
	rig_start(&r);
	n = nevents(&r);
	ok(send(&r, "{\"type\":\"client.message\",\"session_id\":\"elsewhere\","
	    "\"agent_id\":\"calc\",\"message\":{\"role\":\"user\"}}") == 0 &&
	    has_event(&r, "error", "unknown_session"),
	    "a line naming a session the engine does not drive: an error");
	ok(is_json(types_since(&r, n), "[\"error\"]"), "and nothing else");
	rig_close(&r);
}

/*
 * One engine drives two sessions: the wake time is the earliest timer of
 * either, whichever session the last step was for.
 */
static void
test_the_wake_time_covers_every_session(void)
{
	char sid2[ART_ID_MAX + 1];
	struct rig r;

	rig_open(&r, CONFIG);
	rig_start(&r);
	clock_at(&r, "2026-01-02T03:05:00Z");
	ok(art_engine_start(r.e, NULL, "calc", sid2, &r.err) == 0,
	    "a second session starts a minute later");
	take(&r);
	ok(is_wake(&r, "2026-01-02T03:09:05Z"),
	    "the wake is the first session's deadline, the earlier");
	tick(&r);
	ok(is_wake(&r, "2026-01-02T03:09:05Z"), "after a tick too");
	rig_close(&r);
}

/*
 * PROTOCOL-NOTES §3: a response whose messages fork the conversation
 * voids the unsettled calls anchored off the new path.
 */
static void
test_a_fork_voids_calls_off_the_new_path(void)
{
	char text[1024], u1[ART_ID_MAX + 1];
	struct rig r;
	jv req, l;

	rig_open(&r, CONFIG);
	to_tool_execute(&r, "[" ADD_CALL ",{\"id\":\"c2\",\"type\":"
	    "\"function\","
	    "\"function\":{\"name\":\"add\",\"arguments\":\"{}\"}}]");
	req = payloads(&r);
	l = first(&req, "message.new");
	str(&l, "message.id", u1, sizeof(u1));
	jv_free(l);
	jv_free(req);
	req = line(&r, "decision.request");
	snprintf(text, sizeof(text), "{\"messages\":[{\"id\":\"%s\",\"role\":"
	    "\"user\",\"content\":\"1+2?\"},{\"role\":\"user\",\"content\":"
	    "\"never mind\"}]}", u1);
	respond(&r, &req, text);
	jv_free(req);
	ok(is_json(shown(&r, "calls"), "[]"),
	    "c1 and c2, anchored at the old reply, are voided");
	ok(count(&r.out, "decision.request") == 0,
	    "c2's queued tool.execute is dropped, not sent");
	rig_close(&r);
}

/*
 * A restart while a tool.execute is live sends it again; the worker's
 * answer to it must then be taken, not refused as stale.
 */
static void
test_a_restart_during_tool_execute_keeps_the_call(void)
{
	struct rig r;
	jv req;

	rig_open(&r, CONFIG);
	crash(&r);
	rig_engine(&r, DEAD_PID, "engine-test");
	to_tool_execute(&r, "[" ADD_CALL "]");
	crash(&r);
	restart(&r, (long)getpid(), "engine-test-2");
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.type"), "\"tool.execute\"") &&
	    is_json(at(&req, "attempts"), "2"),
	    "the tool.execute decision is sent again");
	respond(&r, &req, "{\"actions\":[{\"type\":\"tool.result\",\"result\":"
	    "\"3\"}]}");
	jv_free(req);
	ok(!has_event(&r, "error", "stale_settle"),
	    "its answer settles the call (no stale_settle)");
	req = line(&r, "decision.request");
	ok(is_json(at(&req, "trigger.ok"), "true") &&
	    is_json(at(&req, "trigger.result"), "\"3\""),
	    "the model reads the tool's result, not a lost dispatch");
	jv_free(req);
	rig_close(&r);
}

static void
test_actions_fill_their_defaults(void)
{
	char llm[ART_ID_MAX + 1], id[ART_ID_MAX + 1];
	struct rig r;
	jv req, l;

	rig_open(&r, CONFIG);
	rig_start(&r);
	req = line(&r, "decision.request");
	send(&r, HI);
	echo(&r, &req);
	jv_free(req);
	req = line(&r, "decision.request");
	str(&req, "trigger.messages.0.id", id, sizeof(id));
	respond(&r, &req, "{\"messages\":[{\"role\":\"user\",\"content\":"
	    "\"1+2?\"}],\"actions\":[{\"type\":\"llm.call\"}]}");
	jv_free(req);
	l = line(&r, "llm.request");
	ok(is_json(at(&l, "request.model"), "\"mock/calc\"") &&
	    is_json(at(&l, "request.messages.0"), "{\"role\":\"system\","
	    "\"content\":\"be brief\"}") &&
	    is_json(at(&l, "request.messages.1.content"), "\"1+2?\"") &&
	    is_json(at(&l, "request.tools.0.name"), "\"add\"") &&
	    is_json(at(&l, "stream"), "false") && is_json(at(&l, "attempt"),
	    "1"), "a bare llm.call: model, system prompt, path and tools "
	    "from the config");
	ok(is_json(recorded(&r, "llm.call.requested", "retry"),
	    "{\"timeout_secs\":180,\"max_retries\":4,\"backoff_base_secs\":2,"
	    "\"backoff_max_secs\":30}") &&
	    is_json(recorded(&r, "llm.call.requested", "handler"),
	    "\"server\""), "the llm default policy, handler server");
	str(&l, "id", llm, sizeof(llm));
	jv_free(l);
	rig_close(&r);

	rig_open(&r, CONFIG);
	to_llm_request(&r, HI, llm, sizeof(llm));
	finish_turn(&r, llm, "3");
	send(&r, "{\"type\":\"client.message\",\"agent_id\":\"calc\","
	    "\"message\":{\"role\":\"user\",\"content\":\"more\"}}");
	req = line(&r, "decision.request");
	respond(&r, &req, "{\"actions\":[{\"type\":\"llm.call\",\"model\":"
	    "\"mock/other\",\"stream\":true,\"messages\":[{\"role\":\"user\","
	    "\"content\":\"shaped\"}],\"retry\":{\"timeout_secs\":170,"
	    "\"max_retries\":1,\"backoff_base_secs\":2,"
	    "\"backoff_max_secs\":30}},"
	    "{\"type\":\"tool.call\",\"name\":\"add\",\"arguments\":{\"a\":1}},"
	    "{\"type\":\"tool.call\",\"name\":\"add\",\"arguments\":null}]}");
	jv_free(req);
	l = line(&r, "llm.request");
	ok(is_json(at(&l, "request"), "{\"model\":\"mock/other\",\"messages\":"
	    "[{\"role\":\"user\",\"content\":\"shaped\"}],\"tools\":[{\"name\":"
	    "\"add\",\"description\":\"a + b\",\"input\":{\"type\":"
	    "\"object\"}}]}") && is_json(at(&l, "stream"), "true"),
	    "explicit messages are sent verbatim, no system prompt");
	jv_free(l);
	ok(is_json(recorded(&r, "llm.call.requested", "retry.max_retries"),
	    "1") && is_json(recorded(&r, "llm.call.requested",
	    "retry.timeout_secs"), "170"), "an action's retry replaces the "
	    "default");
	req = payloads(&r);
	l = jv_array();
	jv_array_foreach(req, i, p) {
		const char *t = art_json_str(&p, "type");

		if (t != NULL && strcmp(t, "tool.call.requested") == 0)
			l = jv_array_append(l, at(&p, "arguments"));
		jv_free(p);
	}
	jv_free(req);
	ok(is_json(l, "[\"{\\\"a\\\":1}\",\"\"]"),
	    "tool.call arguments: JSON is serialised, null becomes \"\"");
	ok(count(&r.out, "decision.request") == 1,
	    "one tool.execute at a time");
	rig_close(&r);
}

/*
 * Two rigs at the same point, fed the same lines: one a line at a time,
 * the other as one batch.  Each line is made by mk for the rig it goes
 * to, before any is fed (a response names that rig's live decision).
 * The result is whether their logs, lines and events are equal.
 */
typedef jv line_maker(struct rig *, int);

static int
same_as_one_by_one(struct rig *one, struct rig *b, int n, line_maker *mk)
{
	jv out = jv_array(), ev = jv_array(), lines = jv_array();
	int i, same;

	for (i = 0; i < n; i++)
		lines = jv_array_append(lines, mk(one, i));
	jv_array_foreach(lines, k, l) {
		feed(one, l);
		out = jv_array_concat(out, jv_copy(one->out));
		ev = jv_array_concat(ev, jv_copy(one->events));
		(void)k;
	}
	jv_free(lines);
	lines = jv_array();
	for (i = 0; i < n; i++)
		lines = jv_array_append(lines, mk(b, i));
	if (art_engine_input_batch(b->e, b->sid, lines, &b->err) == -1)
		return 0;
	take(b);
	same = jv_equal(payloads(one), payloads(b)) &&
	    jv_equal(jv_copy(out), jv_copy(b->out)) &&
	    jv_equal(jv_copy(ev), jv_copy(b->events));
	jv_free(out);
	jv_free(ev);
	return same;
}

/* session.start's answer, a client message and an unknown line. */
static jv
start_lines(struct rig *r, int i)
{
	jv req, resp;

	if (i == 1)
		return J(HI);
	if (i == 2)
		return J("{\"type\":\"teleport\"}");
	req = line(r, "decision.request");
	resp = at(&req, "proposed");
	resp = jv_object_set(resp, jv_string("type"),
	    jv_string("decision.response"));
	resp = jv_object_set(resp, jv_string("decision_id"), at(&req,
	    "decision_id"));
	jv_free(req);
	return resp;
}

static void
test_a_batch_records_what_line_by_line_would(void)
{
	struct rig one, b;

	rig_open(&one, CONFIG);
	rig_open(&b, CONFIG);
	rig_start(&one);
	rig_start(&b);
	ok(same_as_one_by_one(&one, &b, 3, start_lines),
	    "a batch of three lines: the same log, lines and events as one "
	    "at a time");
	ok(count(&b.out, "decision.request") == 1 && has_event(&b, "error",
	    "unknown_type"), "the client message's decision goes out, the "
	    "unknown line is an error");
	rig_close(&one);
	rig_close(&b);
}

/* A bad line, a response with a bad messages member, another bad line. */
static jv
refused_lines(struct rig *r, int i)
{
	jv req, resp;

	if (i == 0)
		return J("{\"type\":\"teleport\"}");
	if (i == 2)
		return J("{\"no\":\"type\"}");
	req = line(r, "decision.request");
	resp = J("{\"type\":\"decision.response\",\"messages\":5,"
	    "\"actions\":[]}");
	resp = jv_object_set(resp, jv_string("decision_id"), at(&req,
	    "decision_id"));
	jv_free(req);
	return resp;
}

static void
test_a_refused_line_undoes_its_batch(void)
{
	struct rig one, b;
	jv req;
	int n;

	rig_open(&one, CONFIG);
	rig_open(&b, CONFIG);
	rig_start(&one);
	rig_start(&b);
	req = line(&one, "decision.request");
	echo(&one, &req);
	jv_free(req);
	req = line(&b, "decision.request");
	echo(&b, &req);
	jv_free(req);
	send(&one, HI);
	send(&b, HI);
	n = nevents(&b);
	ok(same_as_one_by_one(&one, &b, 3, refused_lines),
	    "a batch with a refused response: the same log, lines and events "
	    "as one at a time");
	ok(is_json(types_since(&b, n), "[\"error\",\"decision.errored\","
	    "\"error\",\"turn.completed\",\"session.done\",\"error\"]"),
	    "each line recorded in order, the refusal as it would be alone");
	ok(has_event(&b, "error", "bad_response") && has_event(&b, "error",
	    "no_type"), "clients see the refusal and the lines after it");
	ok(is_json(shown(&b, "nodes"), "0") && is_json(shown(&b, "calls"),
	    "[]"), "nothing of the refused response was applied");
	rig_close(&one);
	rig_close(&b);
}

/* More sessions than one engine once had room for (64). */
#define MANY	70

/* Is a decision of sid live?  (Its answer was taken when it is not.) */
static int
is_live(struct rig *r, const char *sid)
{
	jv req = art_engine_request(r->db.st, sid, &r->err);
	int live = jv_get_kind(req) == JV_KIND_OBJECT;

	jv_free(req);
	return live;
}

static void
test_one_engine_drives_any_number_of_sessions(void)
{
	char sid[ART_ID_MAX + 1];
	struct rig r;
	int i, started = 0;

	rig_open(&r, CONFIG);
	for (i = 0; i < MANY; i++)
		started += art_engine_start(r.e, NULL, "calc", sid, &r.err) == 0;
	take(&r);
	ok(started == MANY && count(&r.raw, "decision.request") == MANY,
	    "one engine starts 70 sessions, each sending its session.start");
	clock_at(&r, "2026-01-02T03:09:05Z");
	ok(tick(&r) == 0 && count(&r.raw, "decision.request") == MANY,
	    "at their deadline a tick sends each one's decision again");
	rig_close(&r);
}

/*
 * A parent spawns 70 sub-agents in one response: every child is driven
 * by the parent's engine, its timers fired by a tick and its lines taken
 * in its own session, none reported as a session the ring does not drive.
 */
static void
test_every_adopted_sub_agent_is_driven(void)
{
	char text[MANY * 160 + 64], cid[ART_ID_MAX + 1], resp[ART_ID_MAX + 32];
	struct rig r;
	jv req, reqs;
	int i, n, taken = 0;

	rig_open(&r, CONFIG);
	rig_start(&r);
	req = line(&r, "decision.request");
	echo(&r, &req);
	jv_free(req);
	send(&r, HI);
	req = line(&r, "decision.request");
	n = snprintf(text, sizeof(text), "{\"actions\":[");
	for (i = 0; i < MANY; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%s{\"type\":"
		    "\"sub_agent.spawn\",\"session_id\":\"child-%d\","
		    "\"agent_id\":\"calc\",\"tool_call_id\":\"t%d\"}",
		    i > 0 ? "," : "", i, i);
	snprintf(text + n, sizeof(text) - (size_t)n, "]}");
	ok(respond(&r, &req, text) == 0 && count(&r.raw, "decision.request") ==
	    MANY, "a response spawns 70 sub-agents, each child's first "
	    "decision goes out");
	jv_free(req);
	clock_at(&r, "2026-01-02T03:09:05Z");
	ok(tick(&r) == 0 && count(&r.raw, "decision.request") == MANY,
	    "at their deadline a tick sends every child's decision again");
	reqs = jv_copy(r.out);
	jv_array_foreach(reqs, k, q) {
		snprintf(resp, sizeof(resp), "{\"session_id\":\"%s\"}",
		    str(&q, "session_id", cid, sizeof(cid)));
		if (respond(&r, &q, resp) == 0 && !is_live(&r, cid) &&
		    !has_event(&r, "error", "unknown_session"))
			taken++;
		jv_free(q);
		(void)k;
	}
	jv_free(reqs);
	ok(taken == MANY, "each child's answer is taken in its own session");
	rig_close(&r);
}

/* --- a long-lived engine (serve) ------------------------------------ */

/* Is sid in the store? */
static int
exists(struct rig *r, const char *sid)
{
	struct logq q = { sid, jv_null() };
	int found = art_store_read(r->db.st, log_fn, &q, &r->err) == 0 &&
	    jv_array_length(jv_copy(q.out)) > 0;

	jv_free(q.out);
	return found;
}

/* Answers every decision.request in the last output as proposed. */
static int
echo_all(struct rig *r)
{
	char sid[ART_ID_MAX + 1];
	jv reqs = jv_copy(r->out), resp;
	int n = 0;

	jv_array_foreach(reqs, i, q) {
		const char *t = art_json_str(&q, "type");

		if (t != NULL && strcmp(t, "decision.request") == 0) {
			resp = at(&q, "proposed");
			resp = jv_object_set(resp, jv_string("type"),
			    jv_string("decision.response"));
			resp = jv_object_set(resp, jv_string("decision_id"),
			    at(&q, "decision_id"));
			resp = jv_object_set(resp, jv_string("session_id"),
			    jv_string(str(&q, "session_id", sid, sizeof(sid))));
			n += art_engine_input(r->e, NULL, resp, &r->err) == 0;
		}
		jv_free(q);
		(void)i;
	}
	jv_free(reqs);
	take(r);
	return n;
}

/*
 * A line for a session not driven places it: an unknown one is made
 * when a client line names its agent; a line that cannot be placed is
 * refused with a code saying why, and nothing is recorded.
 */
static void
test_a_line_places_its_session(void)
{
	struct rig r;

	rig_open(&r, CONFIG);
	ok(art_engine_place(r.e, "s1", "client.message", "calc", &r.err) == 0 &&
	    art_engine_drives(r.e, "s1") && art_engine_driven(r.e) == 1,
	    "a client line naming an agent makes its session, driven");
	take(&r);
	ok(count(&r.raw, "decision.request") == 1,
	    "the new session's session.start goes out");
	ok(art_engine_place(r.e, "s1", "decision.response", NULL, &r.err) ==
	    0 && art_engine_driven(r.e) == 1,
	    "a line for a session driven already places nothing new");
	ok(art_engine_place(r.e, NULL, "client.message", "calc", &r.err) ==
	    1 && art_err_is(&r.err, "no_session"),
	    "a line naming no session is refused: no_session");
	ok(art_engine_place(r.e, "s2", "decision.response", "calc", &r.err) ==
	    1 && art_err_is(&r.err, "unknown_session") && !exists(&r, "s2"),
	    "an unknown session and no client line: refused, nothing made");
	ok(art_engine_place(r.e, "s3", "client.message", NULL, &r.err) == 1 &&
	    art_err_is(&r.err, "unknown_session") && !exists(&r, "s3"),
	    "an unknown session and no agent_id: refused, nothing made");
	ok(art_engine_place(r.e, "s4", "client.message", "nope", &r.err) ==
	    1 && art_err_is(&r.err, "no_agent") && !exists(&r, "s4"),
	    "an unknown agent: refused, nothing made");
	ok(art_engine_place(r.e, "bad id", "client.message", "calc",
	    &r.err) == 1 && art_err_is(&r.err, "bad_session"),
	    "a session_id that is no id: refused");
	ok(art_engine_driven(r.e) == 1, "refusals drive nothing");
	rig_close(&r);
}

/* A session another live process drives is refused as busy. */
static void
test_a_session_driven_elsewhere_is_busy(void)
{
	struct rig r;

	rig_open(&r, CONFIG);
	rig_start(&r);
	crash(&r);
	rig_engine(&r, (long)getppid(), "engine-test-busy");
	ok(art_engine_place(r.e, r.sid, "client.message", "calc", &r.err) ==
	    1 && art_err_is(&r.err, "busy") && art_engine_driven(r.e) == 0,
	    "a session a live process drives is refused: busy");
	rig_close(&r);
}

/*
 * Sessions with nothing in flight are let go, their driver records
 * cleared, so 200 short sessions leave none driven.
 */
static void
test_idle_sessions_are_let_go(void)
{
	char sid[ART_ID_MAX + 1];
	struct rig r;
	int i, placed = 0, answered = 0, let_go = 0, n;

	rig_open(&r, CONFIG);
	for (i = 0; i < 200; i++) {
		snprintf(sid, sizeof(sid), "m%d", i);
		placed += art_engine_place(r.e, sid, "client.message", "calc",
		    &r.err) == 0;
	}
	take(&r);
	ok(placed == 200 && art_engine_driven(r.e) == 200,
	    "200 sessions placed, all driven");
	ok(art_engine_release_idle(r.e, &r.err) == 0 &&
	    art_engine_driven(r.e) == 200,
	    "none is let go while its session.start is out");
	answered = echo_all(&r);
	for (i = 0; i < 3 && (n = art_engine_release_idle(r.e, &r.err)) > 0;
	    i++)
		let_go += n;
	ok(answered == 200 && let_go == 200 && art_engine_driven(r.e) == 0,
	    "once each is answered, all 200 are let go");
	crash(&r);
	rig_engine(&r, (long)getppid(), "engine-test-other");
	ok(art_engine_place(r.e, "m7", NULL, NULL, &r.err) == 0,
	    "their driver records are gone: another process takes one");
	rig_close(&r);
}

/*
 * The orphans are the sessions in flight whose driver is gone: not an
 * idle one, not one a live process drives.  Placing one recovers it.
 */
static void
test_orphans_are_found_and_recovered(void)
{
	char idle[ART_ID_MAX + 1], orphan[ART_ID_MAX + 1];
	struct rig r;
	jv all, want;

	rig_open(&r, CONFIG);
	crash(&r);
	rig_engine(&r, DEAD_PID, "engine-test-o1");
	rig_start(&r);
	snprintf(idle, sizeof(idle), "%s", r.sid);
	echo_all(&r);		/* answered: idle */
	rig_start(&r);		/* its session.start out: in flight */
	snprintf(orphan, sizeof(orphan), "%s", r.sid);
	crash(&r);
	rig_engine(&r, (long)getppid(), "engine-test-o2");
	rig_start(&r);		/* in flight, and its driver lives */
	crash(&r);
	rig_engine(&r, (long)getpid(), "engine-test-o3");
	all = art_engine_orphans(r.e, &r.err);
	want = jv_array_append(jv_array(), jv_string(orphan));
	ok(jv_equal(jv_copy(all), want), "the one session in flight with "
	    "its driver gone is the only orphan");
	ok(art_engine_place(r.e, orphan, NULL, NULL, &r.err) == 0, "placed");
	take(&r);
	ok(count(&r.raw, "decision.request") == 1,
	    "its live decision is delivered again");
	jv_free(all);
	rig_close(&r);
}

int
main(void)
{
	test_a_new_session_starts_with_session_start();
	test_an_unknown_agent_starts_nothing();
	test_a_turn_runs_the_tool_loop();
	test_a_response_to_a_decision_not_live_is_stale();
	test_a_settle_must_name_a_pending_call_and_its_attempt();
	test_a_rejected_response_fails_the_turn();
	test_an_llm_call_without_a_model_is_rejected();
	test_an_action_retry_missing_a_member_is_rejected();
	test_a_completed_turn_id_runs_nothing();
	test_a_second_message_during_a_turn_is_refused();
	test_bad_lines_become_error_events();
	test_a_restart_delivers_the_live_decision_again();
	test_a_restart_retries_a_lost_model_call();
	test_a_restart_with_no_retry_left_fails_the_call();
	test_a_live_driver_keeps_its_session();
	test_a_raced_start_names_the_driver();
	test_a_late_decision_is_delivered_again();
	test_a_late_model_call_is_retried_after_its_backoff();
	test_a_late_worker_tool_fails_for_good();
	test_an_execute_answer_settles_its_own_call();
	test_tool_results_wait_for_their_siblings();
	test_a_client_tool_parks_until_the_client_answers();
	test_state_is_written_only_when_it_changes();
	test_an_unanswered_request_fails_the_turn();
	test_an_edited_view_forks_the_conversation();
	test_a_failed_model_call_interrupts_until_resumed();
	test_a_line_for_another_session_is_reported();
	test_the_wake_time_covers_every_session();
	test_a_fork_voids_calls_off_the_new_path();
	test_a_restart_during_tool_execute_keeps_the_call();
	test_actions_fill_their_defaults();
	test_a_batch_records_what_line_by_line_would();
	test_a_refused_line_undoes_its_batch();
	test_one_engine_drives_any_number_of_sessions();
	test_every_adopted_sub_agent_is_driven();
	test_a_line_places_its_session();
	test_a_session_driven_elsewhere_is_busy();
	test_idle_sessions_are_let_go();
	test_orphans_are_found_and_recovered();
	return tap_done();
}
