/* stream.h - a provider's stream assembly on any bytes, as SSE events
 *
 * Included by openai-fuzz.c and anthropic-fuzz.c, each defining
 * FUZZ_WIRE as its wire format.  The bytes go through the SSE parser as
 * a response body would; each event goes to the format's stream_event(),
 * and what they add up to through stream_result(), as lib/remote.c
 * does.  A response that came out is then written as the provider's own
 * body and read back.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "json.h"
#include "sse.h"
#include "wire.h"

struct run {
	const struct art_wire		*w;
	struct art_wire_stream		*st;
	jv				 deltas;
	int				 rc;	/* stream_event's last */
};

static void
check_error(jv e)
{
	if (jv_get_kind(e) != JV_KIND_OBJECT ||
	    art_json_str(&e, "error") == NULL ||
	    art_json_str(&e, "code") == NULL)
		abort();
	jv_free(e);
}

static int
event(const struct art_sse_event *ev, void *ctx)
{
	struct run *r = ctx;
	jv error = jv_invalid();

	r->rc = r->w->stream_event(r->st, ev, &r->deltas, &error);
	if (r->rc == -1)
		check_error(error);
	else
		jv_free(error);
	if (jv_get_kind(r->deltas) != JV_KIND_ARRAY)
		abort();
	/* As remote.c: the end of the stream, or its error, stops it. */
	return r->rc == 0 ? 0 : 2;
}

/* resp (borrowed) as the provider's body, and back. */
static void
round_trip(const struct art_wire *w, const jv *resp)
{
	jv body = w->native(resp), back = jv_invalid(), error = jv_invalid();
	char *text;
	size_t len;

	if ((text = art_json_dump(&body, &len)) == NULL)
		abort();
	if (w->response(text, len, &back, &error) == 0)
		jv_free(back);
	else
		check_error(error);
	free(text);
	jv_free(body);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run r = { &FUZZ_WIRE, NULL, jv_array(), 0 };
	jv resp = jv_invalid(), error = jv_invalid();
	struct art_sse *sse;
	struct art_err err;
	int rc;

	if ((sse = art_sse_new(0)) == NULL ||
	    (r.st = r.w->stream_new()) == NULL)
		abort();
	rc = art_sse_feed(sse, (const char *)data, size, event, &r, &err);
	if (rc == 0)
		art_sse_finish(sse, event, &r, &err);
	if (rc != -1 && r.rc != -1) {
		if (r.w->stream_result(r.st, &resp, &error) == 0) {
			if (jv_get_kind(resp) != JV_KIND_OBJECT)
				abort();
			round_trip(r.w, &resp);
			jv_free(resp);
		} else
			check_error(error);
	}
	jv_free(r.deltas);
	r.w->stream_free(r.st);
	art_sse_free(sse);
	return 0;
}
