/* agent.c - agent files: agents/NAME.json holding an AgentConfig */
#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ids.h"
#include "json.h"
#include "schema.h"

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
