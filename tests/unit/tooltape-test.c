/* tooltape-test - tool answers recorded, found by call, played in order */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "tap.h"
#include "testjv.h"
#include "tooltape.h"

static char path[] = "/tmp/tooltape-test-XXXXXX";

static void
put(const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

/* Loads text as a tape, expecting a refusal whose message holds want. */
static void
test_refused(const char *text, const char *want, const char *what)
{
	struct art_tooltape *t;
	struct art_err err;

	put(text);
	t = art_tooltape_load(path, &err);
	ok(t == NULL && art_err_is(&err, "bad_tape") &&
	    strstr(err.msg, want) != NULL, "%s: %s", what, err.msg);
	art_tooltape_free(t);
}

static void
test_keys(void)
{
	char k1[ART_TOOLTAPE_KEY_LEN + 1], k2[ART_TOOLTAPE_KEY_LEN + 1];
	jv a = jv_parse("{\"expr\":\"17*23\",\"base\":10}");
	jv b = jv_parse("{\"base\":10,\"expr\":\"17*23\"}");
	jv c = jv_parse("{\"expr\":\"17*24\",\"base\":10}");

	art_tooltape_key("calc", &a, k1);
	art_tooltape_key("calc", &b, k2);
	ok(strlen(k1) == 64 && strcmp(k1, k2) == 0, "the same arguments in "
	    "another key order make the same key");
	art_tooltape_key("calc", &c, k2);
	ok(strcmp(k1, k2) != 0, "other arguments make another key");
	art_tooltape_key("upper", &a, k2);
	ok(strcmp(k1, k2) != 0, "the key holds the tool's name");
	jv_free(a);
	jv_free(b);
	jv_free(c);
}

static void
test_args_from_the_trigger(void)
{
	jv t1 = jv_parse("{\"type\":\"tool.execute\",\"id\":\"c1\","
	    "\"arguments\":\"{\\\"expr\\\": \\\"1+1\\\"}\",\"input\":"
	    "{\"status\":\"valid\",\"value\":{\"expr\":\"1+1\"}}}");
	jv t2 = jv_parse("{\"type\":\"tool.execute\",\"id\":\"c9\","
	    "\"arguments\":\"{\\\"expr\\\":\\\"1+1\\\"}\",\"input\":{}}");
	jv t3 = jv_parse("{\"type\":\"tool.execute\",\"arguments\":\"1+1\"}");
	char k1[ART_TOOLTAPE_KEY_LEN + 1], k2[ART_TOOLTAPE_KEY_LEN + 1];
	jv a1 = art_tooltape_args(&t1), a2 = art_tooltape_args(&t2);

	ok(is_json(jv_copy(a1), "{\"expr\":\"1+1\"}"), "the arguments are "
	    "the input's value");
	art_tooltape_key("calc", &a1, k1);
	art_tooltape_key("calc", &a2, k2);
	ok(strcmp(k1, k2) == 0, "with no input value the arguments string is "
	    "parsed, and the call id does not count");
	ok(is_json(art_tooltape_args(&t3), "\"1+1\""), "arguments that are "
	    "not a JSON object are kept as the raw string");
	jv_free(a1);
	jv_free(a2);
	jv_free(t1);
	jv_free(t2);
	jv_free(t3);
}

/* Records three answers, two for one call and an error for another. */
static void
record(jv *args, jv *other)
{
	struct art_err err;
	jv r1 = jv_parse("{\"type\":\"tool.result\",\"session_id\":\"s\","
	    "\"id\":\"c1\",\"attempt\":1,\"result\":\"391\"}");
	jv r2 = jv_parse("{\"type\":\"tool.result\",\"result\":\"again\"}");
	jv e = jv_parse("{\"type\":\"tool.error\",\"session_id\":\"s\","
	    "\"id\":\"c2\",\"attempt\":1,\"error\":\"deadline exceeded\","
	    "\"retryable\":true}");
	char key[ART_TOOLTAPE_KEY_LEN + 1];
	jv l;
	int fd = open(path, O_WRONLY | O_APPEND);

	l = art_tooltape_line("calc", args, &r1);
	art_tooltape_key("calc", args, key);
	ok(strcmp(art_json_str(&l, "key"), key) == 0 &&
	    is_json(jv_object_delete(jv_copy(l), jv_string("key")),
	    "{\"type\":\"tool.exchange\",\"name\":\"calc\",\"arguments\":"
	    "{\"expr\":\"17*23\"},\"result\":\"391\"}"),
	    "a settle line makes an exchange");
	ok(jv_get_kind(art_json_field(&l, "session_id")) == JV_KIND_NULL &&
	    jv_get_kind(art_json_field(&l, "id")) == JV_KIND_NULL,
	    "no session or call id is kept");
	ok(art_tooltape_append(fd, &l, &err) == 0, "an exchange appends");
	jv_free(l);
	l = art_tooltape_line("calc", args, &r2);
	art_tooltape_append(fd, &l, &err);
	jv_free(l);
	l = art_tooltape_line("calc", other, &e);
	ok(is_json(art_json_field(&l, "error"), "{\"error\":\"deadline "
	    "exceeded\",\"retryable\":true}"), "a tool.error keeps its error "
	    "and whether it is retryable");
	art_tooltape_append(fd, &l, &err);
	jv_free(l);
	close(fd);
	l = art_tooltape_line("calc", args, args);
	ok(!jv_is_valid(l), "what is no answer makes no line");
	jv_free(l);
	jv_free(r1);
	jv_free(r2);
	jv_free(e);
}

static void
test_play_in_order(void)
{
	struct art_tooltape *t;
	struct art_err err;
	jv args = jv_parse("{\"expr\":\"17*23\"}");
	jv other = jv_parse("{\"expr\":\"1/0\"}"), got;

	record(&args, &other);
	t = art_tooltape_load(path, &err);
	ok(t != NULL && art_tooltape_size(t) == 3, "three exchanges load");
	if (t == NULL) {
		printf("#   %s\n", err.msg);
		exit(1);
	}
	got = art_tooltape_next(t, "calc", &args);
	ok(is_json(art_tooltape_action(&got),
	    "{\"type\":\"tool.result\",\"result\":\"391\"}"),
	    "the first recorded answer plays first, as a decision action");
	jv_free(got);
	got = art_tooltape_next(t, "calc", &args);
	ok(is_json(art_json_field(&got, "result"), "\"again\""),
	    "the same call again plays the second");
	jv_free(got);
	got = art_tooltape_next(t, "calc", &args);
	ok(is_json(art_json_field(&got, "result"), "\"again\""),
	    "once all have played the last one answers again");
	jv_free(got);
	got = art_tooltape_next(t, "calc", &other);
	ok(is_json(art_tooltape_action(&got), "{\"type\":\"tool.error\","
	    "\"error\":\"deadline exceeded\",\"retryable\":true}"),
	    "an error plays back as an error");
	jv_free(got);
	got = art_tooltape_next(t, "upper", &args);
	ok(!jv_is_valid(got), "a call never recorded finds nothing");
	jv_free(got);
	art_tooltape_free(t);
	jv_free(args);
	jv_free(other);
}

static void
test_bad_tapes_are_refused(void)
{
	struct art_tooltape *t;
	struct art_err err;
	jv x = jv_parse("{}");

	test_refused("{\"type\":\"tool.exchange\",\"name\":\"calc\","
	    "\"arguments\":{},\"result\":\"1\"}\n"
	    "{\"type\":\"tool.exchange\",\"name\":\"calc\"}\n",
	    ":2: needs one of 'result' and 'error'",
	    "an exchange with no answer is refused, naming its line");
	test_refused("{\"type\":\"tool.exchange\",\"name\":\"calc\","
	    "\"result\":null,\"error\":{\"error\":\"x\"}}\n",
	    ":1: needs one of", "an exchange with two answers is refused");
	test_refused("{\"type\":\"tool.exchange\",\"name\":\"calc\","
	    "\"error\":\"boom\"}\n", "field 'error'",
	    "an error that is not an object is refused");
	test_refused("{\"type\":\"tool.exchange\",\"result\":1}\n",
	    "no tool name", "an exchange with no name is refused");
	test_refused("{\"type\":\"llm.exchange\"}\n", "not a tool.exchange",
	    "a line of another type is refused");
	test_refused("{\"type\":\"tool.exchange\",\n", "tape ",
	    "a line that is not JSON is refused");
	put("");
	t = art_tooltape_load(path, &err);
	ok(t != NULL && art_tooltape_size(t) == 0, "an empty tape loads");
	art_tooltape_free(t);
	unlink(path);
	t = art_tooltape_load(path, &err);
	ok(t == NULL && strstr(err.msg, "No such file") != NULL,
	    "a missing tape is refused: %s", err.msg);
	ok(art_tooltape_append(-1, &x, &err) == -1, "a failed append says "
	    "so: %s", err.msg);
	art_tooltape_free(NULL);
	jv_free(x);
}

int
main(void)
{
	int fd = mkstemp(path);

	close(fd);
	test_keys();
	test_args_from_the_trigger();
	test_play_in_order();
	test_bad_tapes_are_refused();
	return tap_done();
}
