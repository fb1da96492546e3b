/* base64.h - RFC 4648 base64, decoded strictly */
#ifndef ART_BASE64_H
#define ART_BASE64_H

#include <stddef.h>

#include "buf.h"

/*
 * Appends to out the bytes the n characters of s encode in base64's
 * standard alphabet (RFC 4648 §4: A-Z a-z 0-9 + /).  The = padding may
 * be left out, but where it is given it must be right; nothing else is
 * taken: no white space, no URL-safe letters, no bits left over in the
 * last character.  0, or -1 with out as it was: s is no base64 (errno
 * EINVAL), or out of memory (ENOMEM).
 */
int	art_base64_decode(const char *s, size_t n, struct art_buf *out);

#endif
