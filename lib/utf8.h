/* utf8.h - checking UTF-8, and cutting it only between characters */
#ifndef ART_UTF8_H
#define ART_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Whether s[0..n) is well-formed UTF-8 (RFC 3629): every lead byte has
 * the continuation bytes it announces, and none is an overlong form, a
 * surrogate (U+D800..U+DFFF) or past U+10FFFF.  NUL bytes are valid
 * UTF-8; a caller that refuses them checks for them itself.  When not,
 * *bad (if not NULL) is the offset of the first byte of the first bad
 * sequence.
 */
bool	art_utf8_valid(const char *s, size_t n, size_t *bad);

/*
 * n, or less, so that s[0..n) does not end inside a character: what to
 * keep of bytes cut off at n (a stream's chunk, output truncated at a
 * limit).  Bytes that are not UTF-8 at all are left as they are.
 */
size_t	art_utf8_whole(const char *s, size_t n);

/*
 * i, or less: the start of the character byte i is part of, so that a
 * cut at i keeps s[0..i) whole.  s must have at least i + 1 bytes.
 */
size_t	art_utf8_back(const char *s, size_t i);

/*
 * i, or more (at most n): the start of the first character at or after
 * byte i, so that what begins there does not begin inside a character.
 */
size_t	art_utf8_fwd(const char *s, size_t i, size_t n);

#endif
