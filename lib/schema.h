/* schema.h - JSON Schema validation over jv, for tool declarations */
#ifndef ART_SCHEMA_H
#define ART_SCHEMA_H

#include <jv.h>

#include "err.h"

/*
 * A tool declares its arguments as a JSON Schema, and a model's call is
 * checked against it before the tool runs.  This is the part of JSON
 * Schema (draft 6 to 2020-12) that tool declarations use:
 *
 *	true, false (boolean schemas)
 *	type		a name or an array of names (a union): null,
 *			boolean, object, array, number, string, integer
 *			(a number with no fractional part, so 1.0 is one:
 *			libjq holds every number as a double)
 *	enum, const	deep equality, as art_json_equal()
 *	minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers, the
 *			draft 6 form), multipleOf (to within rounding)
 *	minLength, maxLength (Unicode code points), pattern
 *	minItems, maxItems, uniqueItems, items, prefixItems, additionalItems
 *			(items as an array is a tuple, as in draft 2019-09;
 *			with prefixItems, items is the schema of the rest)
 *	required, properties, additionalProperties, minProperties,
 *	maxProperties
 *	allOf, anyOf, oneOf, not
 *	$ref		"#" or "#/json/pointer" into the same document
 *			($defs, definitions or anywhere else), with ~0, ~1
 *			and %XX unescaped; keywords beside a $ref apply too
 *	$defs, definitions (targets for $ref)
 *
 * pattern is an ECMA-262 regular expression as lib/regex.h reads it (\d,
 * \w, \s and \b are ASCII, lazy quantifiers, (?:...) groups; . is one
 * character), searched for anywhere in the string as JSON Schema says, so
 * anchor it with ^ and $ to match the whole.
 *
 * These say something and assert nothing, so they are neither checked nor
 * "unsupported": title, description, default, examples, $schema, $id,
 * $comment, deprecated, readOnly, writeOnly, format, contentEncoding,
 * contentMediaType, contentSchema.  Every other keyword (if, then, else,
 * patternProperties, propertyNames, dependentRequired, contains,
 * unevaluatedProperties, $anchor, $dynamicRef, ...) and a $ref that is not
 * a local pointer (another document, an anchor) are ignored by
 * validation, and art_schema_unsupported() names them.
 *
 * A violation is reported as err code "invalid" and the message
 * "<where>: <why>", where is the JSON Pointer (RFC 6901, "~" and "/" in a
 * key written "~0" and "~1") of the offending part of the value, "/" for
 * the value itself:
 *
 *	/city: expected string, got number
 *	/: missing required property 'city'
 *	/: property 'extra' is not allowed	(its schema is false, by
 *					additionalProperties or properties)
 *	/tags/2: expected at most 5 characters
 *	/unit: expected one of "c", "f"
 *	/n: expected at least 1		(more than, at most, less than)
 *	/code: does not match ^[A-Z]{3}$
 *	/: matches none of anyOf	(or of oneOf)
 *	/: matches 2 of oneOf, expected exactly 1
 *	/: matches the schema in not
 *	/x: no value is allowed		(the schema false)
 *
 * The first violation is the one reported, and it is the same on every
 * run: a schema's keywords are tried in the order type, enum, const, the
 * value's own kind (number: minimum, exclusiveMinimum, maximum,
 * exclusiveMaximum, multipleOf; string: minLength, maxLength, pattern;
 * array: minItems, maxItems, uniqueItems, then each item in order;
 * object: required in its order, minProperties, maxProperties, then each
 * property in sorted key order), $ref, allOf, anyOf, oneOf, not.  Inside
 * allOf the failing branch speaks; inside anyOf, oneOf and not the
 * branches are only tried, and the message is the combinator's.
 *
 * A schema that cannot be used is err code "bad_schema", and nothing is
 * validated against it.  Every subschema a supported keyword reaches is
 * checked before any value is, each message naming the place in the
 * schema as a URI fragment:
 *
 *	#/properties/city: expected a schema (object or boolean), got number
 *	#/properties/code/pattern: bad regular expression: at offset 3: <why>
 *	#/properties/a/$ref: '#/$defs/nope' does not resolve
 *	#/type: unknown type 'text'
 *	#/minLength: expected a non-negative integer, got -1
 *
 * Two faults show only with a value, and are reported then:
 *
 *	$ref '#': loops without progress	(back to where it started,
 *						with no step into the value)
 *	$ref '#': too deep (more than 64 nested)
 *
 * "code" "nomem" is out of memory.
 */

/* $refs one validation may follow inside one another. */
#define ART_SCHEMA_MAX_DEPTH	64

/*
 * Checks that schema (borrowed) can be used, without a value: 0, or -1
 * with err code "bad_schema" as above.  art_schema_validate() does this
 * first; a caller that declares tools can do it once, up front.
 */
int	art_schema_check(const jv *schema, struct art_err *);

/*
 * Validates value against schema, both borrowed.  0 when value conforms;
 * -1 with err code "invalid" naming the first violation, or "bad_schema"
 * when schema is unusable.  err may be NULL.
 */
int	art_schema_validate(const jv *schema, const jv *value,
	    struct art_err *);

/*
 * The keywords schema (borrowed) uses anywhere that validation ignores,
 * each once, as an array of strings sorted by byte ("$ref" when some $ref
 * is not a local pointer), so a caller can warn once instead of silently
 * accepting what a schema meant to forbid.  "Anywhere" is every subschema
 * of a supported or an unsupported applicator (so "if" inside
 * patternProperties is found) and every local $ref's target; property
 * names and the data in enum, const and annotations are not keywords.
 * [] when there are none, or when schema is not an object.  A new jv the
 * caller owns.
 */
jv	art_schema_unsupported(const jv *schema);

#endif
