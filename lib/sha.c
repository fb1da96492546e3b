/* sha.c - SHA-1, SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104) */
#include "sha.h"

#include <string.h>

/*
 * Both hashes share the Merkle-Damgard frame of FIPS 180-4 section 5:
 * 64-byte blocks, big-endian words, and padding with 0x80, zeros and the
 * message length in bits as a big-endian 64-bit number.  A struct stream
 * lends that frame to either state so buffering and padding are written
 * once; only the compression functions differ.
 */
struct stream {
	uint32_t	*h;
	unsigned char	*buf;
	size_t		*nbuf;
	uint64_t	*nbytes;
	void		(*block)(uint32_t *, const unsigned char *);
};

static const uint32_t k256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5,
	0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
	0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
	0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

static uint32_t
rotl(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

static uint32_t
rotr(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

static uint32_t
load_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void
store_be32(unsigned char *p, uint32_t x)
{
	p[0] = (unsigned char)(x >> 24);
	p[1] = (unsigned char)(x >> 16);
	p[2] = (unsigned char)(x >> 8);
	p[3] = (unsigned char)x;
}

/* FIPS 180-4 section 6.1.2. */
static void
sha1_block(uint32_t *h, const unsigned char *p)
{
	uint32_t w[80], a, b, c, d, e, f, k, t;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = load_be32(p + 4 * i);
	for (; i < 80; i++)
		w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20)
			f = (b & c) | (~b & d), k = 0x5a827999;
		else if (i < 40)
			f = b ^ c ^ d, k = 0x6ed9eba1;
		else if (i < 60)
			f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
		else
			f = b ^ c ^ d, k = 0xca62c1d6;
		t = rotl(a, 5) + f + e + k + w[i];
		e = d, d = c, c = rotl(b, 30), b = a, a = t;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

/* FIPS 180-4 section 6.2.2; s[] holds the working variables a..h. */
static void
sha256_block(uint32_t *h, const unsigned char *p)
{
	uint32_t w[64], s[8], x, y, s0, s1, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = load_be32(p + 4 * i);
	for (; i < 64; i++) {
		x = w[i - 15], y = w[i - 2];
		s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3);
		s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	memcpy(s, h, sizeof(s));
	for (i = 0; i < 64; i++) {
		t1 = s[7] + (rotr(s[4], 6) ^ rotr(s[4], 11) ^ rotr(s[4], 25)) +
		    ((s[4] & s[5]) ^ (~s[4] & s[6])) + k256[i] + w[i];
		t2 = (rotr(s[0], 2) ^ rotr(s[0], 13) ^ rotr(s[0], 22)) +
		    ((s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]));
		memmove(s + 1, s, 7 * sizeof(s[0]));
		s[4] += t1;
		s[0] = t1 + t2;
	}
	for (i = 0; i < 8; i++)
		h[i] += s[i];
}

static void
feed(const struct stream *st, const unsigned char *p, size_t len)
{
	size_t n;

	*st->nbytes += len;
	while (len > 0) {
		if (*st->nbuf == 0 && len >= ART_SHA_BLOCK) {
			st->block(st->h, p);
			p += ART_SHA_BLOCK, len -= ART_SHA_BLOCK;
			continue;
		}
		n = ART_SHA_BLOCK - *st->nbuf;
		if (n > len)
			n = len;
		memcpy(st->buf + *st->nbuf, p, n);
		*st->nbuf += n, p += n, len -= n;
		if (*st->nbuf == ART_SHA_BLOCK) {
			st->block(st->h, st->buf);
			*st->nbuf = 0;
		}
	}
}

/* Pads, then writes the first nwords words of the state as the digest. */
static void
finish(const struct stream *st, unsigned char *out, int nwords)
{
	static const unsigned char zeros[ART_SHA_BLOCK];
	unsigned char one = 0x80, len[8];
	uint64_t bits = *st->nbytes * 8;
	int i;

	for (i = 0; i < 8; i++)
		len[i] = (unsigned char)(bits >> (56 - 8 * i));
	feed(st, &one, 1);
	feed(st, zeros, (ART_SHA_BLOCK + 56 - *st->nbuf) % ART_SHA_BLOCK);
	feed(st, len, sizeof(len));
	for (i = 0; i < nwords; i++)
		store_be32(out + 4 * i, st->h[i]);
}

static struct stream
sha1_stream(struct art_sha1 *c)
{
	struct stream st = { c->h, c->buf, &c->nbuf, &c->nbytes, sha1_block };

	return st;
}

static struct stream
sha256_stream(struct art_sha256 *c)
{
	struct stream st = { c->h, c->buf, &c->nbuf, &c->nbytes,
	    sha256_block };

	return st;
}

void
art_sha1_init(struct art_sha1 *c)
{
	static const uint32_t h0[5] = {
		0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0
	};

	memcpy(c->h, h0, sizeof(h0));
	c->nbytes = 0;
	c->nbuf = 0;
}

void
art_sha1_update(struct art_sha1 *c, const void *data, size_t len)
{
	struct stream st = sha1_stream(c);

	feed(&st, data, len);
}

void
art_sha1_final(struct art_sha1 *c, unsigned char out[ART_SHA1_LEN])
{
	struct stream st = sha1_stream(c);

	finish(&st, out, 5);
}

void
art_sha1(const void *data, size_t len, unsigned char out[ART_SHA1_LEN])
{
	struct art_sha1 c;

	art_sha1_init(&c);
	art_sha1_update(&c, data, len);
	art_sha1_final(&c, out);
}

void
art_sha256_init(struct art_sha256 *c)
{
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
	};

	memcpy(c->h, h0, sizeof(h0));
	c->nbytes = 0;
	c->nbuf = 0;
}

void
art_sha256_update(struct art_sha256 *c, const void *data, size_t len)
{
	struct stream st = sha256_stream(c);

	feed(&st, data, len);
}

void
art_sha256_final(struct art_sha256 *c, unsigned char out[ART_SHA256_LEN])
{
	struct stream st = sha256_stream(c);

	finish(&st, out, 8);
}

void
art_sha256(const void *data, size_t len, unsigned char out[ART_SHA256_LEN])
{
	struct art_sha256 c;

	art_sha256_init(&c);
	art_sha256_update(&c, data, len);
	art_sha256_final(&c, out);
}

/* RFC 2104: H(K ^ opad, H(K ^ ipad, msg)), K padded to one block. */
void
art_hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
    unsigned char out[ART_SHA256_LEN])
{
	unsigned char k[ART_SHA_BLOCK] = { 0 }, pad[ART_SHA_BLOCK];
	unsigned char inner[ART_SHA256_LEN];
	struct art_sha256 c;
	size_t i;

	if (klen > ART_SHA_BLOCK)
		art_sha256(key, klen, k);
	else if (klen > 0)
		memcpy(k, key, klen);

	for (i = 0; i < ART_SHA_BLOCK; i++)
		pad[i] = k[i] ^ 0x36;
	art_sha256_init(&c);
	art_sha256_update(&c, pad, sizeof(pad));
	art_sha256_update(&c, msg, mlen);
	art_sha256_final(&c, inner);

	for (i = 0; i < ART_SHA_BLOCK; i++)
		pad[i] = k[i] ^ 0x5c;
	art_sha256_init(&c);
	art_sha256_update(&c, pad, sizeof(pad));
	art_sha256_update(&c, inner, sizeof(inner));
	art_sha256_final(&c, out);
}

char *
art_hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0x0f];
	}
	out[2 * n] = '\0';
	return out;
}
