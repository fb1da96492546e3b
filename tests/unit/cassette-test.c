/* cassette-test - exchanges recorded, found by request, played in order */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cassette.h"
#include "json.h"
#include "tap.h"
#include "testjv.h"

static char path[] = "/tmp/cassette-test-XXXXXX";

static void
put(const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

int
main(void)
{
	struct art_cassette *c;
	struct art_err err;
	char k1[ART_CASSETTE_KEY_LEN + 1], k2[ART_CASSETTE_KEY_LEN + 1];
	jv req = jv_parse("{\"model\":\"openai/m\",\"messages\":[{\"id\":\"a\","
	    "\"role\":\"user\",\"content\":\"hi\"}]}");
	jv req2 = jv_parse("{\"messages\":[{\"role\":\"user\",\"content\":"
	    "\"hi\"}],\"model\":\"openai/m\"}");
	jv other = jv_parse("{\"model\":\"openai/m\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"bye\"}]}");
	jv d = jv_parse("[{\"text\":\"he\"},{\"text\":\"llo\"}]");
	jv r1 = jv_parse("{\"model\":\"openai/m\",\"content\":\"hello\"}");
	jv r2 = jv_parse("{\"model\":\"openai/m\",\"content\":\"again\"}");
	jv e = jv_parse("{\"error\":\"openai 500: down\",\"retryable\":true}");
	jv none = jv_null(), l, got;
	int fd = mkstemp(path);

	art_cassette_key("openai/m", &req, k1);
	art_cassette_key("openai/m", &req2, k2);
	ok(strlen(k1) == 64 && strcmp(k1, k2) == 0, "the key ignores message "
	    "ids and key order");
	art_cassette_key("anthropic/m", &req, k2);
	ok(strcmp(k1, k2) != 0, "the key holds the model");
	art_cassette_key("openai/m", &other, k2);
	ok(strcmp(k1, k2) != 0, "the key holds the messages");
	{
		/* Parallel tool answers, recorded in either order. */
		jv a = jv_parse("{\"model\":\"m\",\"messages\":["
		    "{\"role\":\"user\",\"content\":\"go\"},"
		    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"x\"},"
		    "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"y\"},"
		    "{\"role\":\"user\",\"content\":\"and\"}]}");
		jv b = jv_parse("{\"model\":\"m\",\"messages\":["
		    "{\"role\":\"user\",\"content\":\"go\"},"
		    "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"y\",\"id\":\"n9\"},"
		    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"x\"},"
		    "{\"role\":\"user\",\"content\":\"and\"}]}");
		jv c2 = jv_parse("{\"model\":\"m\",\"messages\":["
		    "{\"role\":\"user\",\"content\":\"and\"},"
		    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"x\"},"
		    "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"y\"},"
		    "{\"role\":\"user\",\"content\":\"go\"}]}");

		art_cassette_key("m", &a, k1);
		art_cassette_key("m", &b, k2);
		ok(strcmp(k1, k2) == 0, "a run of tool answers in another "
		    "order has the same key");
		art_cassette_key("m", &c2, k2);
		ok(strcmp(k1, k2) != 0, "other messages in another order do "
		    "not");
		ok(is_json(art_cassette_messages(art_json_field(&b,
		    "messages")), "[{\"role\":\"user\",\"content\":\"go\"},"
		    "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"x\"},"
		    "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"y\"},"
		    "{\"role\":\"user\",\"content\":\"and\"}]"),
		    "art_cassette_messages drops ids and sorts the run");
		jv_free(a);
		jv_free(b);
		jv_free(c2);
	}

	close(fd);
	fd = open(path, O_WRONLY | O_APPEND);
	l = art_cassette_line("openai/m", &req, true, &d, &r1, &none);
	ok(art_cassette_append(fd, &l, &err) == 0, "an exchange appends");
	jv_free(l);
	l = art_cassette_line("openai/m", &req, false, &none, &r2, &none);
	art_cassette_append(fd, &l, &err);
	jv_free(l);
	l = art_cassette_line("openai/m", &other, false, &none, &none, &e);
	art_cassette_append(fd, &l, &err);
	jv_free(l);
	close(fd);

	c = art_cassette_load(path, &err);
	ok(c != NULL && art_cassette_size(c) == 3, "three exchanges load");
	got = art_cassette_next(c, "openai/m", &req2);
	ok(is_json(art_json_field(&got, "response"),
	    "{\"model\":\"openai/m\",\"content\":\"hello\"}") &&
	    is_json(art_json_field(&got, "deltas"),
	    "[{\"text\":\"he\"},{\"text\":\"llo\"}]"),
	    "the first recorded answer plays first, with its deltas");
	jv_free(got);
	got = art_cassette_next(c, "openai/m", &req);
	ok(is_json(art_json_field(&got, "response"),
	    "{\"model\":\"openai/m\",\"content\":\"again\"}"),
	    "the same request again plays the second");
	jv_free(got);
	got = art_cassette_next(c, "openai/m", &req);
	ok(is_json(art_json_field(&got, "response"),
	    "{\"model\":\"openai/m\",\"content\":\"again\"}"),
	    "once all have played the last one answers again");
	jv_free(got);
	got = art_cassette_next(c, "openai/m", &other);
	ok(is_json(art_json_field(&got, "error"),
	    "{\"error\":\"openai 500: down\",\"retryable\":true}"),
	    "an error plays back as an error");
	jv_free(got);
	got = art_cassette_next(c, "anthropic/m", &req);
	ok(!jv_is_valid(got), "a request never recorded finds nothing");
	jv_free(got);
	art_cassette_free(c);

	put("{\"type\":\"llm.exchange\",\"model\":\"m/x\",\"request\":{},"
	    "\"response\":{}}\n{\"type\":\"llm.exchange\",\"model\":\"m/x\"}\n");
	c = art_cassette_load(path, &err);
	ok(c == NULL && art_err_is(&err, "bad_cassette") &&
	    strstr(err.msg, ":2:") != NULL && strstr(err.msg, "'response'"),
	    "an exchange with no answer is refused, naming its line: %s",
	    err.msg);
	put("{\"type\":\"other\"}\n");
	c = art_cassette_load(path, &err);
	ok(c == NULL && strstr(err.msg, "not an llm.exchange") != NULL,
	    "a line of another type is refused: %s", err.msg);
	put("{\"type\":\"llm.exchange\",\n");
	c = art_cassette_load(path, &err);
	ok(c == NULL && art_err_is(&err, "bad_cassette"),
	    "a line that is not JSON is refused: %s", err.msg);
	unlink(path);
	c = art_cassette_load(path, &err);
	ok(c == NULL && strstr(err.msg, "No such file") != NULL,
	    "a missing cassette is refused: %s", err.msg);
	ok(art_cassette_append(-1, &r1, &err) == -1, "a failed append says "
	    "so: %s", err.msg);
	art_cassette_free(NULL);
	jv_free(req);
	jv_free(req2);
	jv_free(other);
	jv_free(d);
	jv_free(r1);
	jv_free(r2);
	jv_free(e);
	return tap_done();
}
