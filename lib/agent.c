/* agent.c - agent files: agents/NAME.json holding an AgentConfig */
#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ids.h"
#include "json.h"

int
art_agent_check(const jv *config, struct art_err *err)
{
	const char *model;

	if (jv_get_kind(*config) != JV_KIND_OBJECT)
		return art_err_set(err, "bad_agent", "expected an object");
	if (art_json_get_str(config, "model", 1, &model, err) == -1) {
		err->code = "bad_agent";
		return -1;
	}
	return 0;
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
