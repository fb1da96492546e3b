/* regex.h - regular expressions as JSON Schema and JavaScript write them */
#ifndef ART_REGEX_H
#define ART_REGEX_H

#include <stddef.h>

#include "err.h"

/*
 * PCRE2 (libpcre2-8) underneath, set up to read a pattern the way
 * ECMA-262 does where the two differ: \d, \w, \s and \b are ASCII, as in a
 * JavaScript RegExp without the u flag; $ matches only at the very end
 * (not before a final newline); \uhhhh and \xhh are JavaScript's escapes;
 * [] matches nothing and [^] any character.  Lazy quantifiers,
 * non-capturing and named groups, lookahead and fixed-length lookbehind,
 * and inline flags such as (?i) are PCRE2's, which are JavaScript's.
 *
 * Subjects are UTF-8: . matches one character, and offsets are bytes that
 * always fall between characters.  A subject that is not valid UTF-8 is
 * searched anyway: no match ever includes a byte of a bad sequence, and
 * nothing crashes.
 *
 * A compiled expression is JIT-compiled where the machine allows it (for
 * both search modes), falling back to the interpreter silently.  It holds
 * its own scratch space for matching, so one struct art_regex is used by
 * one thread at a time; it holds no global state, and a child forked from
 * a process that compiled it may use its copy.
 */
struct art_regex;

/* Flags for art_regex_new. */
#define ART_REGEX_CASELESS	0x1	/* letters match either case (ASCII and
					   Unicode simple folding) */
#define ART_REGEX_MULTILINE	0x2	/* ^ and $ also at line starts, ends */
#define ART_REGEX_NOTEMPTY	0x4	/* searches never report an empty match */
#define ART_REGEX_NOJIT		0x8	/* no JIT: for an expression searched once
					   or twice, whose JIT compile would
					   cost more than it saves */

/*
 * Compiles pattern[0..len) with flags.  0 with *out set (free it with
 * art_regex_free); -1 with err code "bad_regex" and the message
 * "at offset N: <PCRE2's reason>" (N a byte offset into the pattern) when
 * it does not compile, or "nomem".
 */
int	art_regex_new(const char *pattern, size_t len, int flags,
	    struct art_regex **out, struct art_err *);
void	art_regex_free(struct art_regex *);

/* What a search found. */
#define ART_REGEX_ERROR		-1	/* a match limit hit (a pattern that
					   backtracks without end) */
#define ART_REGEX_NOMATCH	0
#define ART_REGEX_MATCH		1	/* [*start, *end) matched */
#define ART_REGEX_PARTIAL	2	/* the subject's end may be inside a match
					   that begins at *start */

/*
 * Searches s[0..n) for the first match that starts at or after byte from
 * (the bytes before from are still seen by lookbehind and \b).  Returns
 * ART_REGEX_MATCH with the match's byte offsets in *start and *end,
 * ART_REGEX_NOMATCH, or ART_REGEX_ERROR.  from past n is NOMATCH.
 */
int	art_regex_search(struct art_regex *, const char *s, size_t n,
	    size_t from, size_t *start, size_t *end);

/*
 * As art_regex_search, for text that may go on after n (a stream): a
 * match that reaches the end of s, and could have gone on with more
 * text, is not reported as a match but as ART_REGEX_PARTIAL with *start
 * where it begins (and *end = n), as is text at the end that is only the
 * beginning of a match.  ART_REGEX_MATCH is a match that no further text
 * can change.  Starting positions are tried in order, so whichever comes
 * back begins at the earliest place anything can.
 */
int	art_regex_search_partial(struct art_regex *, const char *s, size_t n,
	    size_t from, size_t *start, size_t *end);

/*
 * Where the last match of this pattern began to be matched: its start,
 * or, for a pattern whose \K drops what came before, that earlier place.
 * What a match depends on begins there (a stream holds it back from
 * there).  Only after art_regex_search*() returned ART_REGEX_MATCH.
 */
size_t	art_regex_began(const struct art_regex *);

#endif
