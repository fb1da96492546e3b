/* schema-test - JSON Schema validation of tool arguments, and its messages */
#include "schema.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tap.h"

/*
 * Test JSON is written with ' for ", so a schema reads as it would in a
 * file; no test needs an apostrophe.  Aborts on a typo in a test.
 */
static jv
parse(const char *text)
{
	char buf[4096];
	struct art_err err;
	size_t i;
	jv v;

	for (i = 0; text[i] != '\0' && i < sizeof(buf) - 1; i++)
		buf[i] = text[i] == '\'' ? '"' : text[i];
	buf[i] = '\0';
	v = art_json_parse_str(buf, &err);
	if (!jv_is_valid(v)) {
		fprintf(stderr, "bad test input %s: %s\n", text, err.msg);
		abort();
	}
	return v;
}

/* Whether value conforms to schema; says why not when it does not. */
static int
valid(const char *schema, const char *value)
{
	struct art_err err = { NULL, "" };
	jv s = parse(schema), v = parse(value);
	int rc = art_schema_validate(&s, &v, &err);

	if (rc != 0)
		printf("#   %s: %s\n", err.code, err.msg);
	jv_free(s);
	jv_free(v);
	return rc == 0;
}

/*
 * Whether validation fails with code and a message that is msg (or, with
 * prefix set, starts with it); says what it got when not.
 */
static int
fails_as(const char *schema, const char *value, const char *code,
    const char *msg, int prefix)
{
	struct art_err err = { NULL, "" };
	jv s = parse(schema), v = parse(value);
	int rc = art_schema_validate(&s, &v, &err), good;

	good = rc == -1 && art_err_is(&err, code) && (prefix ?
	    strncmp(err.msg, msg, strlen(msg)) == 0 :
	    strcmp(err.msg, msg) == 0);
	if (!good)
		printf("#   got %d %s: %s\n#  want -1 %s: %s\n", rc,
		    err.code != NULL ? err.code : "(none)", err.msg, code, msg);
	jv_free(s);
	jv_free(v);
	return good;
}

static int
fails(const char *schema, const char *value, const char *msg)
{
	return fails_as(schema, value, "invalid", msg, 0);
}

static int
bad_schema(const char *schema, const char *value, const char *msg)
{
	return fails_as(schema, value, "bad_schema", msg, 0);
}

/* Whether art_schema_unsupported(schema) is the array want. */
static int
unsupported_is(const char *schema, const char *want)
{
	jv s = parse(schema), w = parse(want), got = art_schema_unsupported(&s);
	int eq = art_json_equal(&got, &w);
	jv d;

	if (!eq) {
		d = jv_dump_string(jv_copy(got), 0);
		printf("#   got %s\n#  want %s\n", jv_string_value(d), want);
		jv_free(d);
	}
	jv_free(got);
	jv_free(w);
	jv_free(s);
	return eq;
}

/* --- keywords, one by one --- */

static void
test_boolean_schemas(void)
{
	ok(valid("true", "{'a':[1,null]}"), "true takes anything");
	ok(fails("false", "null", "/: no value is allowed"),
	    "false takes nothing");
	ok(valid("{'properties':{'a':false}}", "{'b':1}"),
	    "a false property schema allows the property's absence");
	ok(fails("{'properties':{'a':false}}", "{'a':1}",
	    "/: property 'a' is not allowed"), "but not its presence");
	ok(fails("{'items':false}", "[1]", "/0: no value is allowed"),
	    "false as items");
}

static void
test_type_names_each_kind(void)
{
	ok(valid("{'type':'null'}", "null"), "null is null");
	ok(fails("{'type':'null'}", "false", "/: expected null, got boolean"),
	    "false is not null");
	ok(valid("{'type':'boolean'}", "true") &&
	    valid("{'type':'boolean'}", "false"), "true and false are boolean");
	ok(fails("{'type':'boolean'}", "null", "/: expected boolean, got null"),
	    "null is not boolean");
	ok(valid("{'type':'object'}", "{}"), "{} is an object");
	ok(fails("{'type':'object'}", "[]", "/: expected object, got array"),
	    "[] is not an object");
	ok(valid("{'type':'array'}", "[]"), "[] is an array");
	ok(fails("{'type':'array'}", "{}", "/: expected array, got object"),
	    "{} is not an array");
	ok(valid("{'type':'number'}", "1.5") && valid("{'type':'number'}",
	    "-2"), "1.5 and -2 are numbers");
	ok(fails("{'type':'number'}", "'1'", "/: expected number, got string"),
	    "'1' is not a number");
	ok(valid("{'type':'string'}", "''"), "'' is a string");
	ok(fails("{'type':'string'}", "1", "/: expected string, got number"),
	    "1 is not a string");
}

static void
test_type_arrays_are_unions(void)
{
	const char *s = "{'type':['string','null']}";

	ok(valid(s, "'x'") && valid(s, "null"), "either member is taken");
	ok(fails(s, "1", "/: expected string or null, got number"),
	    "anything else names every member");
	ok(fails("{'type':['integer','boolean','array']}", "{}",
	    "/: expected integer or boolean or array, got object"),
	    "three members");
}

static void
test_integer_is_a_number_without_fraction(void)
{
	const char *s = "{'type':'integer'}";

	ok(valid(s, "1") && valid(s, "-3") && valid(s, "0"), "1, -3, 0");
	ok(valid(s, "1.0"), "1.0 is an integer: libjq keeps only doubles");
	ok(valid(s, "1e2"), "1e2 is an integer");
	ok(fails(s, "1.5", "/: expected integer, got number"),
	    "1.5 is not an integer");
	ok(fails(s, "'1'", "/: expected integer, got string"),
	    "'1' is not an integer");
	ok(valid("{'type':'number'}", "7"), "an integer is a number");
}

static void
test_messages_name_the_nested_path(void)
{
	const char *s = "{'properties':{'a':{'properties':{'b':{'items':"
	    "{'type':'string'}}}}}}";

	ok(valid(s, "{'a':{'b':['x','y']}}"), "a conforming nested value");
	ok(fails(s, "{'a':{'b':[1]}}", "/a/b/0: expected string, got number"),
	    "/a/b/0");
	ok(fails(s, "{'a':{'b':['x','y',false]}}",
	    "/a/b/2: expected string, got boolean"), "/a/b/2");
}

static void
test_keys_are_escaped_in_paths(void)
{
	const char *s = "{'properties':{'a/b':{'type':'string'},"
	    "'m~n':{'type':'string'},'~/':{'properties':{'x y':{'items':"
	    "{'type':'string'}}}}}}";

	ok(fails(s, "{'a/b':1}", "/a~1b: expected string, got number"),
	    "'/' is written ~1");
	ok(fails(s, "{'m~n':1}", "/m~0n: expected string, got number"),
	    "'~' is written ~0");
	ok(fails(s, "{'~/':{'x y':[1]}}", "/~0~1/x y/0: expected string, got "
	    "number"), "both, and a space left alone");
}

static void
test_required_names_the_first_missing_property(void)
{
	const char *s = "{'required':['b','a']}";

	ok(valid(s, "{'a':1,'b':null}"), "all present (null counts)");
	ok(fails(s, "{}", "/: missing required property 'b'"),
	    "the first in the required array's order");
	ok(fails(s, "{'b':1}", "/: missing required property 'a'"),
	    "the one missing");
	ok(fails("{'properties':{'p':{'required':['x']}}}", "{'p':{}}",
	    "/p: missing required property 'x'"), "nested");
	ok(valid(s, "[1]") && valid(s, "'s'"),
	    "required says nothing about a value that is not an object");
}

static void
test_additional_properties_false(void)
{
	const char *s = "{'properties':{'a':{}},'additionalProperties':false}";

	ok(valid(s, "{'a':1}") && valid(s, "{}"), "declared properties pass");
	ok(fails(s, "{'a':1,'extra':2}", "/: property 'extra' is not allowed"),
	    "an undeclared one is refused");
	ok(fails(s, "{'z':1,'y':2}", "/: property 'y' is not allowed"),
	    "the first in sorted key order");
}

static void
test_additional_properties_as_a_schema(void)
{
	const char *s = "{'properties':{'a':{'type':'string'}},"
	    "'additionalProperties':{'type':'number'}}";

	ok(valid(s, "{'a':'x','b':1,'c':2.5}"), "extra properties conform");
	ok(fails(s, "{'a':'x','b':'y'}", "/b: expected number, got string"),
	    "an extra property that does not");
	ok(fails(s, "{'a':1}", "/a: expected string, got number"),
	    "a declared property keeps its own schema");
}

static void
test_properties_are_checked_in_sorted_key_order(void)
{
	const char *s = "{'properties':{'b':{'type':'string'},"
	    "'a':{'type':'string'},'c':{'type':'string'}}}";

	ok(fails(s, "{'c':1,'b':2,'a':3}", "/a: expected string, got number"),
	    "a before b before c, whatever the text's order");
	ok(fails(s, "{'c':1,'b':2}", "/b: expected string, got number"),
	    "then b");
}

static void
test_min_and_max_properties(void)
{
	ok(fails("{'minProperties':1}", "{}",
	    "/: expected at least 1 property"), "minProperties");
	ok(fails("{'maxProperties':2}", "{'a':1,'b':2,'c':3}",
	    "/: expected at most 2 properties"), "maxProperties");
	ok(valid("{'minProperties':1,'maxProperties':2}", "{'a':1,'b':2}"),
	    "within both");
}

static void
test_items_as_a_schema(void)
{
	const char *s = "{'items':{'type':'integer'}}";

	ok(valid(s, "[]") && valid(s, "[1,2,3]"), "every item conforms");
	ok(fails(s, "[1,'x',2.5]", "/1: expected integer, got string"),
	    "the first item that does not");
}

static void
test_tuples_prefix_items_and_additional_items(void)
{
	const char *p = "{'prefixItems':[{'type':'string'},{'type':'number'}],"
	    "'items':false}";
	const char *t = "{'items':[{'type':'string'},{'type':'number'}],"
	    "'additionalItems':{'type':'boolean'}}";

	ok(valid(p, "['a',1]") && valid(p, "['a']"), "prefixItems conform");
	ok(fails(p, "['a','b']", "/1: expected number, got string"),
	    "a prefix item that does not");
	ok(fails(p, "['a',1,true]", "/2: no value is allowed"),
	    "items false closes the tuple");
	ok(valid(t, "['a',1,true,false]"), "items as an array is a tuple");
	ok(fails(t, "['a',1,2]", "/2: expected boolean, got number"),
	    "additionalItems covers the rest");
	ok(valid("{'items':[{'type':'string'}]}", "['a',1]"),
	    "a tuple without additionalItems leaves the rest free");
}

static void
test_min_and_max_items(void)
{
	ok(fails("{'minItems':2}", "[1]", "/: expected at least 2 items"),
	    "minItems");
	ok(fails("{'maxItems':1}", "[1,2]", "/: expected at most 1 item"),
	    "maxItems, singular");
	ok(valid("{'minItems':1,'maxItems':1}", "[[]]"), "within both");
}

static void
test_unique_items_compares_deeply(void)
{
	const char *s = "{'uniqueItems':true}";

	ok(valid(s, "[1,'1',[1],{'a':1}]"), "different kinds are different");
	ok(fails(s, "[1,2,1]", "/: items 0 and 2 are equal"), "a repeat");
	ok(fails(s, "[{'a':1,'b':[2]},{'b':[2],'a':1.0}]",
	    "/: items 0 and 1 are equal"), "objects compare by content");
	ok(valid("{'uniqueItems':false}", "[1,1]"), "false allows repeats");
}

static void
test_length_counts_code_points(void)
{
	const char *tags = "{'properties':{'tags':{'items':{'maxLength':5}}}}";

	ok(valid("{'maxLength':5}", "'h\xc3\xa9llo'"),
	    "h\xc3\xa9llo is 6 bytes but 5 characters");
	ok(fails("{'maxLength':5}",
	    "'\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xa7\xe3\x81\x99!'",
	    "/: expected at most 5 characters"), "6 characters of 16 bytes");
	ok(fails("{'minLength':2}", "'\xc3\xa9'",
	    "/: expected at least 2 characters"), "one 2-byte character");
	ok(valid("{'minLength':2,'maxLength':2}",
	    "'\xf0\x9f\x98\x80\xf0\x9f\x98\x80'"), "two 4-byte characters");
	ok(fails("{'maxLength':1}", "'ab'", "/: expected at most 1 character"),
	    "singular");
	ok(fails(tags, "{'tags':['a','b','toolong']}",
	    "/tags/2: expected at most 5 characters"), "inside an array");
}

static void
test_enum_of_mixed_types(void)
{
	const char *s = "{'enum':['c',1,null,{'a':[1]},true]}";

	ok(valid(s, "'c'") && valid(s, "null") && valid(s, "true"),
	    "a string, null, true");
	ok(valid(s, "1.0"), "1.0 is 1");
	ok(valid(s, "{'a':[1]}"), "an object by content");
	ok(fails(s, "'d'", "/: expected one of \"c\", 1, null, {\"a\":[1]}, "
	    "true"), "a value not listed");
	ok(fails(s, "false", "/: expected one of \"c\", 1, null, {\"a\":[1]}, "
	    "true"), "false is not true");
	ok(fails(s, "{'a':[1,2]}", "/: expected one of \"c\", 1, null, "
	    "{\"a\":[1]}, true"), "an object that differs");
}

static void
test_const_compares_deeply(void)
{
	const char *s = "{'const':{'a':[1,{'b':null}],'c':'d'}}";

	ok(valid(s, "{'c':'d','a':[1.0,{'b':null}]}"),
	    "key order and 1.0 do not matter");
	ok(fails(s, "{'a':[1,{}],'c':'d'}",
	    "/: expected {\"a\":[1,{\"b\":null}],\"c\":\"d\"}"),
	    "a missing null is a difference");
	ok(fails("{'properties':{'k':{'const':'x'}}}", "{'k':'y'}",
	    "/k: expected \"x\""), "a string const");
	ok(fails("{'const':null}", "0", "/: expected null"), "null const");
}

static void
test_numeric_limits(void)
{
	ok(valid("{'minimum':1}", "1"), "minimum is inclusive");
	ok(fails("{'properties':{'n':{'minimum':1}}}", "{'n':0}",
	    "/n: expected at least 1"), "below minimum");
	ok(valid("{'maximum':7}", "7"), "maximum is inclusive");
	ok(fails("{'maximum':7}", "7.5", "/: expected at most 7"),
	    "above maximum");
	ok(valid("{'exclusiveMinimum':0}", "0.5"), "above exclusiveMinimum");
	ok(fails("{'exclusiveMinimum':0}", "0", "/: expected more than 0"),
	    "exclusiveMinimum excludes its bound");
	ok(valid("{'exclusiveMaximum':10}", "9.99"), "below exclusiveMaximum");
	ok(fails("{'exclusiveMaximum':10}", "10", "/: expected less than 10"),
	    "exclusiveMaximum excludes its bound");
	ok(fails("{'minimum':-1.5}", "-2", "/: expected at least -1.5"),
	    "a fractional bound is written as libjq writes it");
	ok(valid("{'minimum':1,'maximum':2}", "'not a number'"),
	    "limits say nothing about a string");
}

static void
test_multiple_of(void)
{
	ok(valid("{'multipleOf':3}", "9") && valid("{'multipleOf':3}", "0"),
	    "9 and 0 are multiples of 3");
	ok(fails("{'multipleOf':3}", "10", "/: expected a multiple of 3"),
	    "10 is not");
	ok(valid("{'multipleOf':0.1}", "0.3"), "0.3 of 0.1, despite rounding");
	ok(fails("{'multipleOf':0.1}", "0.35", "/: expected a multiple of 0.1"),
	    "0.35 of 0.1 is not");
	ok(valid("{'multipleOf':0.5}", "1e308"),
	    "a quotient that overflows is still judged");
}

static void
test_pattern_searches_unless_anchored(void)
{
	const char *code = "{'properties':{'code':{'pattern':'^[A-Z]{3}$'}}}";

	ok(valid("{'pattern':'b'}", "'abc'"), "an unanchored pattern searches");
	ok(valid("{'pattern':'[0-9]+'}", "'abc1'"), "anywhere in the string");
	ok(fails("{'pattern':'b'}", "'xyz'", "/: does not match b"),
	    "and can still miss");
	ok(fails("{'pattern':'^b'}", "'abc'", "/: does not match ^b"),
	    "^ anchors it");
	ok(valid(code, "{'code':'EUR'}"), "^...$ matches the whole string");
	ok(fails(code, "{'code':'EURO'}", "/code: does not match ^[A-Z]{3}$"),
	    "one too many");
	ok(fails(code, "{'code':'xEUR'}", "/code: does not match ^[A-Z]{3}$"),
	    "one too early");
	ok(valid("{'pattern':'^a'}", "5"), "pattern says nothing about 5");
}

/* Tool schemas are written by people who know JavaScript's RegExp. */
static void
test_pattern_is_javascript(void)
{
	const char *zip = "{'pattern':'^\\\\d{3}$'}";

	ok(valid(zip, "'123'"), "^\\d{3}$ takes 123");
	ok(fails(zip, "'ddd'", "/: does not match ^\\d{3}$"),
	    "and refuses ddd: \\d is a digit, not a d");
	ok(fails(zip, "'123\\n'", "/: does not match ^\\d{3}$"),
	    "$ is the end, not before a final newline");
	ok(valid("{'pattern':'^\\\\w+@(?:[a-z]+\\\\.)+[a-z]{2,}$'}",
	    "'jo@mail.example.org'"), "\\w and (?:...) groups");
	ok(fails("{'pattern':'\\\\bcat\\\\b'}", "'concat'",
	    "/: does not match \\bcat\\b"), "\\b is a word boundary");
	ok(valid("{'pattern':'^<.+?>$'}", "'<a><b>'"), "lazy quantifiers");
	ok(valid("{'pattern':'^.{2}$'}", "'\xc3\xa9\xe2\x82\xac'"),
	    ". is a character: two of them in four bytes");
	ok(valid("{'pattern':'^\\\\s*$'}", "'\\t '"), "\\s is white space");
}

static void
test_bad_pattern_is_bad_schema(void)
{
	ok(fails_as("{'pattern':'(['}", "'x'", "bad_schema",
	    "#/pattern: bad regular expression: ", 1), "an unclosed bracket");
	ok(fails_as("{'properties':{'code':{'pattern':'a{2,1}'}}}", "{}",
	    "bad_schema", "#/properties/code/pattern: bad regular expression: ",
	    1), "a bad interval, found before any value reaches it");
	ok(fails_as("{'anyOf':[true,{'pattern':'*('}]}", "1", "bad_schema",
	    "#/anyOf/1/pattern: bad regular expression: ", 1),
	    "inside a branch");
	ok(fails_as("{'pattern':'a(b'}", "'x'", "bad_schema",
	    "#/pattern: bad regular expression: at offset 3: missing closing "
	    "parenthesis", 0), "the message gives the offset and PCRE2's why");
}

static void
test_ref_to_defs_and_definitions(void)
{
	const char *defs = "{'$defs':{'pos':{'type':'integer','minimum':1}},"
	    "'properties':{'n':{'$ref':'#/$defs/pos'}}}";
	const char *old = "{'definitions':{'pos':{'minimum':1}},"
	    "'items':{'$ref':'#/definitions/pos'}}";
	const char *odd = "{'$defs':{'a/b':{'type':'string'},'t~x':"
	    "{'type':'number'},'s p':{'type':'null'}},'properties':{"
	    "'x':{'$ref':'#/$defs/a~1b'},'y':{'$ref':'#/$defs/t~0x'},"
	    "'z':{'$ref':'#/$defs/s%20p'}}}";

	ok(valid(defs, "{'n':2}"), "$defs: a conforming value");
	ok(fails(defs, "{'n':0}", "/n: expected at least 1"),
	    "$defs: the target's message, at the value's path");
	ok(fails(defs, "{'n':1.5}", "/n: expected integer, got number"),
	    "$defs: the target's type");
	ok(valid(old, "[1,2]"), "definitions: a conforming value");
	ok(fails(old, "[1,0]", "/1: expected at least 1"),
	    "definitions: a violation");
	ok(fails(odd, "{'x':1}", "/x: expected string, got number"),
	    "~1 in a $ref is '/'");
	ok(fails(odd, "{'y':'1'}", "/y: expected number, got string"),
	    "~0 in a $ref is '~'");
	ok(fails(odd, "{'z':1}", "/z: expected null, got number"),
	    "%%20 in a $ref is ' '");
	ok(fails("{'anyOf':[{'type':'string'}],'items':{'$ref':'#/anyOf/0'}}",
	    "['a']", "/: matches none of anyOf") &&
	    fails("{'anyOf':[{'type':'array'}],'items':{'$ref':'#/anyOf/0'}}",
	    "[1]", "/0: expected array, got number"),
	    "a pointer through an array index");
}

static void
test_ref_siblings_apply_too(void)
{
	const char *s = "{'$defs':{'s':{'type':'string'}},'$ref':'#/$defs/s',"
	    "'maxLength':2}";

	ok(valid(s, "'ab'"), "both hold");
	ok(fails(s, "'abc'", "/: expected at most 2 characters"),
	    "the sibling speaks");
	ok(fails(s, "1", "/: expected string, got number"),
	    "the target speaks");
}

static void
test_ref_to_the_root_validates_a_tree(void)
{
	const char *tree = "{'type':'object','required':['name'],"
	    "'properties':{'name':{'type':'string'},'children':{'type':'array',"
	    "'items':{'$ref':'#'}}},'additionalProperties':false}";

	ok(valid(tree, "{'name':'r','children':[{'name':'a'},{'name':'b',"
	    "'children':[{'name':'c','children':[]}]}]}"), "a tree of four");
	ok(fails(tree, "{'name':'r','children':[{'name':'a','children':["
	    "{'name':'b'},{'name':2}]}]}",
	    "/children/0/children/1/name: expected string, got number"),
	    "a bad name three levels down");
	ok(fails(tree, "{'name':'r','children':[{'children':[]}]}",
	    "/children/0: missing required property 'name'"),
	    "a missing name one level down");
	ok(fails(tree, "{'name':'r','children':[{'name':'a','x':1}]}",
	    "/children/0: property 'x' is not allowed"),
	    "additionalProperties holds at every level");
}

/* A value of n objects nested as {"a":{"a":...{}}}. */
static jv
nested(int n)
{
	jv v = jv_object();

	while (n-- > 0)
		v = jv_object_set(jv_object(), jv_string("a"), v);
	return v;
}

static void
test_deep_ref_recursion_is_bad_schema(void)
{
	struct art_err err = { NULL, "" };
	jv s = parse("{'properties':{'a':{'$ref':'#'}}}");
	jv ok64 = nested(ART_SCHEMA_MAX_DEPTH), deep = nested(65);

	ok(art_schema_validate(&s, &ok64, &err) == 0,
	    "%d nested $refs are allowed (%s)", ART_SCHEMA_MAX_DEPTH, err.msg);
	ok(art_schema_validate(&s, &deep, &err) == -1 &&
	    art_err_is(&err, "bad_schema") &&
	    strcmp(err.msg, "$ref '#': too deep (more than 64 nested)") == 0,
	    "one more is too deep (%s)", err.msg);
	jv_free(ok64);
	jv_free(deep);
	jv_free(s);
}

static void
test_unresolvable_ref_is_bad_schema(void)
{
	ok(bad_schema("{'properties':{'a':{'$ref':'#/$defs/nope'}}}", "{}",
	    "#/properties/a/$ref: '#/$defs/nope' does not resolve"),
	    "a missing $defs entry, even where no value goes");
	ok(bad_schema("{'$defs':{'x~':{}},'$ref':'#/$defs/x~'}", "1",
	    "#/$ref: '#/$defs/x~' does not resolve"),
	    "a '~' that is not ~0 or ~1");
	ok(bad_schema("{'$ref':'#/items/9'}", "1",
	    "#/$ref: '#/items/9' does not resolve"), "a missing keyword");
	ok(bad_schema("{'items':[true],'$ref':'#/items/01'}", "1",
	    "#/$ref: '#/items/01' does not resolve"),
	    "an index with a leading zero");
	ok(bad_schema("{'$ref':'#/$defs/a%2'}", "1",
	    "#/$ref: '#/$defs/a%2' does not resolve"), "a bad %%-escape");
	ok(bad_schema("{'enum':[1],'$ref':'#/enum/0'}", "1",
	    "#/enum/0: expected a schema (object or boolean), got number"),
	    "a $ref to something that is not a schema");
}

static void
test_ref_loops_are_bad_schema(void)
{
	ok(bad_schema("{'$ref':'#'}", "1", "$ref '#': loops without progress"),
	    "a root that is its own $ref");
	ok(bad_schema("{'$defs':{'a':{'$ref':'#/$defs/b'},'b':{'$ref':"
	    "'#/$defs/a'}},'$ref':'#/$defs/a'}", "{}",
	    "$ref '#/$defs/a': loops without progress"), "two that loop");
	ok(bad_schema("{'$defs':{'a':{'allOf':[{'$ref':'#/$defs/a'}]}},"
	    "'$ref':'#/$defs/a'}", "null",
	    "$ref '#/$defs/a': loops without progress"),
	    "a loop through allOf");
	ok(bad_schema("{'anyOf':[{'type':'string'},{'$ref':'#'}]}", "1",
	    "$ref '#': loops without progress"),
	    "a loop in a branch is not just a branch that fails");
	ok(valid("{'$defs':{'a':{'type':'string'}},'allOf':[{'$ref':"
	    "'#/$defs/a'},{'$ref':'#/$defs/a'}]}", "'x'"),
	    "the same $ref twice side by side is no loop");
}

static void
test_any_of(void)
{
	const char *s = "{'properties':{'v':{'anyOf':[{'type':'string'},"
	    "{'type':'number','minimum':0}]}}}";

	ok(valid(s, "{'v':'x'}") && valid(s, "{'v':3}"), "either branch");
	ok(fails(s, "{'v':null}", "/v: matches none of anyOf"), "neither");
	ok(fails(s, "{'v':-1}", "/v: matches none of anyOf"),
	    "the branches' own messages stay inside");
}

static void
test_one_of(void)
{
	const char *s = "{'oneOf':[{'type':'integer'},{'type':'number'}]}";

	ok(valid(s, "1.5"), "exactly one branch");
	ok(fails(s, "1", "/: matches 2 of oneOf, expected exactly 1"),
	    "an integer is both");
	ok(fails(s, "'x'", "/: matches none of oneOf"), "neither");
}

static void
test_all_of(void)
{
	const char *s = "{'allOf':[{'type':'string'},{'minLength':2}]}";

	ok(valid(s, "'ab'"), "both");
	ok(fails(s, "'a'", "/: expected at least 2 characters"),
	    "the failing branch speaks");
	ok(fails(s, "1", "/: expected string, got number"),
	    "the first failing branch");
}

static void
test_not(void)
{
	ok(valid("{'not':{'type':'string'}}", "1"), "not a string");
	ok(fails("{'not':{'type':'string'}}", "'x'",
	    "/: matches the schema in not"), "a string");
	ok(fails("{'not':true}", "1", "/: matches the schema in not"),
	    "not true refuses all");
}

static void
test_bad_schemas_are_named_by_place(void)
{
	ok(bad_schema("3", "1",
	    "#: expected a schema (object or boolean), got number"),
	    "a number is not a schema");
	ok(bad_schema("{'properties':{'city':'string'}}", "{}",
	    "#/properties/city: expected a schema (object or boolean), got "
	    "string"), "nor is a string");
	ok(bad_schema("{'type':'text'}", "1", "#/type: unknown type 'text'"),
	    "an unknown type");
	ok(bad_schema("{'type':['string','txt']}", "1",
	    "#/type/1: unknown type 'txt'"), "an unknown type in a union");
	ok(bad_schema("{'minLength':-1}", "''",
	    "#/minLength: expected a non-negative integer, got -1"),
	    "a negative length");
	ok(bad_schema("{'maxItems':1.5}", "[]",
	    "#/maxItems: expected a non-negative integer, got 1.5"),
	    "a fractional count");
	ok(bad_schema("{'multipleOf':0}", "1",
	    "#/multipleOf: expected a number above 0, got 0"),
	    "multipleOf 0");
	ok(bad_schema("{'required':'city'}", "{}",
	    "#/required: expected an array of strings, got string"),
	    "required as a string");
	ok(bad_schema("{'required':['a',2]}", "{}",
	    "#/required/1: expected a string, got number"),
	    "a number in required");
	ok(bad_schema("{'exclusiveMinimum':true,'minimum':0}", "1",
	    "#/exclusiveMinimum: expected a number, got boolean"),
	    "draft 4's boolean exclusiveMinimum");
	ok(bad_schema("{'anyOf':{}}", "1",
	    "#/anyOf: expected an array of schemas, got object"),
	    "anyOf as an object");
	ok(bad_schema("{'enum':'x'}", "'x'",
	    "#/enum: expected an array, got string"), "enum as a string");
	ok(bad_schema("{'uniqueItems':'yes'}", "[]",
	    "#/uniqueItems: expected a boolean, got string"),
	    "uniqueItems as a string");
	ok(bad_schema("{'$defs':{'a':{'items':[1]}}}", "1",
	    "#/$defs/a/items/0: expected a schema (object or boolean), got "
	    "number"), "inside an unused $defs entry");
}

static void
test_check_without_a_value(void)
{
	struct art_err err = { NULL, "" };
	jv good = parse("{'properties':{'a':{'$ref':'#'}}}");
	jv bad = parse("{'properties':{'a':{'minimum':'1'}}}");

	ok(art_schema_check(&good, &err) == 0, "a recursive schema checks");
	ok(art_schema_check(&bad, &err) == -1 &&
	    art_err_is(&err, "bad_schema") && strcmp(err.msg,
	    "#/properties/a/minimum: expected a number, got string") == 0,
	    "a bad one is named (%s)", err.msg);
	ok(art_schema_check(&bad, NULL) == -1, "err may be NULL");
	jv_free(good);
	jv_free(bad);
}

static void
test_unsupported_keywords_are_ignored_and_listed_once(void)
{
	const char *s = "{'$schema':'https://json-schema.org/draft/2020-12/"
	    "schema','$id':'t','$comment':'c','title':'t','description':'d',"
	    "'default':{},'examples':[{}],'deprecated':false,'readOnly':false,"
	    "'writeOnly':false,'if':{'required':['a'],'propertyNames':"
	    "{'maxLength':3}},'then':{'required':['b']},'else':false,"
	    "'properties':{'if':{'format':'email','patternProperties':{'^x':"
	    "{'if':true}}},'dependentRequired':{'type':'string','x-ui':1}},"
	    "'$defs':{'d':{'dependentRequired':{'a':['b']},'$ref':"
	    "'other.json#/x'}}}";

	ok(unsupported_is(s, "['$ref','dependentRequired','else','if',"
	    "'patternProperties','propertyNames','then','x-ui']"),
	    "each once, sorted, from every depth; annotations left out");
	ok(valid(s, "{'if':'not an email','dependentRequired':'x'}"),
	    "validation ignores them");
	ok(valid("{'if':{'type':'string'},'then':false}", "'x'"),
	    "if/then is not applied");
	ok(valid("{'$ref':'other.json#/x'}", "1"), "a remote $ref is ignored");
	ok(unsupported_is("{'type':'object','properties':{'if':{'enum':"
	    "[{'then':1}]},'a':{'const':{'else':2},'default':{'x-no':3}}},"
	    "'$ref':'#/properties/a','format':'date'}", "[]"),
	    "property names, data and annotations are not keywords");
	ok(unsupported_is("true", "[]") && unsupported_is("3", "[]"),
	    "[] for a boolean or a non-schema");
	ok(unsupported_is("{'$defs':{'a':{'$ref':'#/x-shared/b'}},'x-shared':"
	    "{'b':{'contains':{'unevaluatedItems':false}}}}",
	    "['contains','unevaluatedItems','x-shared']"),
	    "a $ref's target is searched wherever it lives");
}

static void
test_a_weather_tool(void)
{
	const char *s = "{'type':'object','description':'Weather forecast',"
	    "'properties':{'city':{'type':'string','minLength':1,"
	    "'description':'City name'},'unit':{'enum':['c','f'],"
	    "'default':'c'},'days':{'type':'integer','minimum':1,"
	    "'maximum':7}},'required':['city'],'additionalProperties':false}";

	ok(valid(s, "{'city':'Oslo'}"), "only the city");
	ok(valid(s, "{'city':'S\xc3\xa3o Paulo','unit':'f','days':7}"),
	    "every argument");
	ok(valid(s, "{'days':3.0,'city':'Oslo'}"), "days 3.0 is an integer");
	ok(fails(s, "{}", "/: missing required property 'city'"), "no city");
	ok(fails(s, "{'city':1}", "/city: expected string, got number"),
	    "a numeric city");
	ok(fails(s, "{'city':''}", "/city: expected at least 1 character"),
	    "an empty city");
	ok(fails(s, "{'city':'Oslo','unit':'k'}",
	    "/unit: expected one of \"c\", \"f\""), "kelvin");
	ok(fails(s, "{'city':'Oslo','days':0}", "/days: expected at least 1"),
	    "zero days");
	ok(fails(s, "{'city':'Oslo','days':8}", "/days: expected at most 7"),
	    "eight days");
	ok(fails(s, "{'city':'Oslo','days':2.5}",
	    "/days: expected integer, got number"), "half a day");
	ok(fails(s, "{'city':'Oslo','country':'NO'}",
	    "/: property 'country' is not allowed"), "an undeclared argument");
	ok(fails(s, "['Oslo']", "/: expected object, got array"),
	    "arguments that are not an object");
	ok(unsupported_is(s, "[]"), "nothing in it is unsupported");
}

static void
test_validate_borrows_and_takes_a_null_err(void)
{
	jv s = parse("{'properties':{'a':{'type':'string'}}}");
	jv v = parse("{'a':'x','b':[1]}"), bad = parse("{'a':1}");

	ok(art_schema_validate(&s, &v, NULL) == 0 &&
	    art_schema_validate(&s, &bad, NULL) == -1, "err may be NULL");
	ok(jv_object_length(jv_copy(s)) == 1 &&
	    jv_object_length(jv_copy(v)) == 2,
	    "schema and value are borrowed, not consumed");
	jv_free(s);
	jv_free(v);
	jv_free(bad);
}

int
main(void)
{
	test_boolean_schemas();
	test_type_names_each_kind();
	test_type_arrays_are_unions();
	test_integer_is_a_number_without_fraction();
	test_messages_name_the_nested_path();
	test_keys_are_escaped_in_paths();
	test_required_names_the_first_missing_property();
	test_additional_properties_false();
	test_additional_properties_as_a_schema();
	test_properties_are_checked_in_sorted_key_order();
	test_min_and_max_properties();
	test_items_as_a_schema();
	test_tuples_prefix_items_and_additional_items();
	test_min_and_max_items();
	test_unique_items_compares_deeply();
	test_length_counts_code_points();
	test_enum_of_mixed_types();
	test_const_compares_deeply();
	test_numeric_limits();
	test_multiple_of();
	test_pattern_searches_unless_anchored();
	test_pattern_is_javascript();
	test_bad_pattern_is_bad_schema();
	test_ref_to_defs_and_definitions();
	test_ref_siblings_apply_too();
	test_ref_to_the_root_validates_a_tree();
	test_deep_ref_recursion_is_bad_schema();
	test_unresolvable_ref_is_bad_schema();
	test_ref_loops_are_bad_schema();
	test_any_of();
	test_one_of();
	test_all_of();
	test_not();
	test_bad_schemas_are_named_by_place();
	test_check_without_a_value();
	test_unsupported_keywords_are_ignored_and_listed_once();
	test_a_weather_tool();
	test_validate_borrows_and_takes_a_null_err();
	return tap_done();
}
