/* userconf.c - the user's settings: a default model and model aliases */
#include "userconf.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "json.h"

/* Bigger than any settings file a person writes. */
#define CONF_MAX	(1024 * 1024)

int
art_userconf_path(const char *xdg, const char *home, char *path, size_t n)
{
	int k = -1;

	if (xdg != NULL && xdg[0] == '/')
		k = snprintf(path, n, "%s/agentrt/config.json", xdg);
	else if (home != NULL && home[0] != '\0')
		k = snprintf(path, n, "%s/.config/agentrt/config.json", home);
	if (k < 0 || (size_t)k >= n) {
		if (n > 0)
			path[0] = '\0';
		return -1;
	}
	return 0;
}

/* provider/name: a '/' with something on each side. */
static bool
is_model(const char *s)
{
	const char *slash = strchr(s, '/');

	return slash != NULL && slash != s && slash[1] != '\0';
}

/* An alias: a word of letters, digits, '.', '_' and '-'. */
static bool
is_alias(const char *s)
{
	return *s != '\0' && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == strlen(s);
}

/* Checks conf (borrowed) member by member: 0, or -1 with err. */
static int
check(const jv *conf, const char *path, struct art_err *err)
{
	const char *m;
	jv v;

	jv_object_foreach(*conf, k, x) {
		const char *key = jv_string_value(k);
		int bad = 0;

		if (strcmp(key, "model") == 0)
			bad = jv_get_kind(x) != JV_KIND_STRING ||
			    !is_model(jv_string_value(x)) ? 1 : 0;
		else if (strcmp(key, "aliases") == 0)
			bad = jv_get_kind(x) != JV_KIND_OBJECT ? 2 : 0;
		else
			bad = 3;
		if (bad != 0) {
			if (bad == 1)
				art_err_set(err, "bad_config", "%s: model: "
				    "expected a model, provider/name "
				    "(\"openai/gpt-4o-mini\")", path);
			else if (bad == 2)
				art_err_set(err, "bad_config", "%s: aliases: "
				    "expected an object of alias: model", path);
			else
				art_err_set(err, "bad_config", "%s: unknown "
				    "key '%s' (it may hold model and aliases)",
				    path, key);
			jv_free(k);
			jv_free(x);
			return -1;
		}
		jv_free(k);
		jv_free(x);
	}
	v = art_json_field(conf, "aliases");
	if (jv_get_kind(v) != JV_KIND_OBJECT) {
		jv_free(v);
		return 0;
	}
	jv_object_foreach(v, k, x) {
		m = jv_get_kind(x) == JV_KIND_STRING ? jv_string_value(x) : NULL;
		if (!is_alias(jv_string_value(k)) || m == NULL ||
		    !is_model(m)) {
			art_err_set(err, "bad_config", "%s: aliases.%s: %s",
			    path, jv_string_value(k), !is_alias(
			    jv_string_value(k)) ? "an alias is a word of "
			    "letters, digits, '.', '_' and '-'" : "expected a "
			    "model, provider/name");
			jv_free(k);
			jv_free(x);
			jv_free(v);
			return -1;
		}
		jv_free(k);
		jv_free(x);
	}
	jv_free(v);
	return 0;
}

jv
art_userconf_load(const char *path, struct art_err *err)
{
	struct art_buf b = ART_BUF_INIT;
	jv conf;

	if (art_buf_read_file(&b, path, CONF_MAX, err) == -1) {
		art_buf_release(&b);
		if (art_err_is(err, "io") && errno == ENOENT)
			return jv_object();
		if (art_err_is(err, "too_big"))
			art_err_set(err, "bad_config", "%s: more than %d "
			    "bytes", path, CONF_MAX);
		return jv_invalid();
	}
	conf = art_json_parse(b.p != NULL ? b.p : "", b.len, err);
	art_buf_release(&b);
	if (!jv_is_valid(conf)) {
		art_err_prefix(err, "%s", path);
		err->code = "bad_config";
		return conf;
	}
	if (jv_get_kind(conf) != JV_KIND_OBJECT) {
		jv_free(conf);
		art_err_set(err, "bad_config", "%s: expected a JSON object",
		    path);
		return jv_invalid();
	}
	if (check(&conf, path, err) == -1) {
		jv_free(conf);
		return jv_invalid();
	}
	return conf;
}

const char *
art_userconf_model(const jv *conf, const char *name)
{
	jv a, m;
	const char *s = name;

	if (jv_get_kind(*conf) != JV_KIND_OBJECT)
		return name;
	a = jv_object_get(jv_copy(*conf), jv_string("aliases"));
	if (jv_get_kind(a) == JV_KIND_OBJECT) {
		m = jv_object_get(jv_copy(a), jv_string(name));
		/* conf holds the string, so its bytes outlive m. */
		if (jv_get_kind(m) == JV_KIND_STRING)
			s = jv_string_value(m);
		jv_free(m);
	}
	jv_free(a);
	return s;
}

const char *
art_userconf_default(const jv *conf)
{
	return jv_get_kind(*conf) == JV_KIND_OBJECT ?
	    art_json_str(conf, "model") : NULL;
}
