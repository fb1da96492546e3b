/* sha-test - SHA-1, SHA-256 and HMAC-SHA256 against published vectors */
#include "sha.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"

#define ABC448	"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"

/* Hex of a SHA-1 digest of s; valid until the next call. */
static const char *
sha1_hex(const void *s, size_t len)
{
	static char hex[2 * ART_SHA1_LEN + 1];
	unsigned char d[ART_SHA1_LEN];

	art_sha1(s, len, d);
	return art_hex(d, sizeof(d), hex);
}

static const char *
sha256_hex(const void *s, size_t len)
{
	static char hex[2 * ART_SHA256_LEN + 1];
	unsigned char d[ART_SHA256_LEN];

	art_sha256(s, len, d);
	return art_hex(d, sizeof(d), hex);
}

static const char *
hmac_hex(const void *k, size_t klen, const void *m, size_t mlen)
{
	static char hex[2 * ART_SHA256_LEN + 1];
	unsigned char d[ART_SHA256_LEN];

	art_hmac_sha256(k, klen, m, mlen, d);
	return art_hex(d, sizeof(d), hex);
}

static void
test_sha1_matches_fips_vectors(void)
{
	ok(strcmp(sha1_hex("abc", 3),
	    "a9993e364706816aba3e25717850c26c9cd0d89d") == 0,
	    "sha1 of \"abc\" is the FIPS 180 value");
	ok(strcmp(sha1_hex("", 0),
	    "da39a3ee5e6b4b0d3255bfef95601890afd80709") == 0,
	    "sha1 of the empty message is the FIPS 180 value");
	ok(strcmp(sha1_hex(NULL, 0),
	    "da39a3ee5e6b4b0d3255bfef95601890afd80709") == 0,
	    "sha1 accepts NULL data of length 0");
	ok(strcmp(sha1_hex(ABC448, strlen(ABC448)),
	    "84983e441c3bd26ebaae4aa1f95129e5e54670f1") == 0,
	    "sha1 of the 448-bit message is the FIPS 180 value");
}

static void
test_sha256_matches_fips_vectors(void)
{
	ok(strcmp(sha256_hex("abc", 3),
	    "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad") == 0,
	    "sha256 of \"abc\" is the FIPS 180 value");
	ok(strcmp(sha256_hex("", 0),
	    "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855") == 0,
	    "sha256 of the empty message is the FIPS 180 value");
	ok(strcmp(sha256_hex(ABC448, strlen(ABC448)),
	    "248d6a61d20638b8e5c026930c3e6039"
	    "a33ce45964ff2167f6ecedd419db06c1") == 0,
	    "sha256 of the 448-bit message is the FIPS 180 value");
}

static void
test_a_million_a_in_chunks_matches_fips(void)
{
	struct art_sha1 c1;
	struct art_sha256 c2;
	unsigned char chunk[1000], d1[ART_SHA1_LEN], d2[ART_SHA256_LEN];
	char hex[2 * ART_SHA256_LEN + 1];
	int i;

	memset(chunk, 'a', sizeof(chunk));
	art_sha1_init(&c1);
	art_sha256_init(&c2);
	for (i = 0; i < 1000; i++) {
		art_sha1_update(&c1, chunk, sizeof(chunk));
		art_sha256_update(&c2, chunk, sizeof(chunk));
	}
	art_sha1_final(&c1, d1);
	art_sha256_final(&c2, d2);
	ok(strcmp(art_hex(d1, sizeof(d1), hex),
	    "34aa973cd4c4daa4f61eeb2bdbad27316534016f") == 0,
	    "sha1 of a million 'a' in 1000-byte chunks is the FIPS value");
	ok(strcmp(art_hex(d2, sizeof(d2), hex),
	    "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0") == 0,
	    "sha256 of a million 'a' in 1000-byte chunks is the FIPS value");
}

static void
test_one_shot_of_a_million_a_matches_fips(void)
{
	unsigned char *a = malloc(1000000);

	if (!ok(a != NULL, "a one-megabyte buffer can be allocated"))
		return;
	memset(a, 'a', 1000000);
	ok(strcmp(sha1_hex(a, 1000000),
	    "34aa973cd4c4daa4f61eeb2bdbad27316534016f") == 0,
	    "one-shot sha1 of a million 'a' is the FIPS value");
	ok(strcmp(sha256_hex(a, 1000000),
	    "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0") == 0,
	    "one-shot sha256 of a million 'a' is the FIPS value");
	free(a);
}

/* Each split point in turn: the two halves must hash like the whole. */
static void
test_any_split_of_the_input_gives_the_one_shot_digest(void)
{
	unsigned char in[200], want256[ART_SHA256_LEN], got256[ART_SHA256_LEN];
	unsigned char want1[ART_SHA1_LEN], got1[ART_SHA1_LEN];
	struct art_sha256 c2;
	struct art_sha1 c1;
	size_t i, bad256 = 0, bad1 = 0;

	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 3);
	art_sha256(in, sizeof(in), want256);
	art_sha1(in, sizeof(in), want1);
	for (i = 0; i <= sizeof(in); i++) {
		art_sha256_init(&c2);
		art_sha256_update(&c2, in, i);
		art_sha256_update(&c2, in + i, sizeof(in) - i);
		art_sha256_final(&c2, got256);
		bad256 += memcmp(got256, want256, sizeof(want256)) != 0;
		art_sha1_init(&c1);
		art_sha1_update(&c1, in, i);
		art_sha1_update(&c1, in + i, sizeof(in) - i);
		art_sha1_final(&c1, got1);
		bad1 += memcmp(got1, want1, sizeof(want1)) != 0;
	}
	ok(bad256 == 0, "sha256 split at each of 201 points equals one-shot "
	    "(%zu differ)", bad256);
	ok(bad1 == 0, "sha1 split at each of 201 points equals one-shot "
	    "(%zu differ)", bad1);
}

static void
test_byte_at_a_time_gives_the_one_shot_digest(void)
{
	unsigned char in[200], want[ART_SHA256_LEN], got[ART_SHA256_LEN];
	struct art_sha256 c;
	size_t i;

	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(255 - i);
	art_sha256(in, sizeof(in), want);
	art_sha256_init(&c);
	for (i = 0; i < sizeof(in); i++)
		art_sha256_update(&c, in + i, 1);
	art_sha256_final(&c, got);
	ok(memcmp(got, want, sizeof(want)) == 0,
	    "sha256 fed one byte at a time equals one-shot");
}

static void
test_hmac_sha256_matches_rfc4231(void)
{
	unsigned char k[131];

	memset(k, 0x0b, 20);
	ok(strcmp(hmac_hex(k, 20, "Hi There", 8),
	    "b0344c61d8db38535ca8afceaf0bf12b"
	    "881dc200c9833da726e9376c2e32cff7") == 0,
	    "hmac-sha256 RFC 4231 case 1 (20-byte key)");
	ok(strcmp(hmac_hex("Jefe", 4, "what do ya want for nothing?", 28),
	    "5bdcc146bf60754e6a042426089575c7"
	    "5a003f089d2739839dec58b964ec3843") == 0,
	    "hmac-sha256 RFC 4231 case 2 (short key)");
	memset(k, 0xaa, sizeof(k));
	ok(strcmp(hmac_hex(k, sizeof(k),
	    "Test Using Larger Than Block-Size Key - Hash Key First", 54),
	    "60e431591ee0b67f0d8a26aacbf5b77f"
	    "8e0bc6213728c5140546040f0ee37f54") == 0,
	    "hmac-sha256 RFC 4231 case 6 (131-byte key is hashed first)");
	ok(strcmp(hmac_hex(k, sizeof(k),
	    "This is a test using a larger than block-size key and a "
	    "larger than block-size data. The key needs to be hashed "
	    "before being used by the HMAC algorithm.", 152),
	    "9b09ffa71b942fcb27635fbcd5b0e944"
	    "bfdc63644f0713938a7f51535c3a35e2") == 0,
	    "hmac-sha256 RFC 4231 case 7 (long key, long message)");
}

static void
test_hmac_with_a_block_sized_key_is_not_hashed(void)
{
	unsigned char k[64], hk[ART_SHA256_LEN], a[ART_SHA256_LEN];
	unsigned char b[ART_SHA256_LEN];

	memset(k, 0x42, sizeof(k));
	art_hmac_sha256(k, sizeof(k), "m", 1, a);
	art_sha256(k, sizeof(k), hk);
	art_hmac_sha256(hk, sizeof(hk), "m", 1, b);
	ok(memcmp(a, b, sizeof(a)) != 0,
	    "a 64-byte hmac key is used as is, not replaced by its hash");
}

static void
test_hmac_with_a_longer_key_uses_its_hash(void)
{
	unsigned char k[65], hk[ART_SHA256_LEN], a[ART_SHA256_LEN];
	unsigned char b[ART_SHA256_LEN];

	memset(k, 0x42, sizeof(k));
	art_hmac_sha256(k, sizeof(k), "m", 1, a);
	art_sha256(k, sizeof(k), hk);
	art_hmac_sha256(hk, sizeof(hk), "m", 1, b);
	ok(memcmp(a, b, sizeof(a)) == 0,
	    "a 65-byte hmac key acts as its sha256 digest");
}

static void
test_hex_is_lowercase_and_terminated(void)
{
	unsigned char in[] = { 0x00, 0x0f, 0xa5, 0xff };
	char out[2 * sizeof(in) + 1];

	memset(out, 'x', sizeof(out));
	ok(strcmp(art_hex(in, sizeof(in), out), "000fa5ff") == 0,
	    "art_hex writes lowercase digits and a NUL");
	ok(strcmp(art_hex(in, 0, out), "") == 0,
	    "art_hex of zero bytes is the empty string");
}

int
main(void)
{
	test_sha1_matches_fips_vectors();
	test_sha256_matches_fips_vectors();
	test_a_million_a_in_chunks_matches_fips();
	test_one_shot_of_a_million_a_matches_fips();
	test_any_split_of_the_input_gives_the_one_shot_digest();
	test_byte_at_a_time_gives_the_one_shot_digest();
	test_hmac_sha256_matches_rfc4231();
	test_hmac_with_a_block_sized_key_is_not_hashed();
	test_hmac_with_a_longer_key_uses_its_hash();
	test_hex_is_lowercase_and_terminated();
	return tap_done();
}
