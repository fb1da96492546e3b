/* append-events - a second writer for the store tests
 *
 * usage: append-events DIR SESSION N [PAD | msg]
 * Records N events of type "test.note" ({"n":i,"pad":…}) in SESSION, one
 * write transaction each, through the same library calls the engine uses,
 * so another process can watch them arrive.  With "msg", N messages
 * m1..mN instead, each under the head as this process reads it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "diag.h"
#include "session.h"
#include "store.h"

struct note {
	const char	*sid;
	long		 n;
	const char	*pad;
	int		 msg;
};

static int
note_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct note *c = ctx;
	jv p = jv_object(), s, m;

	if (c->msg) {
		s = art_session_get(t, c->sid, err);
		if (!jv_is_valid(s)) {
			jv_free(p);
			return -1;
		}
		m = jv_object_set(jv_object(), jv_string("id"),
		    jv_string_fmt("m%ld", c->n));
		m = jv_object_set(m, jv_string("role"), jv_string("user"));
		p = jv_object_set(p, jv_string("type"), jv_string("message.new"));
		p = jv_object_set(p, jv_string("message"), m);
		p = jv_object_set(p, jv_string("parent_id"), jv_object_get(s,
		    jv_string("head")));
		return art_session_record(t, c->sid, p, NULL, err) == -1 ? -1 :
		    0;
	}
	p = jv_object_set(p, jv_string("type"), jv_string("test.note"));
	p = jv_object_set(p, jv_string("n"), jv_number((double)c->n));
	p = jv_object_set(p, jv_string("pad"), jv_string(c->pad));
	return art_session_record(t, c->sid, p, NULL, err) == -1 ? -1 : 0;
}

int
main(int argc, char *argv[])
{
	struct art_clock clock;
	struct art_store_opts so = { .clock = &clock };
	struct art_store *st;
	struct art_err err;
	struct note c;
	char *pad;
	long i, n;
	size_t padlen;

	art_diag_init(argv[0]);
	if (argc < 4 || argc > 5)
		art_die(2, "usage: append-events DIR SESSION N [PAD]");
	so.dir = argv[1];
	n = atol(argv[3]);
	c.msg = argc == 5 && strcmp(argv[4], "msg") == 0;
	padlen = argc == 5 && !c.msg ? (size_t)atol(argv[4]) : 0;
	if ((pad = malloc(padlen + 1)) == NULL)
		art_die(1, "out of memory");
	memset(pad, 'x', padlen);
	pad[padlen] = '\0';
	if (art_clock_init(&clock, NULL, &err) == -1 ||
	    art_store_open(&st, &so, &err) == -1)
		art_die(1, "%s", err.msg);
	c.sid = argv[2];
	c.pad = pad;
	for (i = 1; i <= n; i++) {
		c.n = i;
		if (art_store_write(st, note_fn, &c, &err) == -1)
			art_die(1, "%s", err.msg);
	}
	art_store_close(st);
	free(pad);
	return 0;
}
