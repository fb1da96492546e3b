/* sha.h - SHA-1, SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) */
#ifndef ART_SHA_H
#define ART_SHA_H
#include <stddef.h>
#include <stdint.h>

/*
 * None of these can fail or allocate.  Digests are raw bytes; art_hex()
 * turns them into text.  SHA-1 is here for UUIDv5 (RFC 9562) and nothing
 * that needs collision resistance.
 */

#define ART_SHA1_LEN	20
#define ART_SHA256_LEN	32
#define ART_SHA_BLOCK	64	/* both hashes eat 64-byte blocks */

/* Incremental states: embedded, _init before use, no _release needed. */
struct art_sha1 {
	uint32_t	 h[5];
	uint64_t	 nbytes;		/* message length so far */
	unsigned char	 buf[ART_SHA_BLOCK];	/* the unfinished block */
	size_t		 nbuf;
};

struct art_sha256 {
	uint32_t	 h[8];
	uint64_t	 nbytes;
	unsigned char	 buf[ART_SHA_BLOCK];
	size_t		 nbuf;
};

void	art_sha1_init(struct art_sha1 *);
/* data may be NULL when len is 0. */
void	art_sha1_update(struct art_sha1 *, const void *data, size_t len);
/* Writes the digest; the state must be _init'ed again before reuse. */
void	art_sha1_final(struct art_sha1 *, unsigned char out[ART_SHA1_LEN]);
/* One shot: the digest of len bytes at data into out. */
void	art_sha1(const void *data, size_t len,
	    unsigned char out[ART_SHA1_LEN]);

void	art_sha256_init(struct art_sha256 *);
void	art_sha256_update(struct art_sha256 *, const void *data, size_t len);
void	art_sha256_final(struct art_sha256 *,
	    unsigned char out[ART_SHA256_LEN]);
void	art_sha256(const void *data, size_t len,
	    unsigned char out[ART_SHA256_LEN]);

/* HMAC-SHA256 of msg under key; a key longer than 64 bytes is hashed. */
void	art_hmac_sha256(const void *key, size_t klen, const void *msg,
	    size_t mlen, unsigned char out[ART_SHA256_LEN]);

/*
 * Writes n bytes as 2n lowercase hex digits and a NUL into out, which
 * must hold 2n + 1 bytes; returns out.
 */
char	*art_hex(const unsigned char *in, size_t n, char *out);

#endif
