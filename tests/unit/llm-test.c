/* llm-test - a model request parsed for what it adds to the one before */
#include "llm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "providers.h"
#include "tap.h"

/* A request line of session s whose messages are the JSON text msgs. */
static char *
line_of(const char *id, const char *msgs, const char *before)
{
	const char *fmt = "{\"type\":\"llm.request\",\"session_id\":\"s\","
	    "\"id\":\"%s\",\"attempt\":1,\"request\":{%s\"model\":\"m\","
	    "\"messages\":%s,\"tools\":[{\"name\":\"t\",\"description\":"
	    "\"messages\"}]},\"stream\":false}";
	size_t n = strlen(fmt) + strlen(id) + strlen(msgs) + strlen(before);
	char *s = malloc(n);

	if (s == NULL)
		abort();
	snprintf(s, n, fmt, id, before, msgs);
	return s;
}

/* Does the reusing parse of text give what a whole parse gives? */
static int
same_as_whole(struct art_llm_reuse *r, const char *text)
{
	struct art_err err;
	jv a = art_llm_parse_request(r, text, strlen(text), &err);
	jv b = art_json_parse(text, strlen(text), &err);
	size_t na, nb;
	char *da = jv_is_valid(a) ? art_json_dump(&a, &na) : NULL;
	char *db = jv_is_valid(b) ? art_json_dump(&b, &nb) : NULL;
	int yes = da != NULL && db != NULL && strcmp(da, db) == 0;

	if (!yes)
		printf("# got  %s\n# want %s\n", da ? da : "(invalid)",
		    db ? db : "(invalid)");
	free(da);
	free(db);
	jv_free(a);
	jv_free(b);
	return yes;
}

#define M1 "{\"role\":\"user\",\"content\":\"go [\\\"x\\\"], {\\\"request\\\":{\"}"
#define M2 "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":" \
	"\"function\",\"function\":{\"name\":\"t\",\"arguments\":\"{}\"}}]}"
#define M3 "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"]}1.5e3\"}"

static void
test_each_request_reads_as_a_whole_parse(void)
{
	struct art_llm_reuse r = { 0 };
	jv first;
	char *l;

	l = line_of("a", "[" M1 "]", "");
	ok(same_as_whole(&r, l), "the first request: parsed whole");
	ok(r.text != NULL && r.len == strlen("[" M1 "]"),
	    "its messages are kept, as text");
	free(l);
	first = jv_array_get(jv_copy(r.messages), 0);
	l = line_of("b", "[" M1 "," M2 "," M3 "]", "");
	ok(same_as_whole(&r, l), "the next: the kept messages and two more");
	ok(jv_array_length(jv_copy(r.messages)) == 3 && jv_identical(first,
	    jv_array_get(jv_copy(r.messages), 0)), "three kept now, the "
	    "first not parsed again but the one kept");
	free(l);
	l = line_of("c", "[" M1 "," M2 "," M3 "]", "");
	ok(same_as_whole(&r, l), "the same messages again");
	free(l);
	l = line_of("d", "[" M1 "," M3 "]", "");
	ok(same_as_whole(&r, l), "a fork: another tail, parsed whole");
	free(l);
	l = line_of("e", "[" M1 "," M3 "," M2 "]", "\"temperature\":0.5,"
	    "\"x\":{\"messages\":[1]},");
	ok(same_as_whole(&r, l), "messages after other members of the "
	    "request, one of them holding \"messages\" itself");
	free(l);
	l = "{\"type\":\"llm.request\",\"session_id\":\"s\",\"id\":\"g\","
	    "\"attempt\":1,\"request\":{\"model\":\"m\",\"messages\":["
	    M1 "," M3 "," M2 "],\"response_format\":{\"name\":"
	    "\"structured_answer\",\"schema\":{\"type\":\"object\","
	    "\"properties\":{\"messages\":{\"type\":\"array\"}}}}}}";
	ok(same_as_whole(&r, l), "a response_format after the kept "
	    "messages, its schema naming \"messages\", is kept whole");
	l = line_of("f", "[]", "");
	ok(same_as_whole(&r, l), "no messages");
	free(l);
	l = "{\"type\": \"llm.request\", \"request\": {\"model\": \"m\", "
	    "\"messages\": [" M1 "]}}";
	ok(same_as_whole(&r, l), "spaced JSON: a whole parse");
	l = "{\"type\":\"llm.request\",\"request\":{\"model\":\"m\"}}";
	ok(same_as_whole(&r, l), "no messages member: a whole parse");
	l = "{\"type\":\"llm.request\",\"request\":\"text\"}";
	ok(same_as_whole(&r, l), "a request that is not an object");
	art_llm_reuse_free(&r);
	ok(r.text == NULL && r.len == 0, "freed, it is empty again");
	art_llm_reuse_free(&r);
}

static void
test_providers_found_by_prefix(void)
{
	int i, at, good = 1;

	for (i = 0; i < ART_NPROVIDERS; i++) {
		at = art_provider_find(art_providers[i]->name,
		    strlen(art_providers[i]->name));
		good &= at == i;
	}
	ok(good, "each of the %d providers is found by its name", i);
	at = art_provider_find("openai/gpt-4o", 6);
	ok(at >= 0 && strcmp(art_providers[at]->name, "openai") == 0,
	    "a model's prefix finds its provider");
	ok(art_provider_find("open", 4) == -1 &&
	    art_provider_find("mockx", 5) == -1 &&
	    art_provider_find("", 0) == -1, "a part of a name, more than a "
	    "name, or none finds nothing");
}

int
main(void)
{
	test_providers_found_by_prefix();
	test_each_request_reads_as_a_whole_parse();
	return tap_done();
}
