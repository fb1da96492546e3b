/* agent.c - agent files: agents/NAME.json holding an AgentConfig */
#include "agent.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auto.h"
#include "buf.h"
#include "ids.h"
#include "json.h"
#include "retry.h"
#include "schema.h"
#include "security.h"
#include "spell.h"
#include "tools.h"

/* --- where to look ------------------------------------------------------ */

/* A list of directories being made, each entry a piece and a suffix. */
struct dirs {
	struct piece {
		const char	*s;
		size_t		 n;
		const char	*suffix;
	}		*v;
	size_t		 k, cap, bytes;
	int		 nomem;
};

static void
add(struct dirs *d, const char *s, size_t n, const char *suffix)
{
	if (d->nomem)
		return;
	if (art_grow(&d->v, &d->cap, d->k + 1, sizeof(*d->v)) == -1) {
		d->nomem = 1;
		return;
	}
	d->v[d->k++] = (struct piece){ s, n, suffix };
	d->bytes += n + strlen(suffix) + 1;
}

/* Each non-empty entry of the colon-separated path (NULL: none). */
static void
add_path(struct dirs *d, const char *path)
{
	const char *p, *colon;

	for (p = path; p != NULL && *p != '\0'; p = *colon != '\0' ?
	    colon + 1 : colon) {
		colon = p + strcspn(p, ":");
		if (colon > p)
			add(d, p, (size_t)(colon - p), "");
	}
}

/* The list in one allocation: the pointers, then the strings. */
static char **
dirs_done(struct dirs *d, size_t *len, struct art_err *err)
{
	char **out, *s;
	size_t i, m;

	if (d->nomem || (out = malloc((d->k + 1) * sizeof(*out) +
	    d->bytes)) == NULL) {
		free(d->v);
		art_err_set(err, "nomem", "out of memory");
		return NULL;
	}
	s = (char *)(out + d->k + 1);
	for (i = 0; i < d->k; i++) {
		m = strlen(d->v[i].suffix);
		memcpy(s, d->v[i].s, d->v[i].n);
		memcpy(s + d->v[i].n, d->v[i].suffix, m + 1);
		out[i] = s;
		s += d->v[i].n + m + 1;
	}
	out[d->k] = NULL;
	if (len != NULL)
		*len = d->k;
	free(d->v);
	return out;
}

const char **
art_agent_dirs(const char *const *given, size_t n, const char *path,
    const char *xdg, const char *home, size_t *len, struct art_err *err)
{
	struct dirs d = { 0 };
	size_t i;

	for (i = 0; i < n; i++)
		add(&d, given[i], strlen(given[i]), "");
	add_path(&d, path);
	if (xdg != NULL && *xdg == '/')
		add(&d, xdg, strlen(xdg), "/agentrt/agents");
	else if (home != NULL && *home != '\0')
		add(&d, home, strlen(home), "/.config/agentrt/agents");
	add(&d, "agents", 6, "");
	return (const char **)dirs_done(&d, len, err);
}

char **
art_agent_tool_dirs(const char *const *given, size_t n, const char *path,
    struct art_err *err)
{
	struct dirs d = { 0 };
	size_t i;

	for (i = 0; i < n; i++)
		add(&d, given[i], strlen(given[i]), "");
	if (d.k == 0)
		add_path(&d, path);
	if (d.k == 0)
		add(&d, "./tools", 7, "");
	return dirs_done(&d, NULL, err);
}

/* --- reading and checking ---------------------------------------------- */

/* A header that carries a credential. */
static int
is_secret_header(const char *name)
{
	static const char *const secret[] = { "authorization", "x-api-key",
	    "api-key", "proxy-authorization", "cookie", NULL };
	const char *const *s;

	for (s = secret; *s != NULL; s++)
		if (strcasecmp(name, *s) == 0)
			return 1;
	return 0;
}

/*
 * One provider block.  A credential in a header must come from the
 * environment ("${NAME}"): the config is recorded in the session's
 * events, and no key may ever reach the store.
 */
static int
check_provider(const char *name, const jv *b, struct art_err *err)
{
	static const char *const strs[] = { "format", "base_url",
	    "api_key_env", "anthropic_version", NULL };
	const char *const *k, *v;
	jv h;
	int bad = 0;

	if (jv_get_kind(*b) != JV_KIND_OBJECT)
		return art_err_set(err, "bad_agent", "providers.%s: expected "
		    "an object", name);
	for (k = strs; *k != NULL; k++)
		if (art_json_get_str(b, *k, 0, &v, err) == -1)
			return art_err_prefix(err, "providers.%s", name);
	v = art_json_str(b, "format");
	if (v != NULL && strcmp(v, "openai") != 0 &&
	    strcmp(v, "anthropic") != 0)
		return art_err_set(err, "bad_agent", "providers.%s: format "
		    "'%s' is not openai or anthropic", name, v);
	h = art_json_field(b, "headers");
	if (jv_get_kind(h) != JV_KIND_NULL && jv_get_kind(h) != JV_KIND_OBJECT)
		bad = art_err_set(err, "bad_agent", "providers.%s.headers: "
		    "expected an object", name);
	else if (jv_get_kind(h) == JV_KIND_OBJECT)
		jv_object_foreach(h, hk, hv) {
			if (bad == 0 && jv_get_kind(hv) != JV_KIND_STRING)
				bad = art_err_set(err, "bad_agent", "providers."
				    "%s.headers.%s: expected a string", name,
				    jv_string_value(hk));
			else if (bad == 0 &&
			    is_secret_header(jv_string_value(hk)) &&
			    strstr(jv_string_value(hv), "${") == NULL)
				bad = art_err_set(err, "bad_agent", "providers."
				    "%s.headers.%s: a credential must come from "
				    "the environment (\"${NAME}\"), never the "
				    "config, which the session records", name,
				    jv_string_value(hk));
			jv_free(hk);
			jv_free(hv);
		}
	jv_free(h);
	return bad;
}

/* --- limits and a tool's environment ----------------------------------- */

/* A short text of v (borrowed), to say what a field holds. */
static void
shown(const jv *v, char *buf, size_t n)
{
	jv t = jv_dump_string(jv_copy(*v), 0);

	snprintf(buf, n, "%s", jv_string_value(t));
	if (strlen(buf) == n - 1 && n > 4)
		memcpy(buf + n - 4, "...", 4);
	jv_free(t);
}

/* Whether v (borrowed) is a whole number of at least min. */
static bool
is_count(const jv *v, double min)
{
	double d;

	if (jv_get_kind(*v) != JV_KIND_NUMBER)
		return false;
	d = jv_number_value(*v);
	/* Past 2^53 a double no longer holds every whole number. */
	return isfinite(d) && d == floor(d) && d >= min &&
	    d <= 9007199254740992.0;
}

/* Whether s is a decimal such as the price table's: "0.50", "2". */
static bool
is_decimal(const char *s)
{
	size_t i = 0;

	while (s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == 0)
		return false;
	if (s[i] == '.') {
		if (!(s[++i] >= '0' && s[i] <= '9'))
			return false;
		while (s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return s[i] == '\0';
}

/* The turn and session limits: counts, and costs as decimal strings. */
static int
check_limits(const jv *config, struct art_err *err)
{
	static const struct { const char *key; double min; } counts[] = {
		{ "max_loops", 1 }, { "max_tool_calls", 1 },
		{ "max_turn_ms", 1 }, { "tool_result_max_bytes", 1 },
		{ "prior_turns", 0 },
	};
	static const char *const costs[] = { "max_turn_cost",
	    "max_session_cost" };
	char what[48];
	size_t i;
	jv v;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		v = art_json_field(config, counts[i].key);
		if (jv_get_kind(v) != JV_KIND_NULL && !is_count(&v,
		    counts[i].min)) {
			shown(&v, what, sizeof(what));
			jv_free(v);
			return art_err_set(err, "bad_agent", "field '%s': "
			    "expected a %s integer, not %s", counts[i].key,
			    counts[i].min > 0 ? "positive" : "non-negative",
			    what);
		}
		jv_free(v);
	}
	for (i = 0; i < sizeof(costs) / sizeof(costs[0]); i++) {
		v = art_json_field(config, costs[i]);
		if (jv_get_kind(v) != JV_KIND_NULL &&
		    (jv_get_kind(v) != JV_KIND_STRING ||
		    !is_decimal(jv_string_value(v)))) {
			shown(&v, what, sizeof(what));
			art_err_set(err, "bad_agent", "field '%s': expected a "
			    "decimal string such as \"0.50\"%s, not %s",
			    costs[i], jv_get_kind(v) == JV_KIND_NUMBER ?
			    " (quote the number)" : "", what);
			jv_free(v);
			return -1;
		}
		jv_free(v);
	}
	return 0;
}

/* Whether config's provider blocks read their key from name. */
static bool
is_provider_key(const jv *config, const char *name)
{
	jv ps = art_json_field(config, "providers");
	const char *k;
	bool yes = false;

	if (jv_get_kind(ps) == JV_KIND_OBJECT)
		jv_object_foreach(ps, pk, b) {
			k = jv_get_kind(b) == JV_KIND_OBJECT ? art_json_str(&b,
			    "api_key_env") : NULL;
			if (k != NULL && strcmp(k, name) == 0)
				yes = true;
			jv_free(pk);
			jv_free(b);
		}
	jv_free(ps);
	return yes;
}

/*
 * A tool's "env" (tool borrowed): an array of names a tool may be
 * passed, none of them a provider key, the table's or one of config's
 * own providers.  what names the tool in the message.
 */
static int
check_tool_env(const jv *config, const jv *tool, const char *what,
    struct art_err *err)
{
	jv env = art_json_field(tool, "env");
	int bad = 0;

	if (jv_get_kind(env) == JV_KIND_NULL) {
		jv_free(env);
		return 0;
	}
	if (jv_get_kind(env) != JV_KIND_ARRAY)
		bad = art_err_set(err, "bad_agent", "%s: field 'env': expected "
		    "an array of variable names", what);
	else
		jv_array_foreach(env, i, e) {
			if (bad == 0 && jv_get_kind(e) != JV_KIND_STRING)
				bad = art_err_set(err, "bad_agent", "%s: "
				    "env[%d]: expected a variable name", what,
				    i);
			else if (bad == 0 && art_tools_env_check(
			    jv_string_value(e), err) == -1)
				bad = art_err_prefix(err, "%s: env", what);
			else if (bad == 0 && is_provider_key(config,
			    jv_string_value(e)))
				bad = art_err_set(err, "bad_agent", "%s: env: "
				    "'%s': a provider key is never passed to a "
				    "tool", what, jv_string_value(e));
			jv_free(e);
		}
	jv_free(env);
	if (bad != 0)
		err->code = "bad_agent";
	return bad;
}

/* Each tool object's "env". */
/* A tool's handler is the seed's AgentTool's: worker or client. */
static int
check_tool_handler(const jv *t, const char *what, struct art_err *err)
{
	jv h = art_json_field(t, "handler");
	int bad = jv_get_kind(h) != JV_KIND_NULL &&
	    (jv_get_kind(h) != JV_KIND_STRING || (strcmp(jv_string_value(h),
	    "worker") != 0 && strcmp(jv_string_value(h), "client") != 0));

	jv_free(h);
	return bad ? art_err_set(err, "bad_agent", "%s: handler must be "
	    "\"worker\" or \"client\" (the seed's AgentTool.handler)", what) : 0;
}

/*
 * The config's handler (where model calls run) is server or worker, and
 * format, the wire format of worker-run model calls, needs worker.
 */
static int
check_handler(const jv *config, struct art_err *err)
{
	jv h = art_json_field(config, "handler"), f = art_json_field(config,
	    "format");
	const char *hs = jv_get_kind(h) == JV_KIND_STRING ?
	    jv_string_value(h) : NULL;
	int r = 0;

	if (jv_get_kind(h) != JV_KIND_NULL && (hs == NULL ||
	    (strcmp(hs, "server") != 0 && strcmp(hs, "worker") != 0)))
		r = art_err_set(err, "bad_agent", "field 'handler': expected "
		    "\"server\" or \"worker\"");
	else if (jv_get_kind(f) != JV_KIND_NULL && (jv_get_kind(f) !=
	    JV_KIND_STRING || (strcmp(jv_string_value(f), "openai") != 0 &&
	    strcmp(jv_string_value(f), "anthropic") != 0)))
		r = art_err_set(err, "bad_agent", "field 'format': expected "
		    "\"openai\" or \"anthropic\"");
	else if (jv_get_kind(f) != JV_KIND_NULL && (hs == NULL ||
	    strcmp(hs, "worker") != 0))
		r = art_err_set(err, "bad_agent", "field 'format' needs "
		    "\"handler\": \"worker\" (it is the wire format of "
		    "worker-run model calls)");
	jv_free(h);
	jv_free(f);
	return r;
}

static int
check_tools(const jv *config, struct art_err *err)
{
	jv tools = art_json_field(config, "tools");
	const char *name;
	char what[ART_TOOLS_NAME_MAX + 16];
	int bad = 0;

	if (jv_get_kind(tools) == JV_KIND_ARRAY)
		jv_array_foreach(tools, i, t) {
			if (bad == 0 && jv_get_kind(t) == JV_KIND_OBJECT) {
				name = art_json_str(&t, "name");
				snprintf(what, sizeof(what), "tool '%.*s'",
				    ART_TOOLS_NAME_MAX, name != NULL ? name :
				    "?");
				bad = check_tool_handler(&t, what, err);
				if (bad == 0)
					bad = check_tool_env(config, &t, what,
					    err);
			}
			jv_free(t);
			(void)i;
		}
	jv_free(tools);
	return bad;
}

/*
 * "mcp_servers": an object of NAME: {command, tools?, env?}, NAME a
 * tool-name-like word, command a non-empty string, tools an array of
 * fnmatch(3) patterns, env the names of variables passed through.
 */
static int
check_mcp_servers(const jv *config, struct art_err *err)
{
	jv v = art_json_field(config, "mcp_servers"), m;
	const char *name, *cmd;
	int bad = 0;

	if (jv_get_kind(v) == JV_KIND_NULL) {
		jv_free(v);
		return 0;
	}
	if (jv_get_kind(v) != JV_KIND_OBJECT) {
		jv_free(v);
		return art_err_set(err, "bad_agent", "field 'mcp_servers': "
		    "expected an object of NAME: {\"command\": …}");
	}
	jv_object_foreach(v, k, sv) {
		name = jv_string_value(k);
		if (bad != 0)
			;
		else if (!art_tools_name_is_valid(name) ||
		    strchr(name, '.') != NULL)
			bad = art_err_set(err, "bad_agent", "field 'mcp_servers':"
			    " '%.64s': not a server name (letters, digits, '_', "
			    "'-')", name);
		else if (jv_get_kind(sv) != JV_KIND_OBJECT)
			bad = art_err_set(err, "bad_agent", "mcp_servers.%s: "
			    "expected an object with a \"command\"", name);
		else if ((cmd = art_json_str(&sv, "command")) == NULL ||
		    cmd[strspn(cmd, " \t")] == '\0')
			bad = art_err_set(err, "bad_agent", "mcp_servers.%s."
			    "command: expected a non-empty string", name);
		if (bad == 0) {
			m = art_json_field(&sv, "tools");
			if (jv_get_kind(m) != JV_KIND_NULL &&
			    jv_get_kind(m) != JV_KIND_ARRAY)
				bad = -1;
			else if (jv_get_kind(m) == JV_KIND_ARRAY)
				jv_array_foreach(m, i, g) {
					if (jv_get_kind(g) != JV_KIND_STRING)
						bad = -1;
					jv_free(g);
					(void)i;
				}
			jv_free(m);
			if (bad != 0)
				art_err_set(err, "bad_agent", "mcp_servers.%s."
				    "tools: expected an array of glob strings",
				    name);
		}
		if (bad == 0) {
			char what[96];

			snprintf(what, sizeof(what), "mcp_servers.%s", name);
			bad = check_tool_env(config, &sv, what, err);
		}
		jv_free(k);
		jv_free(sv);
	}
	jv_free(v);
	return bad;
}

int
art_agent_check(const jv *config, struct art_err *err)
{
	struct art_security *sec;
	const char *model;
	jv v;
	int bad = 0;

	if (jv_get_kind(*config) != JV_KIND_OBJECT)
		return art_err_set(err, "bad_agent", "expected an object");
	if (art_json_get_str(config, "model", 1, &model, err) == -1) {
		err->code = "bad_agent";
		return -1;
	}
	v = art_json_field(config, "providers");
	if (jv_get_kind(v) != JV_KIND_NULL && jv_get_kind(v) != JV_KIND_OBJECT)
		bad = art_err_set(err, "bad_agent", "field 'providers': "
		    "expected an object of provider blocks");
	else if (jv_get_kind(v) == JV_KIND_OBJECT)
		jv_object_foreach(v, k, b) {
			if (bad == 0)
				bad = check_provider(jv_string_value(k), &b,
				    err);
			jv_free(k);
			jv_free(b);
		}
	jv_free(v);
	if (bad != 0)
		return -1;
	v = art_json_field(config, "fallback");
	if (jv_get_kind(v) != JV_KIND_NULL && jv_get_kind(v) != JV_KIND_ARRAY)
		bad = -1;
	else if (jv_get_kind(v) == JV_KIND_ARRAY)
		jv_array_foreach(v, i, m) {
			if (jv_get_kind(m) != JV_KIND_STRING ||
			    strchr(jv_string_value(m), '/') == NULL)
				bad = -1;
			jv_free(m);
		}
	jv_free(v);
	if (bad != 0)
		return art_err_set(err, "bad_agent", "field 'fallback': "
		    "expected an array of provider/name models");
	if (check_limits(config, err) == -1 || check_handler(config, err) ==
	    -1 || check_tools(config, err) == -1 ||
	    check_mcp_servers(config, err) == -1)
		return -1;
	/* The seed's RetryPolicy is whole: all four members. */
	v = art_json_field(config, "retry");
	bad = art_retry_check(&v, err);
	jv_free(v);
	if (bad != 0) {
		err->code = "bad_agent";
		return -1;
	}
	/* execution_mode, autonomous and answer (issue 21). */
	if (art_auto_check(config, err) == -1)
		return -1;
	/* Its security object compiles: a bad pattern is said by its id. */
	if (art_security_new(config, &sec, err) == -1)
		return -1;
	art_security_free(sec);
	return 0;
}

/* --- unknown keys -------------------------------------------------------- */

/*
 * Every top-level member something reads from an agent config: the
 * seed's AgentConfig, what agentrt adds (the engine, the proposal, the
 * mock provider, agentrt-llm), and issue 17's guardrails.
 */
static const char *const known_keys[] = {
	"model", "system", "stream", "handler", "format", "retry", "tools",
	"sub_agents", "description", "ask_user", "max_subagent_depth",
	"mock", "providers", "fallback", "security", "max_loops",
	"max_tool_calls", "max_turn_cost", "max_session_cost", "max_turn_ms",
	"tool_result_max_bytes", "prior_turns", "temperature",
	"max_completion_tokens", "reasoning", "mcp_servers",
	"execution_mode", "autonomous", "answer", NULL
};

jv
art_agent_key_notes(const jv *config)
{
	jv notes = jv_array(), keys;
	const char *k, *near;
	size_t i;

	if (jv_get_kind(*config) != JV_KIND_OBJECT)
		return notes;
	keys = jv_keys(jv_copy(*config));	/* sorted: one order always */
	jv_array_foreach(keys, n, key) {
		k = jv_string_value(key);
		for (i = 0; known_keys[i] != NULL &&
		    strcmp(known_keys[i], k) != 0; i++)
			;
		if (known_keys[i] == NULL) {
			near = art_spell_nearest(k, known_keys, 2);
			notes = jv_array_append(notes, near != NULL ?
			    jv_string_fmt("unknown key '%s' (did you mean "
			    "'%s'?)", k, near) : jv_string_fmt("unknown key "
			    "'%s'", k));
		}
		jv_free(key);
		(void)n;
	}
	jv_free(keys);
	return notes;
}

static jv
note_schema(jv notes, const char *tool, const char *which, const jv *schema)
{
	struct art_err err;
	jv un;
	char *list;
	size_t len;

	if (jv_get_kind(*schema) == JV_KIND_NULL)
		return notes;
	if (art_schema_check(schema, &err) == -1)
		return jv_array_append(notes, jv_string_fmt("tool '%s' %s: %s",
		    tool, which, err.msg));
	un = art_schema_unsupported(schema);
	if (jv_array_length(jv_copy(un)) > 0 &&
	    (list = art_json_dump(&un, &len)) != NULL) {
		notes = jv_array_append(notes, jv_string_fmt("tool '%s' %s: "
		    "keywords not checked: %s", tool, which, list));
		free(list);
	}
	jv_free(un);
	return notes;
}

jv
art_agent_schema_notes(const jv *config)
{
	jv tools = art_json_field(config, "tools"), notes = jv_array(), s;
	const char *name;

	if (jv_get_kind(tools) != JV_KIND_ARRAY) {
		jv_free(tools);
		return notes;
	}
	jv_array_foreach(tools, i, t) {
		name = art_json_str(&t, "name");
		s = art_json_field(&t, "input");
		notes = note_schema(notes, name != NULL ? name : "?", "input",
		    &s);
		jv_free(s);
		s = art_json_field(&t, "output");
		notes = note_schema(notes, name != NULL ? name : "?", "output",
		    &s);
		jv_free(s);
		jv_free(t);
		(void)i;
	}
	jv_free(tools);
	return notes;
}

static jv
read_file(FILE *f, const char *path, struct art_err *err)
{
	char buf[65536];
	jv text = jv_string(""), v;
	size_t n;

	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		text = jv_string_append_buf(text, buf, (int)n);
	if (ferror(f)) {
		jv_free(text);
		art_err_set(err, "bad_agent", "read agent '%s': %s", path,
		    strerror(errno));
		return jv_invalid();
	}
	v = art_json_parse(jv_string_value(text),
	    (size_t)jv_string_length_bytes(jv_copy(text)), err);
	jv_free(text);
	if (!jv_is_valid(v) || art_agent_check(&v, err) == -1) {
		jv_free(v);
		art_err_prefix(err, "agent '%s'", path);
		err->code = "bad_agent";
		return jv_invalid();
	}
	return v;
}

jv
art_agent_load(const char *const *dirs, size_t ndirs, const char *name,
    struct art_err *err)
{
	char path[4096], searched[200] = "";
	const char *near;
	size_t i;
	FILE *f;
	jv v, names;

	if (!art_id_is_valid(name)) {
		art_err_set(err, "bad_agent", "bad agent name '%s'", name);
		return jv_invalid();
	}
	for (i = 0; i < ndirs; i++) {
		snprintf(path, sizeof(path), "%s/%s.json", dirs[i], name);
		if ((f = fopen(path, "r")) == NULL) {
			if (strlen(searched) + strlen(dirs[i]) + 3 <
			    sizeof(searched))
				snprintf(searched + strlen(searched),
				    sizeof(searched) - strlen(searched), "%s%s",
				    i > 0 ? ", " : "", dirs[i]);
			continue;
		}
		v = read_file(f, path, err);
		fclose(f);
		return v;
	}
	names = art_agent_names(dirs, ndirs);
	near = art_spell_nearest_jv(name, &names, 2);
	art_err_set(err, "no_agent", "no agent '%s' (looked in %s)%s%s%s", name,
	    *searched != '\0' ? searched : "no directory", near != NULL ?
	    "; did you mean '" : "", near != NULL ? near : "", near != NULL ?
	    "'?" : "");
	jv_free(names);
	return jv_invalid();
}

/* --- what a config names that lives elsewhere --------------------------- */

/*
 * config (consumed) with each element of its array field key replaced by
 * what fn makes of it (consumed); config as it is when key holds no
 * array, jv_invalid() as soon as fn gives that.
 */
static jv
map_field(jv config, const char *key, jv (*fn)(jv, const void *,
    struct art_err *), const void *ctx, struct art_err *err)
{
	jv a = art_json_field(&config, key), out = jv_array(), e;

	if (jv_get_kind(a) != JV_KIND_ARRAY) {
		jv_free(a);
		jv_free(out);
		return config;
	}
	jv_array_foreach(a, i, x) {
		(void)i;
		if (!jv_is_valid(out)) {
			jv_free(x);
			continue;
		}
		e = fn(x, ctx, err);
		if (jv_is_valid(e))
			out = jv_array_append(out, e);
		else {
			jv_free(out);
			out = e;
		}
	}
	jv_free(a);
	if (!jv_is_valid(out)) {
		jv_free(config);
		return out;
	}
	return jv_object_set(config, jv_string(key), out);
}

struct declaring {
	char *const	*tool_dirs;
	const char	*agent;
	const jv	*config;	/* the agent's, for its provider keys */
};

/* A tool (consumed) as declared: a name's declaration, else itself. */
static jv
declared(jv t, const void *ctx, struct art_err *err)
{
	const struct declaring *d = ctx;
	const char *name;
	char *path;
	int kind;
	jv decl;

	if (jv_get_kind(t) != JV_KIND_STRING)
		return t;
	name = jv_string_value(t);
	kind = art_tools_name_is_valid(name) ? art_tools_find(d->tool_dirs,
	    name, &path, err) : ART_TOOLS_NONE;
	if (kind == -1 || kind == ART_TOOLS_NONE) {
		if (kind == ART_TOOLS_NONE)
			art_err_set(err, "bad_agent", "agent '%s': tool '%s' is "
			    "in no tools directory (--tools, $AGENTRT_TOOLS, "
			    "./tools)", d->agent, name);
		jv_free(t);
		return jv_invalid();
	}
	decl = art_tools_declaration(path, name, err);
	free(path);
	jv_free(t);
	if (jv_is_valid(decl) && d->config != NULL) {
		char what[ART_TOOLS_NAME_MAX + 64];

		snprintf(what, sizeof(what), "agent '%s': tool '%s' (its "
		    "declaration file)", d->agent, name);
		if (check_tool_env(d->config, &decl, what, err) == -1) {
			jv_free(decl);
			return jv_invalid();
		}
	}
	return decl;
}

jv
art_agent_declare_tools(char *const *tool_dirs, const char *agent, jv config,
    struct art_err *err)
{
	jv own = jv_copy(config);
	const struct declaring d = { tool_dirs, agent, &own };

	config = map_field(config, "tools", declared, &d, err);
	jv_free(own);
	return config;
}

jv
art_agent_chat(const char *model, char *const *tool_dirs, struct art_err *err)
{
	jv config, all, names = jv_array(), ex;

	config = jv_object_set(jv_object(), jv_string("model"),
	    jv_string(model));
	if (tool_dirs != NULL && tool_dirs[0] != NULL) {
		if (!jv_is_valid(all = art_tools_list(tool_dirs, err))) {
			jv_free(names);
			jv_free(config);
			return all;
		}
		jv_array_foreach(all, i, t) {
			ex = art_json_field(&t, "executable");
			if (jv_get_kind(ex) != JV_KIND_FALSE)
				names = jv_array_append(names,
				    art_json_field(&t, "name"));
			jv_free(ex);
			jv_free(t);
		}
		jv_free(all);
	}
	if (jv_array_length(jv_copy(names)) > 0)
		config = art_agent_declare_tools(tool_dirs, "chat",
		    jv_object_set(config, jv_string("tools"), names), err);
	else
		jv_free(names);
	if (jv_is_valid(config) && art_agent_check(&config, err) == -1) {
		jv_free(config);
		return jv_invalid();
	}
	return config;
}

struct describing {
	const char *const	*dirs;
	size_t			 ndirs;
};

/* A sub-agent entry (consumed) as an object, with a description. */
static jv
described(jv sa, const void *ctx, struct art_err *unused)
{
	const struct describing *d = ctx;
	struct art_err err;
	const char *id;
	jv e, f;

	(void)unused;
	e = jv_get_kind(sa) == JV_KIND_STRING ? jv_object_set(jv_object(),
	    jv_string("id"), jv_copy(sa)) : jv_copy(sa);
	jv_free(sa);
	id = art_json_str(&e, "id");
	if (id == NULL || art_json_str(&e, "description") != NULL ||
	    !art_id_is_valid(id))
		return e;
	f = art_agent_load(d->dirs, d->ndirs, id, &err);
	if (jv_is_valid(f) && art_json_str(&f, "description") != NULL)
		e = jv_object_set(e, jv_string("description"),
		    art_json_field(&f, "description"));
	jv_free(f);
	return e;
}

jv
art_agent_describe_sub_agents(const char *const *dirs, size_t ndirs,
    jv config)
{
	const struct describing d = { dirs, ndirs };

	return map_field(config, "sub_agents", described, &d, NULL);
}

jv
art_agent_names(const char *const *dirs, size_t ndirs)
{
	jv names = jv_array(), found;
	struct dirent *d;
	size_t i, len;
	DIR *dp;

	for (i = 0; i < ndirs; i++) {
		if ((dp = opendir(dirs[i])) == NULL)
			continue;
		found = jv_array();
		while ((d = readdir(dp)) != NULL) {
			len = strlen(d->d_name);
			if (len > 5 && d->d_name[0] != '.' &&
			    strcmp(d->d_name + len - 5, ".json") == 0)
				found = jv_array_append(found,
				    jv_string_sized(d->d_name, (int)len - 5));
		}
		closedir(dp);
		found = jv_sort(found, jv_copy(found));
		jv_array_foreach(found, k, name) {
			if (!art_json_has_str(&names, jv_string_value(name)))
				names = jv_array_append(names, jv_copy(name));
			jv_free(name);
			(void)k;
		}
		jv_free(found);
	}
	return names;
}
