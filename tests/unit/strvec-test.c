/* strvec-test - argv vectors: copies, a NULL after, no limit but memory */
#include "strvec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static void
test_push_and_null(void)
{
	struct art_strvec sv = ART_STRVEC_INIT;
	char word[] = "changed";

	ok(sv.v == NULL && sv.n == 0, "an empty vector owns nothing");
	ok(art_strvec_push(&sv, "agentrt-llm") == 0 &&
	    art_strvec_push(&sv, word) == 0 && sv.n == 2 &&
	    sv.v[2] == NULL, "two pushes, a NULL after them");
	word[0] = 'C';
	ok(strcmp(sv.v[0], "agentrt-llm") == 0 &&
	    strcmp(sv.v[1], "changed") == 0, "the vector holds copies");
	ok(art_strvec_pushf(&sv, "/dev/fd/%d", 7) == 0 && sv.n == 3 &&
	    strcmp(sv.v[2], "/dev/fd/7") == 0 && sv.v[3] == NULL,
	    "pushf formats as printf does");
	ok(art_strvec_pushf(&sv, "%s", "") == 0 && sv.v[3][0] == '\0' &&
	    sv.n == 4, "an empty string is a string");
	art_strvec_clear(&sv);
	ok(sv.n == 0 && sv.v != NULL && sv.v[0] == NULL && sv.cap > 0,
	    "clear empties it and keeps the room");
	art_strvec_release(&sv);
	ok(sv.v == NULL && sv.n == 0 && sv.cap == 0,
	    "release leaves it empty, owning nothing");
	art_strvec_release(&sv);
	ok(sv.v == NULL, "releasing an empty one does nothing");
}

/* Far past the old fixed stores: 30, 48 and 112 arguments. */
static void
test_grows(void)
{
	struct art_strvec sv;
	char want[32];
	size_t i;
	int good = 1;

	art_strvec_init(&sv);
	for (i = 0; i < 1000; i++)
		good &= art_strvec_pushf(&sv, "arg-%zu", i) == 0;
	ok(good && sv.n == 1000 && sv.v[1000] == NULL && !sv.nomem,
	    "1000 pushes, every one kept");
	for (i = 0; i < 1000 && good; i++) {
		snprintf(want, sizeof(want), "arg-%zu", i);
		good = strcmp(sv.v[i], want) == 0;
	}
	ok(good, "in the order pushed");
	ok(sv.cap < 2 * 1001 + 1, "room at most doubles what is held "
	    "(cap %zu)", sv.cap);
	art_strvec_release(&sv);
}

static void
test_pushv(void)
{
	struct art_strvec sv = ART_STRVEC_INIT;
	const char *const words[] = { "--agents", "a", "--agents", "b", NULL };

	ok(art_strvec_pushv(&sv, NULL) == 0 && sv.n == 0,
	    "pushv of NULL pushes nothing");
	ok(art_strvec_push(&sv, "run") == 0 &&
	    art_strvec_pushv(&sv, words) == 0 && sv.n == 5 &&
	    strcmp(sv.v[4], "b") == 0 && sv.v[5] == NULL,
	    "pushv appends each word");
	art_strvec_release(&sv);
}

/* Once a push has failed, none goes in: the vector is never a gap. */
static void
test_nomem_sticks(void)
{
	struct art_strvec sv = ART_STRVEC_INIT;

	art_strvec_push(&sv, "a");
	sv.nomem = true;	/* as a failed allocation leaves it */
	ok(art_strvec_push(&sv, "b") == -1 &&
	    art_strvec_pushf(&sv, "%d", 1) == -1 &&
	    art_strvec_pushv(&sv, (const char *const[]){ "c", NULL }) == -1,
	    "after a failure every push fails");
	ok(sv.n == 1 && strcmp(sv.v[0], "a") == 0 && sv.v[1] == NULL,
	    "and leaves what came before as it was");
	art_strvec_clear(&sv);
	ok(!sv.nomem && art_strvec_push(&sv, "d") == 0 && sv.n == 1,
	    "clear forgets the failure");
	art_strvec_release(&sv);
}

static void
test_detach(void)
{
	struct art_strvec sv = ART_STRVEC_INIT;
	char **v;

	ok(art_strvec_detach(&sv) == NULL, "detach: nothing pushed, NULL");
	art_strvec_push(&sv, "a");
	art_strvec_push(&sv, "b");
	v = art_strvec_detach(&sv);
	ok(v != NULL && strcmp(v[0], "a") == 0 && strcmp(v[1], "b") == 0 &&
	    v[2] == NULL && sv.v == NULL && sv.n == 0 && sv.cap == 0,
	    "detach hands over the argv and leaves the vector empty");
	free(v[0]);
	free(v[1]);
	free(v);
	art_strvec_push(&sv, "c");
	art_strvec_clear(&sv);
	ok(art_strvec_detach(&sv) == NULL && sv.v == NULL,
	    "detach after a clear: nothing to hand over, the room freed");
}

int
main(void)
{
	test_push_and_null();
	test_grows();
	test_pushv();
	test_nomem_sticks();
	test_detach();
	return tap_done();
}
