/* ids.h - UUIDv7 and UUIDv5 (RFC 9562) and the rule for user-given ids */
#ifndef ART_IDS_H
#define ART_IDS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "clock.h"
#include "err.h"

/*
 * agentrt mints UUIDv7s: a 48-bit Unix millisecond timestamp, then a
 * 12-bit counter (RFC 9562 section 6.2, method 1) that keeps ids from one
 * generator strictly increasing, as strings too, even when the clock is
 * pinned or steps back; then 62 random bits.  With a pinned clock and a
 * seed, a generator mints the same ids on every run, which is what tests
 * compare against.  All ids are written lowercase, 8-4-4-4-12.
 */

#define ART_ID_BUFSZ	37	/* 36 characters and a NUL */
#define ART_ID_MAX	128	/* longest id art_id_is_valid() accepts */

/*
 * One generator.  Embedded; set up by art_ids_init(), needs no _release.
 * It is not safe to share between threads.  After fork() the child must
 * call art_ids_init() again if the generator is seeded, or both processes
 * will mint the same ids.
 */
struct art_ids {
	const struct art_clock	*clock;		/* borrowed */
	int64_t			 last_ms;	/* timestamp of the last id */
	uint16_t		 counter;	/* its 12-bit counter */
	uint64_t		 rng[2];	/* xoroshiro128++, if seeded */
	int			 seeded;
};

/*
 * Sets up ids to read the time from clock, which must outlive it.  seed
 * NULL draws the random bits of every id from the system (getrandom(2),
 * or /dev/urandom where that is missing); any other string, even "",
 * seeds a deterministic generator from its SHA-256, for tests.  seed is
 * not kept.  Returns 0, or -1 with err->code "ids" when the system has no
 * random source or a pinned clock lies outside 1970..10889, the years a
 * UUIDv7 timestamp can hold.
 */
int	art_ids_init(struct art_ids *, const struct art_clock *,
	    const char *seed, struct art_err *);

/*
 * Writes a new UUIDv7 into out, greater than every id this generator has
 * minted before; when 4096 ids share a millisecond, the timestamp moves
 * one millisecond ahead of the clock.  Returns 0, or -1 with errno set
 * (ERANGE when the time is outside 1970..10889; the error of the random
 * source otherwise), leaving ids and out unchanged.
 */
int	art_ids_v7(struct art_ids *, char out[ART_ID_BUFSZ]);

/*
 * Writes the UUIDv5 (SHA-1) of the len bytes of name in namespace ns into
 * out.  The same ns and name always give the same id.  Cannot fail.
 */
void	art_ids_v5(const unsigned char ns[16], const char *name, size_t len,
	    char out[ART_ID_BUFSZ]);

/*
 * agentrt's own namespace, 92f1fa1c-2f7e-5ca9-860a-6a6f3c38d1f8: itself
 * the UUIDv5 of "https://agentrt.invalid/" in the URL namespace, so anyone
 * can derive it again.  The DNS and URL namespaces are RFC 9562's.
 */
extern const unsigned char ART_UUID_NS_AGENTRT[16];
extern const unsigned char ART_UUID_NS_DNS[16];
extern const unsigned char ART_UUID_NS_URL[16];

/* A hexadecimal digit's value (either case), or -1 for any other char. */
int	art_hex_value(char c);

/*
 * Reads a UUID written 8-4-4-4-12 in hex digits of either case, nothing
 * before or after, into out.  Any version is accepted.  Returns 0, or -1
 * with out unchanged.
 */
int	art_uuid_parse(const char *s, unsigned char out[16]);

/*
 * Whether s may be used as a session or turn id: 1 to ART_ID_MAX bytes of
 * A-Z a-z 0-9 '.' '_' ':' '-', not starting with '.' or '-' (so an id is
 * never a hidden file, "..", or an option).  NULL is not valid.
 */
bool	art_id_is_valid(const char *s);

#endif
