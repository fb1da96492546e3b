/* testjv.h - compare a jv with JSON text, for unit tests */
#ifndef ART_TESTJV_H
#define ART_TESTJV_H

#include <stdio.h>
#include <string.h>

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
/* Each non-empty line of text (NULL: none) parsed, as one array. */
static jv __attribute__((unused))
json_lines(const char *text)
{
	struct art_err err;
	const char *p = text != NULL ? text : "", *nl;
	jv all = jv_array();

	for (; *p != '\0'; p = *nl != '\0' ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		if (nl > p)
			all = jv_array_append(all, art_json_parse(p,
			    (size_t)(nl - p), &err));
	}
	return all;
}
#endif
