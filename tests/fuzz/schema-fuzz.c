/* schema-fuzz - the JSON Schema validator: schema and value from the input */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "schema.h"

static int
is_one_of(const char *code, const char *a, const char *b)
{
	return code != NULL && (strcmp(code, a) == 0 || strcmp(code, b) == 0);
}

/*
 * The input is a schema, a NUL, and the value; without a NUL the schema
 * is validated against itself.  Both are JSON texts.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *nul;
	struct art_err err;
	jv schema, value, un;
	size_t slen;
	int rc;

	nul = memchr(p, '\0', size);
	slen = nul != NULL ? (size_t)(nul - p) : size;
	schema = art_json_parse(p, slen, &err);
	if (!jv_is_valid(schema))
		return 0;
	value = nul != NULL ? art_json_parse(nul + 1, size - slen - 1, &err) :
	    jv_copy(schema);
	if (!jv_is_valid(value)) {
		jv_free(schema);
		return 0;
	}
	rc = art_schema_check(&schema, &err);
	if (rc == -1 && !is_one_of(err.code, "bad_schema", "nomem"))
		abort();
	rc = art_schema_validate(&schema, &value, &err);
	if (rc == -1 && !is_one_of(err.code, "invalid", "bad_schema") &&
	    strcmp(err.code, "nomem") != 0)
		abort();
	(void)art_schema_validate(&schema, &value, NULL);
	un = art_schema_unsupported(&schema);
	if (jv_get_kind(un) != JV_KIND_ARRAY)
		abort();
	jv_free(un);
	jv_free(value);
	jv_free(schema);
	return 0;
}
