/* ndjson-fuzz - the NDJSON reader on any bytes, fed in any chunks */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ndjson.h"

/* Small, so that "line_too_long" is in reach of a short input. */
#define MAX_LINE	512

static int
want(const char *type, const char *trigger_type, void *ctx)
{
	(void)ctx;
	return type[0] != 'x' && (trigger_type == NULL ||
	    trigger_type[0] != 'x');
}

/* Reads every whole line buffered; 1 at EOF or on a read error. */
static int
drain(struct art_ndjson_reader *rd)
{
	enum art_ndjson_status s;
	struct art_err err;
	const char *raw;
	size_t len;
	jv v;

	for (;;) {
		s = art_ndjson_next(rd, &v, &err);
		raw = art_ndjson_raw(rd, &len);
		switch (s) {
		case ART_NDJSON_OK:
			if (raw == NULL || len > MAX_LINE ||
			    jv_get_kind(v) != JV_KIND_OBJECT)
				abort();
			(void)art_ndjson_type(&v);
			jv_free(v);
			break;
		case ART_NDJSON_RAW:
			if (raw == NULL || len > MAX_LINE)
				abort();
			break;
		case ART_NDJSON_BAD:
			if (raw != NULL || err.code == NULL)
				abort();
			jv_free(art_ndjson_bad_line(rd, &err));
			break;
		case ART_NDJSON_AGAIN:
			return 0;
		default:
			return 1;
		}
	}
}

/*
 * The first byte picks the flags and a filter; the second, the size of
 * the chunks the rest is fed in (0: all at once).
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct art_ndjson_reader *rd;
	struct art_err err;
	size_t chunk, off, n;
	unsigned flags;

	if (size < 2)
		return 0;
	flags = data[0] & 1 ? ART_NDJSON_REQUIRE_TYPE : 0;
	if ((rd = art_ndjson_reader_new(-1, "<fuzz>", MAX_LINE, flags)) ==
	    NULL)
		return 0;
	if (data[0] & 2)
		art_ndjson_set_filter(rd, want, NULL);
	chunk = data[1] != 0 ? data[1] : size;
	data += 2, size -= 2;
	for (off = 0; off < size; off += n) {
		n = size - off < chunk ? size - off : chunk;
		if (art_ndjson_feed(rd, data + off, n, &err) == -1)
			break;
		if (drain(rd))
			break;
	}
	art_ndjson_feed_eof(rd);
	drain(rd);
	art_ndjson_reader_free(rd);
	return 0;
}
