/* auto.c - autonomous mode: a goal, its todo plan, and when to stop
 *
 * Everything here is a function of a plan object and what a step did, so
 * the engine can record the plan as a session event and replay it after a
 * crash: no state lives outside the jv.  Todos are done in list order
 * (only the active one can be marked, and the next pending one follows),
 * so the last done todo is always the one most recently finished.
 */
#include "auto.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sha.h"

#define DEF_PLAN_SIZE		12
#define DEF_STALL_WINDOW	3
#define DEF_MAX_STEPS		40

/* --- the agent's settings ----------------------------------------------- */

int
art_auto_is(const jv *config)
{
	const char *m;

	if (jv_get_kind(*config) != JV_KIND_OBJECT)
		return 0;
	m = art_json_str(config, "execution_mode");
	return m != NULL && strcmp(m, "autonomous") == 0;
}

/* obj's integer member key into *out when it is one in [lo, hi]. */
static void
take_int(const jv *obj, const char *key, int64_t lo, int64_t hi,
    int64_t *out)
{
	jv v = art_json_field(obj, key);
	double d;

	if (jv_get_kind(v) == JV_KIND_NUMBER) {
		d = jv_number_value(v);
		if (d == floor(d) && d >= (double)lo && d <= (double)hi)
			*out = (int64_t)d;
	}
	jv_free(v);
}

void
art_auto_settings(const jv *config, struct art_auto *s)
{
	jv a = jv_get_kind(*config) == JV_KIND_OBJECT ?
	    art_json_field(config, "autonomous") : jv_null();
	const char *on;

	*s = (struct art_auto){ DEF_PLAN_SIZE, DEF_STALL_WINDOW,
	    DEF_MAX_STEPS, 0 };
	if (jv_get_kind(a) == JV_KIND_OBJECT) {
		take_int(&a, "max_todos", 1, 100, &s->max_todos);
		take_int(&a, "stall_window", 1, 100, &s->stall_window);
		take_int(&a, "max_steps", 1, 10000, &s->max_steps);
		on = art_json_str(&a, "on_stall");
		s->park_on_stall = on != NULL && strcmp(on, "park") == 0;
	}
	jv_free(a);
}

/* v (borrowed) as short JSON text for a message, into buf. */
static const char *
shown(const jv *v, char *buf, size_t n)
{
	char *s = art_json_dump(v, NULL);

	snprintf(buf, n, "%.40s%s", s != NULL ? s : "?",
	    s != NULL && strlen(s) > 40 ? "..." : "");
	free(s);
	return buf;
}

/* A string member key of config, one of the NULL-terminated ok, or absent. */
static int
check_word(const jv *config, const char *key, const char *what,
    const char *const *ok, const char *want, struct art_err *err)
{
	jv v = art_json_field(config, key);
	char buf[64];
	int i, r = 0;

	if (jv_get_kind(v) == JV_KIND_NULL) {
		jv_free(v);
		return 0;
	}
	for (i = 0; jv_get_kind(v) == JV_KIND_STRING && ok[i] != NULL; i++)
		if (strcmp(ok[i], jv_string_value(v)) == 0)
			break;
	if (jv_get_kind(v) != JV_KIND_STRING || ok[i] == NULL)
		r = art_err_set(err, "bad_agent", "%s: expected %s, got %s",
		    what, want, shown(&v, buf, sizeof(buf)));
	jv_free(v);
	return r;
}

/* Member key of a (an "autonomous" object) is an integer in [lo, hi]. */
static int
check_range(const jv *a, const char *key, int64_t lo, int64_t hi,
    struct art_err *err)
{
	jv v = art_json_field(a, key);
	char buf[64];
	double d;
	int r = 0;

	if (jv_get_kind(v) == JV_KIND_NULL) {
		jv_free(v);
		return 0;
	}
	d = jv_get_kind(v) == JV_KIND_NUMBER ? jv_number_value(v) : NAN;
	if (!(d == floor(d) && d >= (double)lo && d <= (double)hi))
		r = art_err_set(err, "bad_agent", "autonomous.%s: expected an "
		    "integer from %lld to %lld, got %s", key, (long long)lo,
		    (long long)hi, shown(&v, buf, sizeof(buf)));
	jv_free(v);
	return r;
}

static int
check_autonomous(const jv *config, struct art_err *err)
{
	static const char *const members[] = { "max_todos", "stall_window",
	    "max_steps", "on_stall", NULL };
	static const char *const on_stall[] = { "end", "park", NULL };
	jv a = art_json_field(config, "autonomous");
	int i, bad = 0;

	if (jv_get_kind(a) == JV_KIND_NULL) {
		jv_free(a);
		return 0;
	}
	if (jv_get_kind(a) != JV_KIND_OBJECT) {
		jv_free(a);
		return art_err_set(err, "bad_agent", "autonomous: expected an "
		    "object of max_todos, stall_window, max_steps, on_stall");
	}
	jv_object_foreach(a, k, v) {
		for (i = 0; members[i] != NULL &&
		    strcmp(members[i], jv_string_value(k)) != 0; i++)
			;
		if (bad == 0 && members[i] == NULL)
			bad = art_err_set(err, "bad_agent", "autonomous: unknown "
			    "member '%.64s' (max_todos, stall_window, "
			    "max_steps, on_stall)", jv_string_value(k));
		jv_free(k);
		jv_free(v);
	}
	if (bad == 0)
		bad = check_range(&a, "max_todos", 1, 100, err);
	if (bad == 0)
		bad = check_range(&a, "stall_window", 1, 100, err);
	if (bad == 0)
		bad = check_range(&a, "max_steps", 1, 10000, err);
	if (bad == 0)
		bad = check_word(&a, "on_stall", "autonomous.on_stall",
		    on_stall, "\"end\" or \"park\"", err);
	jv_free(a);
	return bad;
}

int
art_auto_check(const jv *config, struct art_err *err)
{
	static const char *const modes[] = { "chat", "autonomous", NULL };
	static const char *const answers[] = { "text", "structured", NULL };

	if (jv_get_kind(*config) != JV_KIND_OBJECT)
		return art_err_set(err, "bad_agent", "expected an object");
	if (check_word(config, "execution_mode", "execution_mode", modes,
	    "\"chat\" or \"autonomous\"", err) == -1 ||
	    check_autonomous(config, err) == -1 ||
	    check_word(config, "answer", "answer", answers,
	    "\"text\" or \"structured\"", err) == -1)
		return -1;
	return 0;
}

/* --- planning ----------------------------------------------------------- */

jv
art_auto_plan_format(void)
{
	return art_json_parse_str("{\"name\":\"" ART_AUTO_PLAN_FORMAT "\","
	    "\"description\":\"The goal broken into an ordered list of todos\","
	    "\"schema\":{\"type\":\"object\",\"properties\":{\"todos\":{"
	    "\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	    "\"title\":{\"type\":\"string\",\"description\":\"The step, one "
	    "imperative sentence\"},"
	    "\"id\":{\"type\":\"string\"},"
	    "\"ordering\":{\"type\":\"integer\",\"minimum\":0},"
	    "\"acceptance\":{\"type\":\"string\",\"description\":\"How to "
	    "tell it is done\"}},"
	    "\"required\":[\"title\"]}}},\"required\":[\"todos\"]}}", NULL);
}

jv
art_auto_plan_prompt(const char *goal, const struct art_auto *s)
{
	return jv_string_fmt("Plan how to reach the goal below. Do not do the "
	    "work yet: only break the goal into at most %lld todos, in the "
	    "order they should be done. Each todo is one short imperative "
	    "sentence that says a concrete step, such as \"Read the config "
	    "file\". Use fewer todos when the goal is simple; one is fine.\n"
	    "Reply with only a JSON object of this form, and no other text:\n"
	    "{\"todos\": [{\"title\": \"...\"}, {\"title\": \"...\"}]}\n\n"
	    "Goal: %s", (long long)s->max_todos, goal != NULL ? goal : "");
}

/* text's JSON: the whole of it, else what one ``` fence holds. */
static jv
reply_json(const char *text)
{
	const char *open, *body, *close;
	char *inner;
	jv v;

	v = art_json_parse_str(text, NULL);
	if (jv_is_valid(v) || (open = strstr(text, "```")) == NULL)
		return v;
	jv_free(v);
	/* The fence's first line may name a language ("```json"). */
	body = open + strcspn(open, "\n");
	if (*body == '\0' || (close = strstr(body + 1, "```")) == NULL)
		return jv_invalid();
	if ((inner = strndup(body + 1, (size_t)(close - body - 1))) == NULL)
		return jv_invalid();
	v = art_json_parse_str(inner, NULL);
	free(inner);
	return v;
}

/* t's title, trimmed (a new string), or jv_null() when it has none. */
static jv
todo_title(const jv *t)
{
	const char *s = jv_get_kind(*t) == JV_KIND_OBJECT ?
	    art_json_str(t, "title") : NULL;
	size_t n;

	if (s == NULL)
		return jv_null();
	s += strspn(s, " \t\r\n");
	for (n = strlen(s); n > 0 && strchr(" \t\r\n", s[n - 1]) != NULL; n--)
		;
	return n > 0 ? jv_string_sized(s, (int)n) : jv_null();
}

struct spec {
	jv	 title;
	double	 ordering;
	int	 has;	/* an ordering was given */
	size_t	 pos;	/* place in the reply, for a stable sort */
};

static int
spec_cmp(const void *a, const void *b)
{
	const struct spec *x = a, *y = b;

	if (x->has != y->has)
		return x->has ? -1 : 1;
	if (x->has && x->ordering != y->ordering)
		return x->ordering < y->ordering ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The titles of the reply's todos (those with one), in plan order. */
static jv
reply_titles(const char *reply, int64_t *nempty)
{
	jv v = reply != NULL ? reply_json(reply) : jv_invalid(), todos,
	    titles = jv_array(), o;
	struct spec *sp;
	size_t n = 0, i;

	*nempty = 0;
	todos = jv_get_kind(v) == JV_KIND_OBJECT ? art_json_field(&v, "todos") :
	    jv_null();
	jv_free(v);
	if (jv_get_kind(todos) != JV_KIND_ARRAY ||
	    (sp = calloc((size_t)jv_array_length(jv_copy(todos)) + 1,
	    sizeof(*sp))) == NULL) {
		jv_free(todos);
		return titles;
	}
	jv_array_foreach(todos, k, t) {
		sp[n].title = todo_title(&t);
		o = jv_get_kind(t) == JV_KIND_OBJECT ? art_json_field(&t,
		    "ordering") : jv_null();
		if ((sp[n].has = jv_get_kind(o) == JV_KIND_NUMBER))
			sp[n].ordering = jv_number_value(o);
		sp[n].pos = (size_t)k;
		if (jv_get_kind(sp[n].title) == JV_KIND_NULL)
			(*nempty)++;
		else
			n++;
		jv_free(o);
		jv_free(t);
	}
	jv_free(todos);
	qsort(sp, n, sizeof(*sp), spec_cmp);
	for (i = 0; i < n; i++)
		titles = jv_array_append(titles, sp[i].title);
	free(sp);
	return titles;
}

static jv
todo_new(int64_t n, jv title, const char *status)
{
	jv t = jv_object_set(jv_object(), jv_string("id"),
	    jv_string_fmt("todo-%lld", (long long)n));

	t = jv_object_set(t, jv_string("title"), title);
	return jv_object_set(t, jv_string("status"), jv_string(status));
}

jv
art_auto_plan_new(const char *goal, const char *reply,
    const struct art_auto *s, int64_t *dropped)
{
	jv titles, todos = jv_array(), plan;
	int64_t nempty, n, max = s->max_todos > 0 ? s->max_todos : 1;

	if (goal == NULL)
		goal = "";
	titles = reply_titles(reply, &nempty);
	n = jv_array_length(jv_copy(titles));
	if (n == 0)
		titles = jv_array_append(titles, jv_string(goal));
	jv_array_foreach(titles, i, t) {
		if (i < max)
			todos = jv_array_append(todos, todo_new(i + 1, t,
			    i == 0 ? "active" : "pending"));
		else
			jv_free(t);
	}
	jv_free(titles);
	if (dropped != NULL)
		*dropped = nempty + (n > max ? n - max : 0);
	plan = jv_object_set(jv_object(), jv_string("goal"), jv_string(goal));
	plan = jv_object_set(plan, jv_string("status"), jv_string("running"));
	plan = jv_object_set(plan, jv_string("todos"), todos);
	plan = jv_object_set(plan, jv_string("active"), jv_string("todo-1"));
	plan = jv_object_set(plan, jv_string("step"), jv_number(0));
	plan = jv_object_set(plan, jv_string("window"), jv_array());
	return jv_object_set(plan, jv_string("seen"), jv_array());
}

jv
art_auto_decomposition(const jv *plan)
{
	jv todos = art_json_field(plan, "todos"), out = jv_array(), d;

	if (jv_get_kind(todos) == JV_KIND_ARRAY)
		jv_array_foreach(todos, i, t) {
			d = jv_object_set(jv_object(), jv_string("id"),
			    art_json_field(&t, "id"));
			d = jv_object_set(d, jv_string("title"),
			    art_json_field(&t, "title"));
			d = jv_object_set(d, jv_string("ordering"),
			    jv_number(i));
			out = jv_array_append(out, d);
			jv_free(t);
		}
	jv_free(todos);
	d = jv_object_set(jv_object(), jv_string("goal"),
	    art_json_field(plan, "goal"));
	return jv_object_set(d, jv_string("todos"), out);
}

/* --- steps -------------------------------------------------------------- */

/* The todo of plan whose id is id (a new jv), or jv_null(). */
static jv
todo_by_id(const jv *plan, const char *id, int *index)
{
	jv todos = art_json_field(plan, "todos"), found = jv_null();
	const char *tid;

	if (id != NULL && jv_get_kind(todos) == JV_KIND_ARRAY)
		jv_array_foreach(todos, i, t) {
			tid = art_json_str(&t, "id");
			if (jv_get_kind(found) == JV_KIND_NULL && tid != NULL &&
			    strcmp(tid, id) == 0) {
				jv_free(found);
				found = jv_copy(t);
				if (index != NULL)
					*index = i;
			}
			jv_free(t);
		}
	jv_free(todos);
	return found;
}

jv
art_auto_active(const jv *plan)
{
	return todo_by_id(plan, art_json_str(plan, "active"), NULL);
}

static const char *
mark_of(const char *status)
{
	if (status != NULL && strcmp(status, "done") == 0)
		return "[x]";
	if (status != NULL && strcmp(status, "active") == 0)
		return "[>]";
	return "[ ]";
}

jv
art_auto_step_prompt(const jv *plan)
{
	jv todos = art_json_field(plan, "todos"), active = art_auto_active(plan);
	const char *goal = art_json_str(plan, "goal"), *id, *title;
	jv s;

	s = jv_string_fmt("You are working toward this goal:\n%s\n\nThe plan "
	    "([x] done, [>] now, [ ] later):\n", goal != NULL ? goal : "");
	if (jv_get_kind(todos) == JV_KIND_ARRAY)
		jv_array_foreach(todos, i, t) {
			s = jv_string_append_str(s, mark_of(art_json_str(&t,
			    "status")));
			s = jv_string_append_str(s, " ");
			s = jv_string_append_str(s, art_json_str(&t, "id") !=
			    NULL ? art_json_str(&t, "id") : "?");
			s = jv_string_append_str(s, ": ");
			s = jv_string_append_str(s, art_json_str(&t, "title") !=
			    NULL ? art_json_str(&t, "title") : "");
			s = jv_string_append_str(s, "\n");
			jv_free(t);
			(void)i;
		}
	jv_free(todos);
	id = art_json_str(&active, "id");
	title = art_json_str(&active, "title");
	if (id == NULL || title == NULL)
		s = jv_string_append_str(s, "\nEvery todo is done.");
	else
		s = jv_string_concat(s, jv_string_fmt("\nWork now on %s only: "
		    "%s\nUse the tools you have. When %s is finished, call the "
		    ART_AUTO_DONE_TOOL " tool with {\"id\": \"%s\"} and a "
		    "one-line summary of what you did. Do not call "
		    ART_AUTO_DONE_TOOL " for work that is not finished.", id,
		    title, id, id));
	jv_free(active);
	return s;
}

jv
art_auto_done_tool(void)
{
	return art_json_parse_str("{\"name\":\"" ART_AUTO_DONE_TOOL "\","
	    "\"description\":\"Mark the active todo of the plan as done, once "
	    "its work is finished. The next todo then becomes active.\","
	    "\"input\":{\"type\":\"object\",\"properties\":{"
	    "\"id\":{\"type\":\"string\",\"description\":\"The todo's id, "
	    "such as todo-1; the active todo when left out\"},"
	    "\"summary\":{\"type\":\"string\",\"description\":\"What was "
	    "done, in one line\"}}}}", NULL);
}

/* plan's todos (consumed) with todo i's status set. */
static jv
set_status(jv todos, int i, const char *status)
{
	jv t = jv_array_get(jv_copy(todos), i);

	t = jv_object_set(t, jv_string("status"), jv_string(status));
	return jv_array_set(todos, i, t);
}

int
art_auto_mark_done(jv *plan, const char *id, char *why, size_t n)
{
	const char *status = art_json_str(plan, "status"),
	    *active = art_json_str(plan, "active");
	jv todo, todos, next = jv_null();
	int idx = -1;

	if (n > 0)
		why[0] = '\0';
	if (status == NULL || strcmp(status, "running") != 0) {
		snprintf(why, n, "the plan is not running");
		return -1;
	}
	if (id == NULL || *id == '\0')
		id = active;
	if (id == NULL) {
		snprintf(why, n, "no todo is active");
		return -1;
	}
	todo = todo_by_id(plan, id, &idx);
	jv_free(todo);
	if (idx < 0) {
		snprintf(why, n, "no todo '%.64s'", id);
		return -1;
	}
	if (active == NULL || strcmp(active, id) != 0) {
		snprintf(why, n, "%.64s is not the active todo (%.64s is)", id,
		    active != NULL ? active : "none");
		return -1;
	}
	todos = set_status(art_json_field(plan, "todos"), idx, "done");
	jv_array_foreach(todos, i, t) {
		status = art_json_str(&t, "status");
		if (jv_get_kind(next) == JV_KIND_NULL && status != NULL &&
		    strcmp(status, "pending") == 0) {
			next = art_json_field(&t, "id");
			idx = i;
		}
		jv_free(t);
	}
	if (jv_get_kind(next) != JV_KIND_NULL)
		todos = set_status(todos, idx, "active");
	*plan = jv_object_set(*plan, jv_string("todos"), todos);
	*plan = jv_object_set(*plan, jv_string("active"), next);
	return 0;
}

/* The last done todo's id (a new jv), or jv_null(). */
static jv
last_done(const jv *plan)
{
	jv todos = art_json_field(plan, "todos"), id = jv_null();
	const char *s;

	if (jv_get_kind(todos) == JV_KIND_ARRAY)
		jv_array_foreach(todos, i, t) {
			s = art_json_str(&t, "status");
			if (s != NULL && strcmp(s, "done") == 0) {
				jv_free(id);
				id = art_json_field(&t, "id");
			}
			jv_free(t);
			(void)i;
		}
	jv_free(todos);
	return id;
}

static void
hash_hex(const char *s, size_t len, char out[2 * ART_SHA256_LEN + 1])
{
	unsigned char d[ART_SHA256_LEN];

	art_sha256(s, len, d);
	art_hex(d, sizeof(d), out);
}

static int
has_string(const jv *a, const char *s)
{
	int found = 0;

	if (jv_get_kind(*a) != JV_KIND_ARRAY)
		return 0;
	jv_array_foreach(*a, i, x) {
		if (jv_get_kind(x) == JV_KIND_STRING &&
		    strcmp(jv_string_value(x), s) == 0)
			found = 1;
		jv_free(x);
		(void)i;
	}
	return found;
}

/* fresh (consumed) with text's hash appended, when neither it nor seen
 * holds it. */
static jv
add_artifact(jv fresh, const jv *seen, const char *text)
{
	char hex[2 * ART_SHA256_LEN + 1];

	hash_hex(text, strlen(text), hex);
	if (!has_string(seen, hex) && !has_string(&fresh, hex))
		fresh = jv_array_append(fresh, jv_string(hex));
	return fresh;
}

/* A tool call's arguments in canonical JSON when they parse, else as
 * given, so a change of spacing alone is no change. */
static void
hash_call(struct art_sha256 *h, const jv *call)
{
	jv fn = art_json_field(call, "function"), args, canon;
	const char *name = art_json_str(&fn, "name"), *a;

	if (name == NULL)
		name = art_json_str(call, "name");
	art_sha256_update(h, name != NULL ? name : "", name != NULL ?
	    strlen(name) + 1 : 1);
	args = jv_get_kind(fn) == JV_KIND_OBJECT ? art_json_field(&fn,
	    "arguments") : art_json_field(call, "arguments");
	if (jv_get_kind(args) == JV_KIND_STRING) {
		a = jv_string_value(args);
		canon = art_json_parse_str(a, NULL);
		args = jv_is_valid(canon) ? (jv_free(args), canon) :
		    (jv_free(canon), args);
	}
	canon = jv_get_kind(args) == JV_KIND_STRING ? args :
	    art_json_canon(args);
	art_sha256_update(h, jv_string_value(canon),
	    (size_t)jv_string_length_bytes(jv_copy(canon)) + 1);
	jv_free(canon);
	jv_free(fn);
}

static void
delta_hash(const struct art_auto_step *st, char out[2 * ART_SHA256_LEN + 1])
{
	struct art_sha256 h;
	unsigned char d[ART_SHA256_LEN];
	const char *text = st->text != NULL ? st->text : "";

	art_sha256_init(&h);
	/* Each part ends with its NUL, so "ab"+"c" and "a"+"bc" differ. */
	art_sha256_update(&h, text, strlen(text) + 1);
	if (st->tool_calls != NULL && jv_get_kind(*st->tool_calls) ==
	    JV_KIND_ARRAY)
		jv_array_foreach(*st->tool_calls, i, c) {
			hash_call(&h, &c);
			jv_free(c);
			(void)i;
		}
	art_sha256_final(&h, d);
	art_hex(d, sizeof(d), out);
}

jv
art_auto_progress(const jv *plan, const struct art_auto_step *st)
{
	jv seen = art_json_field(plan, "seen"), fresh = jv_array(), rec;
	char hex[2 * ART_SHA256_LEN + 1];
	int64_t step = 0;
	int calls = st->tool_calls != NULL && jv_get_kind(*st->tool_calls) ==
	    JV_KIND_ARRAY && jv_array_length(jv_copy(*st->tool_calls)) > 0;

	if (st->results != NULL && jv_get_kind(*st->results) == JV_KIND_ARRAY)
		jv_array_foreach(*st->results, i, r) {
			if (jv_get_kind(r) == JV_KIND_STRING)
				fresh = add_artifact(fresh, &seen,
				    jv_string_value(r));
			jv_free(r);
			(void)i;
		}
	if (st->text != NULL && *st->text != '\0')
		fresh = add_artifact(fresh, &seen, st->text);
	jv_free(seen);
	delta_hash(st, hex);
	art_json_get_int(plan, "step", 0, &step, NULL);
	rec = jv_object_set(jv_object(), jv_string("step"), jv_number(step + 1));
	rec = jv_object_set(rec, jv_string("todo"), st->confirmed ?
	    last_done(plan) : art_json_field(plan, "active"));
	rec = jv_object_set(rec, jv_string("made_tool_calls"), jv_bool(calls));
	rec = jv_object_set(rec, jv_string("tool_calls_errored"),
	    jv_number(st->errored));
	rec = jv_object_set(rec, jv_string("produced_new_artifacts"),
	    jv_bool(jv_array_length(jv_copy(fresh)) > 0));
	rec = jv_object_set(rec, jv_string("todo_marked_complete_by_model"),
	    jv_bool(st->marked));
	rec = jv_object_set(rec, jv_string("todo_completed"),
	    jv_bool(st->confirmed));
	rec = jv_object_set(rec, jv_string("response_delta_hash"),
	    jv_string(hex));
	return jv_object_set(rec, jv_string("artifacts"), fresh);
}

/* The last max members of a (consumed). */
static jv
keep_last(jv a, int64_t max)
{
	int64_t n = jv_array_length(jv_copy(a));

	if (max < 0)
		max = 0;
	return n > max ? jv_array_slice(a, (int)(n - max), (int)n) : a;
}

static int
is_true(const jv *o, const char *key)
{
	jv v = art_json_field(o, key);
	int yes = jv_get_kind(v) == JV_KIND_TRUE;

	jv_free(v);
	return yes;
}

static int
all_done(const jv *plan)
{
	jv todos = art_json_field(plan, "todos");
	const char *s;
	int done = 1;

	if (jv_get_kind(todos) == JV_KIND_ARRAY)
		jv_array_foreach(todos, i, t) {
			s = art_json_str(&t, "status");
			if (s == NULL || strcmp(s, "done") != 0)
				done = 0;
			jv_free(t);
			(void)i;
		}
	jv_free(todos);
	return done;
}

/*
 * Did the window's steps, all without progress, repeat themselves?  A
 * window of one repeats when its step hashes as the step before it did
 * (prev, that step's hash, or NULL).
 */
static int
is_stalled(const jv *window, int64_t size, const char *prev)
{
	jv hashes = jv_array();
	const char *h, *first = NULL;
	int64_t n = jv_array_length(jv_copy(*window)), distinct = 0;
	int idle = 1;

	if (n < size || n == 0) {
		jv_free(hashes);
		return 0;
	}
	jv_array_foreach(*window, i, p) {
		if (is_true(&p, "produced_new_artifacts") ||
		    is_true(&p, "todo_completed"))
			idle = 0;
		/* The window holds the record, so h outlives p. */
		if ((h = art_json_str(&p, "response_delta_hash")) != NULL &&
		    !has_string(&hashes, h)) {
			hashes = jv_array_append(hashes, jv_string(h));
			distinct++;
		}
		if (i == 0)
			first = h;
		jv_free(p);
	}
	jv_free(hashes);
	if (!idle)
		return 0;
	if (n == 1)
		return first != NULL && prev != NULL && strcmp(first, prev) == 0;
	return distinct < n;
}

static jv
set_verdict(jv plan, const char *v, const char **verdict)
{
	*verdict = v;
	return jv_object_set(plan, jv_string("status"), jv_string(
	    strcmp(v, "continue") == 0 ? "running" : v));
}

jv
art_auto_after_step(jv plan, jv *progress, const struct art_auto *s,
    const char **verdict)
{
	jv fresh = art_json_field(progress, "artifacts"), seen, window, last;
	int64_t step = 0;
	const char *prev;
	int stalled;

	*progress = jv_object_delete(*progress, jv_string("artifacts"));
	seen = art_json_field(&plan, "seen");
	if (jv_get_kind(seen) != JV_KIND_ARRAY)
		seen = (jv_free(seen), jv_array());
	if (jv_get_kind(fresh) == JV_KIND_ARRAY)
		seen = jv_array_concat(seen, fresh);
	else
		jv_free(fresh);
	plan = jv_object_set(plan, jv_string("seen"), keep_last(seen,
	    ART_AUTO_SEEN_MAX));
	window = art_json_field(&plan, "window");
	if (jv_get_kind(window) != JV_KIND_ARRAY)
		window = (jv_free(window), jv_array());
	last = jv_array_length(jv_copy(window)) > 0 ? jv_array_get(
	    jv_copy(window), jv_array_length(jv_copy(window)) - 1) : jv_null();
	window = keep_last(jv_array_append(window, jv_copy(*progress)),
	    s->stall_window);
	art_json_get_int(&plan, "step", 0, &step, NULL);
	plan = jv_object_set(plan, jv_string("step"), jv_number(step + 1));
	prev = jv_get_kind(last) == JV_KIND_OBJECT ? art_json_str(&last,
	    "response_delta_hash") : NULL;
	stalled = is_stalled(&window, s->stall_window, prev);
	jv_free(last);
	plan = jv_object_set(plan, jv_string("window"), window);
	if (all_done(&plan))
		return set_verdict(plan, "completed", verdict);
	if (stalled)
		return set_verdict(plan, "stalled", verdict);
	if (step + 1 >= s->max_steps)
		return set_verdict(plan, "max_steps", verdict);
	return set_verdict(plan, "continue", verdict);
}

jv
art_auto_resume(jv plan)
{
	const char *status = art_json_str(&plan, "status");

	if (status == NULL || strcmp(status, "stalled") != 0)
		return plan;
	plan = jv_object_set(plan, jv_string("status"), jv_string("running"));
	return jv_object_set(plan, jv_string("window"), jv_array());
}
