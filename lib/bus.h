/* bus.h - a ring's lines on NATS JetStream (libnats): the I/O of agentrt-bus */
#ifndef ART_BUS_H
#define ART_BUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jv.h>

#include "err.h"

/*
 * One connection to a NATS server or cluster, its JetStream context and
 * the owners' bucket (DESIGN.md §10).  Never prints, never reads the
 * environment: agentrt-bus hands it what it needs.  Credentials given
 * here are passed to libnats and never copied into an error message.
 */
struct art_bus;

/* The names agentrt-bus init makes and the others use. */
#define ART_BUS_BUCKET		"agentrt-owners"
#define ART_BUS_UNOWNED		"unowned"

struct art_bus_opts {
	const char	 *servers;	/* "URL[,URL...]" */
	const char	 *creds;	/* a .creds file, or NULL */
	const char	 *token;	/* or NULL */
	const char	 *tls_ca, *tls_cert, *tls_key;	/* or NULL */
	int		  connect_secs;	/* how long a first connect is retried */
	/* Said once when the first connect fails and is retried. */
	void		(*waiting)(const char *why, void *ctx);
	void		 *ctx;
};

/*
 * Connects (retrying a failed first connect for connect_secs, then
 * reconnecting forever, 250 ms apart).  -1 with err ("connect") saying
 * why, the URLs' passwords redacted.
 */
int	art_bus_open(struct art_bus **, const struct art_bus_opts *,
	    struct art_err *);
void	art_bus_close(struct art_bus *);
/* Ends libnats' threads, at exit, after the last art_bus_close. */
void	art_bus_shutdown(void);
/* libnats' version, for --version. */
const char *art_bus_nats_version(void);
/* url with a "user:password@" part written as "user:***@", into out. */
void	art_bus_redact(const char *url, char *out, size_t len);

/*
 * Makes the streams AGENTRT_WORK, AGENTRT_ENGINE, AGENTRT_EVENTS and the
 * bucket, or leaves them when they exist; *report (a new jv array) gets
 * one {stream, subjects, replicas, created} object each.  -1 with err.
 */
int	art_bus_init(struct art_bus *, int replicas, int64_t events_max_age,
	    jv *report, struct art_err *);

/*
 * Publishes data to subject, with Nats-Msg-Id msgid when not NULL, and
 * waits for JetStream's ack, retrying with the same id (backoff to 1 s)
 * while *stop is 0.  retrying(secs, ctx) is called once after about 2 s
 * of failures and retrying(-1, ctx) once it got through.  -1 with err
 * when stopped, or for an error no retry mends: no stream holds the
 * subject (code "no_stream"), or data is larger than the server's
 * max_payload (code "too_large").
 */
int	art_bus_publish(struct art_bus *, const char *subject,
	    const char *msgid, const char *data, size_t len,
	    volatile int *stop, void (*retrying)(const char *why, int again,
	    void *), void *ctx, struct art_err *);

/*
 * The shard the bucket names for sid, into out (len bytes): 1, 0 when
 * it names none, -1 with err.  Answers come from a cache kept fresh by a
 * subscription to the bucket's subjects, so a lookup costs a round trip
 * only the first time.
 */
int	art_bus_owner(struct art_bus *, const char *sid, char *out,
	    size_t len, struct art_err *);
/* Puts sid -> owner in the bucket unless it says so already; *rev its
 * revision (0 when nothing was written).  -1 with err. */
int	art_bus_assign(struct art_bus *, const char *sid, const char *owner,
	    bool force, uint64_t *rev, struct art_err *);

/* A pull consumer and the messages it gave. */
struct art_bus_sub;
struct art_bus_msg;

/*
 * A pull subscription on subject: the durable consumer queue (shared by
 * every sub of that name), or an ephemeral one from the stream's start
 * when queue is NULL.  Explicit acks, ack_wait seconds, max_deliver (0
 * unlimited).  -1 with err ("no_stream" when no stream holds subject).
 */
int	art_bus_subscribe(struct art_bus *, const char *subject,
	    const char *queue, int ack_wait, int max_deliver,
	    struct art_bus_sub **, struct art_err *);
void	art_bus_sub_free(struct art_bus_sub *);
/*
 * The next message, waiting up to timeout_ms: 1 and *m (free it with
 * art_bus_msg_free), 0 when none came, -1 with err for a failure other
 * than a timeout (a node lost: the caller backs off and goes on).
 */
int	art_bus_next(struct art_bus_sub *, int max, int timeout_ms,
	    struct art_bus_msg **m, struct art_err *);
const char *art_bus_msg_data(const struct art_bus_msg *, size_t *len);
/* Acks m (waiting for the server's word, retried a few times). */
int	art_bus_msg_ack(struct art_bus_msg *, struct art_err *);
/* Tells JetStream m is still being worked on. */
void	art_bus_msg_progress(struct art_bus_msg *);
void	art_bus_msg_free(struct art_bus_msg *);

#endif
