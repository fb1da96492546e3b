/* userconf-test - the user's settings file: where, what it may hold */
#include "userconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

static char dir[] = "/tmp/agentrt-userconf-test-XXXXXX";
static char file[256];

/* Writes text as the settings file; its path. */
static const char *
put(const char *text)
{
	FILE *f = fopen(file, "w");

	if (f == NULL || fputs(text, f) == EOF || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", file);
		exit(1);
	}
	return file;
}

static void
test_path(void)
{
	char p[64];

	ok(art_userconf_path("/x", "/home/u", p, sizeof(p)) == 0 &&
	    strcmp(p, "/x/agentrt/config.json") == 0, "XDG_CONFIG_HOME first");
	ok(art_userconf_path("rel", "/home/u", p, sizeof(p)) == 0 &&
	    strcmp(p, "/home/u/.config/agentrt/config.json") == 0,
	    "a relative XDG_CONFIG_HOME gives way to HOME");
	ok(art_userconf_path(NULL, "", p, sizeof(p)) == -1 && p[0] == '\0',
	    "neither: none");
	ok(art_userconf_path("/a-long-directory-name-that-will-not-fit", NULL,
	    p, 20) == -1 && p[0] == '\0', "a path that does not fit: none");
}

static void
test_load_and_resolve(void)
{
	struct art_err err;
	jv c;

	c = art_userconf_load("/nonexistent/agentrt/config.json", &err);
	ok(jv_get_kind(c) == JV_KIND_OBJECT &&
	    jv_object_length(jv_copy(c)) == 0, "no file: no settings");
	ok(strcmp(art_userconf_model(&c, "mini"), "mini") == 0 &&
	    art_userconf_default(&c) == NULL,
	    "no settings: a name is itself, no default");
	jv_free(c);
	c = art_userconf_load(put("{\"model\": \"openai/gpt-4o-mini\", "
	    "\"aliases\": {\"mini\": \"openai/gpt-4o-mini\", \"haiku-3.5\": "
	    "\"anthropic/claude-3-5-haiku-latest\"}}"), &err);
	ok(jv_is_valid(c), "a file of model and aliases loads");
	ok(strcmp(art_userconf_default(&c), "openai/gpt-4o-mini") == 0,
	    "its default model");
	ok(strcmp(art_userconf_model(&c, "haiku-3.5"),
	    "anthropic/claude-3-5-haiku-latest") == 0,
	    "an alias stands for its model");
	ok(strcmp(art_userconf_model(&c, "openai/gpt-4o"), "openai/gpt-4o")
	    == 0, "a model that is no alias is itself");
	jv_free(c);
}

/* Loading text fails with err "bad_config" saying want after the path. */
static void
refused(const char *text, const char *want)
{
	struct art_err err;
	char msg[512];
	jv c = art_userconf_load(put(text), &err);

	snprintf(msg, sizeof(msg), "%s: %s", file, want);
	ok(!jv_is_valid(c) && art_err_is(&err, "bad_config") &&
	    strncmp(err.msg, msg, strlen(msg)) == 0, "%s: %s", text,
	    err.msg);
	jv_free(c);
}

static void
test_bad_files(void)
{
	refused("{\"model\": \"gpt-4o\"}", "model: expected a model, "
	    "provider/name");
	refused("{\"model\": 4}", "model: expected a model");
	refused("{\"modle\": \"openai/gpt-4o\"}", "unknown key 'modle'");
	refused("{\"aliases\": [\"a\"]}", "aliases: expected an object");
	refused("{\"aliases\": {\"a/b\": \"openai/gpt-4o\"}}", "aliases.a/b: "
	    "an alias is a word");
	refused("{\"aliases\": {\"fast\": \"mini\"}}", "aliases.fast: "
	    "expected a model");
	refused("[1]", "expected a JSON object");
	refused("{\"model\": ", "");
}

int
main(void)
{
	if (mkdtemp(dir) == NULL) {
		printf("Bail out! mkdtemp: cannot make %s\n", dir);
		return 1;
	}
	snprintf(file, sizeof(file), "%s/config.json", dir);
	test_path();
	test_load_and_resolve();
	test_bad_files();
	unlink(file);
	rmdir(dir);
	return tap_done();
}
