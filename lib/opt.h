/* opt.h - option values every command reads the same way */
#ifndef ART_OPT_H
#define ART_OPT_H

#include <stddef.h>

/*
 * A size in bytes with an optional K, M, G or T suffix (powers of 1024),
 * at least 1: 0 with *out set, or -1 when s is not one (nothing set).
 */
int	art_opt_size(const char *s, size_t *out);

/* The message for a bad size, for the commands to print alike. */
#define ART_OPT_SIZE_HINT	"expected a size such as 64M or 1T"

#endif
