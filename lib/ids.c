/* ids.c - UUIDv7 and UUIDv5 (RFC 9562) and the rule for user-given ids */
#include "ids.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/random.h>
#endif

#include "sha.h"

#define V7_MAX_MS	(INT64_C(1) << 48)	/* first ms a v7 cannot hold */
#define COUNTER_MAX	0xfff
/* A fresh millisecond's counter starts below 2048, leaving room to count. */
#define COUNTER_SEED	0x7ff

const unsigned char ART_UUID_NS_AGENTRT[16] = {
	0x92, 0xf1, 0xfa, 0x1c, 0x2f, 0x7e, 0x5c, 0xa9,
	0x86, 0x0a, 0x6a, 0x6f, 0x3c, 0x38, 0xd1, 0xf8
};

const unsigned char ART_UUID_NS_DNS[16] = {
	0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1,
	0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8
};

const unsigned char ART_UUID_NS_URL[16] = {
	0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1,
	0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8
};

/* Reads /dev/urandom; for systems without getrandom(2). */
static int
urandom(void *buf, size_t len)
{
	unsigned char *p = buf;
	ssize_t n;
	int fd, saved;

	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while (len > 0) {
		if ((n = read(fd, p, len)) <= 0) {
			if (n == -1 && errno == EINTR)
				continue;
			saved = n == 0 ? EIO : errno;
			close(fd);
			errno = saved;
			return -1;
		}
		p += n, len -= (size_t)n;
	}
	close(fd);
	return 0;
}

/* Fills buf from the system's random source; -1 with errno on failure. */
static int
os_random(void *buf, size_t len)
{
#ifdef __linux__
	ssize_t n;

	/* Requests up to 256 bytes are never cut short once the pool is up. */
	do
		n = getrandom(buf, len, 0);
	while (n == -1 && errno == EINTR);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0) {
		errno = EIO;
		return -1;
	}
	/* An old kernel lacks it and a seccomp filter may forbid it. */
	if (errno != ENOSYS && errno != EPERM)
		return -1;
#endif
	return urandom(buf, len);
}

static uint64_t
rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoroshiro128++ (Blackman and Vigna): small, fast, and not for secrets. */
static uint64_t
xoroshiro(uint64_t s[2])
{
	uint64_t s0 = s[0], s1 = s[1], r = rotl64(s0 + s1, 17) + s0;

	s1 ^= s0;
	s[0] = rotl64(s0, 49) ^ s1 ^ (s1 << 21);
	s[1] = rotl64(s1, 28);
	return r;
}

/* 64 random bits, from the seeded generator or the system. */
static int
draw(struct art_ids *ids, uint64_t *r)
{
	unsigned char b[8];
	int i;

	if (ids->seeded) {
		*r = xoroshiro(ids->rng);
		return 0;
	}
	if (os_random(b, sizeof(b)) == -1)
		return -1;
	for (*r = 0, i = 0; i < 8; i++)
		*r = *r << 8 | b[i];
	return 0;
}

static uint64_t
load_be64(const unsigned char *p)
{
	uint64_t x = 0;
	int i;

	for (i = 0; i < 8; i++)
		x = x << 8 | p[i];
	return x;
}

int
art_ids_init(struct art_ids *ids, const struct art_clock *clk,
    const char *seed, struct art_err *err)
{
	unsigned char d[ART_SHA256_LEN];
	char when[ART_CLOCK_BUFSZ];
	int64_t now;

	memset(ids, 0, sizeof(*ids));
	ids->clock = clk;
	ids->last_ms = -1;
	now = art_clock_now_ms(clk);
	if (clk->pinned && (now < 0 || now >= V7_MAX_MS))
		return art_err_set(err, "ids", "mint ids at %s: a UUIDv7 "
		    "holds only times from 1970 to 10889",
		    art_clock_format(now, when));
	if (seed == NULL) {
		if (os_random(d, 8) == -1)
			return art_err_set(err, "ids", "read random bytes: %s",
			    strerror(errno));
		return 0;
	}
	art_sha256(seed, strlen(seed), d);
	ids->rng[0] = load_be64(d);
	ids->rng[1] = load_be64(d + 8);
	if (ids->rng[0] == 0 && ids->rng[1] == 0)
		ids->rng[1] = 1;	/* xoroshiro would stay at zero */
	ids->seeded = 1;
	return 0;
}

/*
 * Picks the timestamp and counter of the next id but leaves ids->last_ms
 * and ids->counter to the caller, so a failure changes nothing:
 * a clock that moved forward starts a fresh counter, otherwise the counter
 * goes up, and when it is spent the timestamp runs one ms ahead.
 */
static int
next_slot(struct art_ids *ids, int64_t *ms, uint16_t *counter)
{
	int64_t now = art_clock_now_ms(ids->clock);
	uint64_t r;

	if (now > ids->last_ms) {
		*ms = now;
	} else if (ids->counter < COUNTER_MAX) {
		*ms = ids->last_ms;
		*counter = ids->counter + 1;
		return 0;
	} else {
		*ms = ids->last_ms + 1;
	}
	if (*ms < 0 || *ms >= V7_MAX_MS) {
		errno = ERANGE;
		return -1;
	}
	if (draw(ids, &r) == -1)
		return -1;
	*counter = (uint16_t)(r & COUNTER_SEED);
	return 0;
}

static void
format_uuid(const unsigned char u[16], char out[ART_ID_BUFSZ])
{
	char hex[33];
	int i, o = 0;

	art_hex(u, 16, hex);
	for (i = 0; i < 32; i++) {
		if (i == 8 || i == 12 || i == 16 || i == 20)
			out[o++] = '-';
		out[o++] = hex[i];
	}
	out[o] = '\0';
}

int
art_ids_v7(struct art_ids *ids, char out[ART_ID_BUFSZ])
{
	unsigned char u[16];
	uint16_t counter;
	uint64_t r;
	int64_t ms;
	int i;

	if (next_slot(ids, &ms, &counter) == -1 || draw(ids, &r) == -1)
		return -1;
	for (i = 0; i < 6; i++)
		u[i] = (unsigned char)((uint64_t)ms >> (40 - 8 * i));
	u[6] = (unsigned char)(0x70 | counter >> 8);
	u[7] = (unsigned char)counter;
	u[8] = (unsigned char)(0x80 | ((r >> 56) & 0x3f));
	for (i = 9; i < 16; i++)
		u[i] = (unsigned char)(r >> (8 * (15 - i)));
	ids->last_ms = ms;
	ids->counter = counter;
	format_uuid(u, out);
	return 0;
}

void
art_ids_v5(const unsigned char ns[16], const char *name, size_t len,
    char out[ART_ID_BUFSZ])
{
	unsigned char d[ART_SHA1_LEN];
	struct art_sha1 c;

	art_sha1_init(&c);
	art_sha1_update(&c, ns, 16);
	art_sha1_update(&c, name, len);
	art_sha1_final(&c, d);
	d[6] = (unsigned char)(0x50 | (d[6] & 0x0f));
	d[8] = (unsigned char)(0x80 | (d[8] & 0x3f));
	format_uuid(d, out);
}

int
art_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
art_uuid_parse(const char *s, unsigned char out[16])
{
	unsigned char u[16];
	int i, n = 0, hi, lo;

	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -1;
			continue;
		}
		/* s[i] is checked before s[i + 1] is read, so NUL stops us. */
		if ((hi = art_hex_value(s[i])) == -1 ||
		    (lo = art_hex_value(s[i + 1])) == -1)
			return -1;
		u[n++] = (unsigned char)(hi << 4 | lo);
		i++;
	}
	if (s[36] != '\0')
		return -1;
	memcpy(out, u, sizeof(u));
	return 0;
}

bool
art_id_is_valid(const char *s)
{
	size_t n;

	if (s == NULL || *s == '\0' || *s == '.' || *s == '-')
		return false;
	for (n = 0; s[n] != '\0'; n++) {
		if (n == ART_ID_MAX)
			return false;
		if (strchr("._:-", s[n]) == NULL &&
		    !(s[n] >= 'a' && s[n] <= 'z') &&
		    !(s[n] >= 'A' && s[n] <= 'Z') &&
		    !(s[n] >= '0' && s[n] <= '9'))
			return false;
	}
	return true;
}
