/* log.c - a session's event log: append-only, seq from 1, the truth */
#include "log.h"

#include "clock.h"

int64_t
art_log_last_seq(struct art_txn *t, const char *sid, struct art_err *err)
{
	unsigned char key[8];
	size_t n = sizeof(key);
	int r = art_store_last(t, ART_DB_EVENTS, sid, NULL, 0, key, &n, err);

	if (r == -1)
		return -1;
	return r == 1 && n == 8 ? (int64_t)art_be64_get(key) : 0;
}

int64_t
art_log_append(struct art_txn *t, const char *sid, jv payload,
    const char *turn_id, jv *event, struct art_err *err)
{
	const struct art_clock *clock = art_store_clock(art_txn_store(t));
	char at[ART_CLOCK_BUFSZ];
	unsigned char key[8];
	int64_t seq;
	jv ev;

	if ((seq = art_log_last_seq(t, sid, err)) == -1) {
		jv_free(payload);
		return -1;
	}
	seq++;
	art_clock_format(art_clock_now_ms(clock), at);
	ev = jv_object();
	ev = jv_object_set(ev, jv_string("session_id"), jv_string(sid));
	ev = jv_object_set(ev, jv_string("seq"), jv_number((double)seq));
	ev = jv_object_set(ev, jv_string("occurred_at"), jv_string(at));
	if (turn_id != NULL)
		ev = jv_object_set(ev, jv_string("turn_id"),
		    jv_string(turn_id));
	ev = jv_object_set(ev, jv_string("payload"), payload);
	art_be64_put(key, (uint64_t)seq);
	if (art_store_add(t, ART_DB_EVENTS, sid, key, 8, jv_copy(ev),
	    err) == -1) {
		jv_free(ev);
		return -1;
	}
	if (event != NULL)
		*event = ev;
	else
		jv_free(ev);
	return seq;
}

struct reader {
	jv	events;
	size_t	max, n;
};

static int
read_fn(const void *sub, size_t sublen, jv v, void *ctx, struct art_err *err)
{
	struct reader *r = ctx;

	(void)sub, (void)sublen, (void)err;
	r->events = jv_array_append(r->events, v);
	return r->max > 0 && ++r->n >= r->max ? 1 : 0;
}

jv
art_log_read(struct art_txn *t, const char *sid, uint64_t after, size_t max,
    struct art_err *err)
{
	struct reader r = { jv_array(), max, 0 };
	unsigned char from[8];

	art_be64_put(from, after);
	if (art_store_scan(t, ART_DB_EVENTS, sid, NULL, 0, from, 8, 0, read_fn,
	    &r, err) == -1) {
		jv_free(r.events);
		return jv_invalid();
	}
	return r.events;
}
