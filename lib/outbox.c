/* outbox.c - a tool run's state and result, kept until its call settles */
#include "outbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "ids.h"
#include "json.h"
#include "spawn.h"

#define KEY_MAX		(ART_ID_MAX + 1 + 8)

/* (call, NUL, be64 attempt) into key; its length, 0 when call is too long. */
static size_t
key_of(unsigned char key[KEY_MAX], const char *call, int64_t attempt)
{
	size_t n = strlen(call);

	if (n > ART_ID_MAX)
		return 0;
	memcpy(key, call, n);
	key[n] = '\0';
	art_be64_put(key + n + 1, (uint64_t)attempt);
	return n + 9;
}

/* This boot's id, or "" when the system does not say. */
static void
boot_id(char *buf, size_t n)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)n, f) == NULL)
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* One attempt's place in the outbox, and what a write or read moves. */
struct slot {
	const char	*sid;
	unsigned char	 key[KEY_MAX];
	size_t		 klen;
	jv		 entry;		/* claim: ours, then what was there */
	int		 claimed;
};

static int
claim_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct slot *c = ctx;
	struct art_err miss;
	jv was = art_store_get(t, ART_DB_OUTBOX, c->sid, c->key, c->klen,
	    &miss);

	if (jv_is_valid(was)) {
		c->claimed = 0;
		jv_free(c->entry);	/* ours, not kept */
		c->entry = was;
		return 0;
	}
	if (!art_err_is(&miss, "not_found")) {
		*err = miss;
		return -1;
	}
	c->claimed = 1;
	return art_store_put(t, ART_DB_OUTBOX, c->sid, c->key, c->klen,
	    jv_copy(c->entry), err);
}

int
art_outbox_claim(struct art_store *st, const char *sid, const char *call,
    int64_t attempt, jv *entry, struct art_err *err)
{
	struct slot c = { sid, { 0 }, 0, jv_null(), 0 };
	char boot[64], at[ART_CLOCK_BUFSZ];
	long pid = (long)getpid();
	jv mine;
	int r;

	*entry = jv_null();
	if ((c.klen = key_of(c.key, call, attempt)) == 0)
		return art_err_set(err, "bad_field", "call id too long");
	boot_id(boot, sizeof(boot));
	mine = art_json_set(jv_object(), "state", jv_string("running"));
	mine = art_json_set(mine, "pid", jv_number((double)pid));
	mine = art_json_set(mine, "start",
	    jv_number((double)art_spawn_started(pid)));
	mine = art_json_set(mine, "boot", jv_string(boot));
	c.entry = art_json_set(mine, "at", jv_string(art_clock_format(
	    art_clock_now_ms(art_store_clock(st)), at)));
	r = art_store_write(st, claim_fn, &c, err);
	if (r == -1 || c.claimed) {
		jv_free(c.entry);
		return r == -1 ? -1 : 1;
	}
	*entry = c.entry;
	return 0;
}

static int
get_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct slot *g = ctx;
	struct art_err miss;

	g->entry = art_store_get(t, ART_DB_OUTBOX, g->sid, g->key, g->klen,
	    &miss);
	if (jv_is_valid(g->entry))
		return 0;
	g->entry = jv_null();
	if (art_err_is(&miss, "not_found"))
		return 0;
	*err = miss;
	return -1;
}

jv
art_outbox_get(struct art_store *st, const char *sid, const char *call,
    int64_t attempt, struct art_err *err)
{
	struct slot g = { sid, { 0 }, 0, jv_null(), 0 };

	if ((g.klen = key_of(g.key, call, attempt)) == 0)
		return jv_null();
	if (art_store_read(st, get_fn, &g, err) == -1) {
		jv_free(g.entry);
		return jv_invalid();
	}
	return g.entry;
}

static int
put_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct slot *p = ctx;

	/*
	 * Not synced: a process killed loses nothing of it, and an OS crash
	 * that undoes it leaves the synced claim of a boot gone by, which
	 * reads as interrupted, never as a result made up or a second run.
	 */
	art_txn_nosync(t);
	return art_store_put(t, ART_DB_OUTBOX, p->sid, p->key, p->klen,
	    jv_copy(p->entry), err);
}

int
art_outbox_done(struct art_store *st, const char *sid, const char *call,
    int64_t attempt, const jv *line, struct art_err *err)
{
	struct slot p = { sid, { 0 }, 0, jv_null(), 0 };
	char at[ART_CLOCK_BUFSZ];
	int r;

	if ((p.klen = key_of(p.key, call, attempt)) == 0)
		return art_err_set(err, "bad_field", "call id too long");
	p.entry = art_json_set(art_json_set(art_json_set(jv_object(), "state",
	    jv_string("done")), "line", jv_copy(*line)), "at", jv_string(
	    art_clock_format(art_clock_now_ms(art_store_clock(st)), at)));
	r = art_store_write(st, put_fn, &p, err);
	jv_free(p.entry);
	return r;
}

struct keys {
	jv	all;	/* the attempts found */
};

static int
keys_fn(const void *sub, size_t sublen, jv v, void *ctx, struct art_err *err)
{
	struct keys *k = ctx;

	(void)err;
	jv_free(v);
	if (sublen >= 9)
		k->all = jv_array_append(k->all, jv_number((double)
		    art_be64_get((const unsigned char *)sub + sublen - 8)));
	return 0;
}

int
art_outbox_clear(struct art_txn *t, const char *sid, const char *call,
    struct art_err *err)
{
	size_t n = strlen(call);
	unsigned char prefix[ART_ID_MAX + 1];
	struct keys k = { jv_array() };
	int r = 0;

	if (n > ART_ID_MAX) {
		jv_free(k.all);
		return 0;
	}
	memcpy(prefix, call, n);
	prefix[n] = '\0';
	if (art_store_scan(t, ART_DB_OUTBOX, sid, prefix, n + 1, NULL, 0, 0,
	    keys_fn, &k, err) == -1)
		r = -1;
	jv_array_foreach(k.all, i, a) {
		unsigned char key[KEY_MAX];
		size_t klen = key_of(key, call, (int64_t)jv_number_value(a));

		if (r == 0 && art_store_del(t, ART_DB_OUTBOX, sid, key, klen,
		    err) == -1)
			r = -1;
		jv_free(a);
	}
	jv_free(k.all);
	return r;
}

bool
art_outbox_alive(const jv *entry)
{
	int64_t pid = 0, start = 0;
	const char *boot = art_json_str(entry, "boot");
	char now[64];

	art_json_get_int(entry, "pid", 0, &pid, NULL);
	art_json_get_int(entry, "start", 0, &start, NULL);
	if (pid <= 0)
		return false;
	boot_id(now, sizeof(now));
	if (boot != NULL && *boot != '\0' && *now != '\0' &&
	    strcmp(boot, now) != 0)
		return false;		/* the machine rebooted since */
	if (!art_spawn_alive((long)pid))
		return false;
	/* The pid may be another process's now: its start time says. */
	return start == 0 || (int64_t)art_spawn_started((long)pid) == start;
}
