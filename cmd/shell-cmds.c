/* shell-cmds.c - agentrt-shell's sessions, interrupts and slash commands
 *
 * Everything here asks the other binaries (agentrt-session, agentrt-tree)
 * rather than opening the store: the shell forks a ring every turn, and
 * LMDB environments must not cross a fork.
 */
#include <config.h>

#include "shell.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "answer.h"
#include "diag.h"
#include "err.h"
#include "json.h"
#include "userconf.h"

struct slash {
	const char	*name;
	void		(*run)(struct shell *, char *arg);
	const char	*args;
	const char	*help;
};

static const struct slash slashes[];

/* --- what the store and the agent files hold ---------------------------- */

jv
shell_sessions(const struct shell *sh)
{
	struct art_strvec a = ART_STRVEC_INIT;
	jv v;

	args_add(&a, "agentrt-session"), args_add(&a, "ls");
	v = shell_json(sh, &a, true);
	return jv_is_valid(v) ? v : (jv_free(v), jv_array());
}

static jv
show(const struct shell *sh, const char *sid)
{
	struct art_strvec a = ART_STRVEC_INIT;
	jv v;

	args_add(&a, "agentrt-session"), args_add(&a, "show");
	args_add(&a, sid);
	v = shell_json(sh, &a, true);
	return jv_is_valid(v) ? jv_array_get(v, 0) : v;
}

/* The active path's messages, root to head (an array, maybe empty). */
static jv
path(const struct shell *sh)
{
	struct art_strvec a = ART_STRVEC_INIT;
	jv v;

	args_add(&a, "agentrt-tree"), args_add(&a, "path");
	args_add(&a, sh->sid);
	v = shell_json(sh, &a, false);
	return jv_is_valid(v) ? v : (jv_free(v), jv_array());
}

jv
shell_agents(const struct shell *sh)
{
	return art_agent_names(sh->dirs, sh->ndirs);
}

/* The session's agent config, else its agent file's; null when neither. */
jv
shell_config(const struct shell *sh)
{
	struct art_err err;
	jv s, c = jv_null();

	if (sh->sid[0] != '\0') {
		s = show(sh, sh->sid);
		c = jv_is_valid(s) ? art_json_field(&s, "config") : jv_null();
		jv_free(s);
	}
	if (jv_get_kind(c) == JV_KIND_NULL && sh->agent[0] != '\0') {
		jv_free(c);
		c = sh->builtin ? shell_builtin_config(sh, &err) :
		    art_agent_load(sh->dirs, sh->ndirs, sh->agent, &err);
		if (!jv_is_valid(c))
			c = (jv_free(c), jv_null());
	}
	return c;
}

/* Ids of the messages on the active path and at every leaf. */
jv
shell_node_ids(const struct shell *sh)
{
	struct art_strvec a = ART_STRVEC_INIT;
	jv ids = jv_array(), p, b;
	const char *id;

	if (sh->sid[0] == '\0')
		return ids;
	p = path(sh);
	args_add(&a, "agentrt-tree"), args_add(&a, "branches");
	args_add(&a, sh->sid);
	b = shell_json(sh, &a, true);
	if (jv_is_valid(b))
		p = jv_array_concat(p, b);
	else
		jv_free(b);
	jv_array_foreach(p, i, m) {
		id = art_json_str(&m, "id");
		if (id != NULL && !art_json_has_str(&ids, id))
			ids = jv_array_append(ids, jv_string(id));
		jv_free(m);
	}
	jv_free(p);
	return ids;
}

/*
 * A session of the built-in chat agent (no chat.json on the agent path)
 * stays one: /new or -S makes the next of it on its model, which the
 * shell then uses, unless -m or /model named another.
 */
static void
builtin_again(struct shell *sh)
{
	struct art_err err;
	const char *model;
	jv file, c;

	sh->builtin = false;
	if (strcmp(sh->agent, "chat") != 0)
		return;
	file = art_agent_load(sh->dirs, sh->ndirs, "chat", &err);
	if (jv_is_valid(file)) {
		jv_free(file);
		return;
	}
	jv_free(file);
	c = shell_config(sh);
	if ((model = art_json_str(&c, "model")) != NULL) {
		if (sh->model[0] == '\0')
			snprintf(sh->model, sizeof(sh->model), "%s", model);
		sh->builtin = true;
	}
	jv_free(c);
}

int
shell_switch(struct shell *sh, const char *id)
{
	jv all = shell_sessions(sh), hit = jv_null();
	size_t len = strlen(id);
	int n = 0;
	const char *sid, *agent;

	jv_array_foreach(all, i, s) {
		sid = art_json_str(&s, "id");
		if (sid != NULL && strncmp(sid, id, len) == 0 && len > 0 &&
		    (n++ == 0 || strcmp(sid, id) == 0)) {
			jv_free(hit);
			hit = jv_copy(s);
			if (strcmp(sid, id) == 0)
				n = 1;
		}
		jv_free(s);
	}
	jv_free(all);
	if (n != 1) {
		jv_free(hit);
		if (n == 0)
			art_warn("no session '%s'", id);
		else
			art_warn("session '%s' is ambiguous: %d sessions start "
			    "with it", id, n);
		return -1;
	}
	agent = art_json_str(&hit, "agent_id");
	snprintf(sh->sid, sizeof(sh->sid), "%s", art_json_str(&hit, "id"));
	snprintf(sh->agent, sizeof(sh->agent), "%s", agent != NULL ? agent :
	    "");
	jv_free(hit);
	builtin_again(sh);
	return 0;
}

/* --- turns and their interrupts ---------------------------------------- */

/* Asks a question on the terminal; NULL at EOF or Ctrl-C. */
static char *
ask(struct shell *sh, const char *question)
{
	char *line = edit_line(sh, question, NULL);

	if (line != NULL && sh->interrupted) {
		free(line);
		return NULL;
	}
	return line;
}

static char *
approval(struct shell *sh, const jv *payload)
{
	const char *tool = art_json_str(payload, "tool_name");
	const char *args = art_json_str(payload, "args_summary");
	char q[1024], *line, *out = NULL;

	/* What the event shows of the arguments: screened, and cut. */
	snprintf(q, sizeof(q), "Allow %s %s? [y/n] ", tool != NULL ? tool :
	    "the tool", args != NULL ? args : "");
	while (out == NULL && (line = ask(sh, q)) != NULL) {
		if (line[0] == 'y' || line[0] == 'Y')
			out = strdup("{\"approved\":true}");
		else if (line[0] == 'n' || line[0] == 'N')
			out = strdup("{\"approved\":false,"
			    "\"reason\":\"denied in the shell\"}");
		free(line);
	}
	return out;
}

/* The option a listed number stands for; else the line as it is. */
static jv
number_to_option(const jv *opts, const char *line)
{
	char *end;
	long n = strtol(line, &end, 10);
	jv o;

	if (jv_get_kind(*opts) != JV_KIND_ARRAY || end == line || *end != '\0'
	    || n < 1 || n > jv_array_length(jv_copy(*opts)))
		return jv_string(line);
	o = jv_array_get(jv_copy(*opts), (int)n - 1);
	if (jv_get_kind(o) == JV_KIND_STRING)
		return o;
	jv_free(o);
	return jv_string(line);
}

static char *
answer(struct shell *sh, const jv *payload)
{
	const char *q = art_json_str(payload, "question");
	jv opts = art_json_field(payload, "options"), a;
	char *line, *out;

	printf("%s\n", q != NULL ? q : "The agent asks for input.");
	if (jv_get_kind(opts) == JV_KIND_ARRAY)
		jv_array_foreach(opts, i, o) {
			if (jv_get_kind(o) == JV_KIND_STRING)
				printf("  %d. %s\n", i + 1, jv_string_value(o));
			jv_free(o);
		}
	fflush(stdout);
	if ((line = ask(sh, "answer> ")) == NULL) {
		jv_free(opts);
		return NULL;
	}
	a = jv_object_set(jv_object(), jv_string("answer"), number_to_option(
	    &opts, line));
	jv_free(opts);
	free(line);
	a = jv_dump_string(a, 0);
	out = strdup(jv_string_value(a));
	jv_free(a);
	return out;
}

/* The session's open interrupts, each with its "id"; an object. */
static jv
interrupts(const struct shell *sh)
{
	jv s, all, out = jv_object();

	if (sh->sid[0] == '\0')
		return out;
	s = show(sh, sh->sid);
	all = jv_is_valid(s) ? art_json_field(&s, "interrupts") : jv_null();
	jv_free(s);
	if (jv_get_kind(all) != JV_KIND_OBJECT) {
		jv_free(all);
		return out;
	}
	jv_object_foreach(all, k, v)
		out = jv_object_set(out, jv_copy(k),
		    jv_object_set(v, jv_string("id"), k));
	jv_free(all);
	return out;
}

/* The open interrupt: the last one the turn saw, else the session's. */
static jv
open_interrupt(struct shell *sh, const jv *seen)
{
	jv all, keys, v = jv_null();

	if (jv_get_kind(*seen) == JV_KIND_OBJECT)
		return jv_copy(*seen);
	all = interrupts(sh);
	if (jv_object_length(jv_copy(all)) > 0) {
		keys = jv_keys(jv_copy(all));
		v = jv_object_get(all, jv_array_get(keys, 0));
	} else
		jv_free(all);
	return v;
}

/* The payload's type ("approval", "llm.failed", …) or NULL; borrowed. */
static const char *
payload_type(const jv *intr)
{
	jv p = art_json_field(intr, "payload");
	const char *type = art_json_str(&p, "type");

	jv_free(p);	/* intr still holds the string */
	return type;
}

/* Does a person answer intr (an approval, a question), or is it retried? */
static bool
is_question(const jv *intr)
{
	const char *type = payload_type(intr);

	return type != NULL && (strcmp(type, "approval") == 0 ||
	    strcmp(type, "input_required") == 0);
}

/* How the turn goes on, said on the terminal or (no REPL) stderr. */
static void
advise(struct shell *sh, const jv *intr)
{
	const char *reason = art_json_str(intr, "reason"),
	    *id = art_json_str(intr, "id"), *type = payload_type(intr),
	    *payload = "";

	if (reason == NULL)
		reason = "an interrupt";
	if (id == NULL)
		id = "ID";
	if (sh->tty) {
		render_dim(sh, "waiting: %s; /resume %s %s", reason, id,
		    is_question(intr) ? "PAYLOAD answers it" :
		    "calls the model again");
		return;
	}
	if (type != NULL && strcmp(type, "approval") == 0)
		payload = " --payload '{\"approved\":true}'";
	else if (type != NULL && strcmp(type, "input_required") == 0)
		payload = " --payload '{\"answer\":\"...\"}'";
	art_warn("session %s is waiting: %s; resume it in the REPL "
	    "(agentrt-shell -s %s, then /resume), or in a ring with "
	    "agentrt-session run -s %s --resume %s%s", sh->sid, reason,
	    sh->sid, sh->sid, id, payload);
}

/*
 * Ctrl-C at an approval or a question stops the turn, as Ctrl-C while a
 * turn runs does: it is cancelled, so the next message is taken.
 */
static int
stop_parked(struct shell *sh, const jv *intr)
{
	jv payload = art_json_field(intr, "payload");
	const char *tool = art_json_str(&payload, "tool_name");

	shell_cancel(sh);
	if (is_question(intr) && strcmp(payload_type(intr), "approval") == 0)
		render_dim(sh, "[stopped: %s was not run; the turn is cancelled]",
		    tool != NULL ? tool : "the tool");
	else
		render_dim(sh, "[stopped: the question was not answered; the turn "
		    "is cancelled]");
	jv_free(payload);
	return SHELL_STOPPED;
}

/*
 * The payload a person gives the interrupt (caller frees); NULL when
 * there is none: *stopped then says whether Ctrl-C ended the asking.
 */
static char *
resolve(struct shell *sh, const jv *intr, bool *stopped)
{
	jv payload = art_json_field(intr, "payload");
	const char *type = art_json_str(&payload, "type");
	char *out = NULL;

	*stopped = false;
	if (sh->tty && type != NULL && strcmp(type, "approval") == 0)
		out = approval(sh, &payload);
	else if (sh->tty && type != NULL && strcmp(type, "input_required") == 0)
		out = answer(sh, &payload);
	if (out == NULL && sh->tty && is_question(intr) && sh->interrupted)
		*stopped = true;
	else if (out == NULL)
		advise(sh, intr);
	jv_free(payload);
	return out;
}

/* The answer ev (borrowed) as the text -c prints, without its last
 * newline, in place of reply (consumed). */
static jv
answer_reply(jv reply, const jv *ev)
{
	jv text = art_answer_text(ev, 80);
	int n = jv_string_length_bytes(jv_copy(text));
	const char *s = jv_string_value(text);

	jv_free(reply);
	if (n > 0 && s[n - 1] == '\n')
		reply = jv_string_sized(s, n - 1);
	else
		reply = jv_copy(text);
	jv_free(text);
	return reply;
}

static int
turn_once(struct shell *sh, const struct turn *t, jv *reply, jv *intr)
{
	struct render r;
	int status;

	render_init(&r, sh);
	status = shell_turn(sh, t, &r);
	render_end(&r, status);
	if (reply != NULL && jv_get_kind(r.completion) == JV_KIND_OBJECT) {
		jv_free(*reply);
		*reply = art_json_field(&r.completion, "text");
		/* A structured answer's reply is the answer, table and all
		 * (its completion's text is the summary alone). */
		if (jv_get_kind(r.answer) == JV_KIND_OBJECT &&
		    jv_get_kind(*reply) == JV_KIND_STRING)
			*reply = answer_reply(*reply, &r.answer);
	}
	*intr = jv_copy(r.interrupt);
	render_release(&r);
	return status;
}

int
shell_send(struct shell *sh, const struct turn *t, jv *reply)
{
	struct turn next;
	jv intr = jv_null(), open, id;
	char *payload;
	int status;
	bool stopped;

	if (sh->sid[0] == '\0' && sh->agent[0] == '\0') {
		art_warn("no agent: start a session with /new AGENT");
		return ART_EXIT_FAIL;
	}
	status = turn_once(sh, t, reply, &intr);
	while (status == 3) {
		open = open_interrupt(sh, &intr);
		jv_free(intr);
		intr = jv_null();
		if (jv_get_kind(open) != JV_KIND_OBJECT)
			break;
		if ((payload = resolve(sh, &open, &stopped)) == NULL) {
			if (stopped)
				status = stop_parked(sh, &open);
			jv_free(open);
			break;
		}
		id = art_json_field(&open, "id");
		next = (struct turn){ .resume = jv_string_value(id),
		    .payload = payload };
		status = turn_once(sh, &next, reply, &intr);
		free(payload);
		jv_free(id);
		jv_free(open);
	}
	jv_free(intr);
	return status;
}

/* --- slash commands ------------------------------------------------------ */

static bool
need_session(const struct shell *sh)
{
	if (sh->sid[0] != '\0')
		return true;
	render_error(sh, "no session yet: send a message first");
	return false;
}

/* Runs a sibling with its output on our stdout. */
static void
run_out(struct shell *sh, struct art_strvec *a)
{
	fflush(stdout);
	shell_run(sh, a, -1, false);
}

static void
cmd_new(struct shell *sh, char *arg)
{
	struct art_err err;
	jv cfg;

	if (*arg == '\0' && sh->agent[0] == '\0') {
		render_error(sh, "usage: /new AGENT");
		return;
	}
	if (*arg != '\0') {
		cfg = art_agent_load(sh->dirs, sh->ndirs, arg, &err);
		if (!jv_is_valid(cfg)) {
			render_error(sh, "%s", err.msg);
			jv_free(cfg);
			return;
		}
		jv_free(cfg);
		snprintf(sh->agent, sizeof(sh->agent), "%s", arg);
		sh->builtin = false;
	}
	sh->sid[0] = '\0';
	printf("new session of %s: it starts with your next message\n",
	    sh->agent);
}

static void
cmd_sessions(struct shell *sh, char *arg)
{
	jv all = shell_sessions(sh);
	const char *sid, *agent, *status, *title;

	(void)arg;
	if (jv_array_length(jv_copy(all)) == 0)
		printf("no sessions\n");
	jv_array_foreach(all, i, s) {
		sid = art_json_str(&s, "id");
		agent = art_json_str(&s, "agent_id");
		status = art_json_str(&s, "status");
		title = art_json_str(&s, "title");
		printf("%c %s  %-12s %-7s %s\n", sid != NULL &&
		    strcmp(sid, sh->sid) == 0 ? '*' : ' ', sid != NULL ? sid :
		    "?", agent != NULL ? agent : "-", status != NULL ? status :
		    "", title != NULL ? title : "");
		jv_free(s);
	}
	jv_free(all);
}

static void
cmd_switch(struct shell *sh, char *arg)
{
	if (*arg == '\0') {
		render_error(sh, "usage: /switch SESSION");
		return;
	}
	if (shell_switch(sh, arg) == 0)
		printf("session %s (%s)\n", sh->sid, sh->agent);
}

/* "BIN COMMAND SESSION", its output ours: /tree and /log. */
static void
run_on_session(struct shell *sh, const char *bin, const char *command)
{
	struct art_strvec a = ART_STRVEC_INIT;

	if (!need_session(sh))
		return;
	args_add(&a, bin), args_add(&a, command);
	args_add(&a, sh->sid);
	run_out(sh, &a);
}

static void
cmd_tree(struct shell *sh, char *arg)
{
	(void)arg;
	run_on_session(sh, "agentrt-tree", "show");
}

static void
cmd_checkout(struct shell *sh, char *arg)
{
	struct art_strvec a = ART_STRVEC_INIT;
	int null;

	if (*arg == '\0') {
		render_error(sh, "usage: /checkout NODE");
		return;
	}
	if (!need_session(sh))
		return;
	if ((null = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1)
		return;
	args_add(&a, "agentrt-tree"), args_add(&a, "checkout");
	args_add(&a, sh->sid), args_add(&a, arg);
	if (shell_run(sh, &a, null, false) == 0)
		printf("head moved to %s: the next message continues there\n",
		    arg);
	close(null);
}

/* A client.messages input: the view msgs (consumed), as JSON text. */
static void
send_view(struct shell *sh, jv msgs)
{
	jv in = jv_object_set(jv_object(), jv_string("type"),
	    jv_string("client.messages"));
	struct turn t = { .input = NULL };

	in = jv_object_set(in, jv_string("messages"), msgs);
	in = jv_dump_string(in, 0);
	t.input = jv_string_value(in);
	shell_send(sh, &t, NULL);
	jv_free(in);
}

/* The index on p of the last user message, or -1 (said). */
static int
last_user(const struct shell *sh, const jv *p)
{
	int i = jv_array_length(jv_copy(*p));
	const char *role;
	jv m;

	while (--i >= 0) {
		m = jv_array_get(jv_copy(*p), i);
		role = art_json_str(&m, "role");
		if (role != NULL && strcmp(role, "user") == 0) {
			jv_free(m);
			return i;
		}
		jv_free(m);
	}
	render_error(sh, "no user message on this branch");
	return -1;
}

static void
cmd_retry(struct shell *sh, char *arg)
{
	jv p;
	int i;

	(void)arg;
	if (!need_session(sh))
		return;
	p = path(sh);
	if ((i = last_user(sh, &p)) < 0) {
		jv_free(p);
		return;
	}
	/* The view ends on a recorded message: a sibling reply under it. */
	send_view(sh, jv_array_slice(p, 0, i + 1));
}

static void
cmd_edit(struct shell *sh, char *arg)
{
	jv p, m;
	char *text = NULL;
	int i;

	if (!need_session(sh))
		return;
	p = path(sh);
	if ((i = last_user(sh, &p)) < 0) {
		jv_free(p);
		return;
	}
	if (*arg == '\0' && sh->tty) {
		m = jv_array_get(jv_copy(p), i);
		text = edit_line(sh, "edit> ", art_json_str(&m, "content"));
		jv_free(m);
		if (text == NULL || sh->interrupted || *text == '\0') {
			free(text);
			jv_free(p);
			return;
		}
		arg = text;
	} else if (*arg == '\0') {
		render_error(sh, "usage: /edit TEXT");
		jv_free(p);
		return;
	}
	/* A message with no id after the recorded ones: a fork there. */
	m = jv_object_set(jv_object(), jv_string("role"), jv_string("user"));
	m = jv_object_set(m, jv_string("content"), jv_string(arg));
	send_view(sh, jv_array_append(jv_array_slice(p, 0, i), m));
	free(text);
}

static void
cmd_agent(struct shell *sh, char *arg)
{
	jv c = shell_config(sh);
	const char *model = art_json_str(&c, "model"),
	    *desc = art_json_str(&c, "description");

	(void)arg;
	if (sh->agent[0] == '\0')
		printf("no agent: start a session with /new AGENT\n");
	else
		printf("%s: %s%s%s%s\n", sh->agent, model != NULL ? model : "?",
		    sh->model[0] != '\0' ? " (this shell uses " : "",
		    sh->model, sh->model[0] != '\0' ? ")" : "");
	if (desc != NULL)
		printf("%s\n", desc);
	jv_free(c);
}

static void
cmd_model(struct shell *sh, char *arg)
{
	if (*arg != '\0')
		snprintf(sh->model, sizeof(sh->model), "%s",
		    art_userconf_model(&sh->conf, arg));
	if (sh->model[0] != '\0')
		printf("model: %s\n", sh->model);
	else
		printf("model: the agent's (no override)\n");
}

/* A price in dollars, as few digits as it needs ("0.075", "10"). */
static void
print_price(const jv *pricing, const char *key)
{
	jv p = art_json_field(pricing, key);

	if (jv_get_kind(p) == JV_KIND_NUMBER)
		printf("$%.9g", jv_number_value(p));
	else
		printf("?");
	jv_free(p);
}

/*
 * The models the llm stage knows (agentrt-llm --models), with their
 * prices; the user's aliases; and which model the next turns use.
 */
static void
cmd_models(struct shell *sh, char *arg)
{
	struct art_strvec a = ART_STRVEC_INIT;
	const char *m, *def = art_userconf_default(&sh->conf);
	jv all, pricing, aliases;
	bool listed = false, is_def;

	(void)arg;
	args_add(&a, "agentrt-llm"), args_add(&a, "--models");
	all = shell_json(sh, &a, false);
	if (!jv_is_valid(all)) {
		jv_free(all);
		return;
	}
	jv_array_foreach(all, i, e) {
		m = art_json_str(&e, "model");
		pricing = art_json_field(&e, "pricing");
		printf("%-30s", m != NULL ? m : "?");
		if (jv_get_kind(pricing) == JV_KIND_OBJECT) {
			print_price(&pricing, "input_per_million_tokens");
			printf(" in, ");
			print_price(&pricing, "output_per_million_tokens");
			printf(" out a million tokens");
		} else
			printf("offline, free");
		is_def = def != NULL && m != NULL && strcmp(def, m) == 0;
		listed |= is_def;
		printf("%s\n", is_def ? " (default)" : "");
		jv_free(pricing);
		jv_free(e);
	}
	jv_free(all);
	aliases = art_json_field(&sh->conf, "aliases");
	if (jv_get_kind(aliases) == JV_KIND_OBJECT)
		jv_object_foreach(aliases, k, v) {
			printf("%-30s= %s\n", jv_string_value(k),
			    jv_string_value(v));
			jv_free(k);
			jv_free(v);
		}
	jv_free(aliases);
	if (def != NULL && !listed)
		printf("default: %s\n", def);
	printf("Other models of a provider can be named too (openai/NAME, "
	    "anthropic/NAME).\n");
}

static void
cmd_tools(struct shell *sh, char *arg)
{
	jv c = shell_config(sh), tools = art_json_field(&c, "tools");
	const char *name, *desc;
	int n = 0;

	(void)arg;
	if (jv_get_kind(tools) == JV_KIND_ARRAY)
		jv_array_foreach(tools, i, t) {
			name = art_json_str(&t, "name");
			desc = art_json_str(&t, "description");
			printf("%-16s %s\n", name != NULL ? name : "?",
			    desc != NULL ? desc : "");
			n++;
			jv_free(t);
		}
	if (n == 0)
		printf("no tools\n");
	jv_free(tools);
	jv_free(c);
}

static void
cmd_state(struct shell *sh, char *arg)
{
	jv s, st;
	const char *status, *turn;

	(void)arg;
	if (!need_session(sh))
		return;
	s = show(sh, sh->sid);
	if (!jv_is_valid(s)) {
		render_error(sh, "no session '%s'", sh->sid);
		jv_free(s);
		return;
	}
	status = art_json_str(&s, "status");
	turn = art_json_str(&s, "turn_status");
	printf("session %s: %s, last turn %s\n", sh->sid, status != NULL ?
	    status : "?", turn != NULL ? turn : "none");
	st = art_json_field(&s, "state");
	if (jv_get_kind(st) == JV_KIND_NULL) {
		printf("no state (the agent has set none)\n");
		jv_free(st);
	} else {
		jv_dumpf(st, stdout, JV_PRINT_PRETTY | JV_PRINT_SPACE1 |
		    (sh->color ? JV_PRINT_COLOR : 0));
		putchar('\n');
	}
	jv_free(s);
}

/* The log one line an event (lib/evtext); /log json: as recorded. */
static void
cmd_log(struct shell *sh, char *arg)
{
	struct art_strvec a = ART_STRVEC_INIT;
	struct art_buf b = ART_BUF_INIT;
	size_t width = render_columns();
	jv all;

	if (strcmp(arg, "json") == 0) {
		run_on_session(sh, "agentrt-session", "log");
		return;
	}
	if (*arg != '\0') {
		render_error(sh, "usage: /log [json]");
		return;
	}
	if (!need_session(sh))
		return;
	args_add(&a, "agentrt-session"), args_add(&a, "log");
	args_add(&a, sh->sid);
	if (!jv_is_valid(all = shell_json(sh, &a, false))) {
		jv_free(all);
		return;
	}
	jv_array_foreach(all, i, e) {
		if (art_evtext_log_line(&e, sh->color, width, &b) == -1)
			art_die(ART_EXIT_FAIL, "out of memory");
		fputs(b.p, stdout);
		art_buf_clear(&b);
		jv_free(e);
	}
	art_buf_release(&b);
	jv_free(all);
}

static void
cmd_export(struct shell *sh, char *arg)
{
	struct art_strvec a = ART_STRVEC_INIT;
	size_t n = strlen(arg);
	int fd;

	if (*arg == '\0') {
		render_error(sh, "usage: /export FILE");
		return;
	}
	if (!need_session(sh))
		return;
	if ((fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0666)) == -1) {
		render_error(sh, "open '%s': %s", arg, strerror(errno));
		return;
	}
	args_add(&a, "agentrt-tree"), args_add(&a, "export");
	args_add(&a, "--format");
	args_add(&a, n > 3 && strcmp(arg + n - 3, ".md") == 0 ? "markdown" :
	    "ndjson");
	args_add(&a, sh->sid);
	if (shell_run(sh, &a, fd, false) == 0)
		printf("wrote %s\n", arg);
	close(fd);
}

/*
 * The open interrupt "/resume ID …" names (its id, or a prefix of at
 * least 4 characters that only it has); null when word names none.
 */
static jv
named_interrupt(const jv *all, const char *word, size_t len)
{
	jv hit = jv_null();
	int n = 0;

	if (len < 4)
		return hit;
	jv_object_foreach(*all, k, v) {
		if (strncmp(jv_string_value(k), word, len) == 0) {
			n++;
			jv_free(hit);
			hit = jv_copy(v);
		}
		jv_free(k);
		jv_free(v);
	}
	if (n != 1) {
		jv_free(hit);
		hit = jv_null();
	}
	return hit;
}

/*
 * /resume [ID] [PAYLOAD]: the interrupt ID (else the open one) goes on
 * with PAYLOAD, which must be JSON; with none, a question is asked and
 * anything else is resumed with no payload, which calls the model again
 * (as agentrt-session run --resume ID does).
 */
static void
cmd_resume(struct shell *sh, char *arg)
{
	jv none = jv_null(), all, intr, id, v;
	struct turn t = { .resume = NULL };
	size_t n = strcspn(arg, " \t");
	char *payload = NULL;
	bool stopped;

	if (!need_session(sh))
		return;
	all = interrupts(sh);
	intr = named_interrupt(&all, arg, n);
	jv_free(all);
	if (jv_get_kind(intr) == JV_KIND_OBJECT)
		arg += n + strspn(arg + n, " \t");
	else {
		jv_free(intr);
		intr = open_interrupt(sh, &none);
	}
	if (jv_get_kind(intr) != JV_KIND_OBJECT) {
		render_error(sh, "session %s has no open interrupt", sh->sid);
		jv_free(intr);
		return;
	}
	id = art_json_field(&intr, "id");
	if (*arg != '\0') {
		v = jv_parse(arg);
		if (!jv_is_valid(v)) {
			v = jv_invalid_get_msg(v);
			render_error(sh, "/resume: the payload is not JSON (%s); "
			    "nothing was resumed: %s still waits",
			    jv_get_kind(v) == JV_KIND_STRING ?
			    jv_string_value(v) : "?", jv_string_value(id));
			jv_free(v);
			jv_free(id);
			jv_free(intr);
			return;
		}
		jv_free(v);
		payload = strdup(arg);
	} else if (sh->tty && is_question(&intr) &&
	    (payload = resolve(sh, &intr, &stopped)) == NULL) {
		if (stopped)
			stop_parked(sh, &intr);
		jv_free(id);
		jv_free(intr);
		return;
	}
	t.resume = jv_string_value(id);
	t.payload = payload;
	shell_send(sh, &t, NULL);
	free(payload);
	jv_free(id);
	jv_free(intr);
}

static void
cmd_help(struct shell *sh, char *arg)
{
	(void)sh, (void)arg;
	printf("Type a message to send it; end a line with \\ to go on "
	    "on the next.\nCommands:\n");
	shell_slash_help(stdout, "  ");
}

/* Clears a terminal, as clear(1) does; nothing on anything else. */
static void
cmd_clear(struct shell *sh, char *arg)
{
	(void)sh, (void)arg;
	if (isatty(STDOUT_FILENO))
		fputs("\033[H\033[2J", stdout);
}

static void
cmd_quit(struct shell *sh, char *arg)
{
	(void)arg;
	sh->quit = true;
}

static const struct slash slashes[] = {
	{ "new", cmd_new, "[AGENT]", "start a new session (of AGENT)" },
	{ "sessions", cmd_sessions, "", "list the sessions" },
	{ "switch", cmd_switch, "SESSION", "continue another session (an id "
	    "or a prefix)" },
	{ "tree", cmd_tree, "", "draw the session's message tree" },
	{ "checkout", cmd_checkout, "NODE", "move the head to NODE" },
	{ "retry", cmd_retry, "", "regenerate the last reply" },
	{ "edit", cmd_edit, "[TEXT]", "edit the last message and fork" },
	{ "agent", cmd_agent, "", "show the agent and its model" },
	{ "model", cmd_model, "[MODEL]", "show or set the model of the next "
	    "turns (a model or an alias)" },
	{ "models", cmd_models, "", "list the models known, their prices, "
	    "and your aliases" },
	{ "tools", cmd_tools, "", "list the agent's tools" },
	{ "state", cmd_state, "", "show the session's status and state" },
	{ "log", cmd_log, "[json]", "print the session's event log, one "
	    "line an event (json: as recorded)" },
	{ "export", cmd_export, "FILE", "write the transcript (FILE.md: "
	    "Markdown, else NDJSON)" },
	{ "resume", cmd_resume, "[ID] [PAYLOAD]", "go on from the open "
	    "interrupt (or ID): answer it, or call the model again" },
	{ "clear", cmd_clear, "", "clear the screen (so does clear)" },
	{ "help", cmd_help, "", "list the commands (so does help)" },
	{ "quit", cmd_quit, "", "leave (so do exit, quit and Ctrl-D)" },
	{ NULL, NULL, NULL, NULL }
};

void
shell_slash_help(FILE *f, const char *indent)
{
	const struct slash *s;
	char head[64];

	for (s = slashes; s->name != NULL; s++) {
		snprintf(head, sizeof(head), "/%s%s%s", s->name,
		    *s->args != '\0' ? " " : "", s->args);
		fprintf(f, "%s%-20s %s\n", indent, head, s->help);
	}
	/* Not a row of the table: N is any number (shell_slash). */
	fprintf(f, "%s%-20s %s\n", indent, "/N", "send follow-up N of the "
	    "last structured answer");
}

const char *const *
shell_slash_names(void)
{
	static const char *names[sizeof(slashes) / sizeof(slashes[0])];
	size_t i;

	for (i = 0; slashes[i].name != NULL; i++)
		names[i] = slashes[i].name;
	names[i] = NULL;
	return names;
}

/*
 * /N: the last answer's Nth follow-up, sent as if typed, so it is echoed
 * after the prompt as a typed line is.
 */
static void
pick(struct shell *sh, const char *word, size_t len)
{
	unsigned long n = strtoul(word, NULL, 10);
	char text[sizeof(sh->followups[0])];

	if (n == 0 || n > sh->nfollowups) {
		art_warn("no follow-up %.*s (the last answer has %zu)",
		    (int)len, word, sh->nfollowups);
		return;
	}
	/* The turn it starts forgets the follow-ups: keep this one. */
	snprintf(text, sizeof(text), "%s", sh->followups[n - 1]);
	printf("%s%s\n", sh->prompt, text);
	fflush(stdout);
	shell_send(sh, &(struct turn){ .message = text }, NULL);
}

bool
shell_slash(struct shell *sh, char *line)
{
	const struct slash *s;
	char *arg = line + 1, *end;
	size_t n = strcspn(arg, " \t");

	for (end = arg + n; *end == ' ' || *end == '\t'; end++)
		;
	if (n > 0 && strspn(arg, "0123456789") == n) {
		pick(sh, arg, n);
		fflush(stdout);
		return true;
	}
	for (s = slashes; s->name != NULL; s++)
		if (strlen(s->name) == n && strncmp(s->name, arg, n) == 0)
			break;
	if (s->name == NULL)
		return false;
	/* The argument, without trailing blanks. */
	n = strlen(end);
	while (n > 0 && (end[n - 1] == ' ' || end[n - 1] == '\t'))
		end[--n] = '\0';
	s->run(sh, end);
	fflush(stdout);
	return true;
}
