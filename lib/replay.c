/* replay.c - a recording run again: its answers, its inputs, the compare */
#include "replay.h"

#include <string.h>

#include "cassette.h"
#include "json.h"
#include "tooltape.h"

/* --- what the recording holds ------------------------------------------ */

/*
 * out (consumed) with the line a finished call makes: a cassette line for
 * a model call, a tape line for a tool call.  req is the call's
 * ...requested payload, p the payload of type t that finished it; out as
 * it is when t finishes no call.
 */
static jv
add_exchange(jv out, const jv *req, const jv *p, const char *t)
{
	jv asked, answer, extra, none = jv_null(), line;
	const char *model;
	int stream = 0;

	if (strcmp(t, "llm.call.completed") == 0) {
		asked = art_json_field(req, "request");
		answer = art_json_field(p, "response");
		extra = jv_array();	/* the deltas: the log keeps none */
		art_json_get_bool(req, "stream", 0, &stream, NULL);
		model = art_json_str(&asked, "model");
		line = art_cassette_line(model != NULL ? model : "", &asked,
		    stream, &extra, &answer, &none);
	} else if (strcmp(t, "tool.call.completed") == 0 ||
	    strcmp(t, "tool.call.errored") == 0) {
		/* The trigger the tape takes its arguments from. */
		extra = jv_object_set(jv_object(), jv_string("arguments"),
		    art_json_field(req, "arguments"));
		asked = art_tooltape_args(&extra);
		answer = jv_object_set(jv_copy(*p), jv_string("type"),
		    jv_string(strcmp(t, "tool.call.completed") == 0 ?
		    "tool.result" : "tool.error"));
		line = art_tooltape_line(art_json_str(req, "name"), &asked,
		    &answer);
	} else {
		return out;
	}
	jv_free(asked);
	jv_free(answer);
	jv_free(extra);
	/* A tool answer with neither result nor error makes no line. */
	if (jv_is_valid(line))
		return jv_array_append(out, line);
	jv_free(line);
	return out;
}

jv
art_replay_events(const jv *lines, const char *sid)
{
	jv out = jv_array();

	jv_array_foreach(*lines, i, l) {
		const char *s = art_json_str(&l, "session_id");

		if (i > 0 && s != NULL && strcmp(s, sid) == 0)
			out = jv_array_append(out, l);
		else
			jv_free(l);
	}
	return out;
}

/* The exchange lines of calls of one kind ("llm." or "tool."), in order. */
static jv
answers(const jv *lines, const char *kind)
{
	jv asked = jv_object(), out = jv_array(), p, req;
	const char *t, *id;

	jv_array_foreach(*lines, i, l) {
		p = art_json_field(&l, "payload");
		t = art_json_str(&p, "type");
		id = art_json_str(&p, "id");
		jv_free(l);
		if (t == NULL || id == NULL ||
		    strncmp(t, kind, strlen(kind)) != 0) {
			jv_free(p);
			continue;
		}
		/* Each request kept by id, for the event that finishes it. */
		if (strcmp(t, "llm.call.requested") == 0 ||
		    strcmp(t, "tool.call.requested") == 0) {
			asked = jv_object_set(asked, jv_string(id), p);
			continue;
		}
		req = jv_object_get(jv_copy(asked), jv_string(id));
		if (jv_is_valid(req))
			out = add_exchange(out, &req, &p, t);
		jv_free(req);
		jv_free(p);
	}
	jv_free(asked);
	return out;
}

jv
art_replay_cassette(const jv *lines)
{
	return answers(lines, "llm.");
}

/*
 * out (consumed) with a tape line for each MCP server's tools list the
 * recording holds (tools.listed with tools), as agentrt-tool --replay
 * answers a tools.list: name "tools.list", arguments {"server": NAME}.
 */
static jv
tools_lists(jv out, const jv *lines)
{
	jv p, args, answer, line;
	const char *t, *server;

	jv_array_foreach(*lines, i, l) {
		p = art_json_field(&l, "payload");
		t = art_json_str(&p, "type");
		server = art_json_str(&p, "server");
		if (t != NULL && strcmp(t, "tools.listed") == 0 &&
		    server != NULL && jv_object_has(jv_copy(p),
		    jv_string("tools"))) {
			args = jv_object_set(jv_object(), jv_string("server"),
			    jv_string(server));
			answer = jv_object_set(jv_object_set(jv_object(),
			    jv_string("type"), jv_string("tool.result")),
			    jv_string("result"), art_json_field(&p, "tools"));
			line = art_tooltape_line("tools.list", &args, &answer);
			out = jv_array_append(out, line);
			jv_free(args);
			jv_free(answer);
		}
		jv_free(p);
		jv_free(l);
		(void)i;
	}
	return out;
}

jv
art_replay_tape(const jv *lines)
{
	return tools_lists(answers(lines, "tool."), lines);
}

jv
art_replay_agent_files(const jv *lines)
{
	jv agents = jv_object(), out = jv_object(), p, tr, file, a;
	const char *t, *sid;

	jv_array_foreach(*lines, i, l) {
		p = art_json_field(&l, "payload");
		t = art_json_str(&p, "type");
		sid = art_json_str(&l, "session_id");
		if (t != NULL && sid != NULL && strcmp(t, "session.created") ==
		    0 && art_json_str(&p, "agent_id") != NULL)
			agents = jv_object_set(agents, jv_string(sid),
			    art_json_field(&p, "agent_id"));
		tr = art_json_field(&p, "trigger");
		t = art_json_str(&tr, "type");
		file = art_json_field(&p, "agent_file");
		if (t != NULL && strcmp(t, "session.start") == 0 &&
		    jv_get_kind(file) == JV_KIND_OBJECT && sid != NULL) {
			a = jv_object_get(jv_copy(agents), jv_string(sid));
			if (jv_get_kind(a) == JV_KIND_STRING)
				out = jv_object_set(out, a, jv_copy(file));
			else
				jv_free(a);
		}
		jv_free(file);
		jv_free(tr);
		jv_free(p);
		jv_free(l);
	}
	jv_free(agents);
	return out;
}

jv
art_replay_inputs(const jv *events)
{
	jv out = jv_array(), p, tr;
	const char *t, *tt;

	jv_array_foreach(*events, i, ev) {
		p = art_json_field(&ev, "payload");
		t = art_json_str(&p, "type");
		tr = art_json_field(&p, "trigger");
		tt = art_json_str(&tr, "type");
		if (t != NULL && strcmp(t, "decision.queued") == 0 &&
		    tt != NULL && (strcmp(tt, "client.message") == 0 ||
		    strcmp(tt, "client.messages") == 0 ||
		    strcmp(tt, "client.action") == 0))
			out = jv_array_append(out, jv_copy(tr));
		else if (t != NULL && strcmp(t, "session.interrupt_resumed") ==
		    0)
			out = jv_array_append(out, jv_object_set(jv_object(),
			    jv_string("resume"), art_json_field(&p,
			    "payload")));
		jv_free(tr);
		jv_free(p);
		jv_free(ev);
	}
	return out;
}

/* --- what a session did, to compare ------------------------------------- */

/* v (consumed) without any "id" member, anywhere. */
static jv
without_ids(jv v)
{
	jv out;

	if (jv_get_kind(v) == JV_KIND_ARRAY) {
		out = jv_array();
		jv_array_foreach(v, i, e)
			out = jv_array_append(out, without_ids(e));
		jv_free(v);
		return out;
	}
	if (jv_get_kind(v) != JV_KIND_OBJECT)
		return v;
	out = jv_object();
	jv_object_foreach(v, k, e) {
		if (strcmp(jv_string_value(k), "id") == 0) {
			jv_free(k);
			jv_free(e);
		} else {
			out = jv_object_set(out, k, without_ids(e));
		}
	}
	jv_free(v);
	return out;
}

/* The event types shown by fields of theirs kept as they are. */
static const struct shown {
	const char	*type;
	const char	*fields[3];
} shown[] = {
	{ "tool.call.requested",	{ "name", "arguments", NULL } },
	{ "turn.completed",		{ "data", "error", NULL } },
	{ "session.interrupted",	{ "reason", NULL } },
	{ NULL,				{ NULL } }
};

/* o (consumed) with the fields p of type t shows; invalid for none. */
static jv
shown_fields(jv o, const jv *p, const char *t)
{
	const struct shown *s;
	const char *const *f;

	for (s = shown; s->type != NULL && strcmp(s->type, t) != 0; s++)
		;
	if (s->type == NULL) {
		jv_free(o);
		return jv_invalid();
	}
	for (f = s->fields; *f != NULL; f++)
		o = jv_object_set(o, jv_string(*f), art_json_field(p, *f));
	return o;
}

jv
art_replay_observed(const jv *ev)
{
	jv p = art_json_field(ev, "payload"), o = jv_invalid(), rq;
	const char *t = art_json_str(&p, "type");

	if (t != NULL)
		o = jv_object_set(jv_object(), jv_string("type"),
		    jv_string(t));
	if (t == NULL)
		;
	else if (strcmp(t, "llm.call.requested") == 0) {
		rq = art_json_field(&p, "request");
		o = jv_object_set(o, jv_string("model"),
		    art_json_field(&rq, "model"));
		o = jv_object_set(o, jv_string("messages"),
		    art_cassette_messages(art_json_field(&rq, "messages")));
		jv_free(rq);
	} else if (strcmp(t, "message.new") == 0) {
		o = jv_object_set(o, jv_string("message"),
		    without_ids(art_json_field(&p, "message")));
	} else {
		o = shown_fields(o, &p, t);
	}
	if (jv_is_valid(o))
		o = jv_object_set(o, jv_string("seq"), art_json_field(ev,
		    "seq"));
	jv_free(p);
	return o;
}

/* The tool_call_id of o when it records a tool message, else NULL. */
static const char *
tool_answer(const jv *o, jv *msg)
{
	const char *t = art_json_str(o, "type"), *role;

	*msg = art_json_field(o, "message");
	role = art_json_str(msg, "role");
	if (t == NULL || strcmp(t, "message.new") != 0 || role == NULL ||
	    strcmp(role, "tool") != 0)
		return NULL;
	return art_json_str(msg, "tool_call_id");
}

jv
art_replay_behaviour(const jv *events)
{
	jv out = jv_array(), run = jv_array(), keys = jv_array(), o, msg;
	const char *id;

	jv_array_foreach(*events, i, ev) {
		o = art_replay_observed(&ev);
		jv_free(ev);
		if (!jv_is_valid(o)) {
			jv_free(o);
			continue;
		}
		if ((id = tool_answer(&o, &msg)) != NULL) {
			keys = jv_array_append(keys, jv_string(id));
			run = jv_array_append(run, o);
			jv_free(msg);
			continue;
		}
		jv_free(msg);
		out = jv_array_concat(out, jv_sort(run, keys));
		run = jv_array();
		keys = jv_array();
		out = jv_array_append(out, o);
	}
	return jv_array_concat(out, jv_sort(run, keys));
}

/* o without its seq: what is compared. */
static jv
unseq(const jv *o)
{
	return jv_object_delete(jv_copy(*o), jv_string("seq"));
}

/* The replay.divergence line at index i; a and b are consumed. */
static jv
divergence(int i, jv a, jv b, bool recorded_side, const char *sid)
{
	jv ev, line;

	ev = jv_object_set(jv_object(), jv_string("index"), jv_number(i));
	ev = jv_object_set(ev, jv_string("type"),
	    art_json_field(recorded_side ? &a : &b, "type"));
	ev = jv_object_set(ev, jv_string("expected_seq"),
	    art_json_field(&a, "seq"));
	ev = jv_object_set(ev, jv_string("actual_seq"),
	    art_json_field(&b, "seq"));
	line = jv_object_set(jv_object(), jv_string("type"),
	    jv_string("replay.divergence"));
	line = jv_object_set(line, jv_string("session"), jv_string(sid));
	line = jv_object_set(line, jv_string("event"), ev);
	line = jv_object_set(line, jv_string("expected"),
	    jv_get_kind(a) == JV_KIND_NULL ? jv_null() : unseq(&a));
	line = jv_object_set(line, jv_string("actual"),
	    jv_get_kind(b) == JV_KIND_NULL ? jv_null() : unseq(&b));
	jv_free(a);
	jv_free(b);
	return line;
}

jv
art_replay_diverges(const jv *want, const jv *got, const char *sid)
{
	int n = jv_array_length(jv_copy(*want));
	int m = jv_array_length(jv_copy(*got)), i;
	jv a, b, ua, ub;
	bool same;

	for (i = 0; i < n || i < m; i++) {
		a = i < n ? jv_array_get(jv_copy(*want), i) : jv_null();
		b = i < m ? jv_array_get(jv_copy(*got), i) : jv_null();
		ua = jv_get_kind(a) == JV_KIND_NULL ? jv_null() : unseq(&a);
		ub = jv_get_kind(b) == JV_KIND_NULL ? jv_null() : unseq(&b);
		same = jv_equal(ua, ub);
		if (!same)
			return divergence(i, a, b, i < n, sid);
		jv_free(a);
		jv_free(b);
	}
	return jv_null();
}

jv
art_replay_verdict(const jv *want, const jv *got, const char *sid,
    const char *recorded, bool *passed)
{
	jv bw = art_replay_behaviour(want), bg = art_replay_behaviour(got);
	jv v = art_replay_diverges(&bw, &bg, sid);

	*passed = jv_get_kind(v) == JV_KIND_NULL;
	if (*passed) {
		jv_free(v);
		v = jv_object_set(jv_object(), jv_string("type"),
		    jv_string("replay.passed"));
		v = jv_object_set(v, jv_string("session"), jv_string(sid));
		v = jv_object_set(v, jv_string("recorded"),
		    jv_string(recorded));
		v = jv_object_set(v, jv_string("events"),
		    jv_number(jv_array_length(jv_copy(bw))));
	}
	jv_free(bw);
	jv_free(bg);
	return v;
}
