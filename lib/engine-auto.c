/* engine-auto.c - autonomous mode's engine side (auto.h is its rules)
 *
 * The engine owns an autonomous turn's plan: it asks for the plan, reads
 * it from the model's reply, records it (plan.updated, resolved along the
 * active path like state), confirms the todos the model says are done
 * (the built-in todo_done tool, answered here, never by a tool stage),
 * and after each step records a step_progress and takes the plan's
 * verdict: go on, end the turn completed, or stop it stalled or at
 * max_steps.  A step is one model call and the tool calls it made; it
 * ends where the loop would call the model again.
 *
 * The requests of structured-answer agents are shaped here too: both
 * kinds of agent add a response_format to their model calls.
 */
#include "engine-int.h"

#include <stdio.h>
#include <string.h>

#include "answer.h"
#include "auto.h"
#include "json.h"
#include "parts.h"
#include "propose.h"
#include "session.h"

/* The running turn's id (buf), or "" when no turn runs; -1 on failure. */
static int
running_turn(struct cx *c, char *buf, size_t n)
{
	jv s = eng_summary(c);
	const char *st, *tid;

	if (!jv_is_valid(s))
		return -1;
	st = art_json_str(&s, "status");
	tid = art_json_str(&s, "turn");
	snprintf(buf, n, "%s", st != NULL && strcmp(st, "running") == 0 &&
	    tid != NULL ? tid : "");
	jv_free(s);
	return 0;
}

/*
 * The plan of the running turn resolved at head h (whatever its status),
 * jv_null() when the turn has none (a plan of an earlier turn is not
 * this one's), jv_invalid() when the store fails.
 */
static jv
turn_plan(struct cx *c, const char *h)
{
	char tid[ART_ID_MAX + 1];
	jv plan;
	const char *pt;

	if (running_turn(c, tid, sizeof(tid)) == -1)
		return jv_invalid();
	if (*tid == '\0')
		return jv_null();
	plan = art_session_resolve(c->t, c->sid, ART_VERSION_PLAN, *h != '\0' ?
	    h : NULL, c->err);
	if (jv_get_kind(plan) != JV_KIND_OBJECT)
		return plan;
	pt = art_json_str(&plan, "turn_id");
	if (pt == NULL || strcmp(pt, tid) != 0) {
		jv_free(plan);
		return jv_null();
	}
	return plan;
}

/* A message's text: its content string, or its parts as text. */
static jv
text_of(const jv *m)
{
	jv content = art_json_field(m, "content"), out;

	if (jv_get_kind(content) == JV_KIND_STRING)
		return content;
	out = jv_get_kind(content) == JV_KIND_ARRAY ?
	    art_parts_text(&content) : jv_string("");
	jv_free(content);
	return out;
}

/* The text of the last user message on the path to h: the goal. */
static jv
goal_at(struct cx *c, const char *h)
{
	char at[ART_ID_MAX + 1];
	jv m, goal = jv_null();
	const char *role;

	snprintf(at, sizeof(at), "%s", h);
	while (jv_get_kind(goal) == JV_KIND_NULL && *at != '\0' &&
	    jv_is_valid(m = eng_step_up(c, at))) {
		role = art_json_str(&m, "role");
		if (role != NULL && strcmp(role, "user") == 0) {
			goal = text_of(&m);
		}
		jv_free(m);
	}
	return jv_get_kind(goal) == JV_KIND_STRING ? goal : (jv_free(goal),
	    jv_string(""));
}

/* Records plan (consumed) at the head h. */
static int
rec_plan(struct cx *c, jv plan, const char *h)
{
	return eng_rec(c, set(set(obj("plan.updated"), "plan", plan), "anchor",
	    eng_head_jv(h)));
}

/* Records a todo event: todo (borrowed) now has its status. */
static int
rec_todo(struct cx *c, const jv *todo)
{
	jv p = set(obj("todo"), "id", art_json_field(todo, "id"));

	p = set(p, "title", art_json_field(todo, "title"));
	return eng_rec(c, set(p, "status", art_json_field(todo, "status")));
}

/* The todo of plan named id, or jv_null(). */
static jv
todo_named(const jv *plan, const char *id)
{
	jv todos = art_json_field(plan, "todos"), found = jv_null();
	const char *tid;

	if (id != NULL && jv_get_kind(todos) == JV_KIND_ARRAY) {
		jv_array_foreach(todos, i, t) {
			tid = art_json_str(&t, "id");
			if (jv_get_kind(found) == JV_KIND_NULL && tid != NULL &&
			    strcmp(tid, id) == 0)
				found = jv_copy(t);
			jv_free(t);
			(void)i;
		}
	}
	jv_free(todos);
	return found;
}

/* The LlmTool of an AgentTool (consumed). */
static jv
llm_tool(jv t)
{
	jv out = set(jv_object(), "name", art_json_field(&t, "name"));

	out = set(out, "description", art_json_field(&t, "description"));
	out = set_some(out, "input", art_json_field(&t, "input"));
	jv_free(t);
	return out;
}

/* tools (consumed; an array or not) without one named todo_done. */
static jv
without_done(jv tools)
{
	jv out = jv_array();
	const char *n;

	if (jv_get_kind(tools) == JV_KIND_ARRAY) {
		jv_array_foreach(tools, i, t) {
			n = art_json_str(&t, "name");
			if (n != NULL && strcmp(n, ART_AUTO_DONE_TOOL) == 0)
				jv_free(t);
			else
				out = jv_array_append(out, t);
			(void)i;
		}
	}
	jv_free(tools);
	return out;
}

/* req's system prompt (by reference, "prompt") with text after it. */
static jv
add_system(jv req, jv text)
{
	jv pr = art_json_field(&req, "prompt");
	const char *sys = art_json_str(&pr, "system");

	if (jv_get_kind(pr) != JV_KIND_OBJECT) {
		/* Messages of a worker's own: they are what it wants sent. */
		jv_free(pr);
		jv_free(text);
		return req;
	}
	if (sys != NULL && *sys != '\0')
		text = jv_string_concat(jv_string_fmt("%s\n\n", sys), text);
	pr = set(pr, "system", text);
	return set(req, "prompt", pr);
}

/*
 * The model request req (consumed) of a call made at head h under cfg,
 * as autonomous mode and structured answers shape it: a planning call
 * asks for the plan (its format, no tools, step_goal "decompose goal
 * into todo plan"); a step's call carries the plan and its active todo
 * in the system prompt, step_goal the todo's title, and todo_done among
 * its tools; a structured-answer agent's calls ask for an answer.
 * jv_invalid() when the store fails.
 */
jv
eng_auto_request(struct cx *c, const jv *cfg, const char *h, jv req)
{
	struct art_auto s;
	jv plan, goal, active, tools, decl;
	const char *st;

	if (!art_auto_is(cfg)) {
		const char *a = art_json_str(cfg, "answer");

		if (a != NULL && strcmp(a, "structured") == 0 &&
		    !jv_object_has(jv_copy(req), jv_string("response_format")))
			req = set(req, "response_format", art_answer_format());
		return req;
	}
	art_auto_settings(cfg, &s);
	if (!jv_is_valid(plan = turn_plan(c, h))) {
		jv_free(req);
		return plan;
	}
	if (jv_get_kind(plan) == JV_KIND_NULL) {
		goal = goal_at(c, h);
		if (!jv_is_valid(goal)) {
			jv_free(req);
			return goal;
		}
		req = add_system(req, art_auto_plan_prompt(
		    jv_string_value(goal), &s));
		jv_free(goal);
		req = jv_object_delete(req, jv_string("tools"));
		req = set(req, "response_format", art_auto_plan_format());
		return set(req, "step_goal", jv_string(ART_AUTO_PLAN_GOAL));
	}
	st = art_json_str(&plan, "status");
	if (st != NULL && strcmp(st, "running") == 0) {
		active = art_auto_active(&plan);
		req = add_system(req, art_auto_step_prompt(&plan));
		req = set_some(req, "step_goal", art_json_field(&active,
		    "title"));
		jv_free(active);
		tools = without_done(art_json_field(&req, "tools"));
		decl = art_propose_tool(cfg, ART_AUTO_DONE_TOOL);
		/* An agent's own todo_done is its tool: no built-in then. */
		if (jv_get_kind(decl) == JV_KIND_NULL)
			tools = jv_array_append(tools, llm_tool(
			    art_auto_done_tool()));
		jv_free(decl);
		req = set(req, "tools", tools);
	}
	jv_free(plan);
	return req;
}

/*
 * The declaration of the built-in todo_done tool for an autonomous
 * agent's call of it that cfg does not declare itself, or jv_null().
 */
jv
eng_auto_builtin(const jv *cfg, const char *name)
{
	if (!art_auto_is(cfg) || strcmp(name, ART_AUTO_DONE_TOOL) != 0)
		return jv_null();
	return set(art_auto_done_tool(), "builtin", jv_string(name));
}

/*
 * A todo_done call (borrowed) going out: the engine answers it.  The
 * todo is confirmed against the plan at the head; then the call's result
 * says so and what is next, and the plan and the todos' events are
 * recorded.  A todo the plan cannot mark done fails the call with why,
 * which the model reads.
 */
int
eng_auto_done(struct cx *c, const jv *call)
{
	char h[ART_ID_MAX + 1], why[256];
	const char *text = art_json_str(call, "arguments"), *id, *next;
	const char *bad = art_json_str(call, "input_error");
	const char *anchor = art_json_str(call, "anchor"), *was;
	jv args, plan, before, done, act, result, idv;
	int r;

	if (bad != NULL)
		return eng_refuse_call(c, call, jv_string_fmt("invalid tool "
		    "arguments: %s", bad));
	if (eng_head(c, h, sizeof(h)) == -1 || !jv_is_valid(plan =
	    turn_plan(c, h)))
		return -1;
	if (jv_get_kind(plan) != JV_KIND_OBJECT) {
		jv_free(plan);
		return eng_refuse_call(c, call, jv_string("todo_done: no plan "
		    "is running in this turn"));
	}
	args = art_json_parse_str(text != NULL && *text != '\0' ? text : "{}",
	    NULL);
	idv = art_json_field(&args, "id");
	if (jv_get_kind(args) != JV_KIND_OBJECT || (jv_get_kind(idv) !=
	    JV_KIND_NULL && jv_get_kind(idv) != JV_KIND_STRING)) {
		jv_free(idv);
		jv_free(args);
		jv_free(plan);
		return eng_refuse_call(c, call, jv_string("todo_done: expected "
		    "{\"id\": \"todo-N\", \"summary\": \"...\"}, id a string"));
	}
	jv_free(idv);
	/* One todo a step: the model's step is one todo's. */
	was = art_json_str(&plan, "marked_at");
	if (was != NULL && anchor != NULL && strcmp(was, anchor) == 0) {
		jv_free(args);
		jv_free(plan);
		return eng_refuse_call(c, call, jv_string("todo_done: a todo "
		    "was already marked done in this step; one todo a step"));
	}
	id = art_json_str(&args, "id");
	before = art_auto_active(&plan);
	if (art_auto_mark_done(&plan, id, why, sizeof(why)) == -1) {
		jv_free(before);
		jv_free(args);
		jv_free(plan);
		return eng_refuse_call(c, call, jv_string_fmt("todo_done: %s",
		    why));
	}
	jv_free(args);
	if (anchor != NULL)
		plan = set(plan, "marked_at", jv_string(anchor));
	done = todo_named(&plan, art_json_str(&before, "id"));
	act = art_auto_active(&plan);
	next = art_json_str(&act, "title");
	result = next != NULL ? jv_string_fmt("%s is done. Next: %s \"%s\".",
	    art_json_str(&done, "id"), art_json_str(&act, "id"), next) :
	    jv_string_fmt("%s is done. Every todo is done.",
	    art_json_str(&done, "id"));
	r = rec_plan(c, plan, h);
	if (r == 0)
		r = rec_todo(c, &done);
	if (r == 0 && jv_get_kind(act) == JV_KIND_OBJECT)
		r = rec_todo(c, &act);
	if (r == 0)
		r = eng_tool_done(c, call, &result);
	jv_free(result);
	jv_free(before);
	jv_free(done);
	jv_free(act);
	return r;
}

/* Is the finished model call (trigger tr, borrowed) a planning call? */
static int
is_planning(struct cx *c, const jv *tr, int *yes)
{
	const char *id = art_json_str(tr, "id"), *g;
	jv call, req;

	*yes = 0;
	if (id == NULL)
		return 0;
	call = eng_get_call(c, id);
	if (jv_get_kind(call) != JV_KIND_OBJECT) {
		int bad = !jv_is_valid(call);

		jv_free(call);
		return bad ? -1 : 0;
	}
	req = eng_call_request(c, &call);
	jv_free(call);
	if (!jv_is_valid(req))
		return -1;
	g = art_json_str(&req, "step_goal");
	*yes = g != NULL && strcmp(g, ART_AUTO_PLAN_GOAL) == 0;
	jv_free(req);
	return 0;
}

/* The plan's reply (the head's message, an assistant's) made a plan. */
static int
begin_plan(struct cx *c, const struct art_auto *s, const char *h)
{
	char tid[ART_ID_MAX + 1], at[ART_ID_MAX + 1];
	jv m, goal, plan, ev, reply, act;
	int64_t dropped = 0;
	const char *role;
	int r;

	snprintf(at, sizeof(at), "%s", h);
	if (*at == '\0' || !jv_is_valid(m = eng_step_up(c, at)))
		return -1;
	role = art_json_str(&m, "role");
	if (role == NULL || strcmp(role, "assistant") != 0) {
		jv_free(m);
		return 0;		/* a worker recorded no reply */
	}
	if (running_turn(c, tid, sizeof(tid)) == -1 || !jv_is_valid(goal =
	    goal_at(c, h))) {
		jv_free(m);
		return -1;
	}
	reply = text_of(&m);
	jv_free(m);
	plan = art_auto_plan_new(jv_string_value(goal), jv_string_value(reply),
	    s, &dropped);
	jv_free(reply);
	jv_free(goal);
	plan = set(plan, "turn_id", jv_string(tid));
	plan = set(plan, "plan_message", jv_string(h));
	ev = art_auto_decomposition(&plan);
	ev = jv_object_set(ev, jv_string("type"), jv_string("decomposition"));
	if (dropped > 0)
		ev = set(ev, "dropped", jv_number((double)dropped));
	act = art_auto_active(&plan);
	r = rec_plan(c, plan, h);
	if (r == 0)
		r = eng_rec(c, ev);
	else
		jv_free(ev);
	if (r == 0 && jv_get_kind(act) == JV_KIND_OBJECT)
		r = rec_todo(c, &act);
	jv_free(act);
	return r;
}

/* Does actions (borrowed) hold an action of type? */
static int
has_action(const jv *actions, const char *type)
{
	int yes = 0;

	if (jv_get_kind(*actions) != JV_KIND_ARRAY)
		return 0;
	jv_array_foreach(*actions, i, a) {
		const char *t = art_json_str(&a, "type");

		yes = yes || (t != NULL && strcmp(t, type) == 0);
		jv_free(a);
		(void)i;
	}
	return yes;
}

/* A step's facts, read from the path, and what they hold. */
struct facts {
	struct art_auto_step	 st;
	jv			 text, calls, results;
	char			 asked[ART_ID_MAX + 1];	/* its message */
};

static void
facts_release(struct facts *f)
{
	jv_free(f->text);
	jv_free(f->calls);
	jv_free(f->results);
}

/* Folds the settled call of tool message m (borrowed) into f. */
static int
fold_result(struct cx *c, struct facts *f, const jv *m)
{
	const char *id = art_json_str(m, "tool_call_id"), *st;
	const char *name;
	jv call, text;

	if (id == NULL)
		return 0;
	/* A sub-agent's call is kept under its child's id, and a worker
	 * may write a result of its own: no record is a result. */
	call = eng_get(c, ART_DB_CALLS, c->sid, id);
	if (!jv_is_valid(call))
		return -1;
	st = jv_get_kind(call) == JV_KIND_NULL ? "completed" :
	    art_json_str(&call, "status");
	name = art_json_str(&call, "builtin");
	if (st != NULL && strcmp(st, "failed") == 0)
		f->st.errored++;
	else if (st != NULL && strcmp(st, "completed") == 0) {
		if (name != NULL && strcmp(name, ART_AUTO_DONE_TOOL) == 0)
			f->st.confirmed = 1;
		else {
			text = text_of(m);
			f->results = jv_array_append(f->results, text);
		}
	}
	jv_free(call);
	return 0;
}

/*
 * The facts of the step that ends at head h: a walk up from the head
 * through the step's tool results to the assistant message that made
 * them (the step's reply).  0 with f->asked "" when the path holds no
 * step (nothing after the plan's own reply).
 */
static int
read_step(struct cx *c, const jv *plan, const char *h, struct facts *f)
{
	char at[ART_ID_MAX + 1], here[ART_ID_MAX + 1];
	const char *role, *pm = art_json_str(plan, "plan_message");
	jv m;
	int r = 0, found = 0;

	memset(&f->st, 0, sizeof(f->st));
	f->text = jv_null();
	f->calls = jv_null();
	f->results = jv_array();
	*f->asked = '\0';
	snprintf(at, sizeof(at), "%s", h);
	while (r == 0 && !found && *at != '\0') {
		snprintf(here, sizeof(here), "%s", at);
		if (!jv_is_valid(m = eng_step_up(c, at)))
			return -1;
		role = art_json_str(&m, "role");
		if (role != NULL && strcmp(role, "tool") == 0)
			r = fold_result(c, f, &m);
		else if (role != NULL && strcmp(role, "assistant") == 0) {
			found = 1;
			if (pm == NULL || strcmp(pm, here) != 0) {
				snprintf(f->asked, sizeof(f->asked), "%s",
				    here);
				f->text = text_of(&m);
				f->calls = art_json_field(&m, "tool_calls");
			}
		} else
			found = 1;	/* a user's message: no step */
		jv_free(m);
	}
	if (jv_get_kind(f->calls) == JV_KIND_ARRAY) {
		jv_array_foreach(f->calls, i, tc) {
			jv fn = art_json_field(&tc, "function");
			const char *n = art_json_str(&fn, "name");

			if (n != NULL && strcmp(n, ART_AUTO_DONE_TOOL) == 0)
				f->st.marked = 1;
			jv_free(fn);
			jv_free(tc);
			(void)i;
		}
	}
	f->st.text = jv_get_kind(f->text) == JV_KIND_STRING ?
	    jv_string_value(f->text) : NULL;
	f->st.tool_calls = jv_get_kind(f->calls) == JV_KIND_ARRAY ? &f->calls :
	    NULL;
	f->st.results = &f->results;
	return r;
}

/* The turn's answer once every todo is done: the last reply, or a list. */
static jv
completed_data(const jv *plan, const struct facts *f)
{
	jv todos, out;

	if (f->st.text != NULL && *f->st.text != '\0')
		return jv_string(f->st.text);
	out = jv_string("Done:");
	todos = art_json_field(plan, "todos");
	jv_array_foreach(todos, i, t) {
		out = jv_string_append_str(out, "\n- ");
		out = jv_string_append_str(out, art_json_str(&t, "title") !=
		    NULL ? art_json_str(&t, "title") : "");
		jv_free(t);
		(void)i;
	}
	jv_free(todos);
	return out;
}

/* Replaces *actions with just a (consumed), or nothing when invalid. */
static void
only(jv *actions, jv a)
{
	jv_free(*actions);
	*actions = jv_is_valid(a) ? jv_array_append(jv_array(), a) :
	    jv_array();
}

/* The stall's words: why the turn stops, or parks. */
static void
stall_why(char *buf, size_t n, const struct art_auto *s)
{
	snprintf(buf, n, "stalled: no progress in the last %lld steps (no "
	    "new results, no todo done, the same reply again)",
	    (long long)s->stall_window);
}

/* A step ended (the loop would call the model again): judge the plan. */
static int
end_step(struct cx *c, jv plan, const struct art_auto *s, const char *h,
    jv *actions)
{
	struct facts f;
	jv progress, ev, a, p;
	const char *verdict;
	int r;

	if (read_step(c, &plan, h, &f) == -1) {
		facts_release(&f);
		jv_free(plan);
		return -1;
	}
	if (*f.asked == '\0') {
		facts_release(&f);
		jv_free(plan);
		return 0;
	}
	progress = art_auto_progress(&plan, &f.st);
	plan = art_auto_after_step(plan, &progress, s, &verdict);
	ev = jv_object_set(progress, jv_string("type"),
	    jv_string("step_progress"));
	ev = set(ev, "verdict", jv_string(verdict));
	if (strcmp(verdict, "completed") == 0)
		only(actions, set(obj("done"), "data", completed_data(&plan,
		    &f)));
	else if (strcmp(verdict, "stalled") == 0 && s->park_on_stall) {
		stall_why(c->stop_why, sizeof(c->stop_why), s);
		p = set(obj("stalled"), "message", jv_string(c->stop_why));
		*c->stop_why = '\0';
		a = set(obj("interrupt"), "reason", jv_string("stalled"));
		only(actions, set(a, "payload", p));
	} else if (strcmp(verdict, "stalled") == 0) {
		c->stop_code = "stalled";
		stall_why(c->stop_why, sizeof(c->stop_why), s);
		only(actions, jv_invalid());
	} else if (strcmp(verdict, "max_steps") == 0) {
		c->stop_code = "max_steps";
		snprintf(c->stop_why, sizeof(c->stop_why), "max_steps reached: "
		    "%lld steps and the plan is not done", (long long)
		    s->max_steps);
		only(actions, jv_invalid());
	}
	facts_release(&f);
	r = rec_plan(c, plan, h);
	if (r == 0)
		r = eng_rec(c, ev);
	else
		jv_free(ev);
	return r;
}

/*
 * A stalled plan parked for a person was resumed: payload {"action":
 * "stop"} (or "stop") ends the turn stalled; anything else gives the
 * plan another window.
 */
static int
resume_plan(struct cx *c, jv plan, const jv *tr, const struct art_auto *s,
    const char *h, jv *actions)
{
	jv pay = art_json_field(tr, "payload");
	const char *w = jv_get_kind(pay) == JV_KIND_STRING ?
	    jv_string_value(pay) : art_json_str(&pay, "action");
	int stop = w != NULL && strcmp(w, "stop") == 0;

	jv_free(pay);
	if (stop) {
		jv_free(plan);
		c->stop_code = "stalled";
		stall_why(c->stop_why, sizeof(c->stop_why), s);
		only(actions, jv_invalid());
		return 0;
	}
	return rec_plan(c, art_auto_resume(plan), h);
}

/*
 * An autonomous agent's decision (live, borrowed) is being applied, its
 * messages recorded (the head is h) and its actions (*actions, which may
 * be replaced) not yet taken: record the plan its planning call made, or
 * judge the step that ended.  0, or -1 when the store fails; a verdict
 * that stops the turn sets c->stop_code, as a limit does.
 */
int
eng_auto_step(struct cx *c, const jv *live, const jv *cfg, const char *h,
    jv *actions)
{
	struct art_auto s;
	jv tr, plan;
	const char *tt, *st;
	int planning = 0, ok = 0, truncated = 0, r = 0;

	if (!art_auto_is(cfg))
		return 0;
	art_auto_settings(cfg, &s);
	tr = art_json_field(live, "trigger");
	tt = art_json_str(&tr, "type");
	if (tt == NULL || !jv_is_valid(plan = turn_plan(c, h))) {
		jv_free(tr);
		return tt == NULL ? 0 : -1;
	}
	st = art_json_str(&plan, "status");
	art_json_get_bool(&tr, "ok", 0, &ok, NULL);
	art_json_get_bool(&tr, "truncated", 0, &truncated, NULL);
	if (strcmp(tt, "llm.finished") == 0 && is_planning(c, &tr,
	    &planning) == -1)
		r = -1;
	else if (planning) {
		/* A plan from a whole reply the loop goes on from: one cut
		 * short or refused ends or parks the turn instead. */
		if (ok && !truncated && jv_get_kind(plan) == JV_KIND_NULL &&
		    has_action(actions, "llm.call"))
			r = begin_plan(c, &s, h);
	} else if (st != NULL && strcmp(st, "stalled") == 0 &&
	    strcmp(tt, "interrupt.resumed") == 0) {
		r = resume_plan(c, plan, &tr, &s, h, actions);
		plan = jv_null();
	} else if (st != NULL && strcmp(st, "running") == 0 &&
	    ((strcmp(tt, "llm.finished") == 0 && ok && !truncated) ||
	    strcmp(tt, "tool.finished") == 0 || strcmp(tt,
	    "sub_agent.finished") == 0) && has_action(actions, "llm.call")) {
		r = end_step(c, plan, &s, h, actions);
		plan = jv_null();
	}
	jv_free(plan);
	jv_free(tr);
	return r;
}

/*
 * The reason an autonomous turn tid ended, from its plan at the head:
 * "completed", "stalled" or "max_steps"; jv_null() for any other turn,
 * jv_invalid() when the store fails.
 */
jv
eng_auto_reason(struct cx *c, const char *tid)
{
	char h[ART_ID_MAX + 1];
	jv plan, out;
	const char *pt, *st;

	if (tid == NULL)
		return jv_null();
	if (eng_head(c, h, sizeof(h)) == -1)
		return jv_invalid();
	plan = art_session_resolve(c->t, c->sid, ART_VERSION_PLAN, *h != '\0' ?
	    h : NULL, c->err);
	if (!jv_is_valid(plan))
		return plan;
	pt = art_json_str(&plan, "turn_id");
	st = art_json_str(&plan, "status");
	if (pt == NULL || strcmp(pt, tid) != 0 || st == NULL ||
	    (strcmp(st, "completed") != 0 && strcmp(st, "stalled") != 0 &&
	    strcmp(st, "max_steps") != 0)) {
		jv_free(plan);
		return jv_null();
	}
	out = jv_string(st);
	jv_free(plan);
	return out;
}
