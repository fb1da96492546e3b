/* agent.c - agent files: agents/NAME.json holding an AgentConfig */
#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "ids.h"
#include "json.h"
#include "schema.h"
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

int
art_agent_check(const jv *config, struct art_err *err)
{
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
	return 0;
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
	size_t i;
	FILE *f;
	jv v;

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
	art_err_set(err, "no_agent", "no agent '%s' (looked in %s)", name,
	    *searched != '\0' ? searched : "no directory");
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
	return decl;
}

jv
art_agent_declare_tools(char *const *tool_dirs, const char *agent, jv config,
    struct art_err *err)
{
	const struct declaring d = { tool_dirs, agent };

	return map_field(config, "tools", declared, &d, err);
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
