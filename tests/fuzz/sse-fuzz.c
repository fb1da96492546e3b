/* sse-fuzz - the SSE parser: any bytes, and any chunking gives the same */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "sse.h"

/* Small, so that "sse_too_large" is in reach of a short input. */
#define MAX_EVENT	1024

/* Each event as its fields, NUL-separated, so two runs can be compared. */
static int
record(const struct art_sse_event *ev, void *ctx)
{
	struct art_buf *b = ctx;
	char retry[32];

	if (ev->event == NULL || ev->data == NULL || ev->id == NULL ||
	    ev->data[ev->data_len] != '\0' || ev->data_len > MAX_EVENT)
		abort();
	snprintf(retry, sizeof(retry), "%ld", ev->retry);
	if (art_buf_add(b, ev->event, strlen(ev->event) + 1) == -1 ||
	    art_buf_add(b, ev->data, ev->data_len + 1) == -1 ||
	    art_buf_add(b, ev->id, strlen(ev->id) + 1) == -1 ||
	    art_buf_add(b, retry, strlen(retry) + 1) == -1)
		abort();
	(void)art_sse_is_done(ev);
	return 0;
}

/* Parses p in chunks of chunk bytes; returns feed's last, then finish's. */
static int
parse(const uint8_t *p, size_t n, size_t chunk, struct art_buf *b, int *fin)
{
	struct art_sse *sse;
	struct art_err err;
	size_t off, k;
	int rc = 0;

	if ((sse = art_sse_new(MAX_EVENT)) == NULL)
		abort();
	for (off = 0; off < n && rc == 0; off += k) {
		k = n - off < chunk ? n - off : chunk;
		rc = art_sse_feed(sse, (const char *)p + off, k, record, b,
		    &err);
		(void)art_sse_is_pending(sse);
	}
	*fin = art_sse_finish(sse, record, b, &err);
	art_sse_free(sse);
	return rc;
}

/* The first byte is the chunk size of the second run (0: one byte). */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct art_buf whole, chunked;
	int rc1, rc2, fin1, fin2;
	size_t chunk;

	if (size < 1)
		return 0;
	chunk = data[0] != 0 ? data[0] : 1;
	data++, size--;
	art_buf_init(&whole);
	art_buf_init(&chunked);
	rc1 = parse(data, size, size > 0 ? size : 1, &whole, &fin1);
	rc2 = parse(data, size, chunk, &chunked, &fin2);
	/* sse.h: any chunking of the same bytes gives the same events. */
	if (rc1 != rc2 || fin1 != fin2 || whole.len != chunked.len ||
	    (whole.len > 0 && memcmp(whole.p, chunked.p, whole.len) != 0))
		abort();
	art_buf_release(&whole);
	art_buf_release(&chunked);
	return 0;
}
