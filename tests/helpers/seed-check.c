/* seed-check - validate NDJSON lines against one of the seed's shapes
 *
 * usage: seed-check SCHEMA DEF [FILE...]
 * SCHEMA is a JSON Schema document whose $defs hold the seed protocol's
 * types (tests/fixtures/seed/protocol.json); each line of each FILE (or
 * of stdin) is validated through lib/schema against #/$defs/DEF.  A line
 * that does not conform is said on stdout, "FILE:N: DEF: <why>" and the
 * line's first 300 bytes; for a union told apart by "type" (Trigger,
 * Action, ClientInput) the why is the branch of the line's own type's,
 * so it names the member that slipped.  Exit 0 when every line conforms
 * (and there was at least one), 1 when one did not, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "json.h"
#include "schema.h"

/* The document with DEF as its root: {"$ref": "#/$defs/DEF"} beside $defs. */
static jv
rooted(const jv *doc, const char *def)
{
	return jv_object_set(jv_copy(*doc), jv_string("$ref"),
	    jv_string_fmt("#/$defs/%s", def));
}

/*
 * The branch of a oneOf (def, borrowed) whose "type" const is the line's
 * type, rooted like the rest; jv_invalid() when there is none.
 */
static jv
branch_for(const jv *doc, const char *def, const jv *v)
{
	jv defs = art_json_field(doc, "$defs"), d, one, out = jv_invalid();
	const char *type = art_json_str(v, "type");

	d = art_json_field(&defs, def);
	one = art_json_field(&d, "oneOf");
	if (type != NULL && jv_get_kind(one) == JV_KIND_ARRAY) {
		jv_array_foreach(one, i, b) {
			jv p = art_json_field(&b, "properties");
			jv t = art_json_field(&p, "type");
			jv c = art_json_field(&t, "const");

			if (!jv_is_valid(out) && jv_get_kind(c) ==
			    JV_KIND_STRING && strcmp(jv_string_value(c),
			    type) == 0)
				out = jv_object_set(jv_object_set(jv_object(),
				    jv_string("$defs"), jv_copy(defs)),
				    jv_string("allOf"), jv_array_append(
				    jv_array(), jv_copy(b)));
			jv_free(c);
			jv_free(t);
			jv_free(p);
			jv_free(b);
			(void)i;
		}
	}
	jv_free(one);
	jv_free(d);
	jv_free(defs);
	return out;
}

/* Checks one line; prints why when it does not conform.  0 or 1. */
static int
check_line(const jv *doc, const jv *root, const char *def, const char *name,
    size_t n, const char *text)
{
	struct art_err err;
	jv v = art_json_parse_str(text, &err), b;
	int bad = 0;

	if (!jv_is_valid(v)) {
		printf("%s:%zu: %s: not JSON: %s\n", name, n, def, err.msg);
		jv_free(v);
		return 1;
	}
	if (art_schema_validate(root, &v, &err) == -1) {
		b = branch_for(doc, def, &v);
		if (jv_is_valid(b))
			(void)art_schema_validate(&b, &v, &err);
		jv_free(b);
		printf("%s:%zu: %s: %s\n\t%.300s\n", name, n, def, err.msg,
		    text);
		bad = 1;
	}
	jv_free(v);
	return bad;
}

static int
check_file(const jv *doc, const jv *root, const char *def, const char *path,
    size_t *lines)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, n = 0;
	ssize_t len;
	int bad = 0;

	if (f == NULL) {
		fprintf(stderr, "seed-check: open '%s' failed\n", path);
		return 2;
	}
	while ((len = getline(&line, &cap, f)) != -1) {
		n++;
		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (*line == '\0')
			continue;
		(*lines)++;
		bad |= check_line(doc, root, def, path, n, line);
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return bad;
}

int
main(int argc, char *argv[])
{
	struct art_buf b = ART_BUF_INIT;
	struct art_err err;
	jv doc, root;
	size_t lines = 0;
	int i, bad = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: seed-check SCHEMA DEF [FILE...]\n");
		return 2;
	}
	if (art_buf_read_file(&b, argv[1], 1 << 24, &err) == -1 ||
	    (art_buf_addc(&b, '\0') == -1 && art_err_set(&err, "nomem",
	    "out of memory") == -1)) {
		fprintf(stderr, "seed-check: %s\n", err.msg);
		return 2;
	}
	doc = art_json_parse_str(b.p, &err);
	art_buf_release(&b);
	if (!jv_is_valid(doc)) {
		fprintf(stderr, "seed-check: %s: %s\n", argv[1], err.msg);
		return 2;
	}
	root = rooted(&doc, argv[2]);
	if (art_schema_check(&root, &err) == -1) {
		fprintf(stderr, "seed-check: %s: %s\n", argv[1], err.msg);
		return 2;
	}
	if (argc == 3)
		bad = check_file(&doc, &root, argv[2], "-", &lines);
	for (i = 3; i < argc && bad < 2; i++)
		bad |= check_file(&doc, &root, argv[2], argv[i], &lines);
	jv_free(root);
	jv_free(doc);
	if (bad == 0 && lines == 0) {
		printf("seed-check: no lines to check\n");
		return 1;
	}
	if (bad == 0)
		printf("%zu %s lines conform\n", lines, argv[2]);
	return bad ? (bad >= 2 ? 2 : 1) : 0;
}
