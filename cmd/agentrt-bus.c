/* agentrt-bus - a ring's lines between hosts on NATS JetStream */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bus.h"
#include "buf.h"
#include "busline.h"
#include "diag.h"
#include "json.h"
#include "ndjson.h"
#include "opt.h"
#include "request.h"
#include "store.h"

static volatile int stop;

struct opts {
	const char	*server, *creds, *token_env, *tls_ca, *tls_cert,
			*tls_key, *db, *owner, *shards, *acks, *queue, *until;
	int		 replicas, ack_wait, max_deliver, batch, max_inflight;
	int64_t		 max_age;
	size_t		 max_line;
	bool		 force;
};

enum {
	O_SERVER = 256, O_CREDS, O_TOKEN_ENV, O_TLS_CA, O_TLS_CERT, O_TLS_KEY,
	O_OWNER, O_SHARDS, O_ACKS, O_QUEUE, O_ACK_WAIT, O_MAX_INFLIGHT,
	O_MAX_DELIVER, O_UNTIL, O_REPLICAS, O_MAX_AGE, O_FORCE, O_MAX_LINE,
	O_BATCH
};

static const struct art_opt options[] = {
	{ "server", O_SERVER, "URLS", ART_OPT_TEXT, NULL, NULL, 0,
	    "the NATS servers, comma-separated (default: $NATS_URL, else "
	    "nats://127.0.0.1:4222)" },
	{ "creds", O_CREDS, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "a NATS credentials file" },
	{ "token-env", O_TOKEN_ENV, "VAR", ART_OPT_ENV, NULL, NULL, 0,
	    "the connection's token is in $VAR" },
	{ "tls-ca", O_TLS_CA, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "TLS: trust the certificates in FILE (TLS is also turned on by a "
	    "tls:// URL)" },
	{ "tls-cert", O_TLS_CERT, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "TLS: this client's certificate (with --tls-key)" },
	{ "tls-key", O_TLS_KEY, "FILE", ART_OPT_FILE, NULL, NULL, 0,
	    "TLS: this client's key" },
	{ "db", 'd', "DIR", ART_OPT_DIR, NULL, "pub", 0,
	    "the store by-reference lines are made whole from (default: "
	    "$AGENTRT_DB, else as agentrt-session)" },
	{ "owner", O_OWNER, "SHARD", ART_OPT_TEXT, NULL, "pub", 0,
	    "claim each line's session for SHARD first" },
	{ "shards", O_SHARDS, "LIST", ART_OPT_TEXT, NULL, "pub owner", 0,
	    "the shards an unclaimed session hashes over, a,b,c" },
	{ "acks", O_ACKS, "FILE", ART_OPT_FILE, NULL, "pub sub", 0,
	    "pub: write the ack key of each line published to FILE; sub: "
	    "ack only what FILE says was taken" },
	{ "queue", O_QUEUE, "NAME", ART_OPT_TEXT, NULL, "sub", 0,
	    "the durable consumer NAME, shared" },
	{ "ack-wait", O_ACK_WAIT, "SECS", ART_OPT_TEXT, NULL, "sub", 0,
	    "redelivery after SECS un-acked (default 30)" },
	{ "max-inflight", O_MAX_INFLIGHT, "N", ART_OPT_TEXT, NULL, "sub", 0,
	    "at most N messages waiting for their acks" },
	{ "max-deliver", O_MAX_DELIVER, "N", ART_OPT_TEXT, NULL, "sub", 0,
	    "give a message up after N deliveries" },
	{ "batch", O_BATCH, "N", ART_OPT_TEXT, NULL, "sub", 0,
	    "fetch up to N messages at a time (default: --max-inflight, "
	    "else 64)" },
	{ "until", O_UNTIL, "TYPE", ART_OPT_TEXT, NULL, "sub", 0,
	    "exit after writing a line of type TYPE" },
	{ "replicas", O_REPLICAS, "N", ART_OPT_TEXT, NULL, "init", 0,
	    "the streams' replicas (default 1)" },
	{ "events-max-age", O_MAX_AGE, "SECS", ART_OPT_TEXT, NULL, "init", 0,
	    "how long events are kept (default 86400)" },
	{ "force", O_FORCE, NULL, ART_OPT_TEXT, NULL, "assign", 0,
	    "write even when the bucket says so" },
	{ "max-line", O_MAX_LINE, "BYTES", ART_OPT_TEXT, NULL, "pub", 0,
	    "the longest line read (default 64M)" },
	ART_OPT_STANDARD
};

static const struct cmd {
	const char	*name;
	int		 args;
	const char	*synopsis;	/* in --help */
	const char	*operands;	/* for completion */
	const char	*help;
	const char	*wrong;		/* the usage error for other args */
} cmds[] = {
	{ "init", 0, "init [--replicas N] [--events-max-age SECS]", NULL,
	    "make the streams and the owners' bucket (idempotent)",
	    "init takes no arguments" },
	{ "pub", 1, "pub SUBJECT [-d DIR] [--owner SHARD] [--shards LIST] "
	    "[--acks FILE]", "text",
	    "publish each line read, whole, with its Nats-Msg-Id; SUBJECT "
	    "may hold {owner} and {session}", "pub takes one SUBJECT" },
	{ "sub", 1, "sub SUBJECT [--queue NAME] [--acks FILE] [--ack-wait "
	    "SECS] [--max-inflight N] [--max-deliver N] [--until TYPE]",
	    "text", "write each message as a line, acked once taken",
	    "sub takes one SUBJECT" },
	{ "assign", 2, "assign SESSION SHARD [--force]", "session text",
	    "say in the bucket that SHARD owns SESSION",
	    "assign takes SESSION SHARD" },
	{ "owner", 1, "owner SESSION [--shards LIST]", "session",
	    "print the shard that owns SESSION", "owner takes one SESSION" },
};

#define NCMDS	(sizeof(cmds) / sizeof(cmds[0]))

static _Noreturn void	usage(const char *);

static _Noreturn void
help(void)
{
	size_t i;

	fputs(
"Usage: agentrt-bus [OPTIONS] COMMAND [ARGS]\n"
"\n"
"Carry a ring's NDJSON lines between hosts on NATS JetStream.\n"
"\n"
"Commands:\n", stdout);
	for (i = 0; i < NCMDS; i++)
		art_opt_help_cmd(stdout, cmds[i].synopsis, cmds[i].help, 24);
	fputs("\nOptions:\n", stdout);
	art_opt_help(stdout, options, 24);
	fputs(
"\n"
"Exit status: 0 success (end of input), 1 failure, 2 usage error.\n",
	    stdout);
	art_opt_exit();
}

static const struct cmd *
find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

/* --completions: the options (those command context takes), the commands. */
static _Noreturn void
completions(const char *context)
{
	size_t i;

	if (context != NULL && find_cmd(context) == NULL) {
		art_warn("unknown command '%s'", context);
		usage(NULL);
	}
	art_opt_complete(stdout, options, context);
	for (i = 0; i < NCMDS && context == NULL; i++)
		art_opt_complete_cmd(stdout, cmds[i].name, cmds[i].operands,
		    cmds[i].help);
	art_opt_exit();
}

/* The version, and libnats'. */
static _Noreturn void
version(void)
{
	const char *const libs[] = { "libnats", art_bus_nats_version(),
	    NULL };

	art_opt_version("agentrt-bus", PACKAGE_VERSION, libs);
}

static _Noreturn void
usage(const char *why)
{
	if (why != NULL)
		art_warn("%s", why);
	fprintf(stderr, "usage: agentrt-bus [OPTIONS] COMMAND [ARGS] (see "
	    "agentrt-bus --help)\n");
	exit(ART_EXIT_USAGE);
}

static int
count_arg(const char *name, const char *s, int min)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0' || v < min || v > 1000000)
		art_die(ART_EXIT_USAGE, "bad %s '%s': expected a whole number "
		    "of at least %d", name, s, min);
	return (int)v;
}

static void
parse(int argc, char **argv, const char *prefix, struct opts *o)
{
	struct option longopts[sizeof(options) / sizeof(options[0])];
	char shortopts[3 * sizeof(options) / sizeof(options[0])];
	int c;

	art_opt_longopts(options, longopts);
	art_opt_shortopts(options, prefix, NULL, shortopts, sizeof(shortopts));
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case O_SERVER: o->server = optarg; break;
		case O_CREDS: o->creds = optarg; break;
		case O_TOKEN_ENV: o->token_env = optarg; break;
		case O_TLS_CA: o->tls_ca = optarg; break;
		case O_TLS_CERT: o->tls_cert = optarg; break;
		case O_TLS_KEY: o->tls_key = optarg; break;
		case 'd': o->db = optarg; break;
		case O_OWNER: o->owner = optarg; break;
		case O_SHARDS: o->shards = optarg; break;
		case O_ACKS: o->acks = optarg; break;
		case O_QUEUE: o->queue = optarg; break;
		case O_ACK_WAIT:
			o->ack_wait = count_arg("--ack-wait", optarg, 1);
			break;
		case O_MAX_INFLIGHT:
			o->max_inflight = count_arg("--max-inflight", optarg,
			    1);
			break;
		case O_MAX_DELIVER:
			o->max_deliver = count_arg("--max-deliver", optarg, 1);
			break;
		case O_BATCH: o->batch = count_arg("--batch", optarg, 1); break;
		case O_UNTIL: o->until = optarg; break;
		case O_REPLICAS:
			o->replicas = count_arg("--replicas", optarg, 1);
			break;
		case O_MAX_AGE:
			o->max_age = count_arg("--events-max-age", optarg, 1);
			break;
		case O_FORCE: o->force = true; break;
		case O_MAX_LINE:
			o->max_line = art_opt_size_arg("--max-line", optarg);
			break;
		case 'h': help();
		case 'V': version();
		case ART_OPT_COMPLETIONS: completions(argv[optind]);
		default:
			usage(NULL);
		}
	}
}

static void
on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void
say_waiting(const char *why, void *ctx)
{
	(void)ctx;
	art_warn("no NATS server answers yet (%s): retrying", why);
}

static struct art_bus *
connect_bus(const struct opts *o)
{
	struct art_bus_opts bo = { 0 };
	struct art_bus *b;
	struct art_err err;
	const char *env = getenv("NATS_URL");

	bo.servers = o->server != NULL ? o->server : env != NULL &&
	    *env != '\0' ? env : "nats://127.0.0.1:4222";
	/* libnats reads it at each connect: a first one would be retried. */
	if (o->creds != NULL && access(o->creds, R_OK) == -1)
		art_die(ART_EXIT_FAIL, "--creds '%s': %s", o->creds,
		    strerror(errno));
	bo.creds = o->creds;
	if (o->token_env != NULL && ((bo.token = getenv(o->token_env)) ==
	    NULL || *bo.token == '\0'))
		art_die(ART_EXIT_USAGE, "--token-env %s: the variable is not set",
		    o->token_env);
	bo.tls_ca = o->tls_ca;
	bo.tls_cert = o->tls_cert;
	bo.tls_key = o->tls_key;
	if ((o->tls_cert == NULL) != (o->tls_key == NULL))
		art_die(ART_EXIT_USAGE, "--tls-cert and --tls-key go together");
	bo.connect_secs = 30;
	bo.waiting = say_waiting;
	if (art_bus_open(&b, &bo, &err) == -1) {
		char shown[1024];

		art_bus_redact(bo.servers, shown, sizeof(shown));
		art_die(ART_EXIT_FAIL, "%s (servers %s)", err.msg, shown);
	}
	return b;
}

static void
print_line(jv v)
{
	if (art_ndjson_write(stdout, v, NULL) == -1)
		art_die(ART_EXIT_FAIL, "write: %s", strerror(errno));
}

/* --- init, assign, owner ------------------------------------------- */

static int
cmd_init(struct art_bus *b, const struct opts *o)
{
	struct art_err err;
	jv report;

	if (art_bus_init(b, o->replicas > 0 ? o->replicas : 1, o->max_age > 0 ?
	    o->max_age : 86400, &report, &err) == -1) {
		jv_free(report);
		art_warn("init: %s", err.msg);
		return ART_EXIT_FAIL;
	}
	jv_array_foreach(report, i, r) {
		print_line(r);
		(void)i;
	}
	jv_free(report);
	return 0;
}

static char **
shards_of(const struct opts *o, size_t *n)
{
	struct art_err err;
	char **s;

	*n = 0;
	if (o->shards == NULL)
		return NULL;
	if ((s = art_busline_shards(o->shards, n, &err)) == NULL)
		art_die(ART_EXIT_USAGE, "--shards '%s': %s", o->shards, err.msg);
	return s;
}

/*
 * The owner of sid: the bucket's word, else the hash over shards;
 * "bucket", "hash", or NULL when neither says (-1 on failure).
 */
static const char *
owner_of(struct art_bus *b, const char *sid, char **shards, size_t n,
    char *out, size_t len, struct art_err *err)
{
	int r = art_bus_owner(b, sid, out, len, err);

	if (r == 1)
		return "bucket";
	if (r == -1)
		return "";
	if (n == 0)
		return NULL;
	snprintf(out, len, "%s", art_busline_shard(sid,
	    (const char *const *)shards, n));
	return "hash";
}

static int
cmd_owner(struct art_bus *b, const struct opts *o, char **argv)
{
	struct art_err err;
	char owner[256], **shards;
	const char *from;
	size_t n;

	shards = shards_of(o, &n);
	from = owner_of(b, argv[0], shards, n, owner, sizeof(owner), &err);
	art_busline_shards_free(shards);
	if (from != NULL && *from == '\0')
		return art_warn("owner: %s", err.msg), ART_EXIT_FAIL;
	if (from == NULL) {
		art_warn("owner: the bucket names no owner of session '%s' "
		    "(give --shards to hash it)", argv[0]);
		return ART_EXIT_FAIL;
	}
	print_line(art_json_set(art_json_set(art_json_set(jv_object(),
	    "session_id", jv_string(argv[0])), "owner", jv_string(owner)),
	    "from", jv_string(from)));
	return 0;
}

static int
cmd_assign(struct art_bus *b, const struct opts *o, char **argv)
{
	struct art_err err;
	char **one;
	uint64_t rev;
	size_t n;

	if ((one = art_busline_shards(argv[1], &n, &err)) == NULL || n != 1)
		art_die(ART_EXIT_USAGE, "bad shard '%s': %s", argv[1], one ==
		    NULL ? err.msg : "one name, please");
	art_busline_shards_free(one);
	if (art_bus_assign(b, argv[0], argv[1], true, &rev, &err) == -1)
		return art_warn("assign: %s", err.msg), ART_EXIT_FAIL;
	(void)o;
	print_line(art_json_set(art_json_set(art_json_set(jv_object(),
	    "session_id", jv_string(argv[0])), "owner", jv_string(argv[1])),
	    "revision", jv_number((double)rev)));
	return 0;
}

/* --- pub ------------------------------------------------------------ */

struct whole {
	const jv	*line;
	jv		 out;
};

static int
whole_fn(struct art_txn *t, void *ctx, struct art_err *err)
{
	struct whole *w = ctx;

	w->out = art_request_whole(t, w->line, err);
	return jv_is_valid(w->out) ? 0 : -1;
}

static void
say_retry(const char *why, int again, void *ctx)
{
	const char *subject = ctx;

	if (again)
		art_warn("publish to %s: %s: retrying", subject, why);
	else
		art_warn("publish to %s: through again", subject);
}

struct pub {
	struct art_bus		*bus;
	const struct opts	*o;
	const char		*template;
	char			**shards;
	size_t			 nshards;
	struct art_store	*store;
	FILE			*acks;
};

static struct art_store *
pub_store(const struct opts *o)
{
	struct art_store_opts so = { 0 };
	struct art_store *st;
	struct art_err err;
	char buf[4096];
	const char *dir = art_store_find_dir(o->db, getenv("AGENTRT_DB"),
	    getenv("XDG_DATA_HOME"), getenv("HOME"), buf, sizeof(buf), &err);

	if (dir == NULL)
		return NULL;
	so.dir = dir;
	return art_store_open(&st, &so, &err) == 0 ? st : NULL;
}

/*
 * Claims sid for --owner, then finds its owner when the subject routes
 * by it (*from as owner_of() says).  A bucket that does not answer (a
 * node lost, a leader being elected) is waited out and asked again, as
 * a publish is: a line must not go to the wrong shard, nor to none, for
 * a moment's silence.  -1 with err when stopped or for a failure no
 * retry mends (no bucket).
 */
static int
route(struct pub *p, const char *sid, char *owner, size_t len,
    const char **from, struct art_err *err)
{
	struct timespec nap;
	int backoff = 50, waited = 0, said = 0, r;

	for (;;) {
		r = 0;
		*from = NULL;
		if (p->o->owner != NULL)
			r = art_bus_assign(p->bus, sid, p->o->owner, false,
			    &(uint64_t){ 0 }, err);
		if (r == 0 && art_busline_subject_has(p->template, "owner") &&
		    (*from = owner_of(p->bus, sid, p->shards, p->nshards, owner,
		    len, err)) != NULL && **from == '\0')
			r = -1;
		if (r == 0) {
			if (said)
				art_warn("the bucket answers again");
			return 0;
		}
		if (stop || !art_err_is(err, "bucket"))
			return -1;
		if (!said && waited >= 2000) {
			art_warn("session %s: %s: retrying", sid, err->msg);
			said = 1;
		}
		nap.tv_sec = backoff / 1000;
		nap.tv_nsec = (long)(backoff % 1000) * 1000000L;
		nanosleep(&nap, NULL);
		waited += backoff;
		backoff = backoff * 2 > 1000 ? 1000 : backoff * 2;
	}
}

/*
 * A line larger than the server takes cannot cross: an error line goes in
 * its place, to the same subject, so that the session's owner hears of
 * it (a stage passes an error line on), and its deadline fails the
 * attempt rather than a redelivery repeating it without end.  0 when the
 * error line went out: the line counts as answered.
 */
static int
pub_too_large(struct pub *p, const char *subject, const jv *line,
    const char *text, size_t len, struct art_err *err)
{
	const char *sid = art_json_str(line, "session_id");
	char id[ART_BUSLINE_ID_MAX];
	jv e, dumped;
	int r;

	art_warn("a %s of session %s cannot go to %s: %s",
	    art_ndjson_type(line), sid != NULL ? sid : "(none)", subject,
	    err->msg);
	e = art_ndjson_error("too_large", err->msg, text, len);
	if (sid != NULL)
		e = art_json_set(e, "session_id", jv_string(sid));
	dumped = jv_dump_string(jv_copy(e), 0);
	r = art_bus_publish(p->bus, subject, art_busline_msg_id(&e,
	    jv_string_value(dumped), (size_t)jv_string_length_bytes(
	    jv_copy(dumped)), id) ? id : NULL, jv_string_value(dumped),
	    (size_t)jv_string_length_bytes(jv_copy(dumped)), &stop, say_retry,
	    (void *)subject, err);
	jv_free(e);
	jv_free(dumped);
	return r;
}

/* Publishes one line (consumed); text is its bytes.  -1 to stop. */
static int
pub_line(struct pub *p, jv line, const char *text, size_t len)
{
	char subject[ART_BUSLINE_SUBJECT_MAX], owner[256], id[ART_BUSLINE_ID_MAX];
	char key[ART_BUSLINE_ID_MAX];
	const char *sid = art_json_str(&line, "session_id"), *from = "";
	struct art_err err;
	struct whole w = { &line, jv_null() };
	jv dumped = jv_invalid();
	int r;

	if (art_request_by_ref(&line)) {
		if (p->store == NULL && (p->store = pub_store(p->o)) == NULL) {
			art_warn("a by-reference %s of session %s, and no store "
			    "to make it whole from (-d DIR)", art_ndjson_type(
			    &line), sid != NULL ? sid : "?");
			line = art_ndjson_error("no_store", "a by-reference "
			    "line and no store to make it whole", text, len);
		} else if (art_store_read(p->store, whole_fn, &w, &err) == -1) {
			art_warn("make a %s whole: %s", art_ndjson_type(&line),
			    err.msg);
			jv_free(w.out);
			line = art_json_set(art_ndjson_error("bad_request",
			    err.msg, text, len), "session_id", sid != NULL ?
			    jv_string(sid) : jv_null());
		} else {
			jv_free(line);
			line = w.out;
		}
		sid = art_json_str(&line, "session_id");
		dumped = jv_dump_string(jv_copy(line), 0);
		text = jv_string_value(dumped);
		len = strlen(text);
	}
	*owner = '\0';
	if (sid != NULL && route(p, sid, owner, sizeof(owner), &from,
	    &err) == -1) {
		if (stop) {
			jv_free(line);
			jv_free(dumped);
			return -1;
		}
		art_warn("session %s: %s", sid, err.msg);
	}
	if (art_busline_subject_has(p->template, "owner")) {
		if (from == NULL || *from == '\0') {
			art_warn("no owner for a %s of session %s: sent to %s",
			    art_ndjson_type(&line), sid != NULL ? sid : "(none)",
			    ART_BUS_UNOWNED);
			snprintf(owner, sizeof(owner), "%s", ART_BUS_UNOWNED);
		}
	}
	if (art_busline_subject(p->template, sid != NULL ? sid : "none",
	    owner, subject, &err) == -1) {
		art_warn("subject for a %s of session %s: %s",
		    art_ndjson_type(&line), sid != NULL ? sid : "(none)",
		    err.msg);
		jv_free(line);
		jv_free(dumped);
		return 0;
	}
	r = art_bus_publish(p->bus, subject, art_busline_msg_id(&line, text,
	    len, id) ? id : NULL, text, len, &stop, say_retry, subject, &err);
	if (r == -1 && art_err_is(&err, "too_large"))
		r = pub_too_large(p, subject, &line, text, len, &err);
	if (r == -1)
		art_warn("publish to %s: %s", subject, err.msg);
	else if (p->acks != NULL && art_busline_ack_key(&line, key) &&
	    (fprintf(p->acks, "key %s\n", key) < 0 || fflush(p->acks) == EOF))
		art_warn("--acks: %s", strerror(errno));
	jv_free(line);
	jv_free(dumped);
	return r == -1 && art_err_is(&err, "no_stream") ? -1 : r;
}

static int
cmd_pub(struct art_bus *b, const struct opts *o, char **argv)
{
	struct pub p = { b, o, NULL, NULL, 0, NULL, NULL };
	struct art_ndjson_reader *rd;
	struct art_err err;
	enum art_ndjson_status st;
	char probe[ART_BUSLINE_SUBJECT_MAX];
	const char *raw;
	size_t len;
	jv line;
	int status = 0;

	p.template = argv[0];
	p.shards = shards_of(o, &p.nshards);
	if (art_busline_subject(p.template, "s", "o", probe, &err) == -1)
		art_die(ART_EXIT_USAGE, "pub '%s': %s", p.template, err.msg);
	if (o->acks != NULL && (p.acks = fopen(o->acks, "w")) == NULL)
		art_die(ART_EXIT_FAIL, "--acks '%s': %s", o->acks,
		    strerror(errno));
	rd = art_ndjson_reader_new(STDIN_FILENO, "<stdin>", o->max_line, 0);
	if (rd == NULL)
		art_die(ART_EXIT_FAIL, "out of memory");
	while (!stop && status == 0 &&
	    (st = art_ndjson_next(rd, &line, &err)) != ART_NDJSON_EOF) {
		if (st == ART_NDJSON_OK) {
			raw = art_ndjson_raw(rd, &len);
			status = pub_line(&p, line, raw, len);
		} else if (st == ART_NDJSON_BAD) {
			art_warn("<stdin>:%zu: %s", art_ndjson_lineno(rd),
			    err.msg);
			line = art_ndjson_bad_line(rd, &err);
			line = art_json_set(line, "code", jv_string("bad_line"));
			status = pub_line(&p, line, "", 0);
		} else if (st == ART_NDJSON_IOERR) {
			if (!stop)
				art_warn("%s", err.msg);
			break;
		}
	}
	art_ndjson_reader_free(rd);
	art_busline_shards_free(p.shards);
	art_store_close(p.store);
	if (p.acks != NULL)
		fclose(p.acks);
	return status == 0 ? 0 : ART_EXIT_FAIL;
}

/* --- sub ------------------------------------------------------------ */

struct waiting {
	struct art_bus_msg	*m;
	uint64_t		 ord;
	char			 key[ART_BUSLINE_ID_MAX];
	int64_t			 touched;
};

struct sub {
	struct waiting	*w;
	size_t		 n, cap;
	uint64_t	 written;
	int		 acks_fd;
	bool		 writer_seen;
	char		 buf[4096];
	size_t		 have;
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
ack_at(struct sub *s, size_t i)
{
	struct art_err err;

	if (art_bus_msg_ack(s->w[i].m, &err) == -1)
		art_warn("%s (it will be delivered again)", err.msg);
	art_bus_msg_free(s->w[i].m);
	s->w[i] = s->w[--s->n];
}

/* One line of the acks file: "N" or "key KEY". */
static void
ack_line(struct sub *s, const char *l)
{
	size_t i;
	char *end;
	unsigned long long n;

	if (strncmp(l, "key ", 4) == 0) {
		for (i = 0; i < s->n; )
			if (strcmp(s->w[i].key, l + 4) == 0)
				ack_at(s, i);
			else
				i++;
		return;
	}
	n = strtoull(l, &end, 10);
	if (*l == '\0' || *end != '\0') {
		art_warn("--acks: not a count or a key: '%.60s'", l);
		return;
	}
	for (i = 0; i < s->n; )
		if (s->w[i].ord <= n)
			ack_at(s, i);
		else
			i++;
}

/* Reads what the acks file has; -1 when its writer is gone. */
static int
read_acks(struct sub *s)
{
	ssize_t got;
	char *nl;

	for (;;) {
		got = read(s->acks_fd, s->buf + s->have, sizeof(s->buf) - 1 -
		    s->have);
		if (got == 0)
			return s->writer_seen ? -1 : 0;
		if (got < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		s->writer_seen = true;
		s->have += (size_t)got;
		s->buf[s->have] = '\0';
		while ((nl = strchr(s->buf, '\n')) != NULL) {
			*nl = '\0';
			ack_line(s, s->buf);
			s->have -= (size_t)(nl + 1 - s->buf);
			memmove(s->buf, nl + 1, s->have + 1);
		}
		if (s->have == sizeof(s->buf) - 1)
			s->have = 0;	/* a line too long: not ours */
	}
}

/* Writes m's line: its data, or an error line when it is not one. */
static int
write_msg(const char *data, size_t len, jv *parsed)
{
	jv v = len > 0 && memchr(data, '\n', len) == NULL ?
	    jv_parse_sized(data, (int)len) : jv_invalid();

	if (jv_get_kind(v) != JV_KIND_OBJECT) {
		jv_free(v);
		v = art_ndjson_error("bad_message", "a message that is not one "
		    "JSON object on one line", data, len);
		art_warn("a message that is not one JSON object on one line");
		*parsed = jv_copy(v);
		return art_ndjson_write(stdout, v, NULL);
	}
	*parsed = v;
	if (fwrite(data, 1, len, stdout) != len || putchar('\n') == EOF ||
	    fflush(stdout) == EOF)
		return -1;
	return 0;
}

static int
cmd_sub(struct art_bus *b, const struct opts *o, char **argv)
{
	struct sub s = { NULL, 0, 0, 0, -1, false, "", 0 };
	struct art_bus_sub *sub;
	struct art_bus_msg *m;
	struct art_err err;
	int ack_wait = o->ack_wait > 0 ? o->ack_wait : 30, r, outage = 0;
	int status = 0;
	const char *data, *type;
	size_t len, i;
	jv v;

	if (o->acks != NULL && (s.acks_fd = open(o->acks, O_RDONLY |
	    O_NONBLOCK)) == -1)
		art_die(ART_EXIT_FAIL, "--acks '%s': %s", o->acks,
		    strerror(errno));
	if (art_bus_subscribe(b, argv[0], o->queue, ack_wait, o->max_deliver,
	    &sub, &err) == -1)
		art_die(ART_EXIT_FAIL, "sub %s: %s", argv[0], err.msg);
	while (!stop) {
		if (s.acks_fd != -1 && read_acks(&s) == -1)
			break;	/* its engine or worker is gone */
		for (i = 0; i < s.n; i++)
			if (now_ms() - s.w[i].touched > ack_wait * 1000 / 3) {
				art_bus_msg_progress(s.w[i].m);
				s.w[i].touched = now_ms();
			}
		if (o->max_inflight > 0 && s.n >= (size_t)o->max_inflight) {
			poll(NULL, 0, 20);
			continue;
		}
		r = art_bus_next(sub, o->batch > 0 ? o->batch : o->max_inflight >
		    0 ? o->max_inflight : 64, s.acks_fd != -1 ? 100 : 500, &m,
		    &err);
		if (r == -1) {
			if (!outage++)
				art_warn("sub %s: %s: retrying", argv[0],
				    err.msg);
			poll(NULL, 0, 250);
			continue;
		}
		if (r == 0)
			continue;
		if (outage)
			art_warn("sub %s: messages again", argv[0]);
		outage = 0;
		data = art_bus_msg_data(m, &len);
		if (write_msg(data, len, &v) == -1) {
			jv_free(v);
			art_bus_msg_free(m);
			if (errno != EPIPE)
				status = ART_EXIT_FAIL, art_warn("write: %s",
				    strerror(errno));
			break;
		}
		type = art_ndjson_type(&v);
		if (art_grow(&s.w, &s.cap, s.n + 1, sizeof(*s.w)) == -1)
			art_die(ART_EXIT_FAIL, "out of memory");
		s.w[s.n] = (struct waiting){ m, ++s.written, "", now_ms() };
		if (s.acks_fd == -1 || !art_busline_ack_key(&v, s.w[s.n].key))
			s.w[s.n].key[0] = '\0';
		s.n++;
		if (s.acks_fd == -1 || strcmp(art_ndjson_type(&v), "error") ==
		    0)
			ack_at(&s, s.n - 1);
		if (o->until != NULL && strcmp(type, o->until) == 0) {
			jv_free(v);
			break;
		}
		jv_free(v);
	}
	for (i = 0; i < s.n; i++)
		art_bus_msg_free(s.w[i].m);
	free(s.w);
	art_bus_sub_free(sub);
	if (s.acks_fd != -1)
		close(s.acks_fd);
	return status;
}

int
main(int argc, char **argv)
{
	const struct cmd *c;
	struct opts o = { .max_line = 64 << 20 };
	struct sigaction sa;
	struct art_bus *b;
	const char *cmd;
	int status;

	art_diag_init(argv[0]);
	parse(argc, argv, "+", &o);
	if (optind >= argc)
		usage("no command given");
	cmd = argv[optind];
	/* Options may follow the command and its arguments too. */
	argc -= optind;
	argv += optind;
	optind = 0;
	parse(argc, argv, "", &o);
	if ((c = find_cmd(cmd)) == NULL)
		usage("unknown command (init, pub, sub, assign, owner)");
	/* A usage error is said before a server is waited for. */
	if (argc - optind != c->args)
		usage(c->wrong);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	b = connect_bus(&o);
	argc -= optind;
	argv += optind;
	if (strcmp(cmd, "init") == 0)
		status = cmd_init(b, &o);
	else if (strcmp(cmd, "pub") == 0)
		status = cmd_pub(b, &o, argv);
	else if (strcmp(cmd, "sub") == 0)
		status = cmd_sub(b, &o, argv);
	else if (strcmp(cmd, "assign") == 0)
		status = cmd_assign(b, &o, argv);
	else
		status = cmd_owner(b, &o, argv);
	art_bus_close(b);
	art_bus_shutdown();
	return status;
}
