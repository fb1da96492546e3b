/* testjv.h - compare a jv with JSON text, for unit tests */
#ifndef ART_TESTJV_H
#define ART_TESTJV_H

#include <stdio.h>

#include "json.h"

/* True when v (consumed) equals the JSON text; prints both when not. */
static int __attribute__((unused))
is_json(jv v, const char *text)
{
	struct art_err err;
	jv want = art_json_parse_str(text, &err), d;
	int eq = art_json_equal(&v, &want);

	if (!eq) {
		d = jv_dump_string(jv_copy(v), 0);
		printf("#   got %s\n#  want %s\n", jv_string_value(d), text);
		jv_free(d);
	}
	jv_free(want);
	jv_free(v);
	return eq;
}
#endif
