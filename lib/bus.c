/* bus.c - a ring's lines on NATS JetStream (libnats) */
#include <config.h>

#include "bus.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nats/nats.h>

#include "json.h"

/* Slots in the owners' cache: a session maps to one, by its hash. */
#define OWNER_SLOTS	4096
#define OWNER_MAX	128

struct owner_slot {
	char	sid[OWNER_MAX];
	char	owner[OWNER_MAX];
	bool	used;
};

struct art_bus {
	natsConnection		*nc;
	jsCtx			*js;
	kvStore			*kv;
	natsSubscription	*watch;		/* $KV.agentrt-owners.> */
	pthread_mutex_t		 mu;
	struct owner_slot	*slots;
};

struct art_bus_sub {
	natsSubscription	*sub;
	natsMsgList		 list;
	int			 at;
};

struct art_bus_msg {
	natsMsg		*m;
};

const char *
art_bus_nats_version(void)
{
	return nats_GetVersion();
}

void
art_bus_redact(const char *url, char *out, size_t len)
{
	const char *at = strchr(url, '@'), *scheme = strstr(url, "://");
	const char *colon;

	if (at == NULL || len == 0) {
		snprintf(out, len, "%s", url);
		return;
	}
	scheme = scheme != NULL && scheme < at ? scheme + 3 : url;
	colon = memchr(scheme, ':', (size_t)(at - scheme));
	if (colon == NULL)	/* a token alone: hide it all */
		snprintf(out, len, "%.*s***%s", (int)(scheme - url), url, at);
	else
		snprintf(out, len, "%.*s***%s", (int)(colon + 1 - url), url,
		    at);
}

static void
nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* err from status s (and libnats' last error text), redacted. */
static int
nats_fail(struct art_err *err, const char *code, const char *what,
    natsStatus s)
{
	const char *last = nats_GetLastError(NULL);

	return art_err_set(err, code, "%s: %s", what, last != NULL &&
	    *last != '\0' && strstr(last, "@") == NULL ? last :
	    natsStatus_GetText(s));
}

static uint64_t
slot_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* Keeps the cache in step with every put and delete in the bucket. */
static void
on_owner(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *ctx)
{
	struct art_bus *b = ctx;
	const char *subj = natsMsg_GetSubject(m), *op = NULL;
	const char *prefix = "$KV." ART_BUS_BUCKET ".";
	struct owner_slot *sl;
	size_t n = strlen(prefix);
	int len;

	(void)nc, (void)sub;
	if (strncmp(subj, prefix, n) == 0 && strlen(subj + n) < OWNER_MAX) {
		sl = &b->slots[slot_hash(subj + n) % OWNER_SLOTS];
		natsMsgHeader_Get(m, "KV-Operation", &op);
		len = natsMsg_GetDataLength(m);
		pthread_mutex_lock(&b->mu);
		if (op != NULL || len <= 0 || len >= OWNER_MAX)
			sl->used = false;
		else {
			snprintf(sl->sid, sizeof(sl->sid), "%s", subj + n);
			snprintf(sl->owner, sizeof(sl->owner), "%.*s", len,
			    natsMsg_GetData(m));
			sl->used = true;
		}
		pthread_mutex_unlock(&b->mu);
	}
	natsMsg_Destroy(m);
}

static natsStatus
set_servers(natsOptions *o, const char *servers)
{
	char *copy = strdup(servers), *p, *save = NULL;
	const char *urls[64];
	int n = 0;
	natsStatus s;

	if (copy == NULL)
		return NATS_NO_MEMORY;
	for (p = strtok_r(copy, ",", &save); p != NULL && n < 64;
	    p = strtok_r(NULL, ",", &save))
		urls[n++] = p;
	s = n > 0 ? natsOptions_SetServers(o, urls, n) : NATS_INVALID_ARG;
	free(copy);
	return s;
}

int
art_bus_open(struct art_bus **out, const struct art_bus_opts *bo,
    struct art_err *err)
{
	struct art_bus *b;
	natsOptions *o = NULL;
	natsStatus s;
	int waited = 0, said = 0;
	bool tls = strstr(bo->servers, "tls://") != NULL ||
	    bo->tls_ca != NULL || bo->tls_cert != NULL;

	*out = NULL;
	if ((b = calloc(1, sizeof(*b))) == NULL ||
	    (b->slots = calloc(OWNER_SLOTS, sizeof(*b->slots))) == NULL) {
		free(b);
		return art_err_set(err, "nomem", "out of memory");
	}
	pthread_mutex_init(&b->mu, NULL);
	s = natsOptions_Create(&o);
	if (s == NATS_OK)
		s = set_servers(o, bo->servers);
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(o, -1);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(o, 250);
	if (s == NATS_OK)
		s = natsOptions_SetTimeout(o, 2000);
	if (s == NATS_OK && bo->creds != NULL)
		s = natsOptions_SetUserCredentialsFromFiles(o, bo->creds,
		    NULL);
	if (s == NATS_OK && bo->token != NULL)
		s = natsOptions_SetToken(o, bo->token);
	if (s == NATS_OK && tls)
		s = natsOptions_SetSecure(o, true);
	if (s == NATS_OK && bo->tls_ca != NULL)
		s = natsOptions_LoadCATrustedCertificates(o, bo->tls_ca);
	if (s == NATS_OK && bo->tls_cert != NULL)
		s = natsOptions_LoadCertificatesChain(o, bo->tls_cert,
		    bo->tls_key);
	if (s != NATS_OK) {
		natsOptions_Destroy(o);
		art_bus_close(b);
		return nats_fail(err, "connect", "connection options", s);
	}
	for (;;) {
		s = natsConnection_Connect(&b->nc, o);
		/* A refused login will not mend by waiting. */
		if (s == NATS_OK || s == NATS_NOT_PERMITTED ||
		    s == NATS_CONNECTION_AUTH_FAILED || s == NATS_SSL_ERROR ||
		    waited >= bo->connect_secs * 1000)
			break;
		if (!said && bo->waiting != NULL)
			bo->waiting(natsStatus_GetText(s), bo->ctx);
		said = 1;
		nap_ms(250);
		waited += 250;
	}
	natsOptions_Destroy(o);
	if (s != NATS_OK) {
		art_bus_close(b);
		return nats_fail(err, "connect", "connect to NATS", s);
	}
	if ((s = natsConnection_JetStream(&b->js, b->nc, NULL)) != NATS_OK) {
		art_bus_close(b);
		return nats_fail(err, "connect", "JetStream", s);
	}
	*out = b;
	return 0;
}

void
art_bus_close(struct art_bus *b)
{
	if (b == NULL)
		return;
	if (b->watch != NULL) {
		natsSubscription_Unsubscribe(b->watch);
		natsSubscription_Destroy(b->watch);
	}
	kvStore_Destroy(b->kv);
	jsCtx_Destroy(b->js);
	if (b->nc != NULL) {
		natsConnection_Flush(b->nc);
		natsConnection_Destroy(b->nc);
	}
	pthread_mutex_destroy(&b->mu);
	free(b->slots);
	free(b);
}

void
art_bus_shutdown(void)
{
	/*
	 * Wait (a second at most) for libnats' own threads to let go of what
	 * they hold: nats_Close() does not, and a message a dispatcher still
	 * held at exit is reported as leaked.
	 */
	nats_CloseAndWait(1000);
}

/* --- init ----------------------------------------------------------- */

struct stream_spec {
	const char	*name;
	const char	*subjects[2];
	int		 nsubjects;
	bool		 workqueue;
};

static jv
stream_report(const struct stream_spec *sp, int replicas, bool created)
{
	jv subj = jv_array(), r;

	for (int i = 0; i < sp->nsubjects; i++)
		subj = jv_array_append(subj, jv_string(sp->subjects[i]));
	r = art_json_set(jv_object(), "stream", jv_string(sp->name));
	r = art_json_set(r, "subjects", subj);
	r = art_json_set(r, "replicas", jv_number(replicas));
	return art_json_set(r, "created", jv_bool(created));
}

static int
make_stream(struct art_bus *b, const struct stream_spec *sp, int replicas,
    int64_t max_age, jv *report, struct art_err *err)
{
	jsStreamConfig c;
	jsStreamInfo *si = NULL;
	jsErrCode je = 0;
	natsStatus s;
	bool created = false;

	jsStreamConfig_Init(&c);
	c.Name = sp->name;
	c.Subjects = (const char **)sp->subjects;
	c.SubjectsLen = sp->nsubjects;
	c.Retention = sp->workqueue ? js_WorkQueuePolicy : js_LimitsPolicy;
	c.Storage = js_FileStorage;
	c.Replicas = replicas;
	c.Duplicates = (int64_t)120 * 1000000000;
	c.MaxAge = sp->workqueue ? 0 : max_age * 1000000000;
	s = js_GetStreamInfo(&si, b->js, sp->name, NULL, &je);
	if (s == NATS_NOT_FOUND || je == JSStreamNotFoundErr) {
		je = 0;
		s = js_AddStream(&si, b->js, &c, NULL, &je);
		created = true;
	} else if (s == NATS_OK) {
		jsStreamInfo_Destroy(si);
		si = NULL;
		s = js_UpdateStream(&si, b->js, &c, NULL, &je);
	}
	jsStreamInfo_Destroy(si);
	if (s != NATS_OK)
		return nats_fail(err, "init", sp->name, s);
	*report = jv_array_append(*report, stream_report(sp, replicas,
	    created));
	return 0;
}

static int
open_kv(struct art_bus *b, struct art_err *err)
{
	natsStatus s;

	if (b->kv != NULL)
		return 0;
	/* Only a bucket that is not there is no_bucket; a timeout may mend. */
	if ((s = js_KeyValue(&b->kv, b->js, ART_BUS_BUCKET)) != NATS_OK)
		return nats_fail(err, s == NATS_NOT_FOUND ? "no_bucket" :
		    "bucket", "the bucket " ART_BUS_BUCKET " (run agentrt-bus "
		    "init)", s);
	s = natsConnection_Subscribe(&b->watch, b->nc, "$KV." ART_BUS_BUCKET
	    ".>", on_owner, b);
	if (s != NATS_OK)
		return nats_fail(err, "connect", "follow the bucket", s);
	return 0;
}

int
art_bus_init(struct art_bus *b, int replicas, int64_t events_max_age,
    jv *report, struct art_err *err)
{
	static const struct stream_spec specs[] = {
		{ "AGENTRT_WORK", { "agentrt.work", "agentrt.work.>" }, 2,
		    true },
		{ "AGENTRT_ENGINE", { "agentrt.engine.>", NULL }, 1, true },
		{ "AGENTRT_EVENTS", { "agentrt.events.>", NULL }, 1, false },
	};
	struct stream_spec kvs = { "KV_" ART_BUS_BUCKET, { "$KV."
	    ART_BUS_BUCKET ".>", NULL }, 1, false };
	kvConfig kc;
	kvStore *kv = NULL;
	natsStatus s;
	bool created = false;

	*report = jv_array();
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (make_stream(b, &specs[i], replicas, events_max_age, report,
		    err) == -1)
			return -1;
	s = js_KeyValue(&kv, b->js, ART_BUS_BUCKET);
	if (s != NATS_OK) {
		kvConfig_Init(&kc);
		kc.Bucket = ART_BUS_BUCKET;
		kc.History = 1;
		kc.Replicas = replicas;
		kc.StorageType = js_FileStorage;
		s = js_CreateKeyValue(&kv, b->js, &kc);
		created = true;
	}
	kvStore_Destroy(kv);
	if (s != NATS_OK)
		return nats_fail(err, "init", "the bucket " ART_BUS_BUCKET, s);
	kvs.name = ART_BUS_BUCKET;
	*report = jv_array_append(*report, art_json_set(stream_report(&kvs,
	    replicas, created), "bucket", jv_true()));
	return 0;
}

/* --- publish -------------------------------------------------------- */

/*
 * Whether a stream holds subject, or the server cannot say now (a publish
 * with no responders is either: a subject no stream takes, which waiting
 * does not mend, or a stream between leaders, which it does).
 */
static bool
stream_holds(struct art_bus *b, const char *subject)
{
	jsStreamNamesList *list = NULL;
	jsOptions o;
	natsStatus s;

	jsOptions_Init(&o);
	o.Stream.Info.SubjectsFilter = subject;
	s = js_StreamNames(&list, b->js, &o, NULL);
	jsStreamNamesList_Destroy(list);
	return s != NATS_NOT_FOUND;
}

int
art_bus_publish(struct art_bus *b, const char *subject, const char *msgid,
    const char *data, size_t len, volatile int *stop,
    void (*retrying)(const char *, int, void *), void *ctx,
    struct art_err *err)
{
	jsPubOptions po;
	jsPubAck *pa = NULL;
	jsErrCode je = 0;
	natsMsg *m = NULL;
	natsStatus s;
	int backoff = 50, failed_ms = 0, said = 0;

	jsPubOptions_Init(&po);
	po.MaxWait = 2000;
	for (;;) {
		s = natsMsg_Create(&m, subject, NULL, data, (int)len);
		if (s == NATS_OK && msgid != NULL)
			s = natsMsgHeader_Set(m, "Nats-Msg-Id", msgid);
		if (s == NATS_OK) {
			je = 0;
			s = js_PublishMsg(&pa, b->js, m, &po, &je);
		}
		natsMsg_Destroy(m);
		m = NULL;
		jsPubAck_Destroy(pa);
		pa = NULL;
		if (s == NATS_OK) {
			if (said && retrying != NULL)
				retrying(NULL, 0, ctx);
			return 0;
		}
		if (s == NATS_NO_MEMORY)
			return art_err_set(err, "nomem", "out of memory");
		/* The server's limit: no retry sends it. */
		if (s == NATS_MAX_PAYLOAD)
			return art_err_set(err, "too_large", "%zu bytes, more "
			    "than the server takes (max_payload %lld bytes: "
			    "raise it in the server's configuration)", len,
			    (long long)natsConnection_GetMaxPayload(b->nc));
		if (je == JSStreamNotFoundErr || (s == NATS_NO_RESPONDERS &&
		    !stream_holds(b, subject)))
			return art_err_set(err, "no_stream", "no stream holds "
			    "subject %s (run agentrt-bus init)", subject);
		if (*stop)
			return nats_fail(err, "stopped", "publish", s);
		if (!said && failed_ms >= 2000 && retrying != NULL) {
			retrying(natsStatus_GetText(s), 1, ctx);
			said = 1;
		}
		nap_ms(backoff);
		failed_ms += backoff + (s == NATS_TIMEOUT ? 2000 : 0);
		backoff = backoff * 2 > 1000 ? 1000 : backoff * 2;
	}
}

/* --- owners --------------------------------------------------------- */

int
art_bus_owner(struct art_bus *b, const char *sid, char *out, size_t len,
    struct art_err *err)
{
	struct owner_slot *sl;
	kvEntry *e = NULL;
	natsStatus s;
	int found = 0;

	if (open_kv(b, err) == -1)
		return -1;
	if (strlen(sid) >= OWNER_MAX)
		return 0;
	sl = &b->slots[slot_hash(sid) % OWNER_SLOTS];
	pthread_mutex_lock(&b->mu);
	if (sl->used && strcmp(sl->sid, sid) == 0) {
		snprintf(out, len, "%s", sl->owner);
		found = 1;
	}
	pthread_mutex_unlock(&b->mu);
	if (found)
		return 1;
	s = kvStore_Get(&e, b->kv, sid);
	if (s == NATS_NOT_FOUND)
		return 0;
	if (s != NATS_OK)
		return nats_fail(err, "bucket", "read the bucket", s);
	snprintf(out, len, "%s", kvEntry_ValueString(e));
	pthread_mutex_lock(&b->mu);
	snprintf(sl->sid, sizeof(sl->sid), "%s", sid);
	snprintf(sl->owner, sizeof(sl->owner), "%s", out);
	sl->used = true;
	pthread_mutex_unlock(&b->mu);
	kvEntry_Destroy(e);
	return 1;
}

int
art_bus_assign(struct art_bus *b, const char *sid, const char *owner,
    bool force, uint64_t *rev, struct art_err *err)
{
	char now[OWNER_MAX];
	natsStatus s;
	int r;

	*rev = 0;
	if (!force && (r = art_bus_owner(b, sid, now, sizeof(now), err)) != 0) {
		if (r == -1 || strcmp(now, owner) == 0)
			return r == -1 ? -1 : 0;
	} else if (open_kv(b, err) == -1)
		return -1;
	s = kvStore_PutString(rev, b->kv, sid, owner);
	if (s != NATS_OK)
		return nats_fail(err, "bucket", "write the bucket", s);
	return 0;
}

/* --- subscribe ------------------------------------------------------ */

int
art_bus_subscribe(struct art_bus *b, const char *subject, const char *queue,
    int ack_wait, int max_deliver, struct art_bus_sub **out,
    struct art_err *err)
{
	struct art_bus_sub *sub;
	jsSubOptions so;
	jsErrCode je = 0;
	natsStatus s;

	*out = NULL;
	if ((sub = calloc(1, sizeof(*sub))) == NULL)
		return art_err_set(err, "nomem", "out of memory");
	jsSubOptions_Init(&so);
	so.Config.AckPolicy = js_AckExplicit;
	so.Config.DeliverPolicy = js_DeliverAll;
	so.Config.AckWait = (int64_t)ack_wait * 1000000000;
	so.Config.MaxDeliver = max_deliver > 0 ? max_deliver : -1;
	so.Config.MaxAckPending = 10000;
	if (queue == NULL)
		so.Config.InactiveThreshold = (int64_t)60 * 1000000000;
	s = js_PullSubscribe(&sub->sub, b->js, subject, queue, NULL, &so,
	    &je);
	if (s != NATS_OK) {
		free(sub);
		if (je == JSStreamNotFoundErr || s == NATS_NOT_FOUND)
			return art_err_set(err, "no_stream", "no stream holds "
			    "subject %s (run agentrt-bus init)", subject);
		return nats_fail(err, "subscribe", subject, s);
	}
	*out = sub;
	return 0;
}

void
art_bus_sub_free(struct art_bus_sub *sub)
{
	if (sub == NULL)
		return;
	for (; sub->at < sub->list.Count; sub->at++)
		natsMsg_Destroy(sub->list.Msgs[sub->at]);
	free(sub->list.Msgs);
	natsSubscription_Destroy(sub->sub);
	free(sub);
}

int
art_bus_next(struct art_bus_sub *sub, int max, int timeout_ms,
    struct art_bus_msg **m, struct art_err *err)
{
	jsErrCode je = 0;
	natsStatus s;

	*m = NULL;
	if (sub->at >= sub->list.Count) {
		free(sub->list.Msgs);
		memset(&sub->list, 0, sizeof(sub->list));
		sub->at = 0;
		s = natsSubscription_Fetch(&sub->list, sub->sub, max > 0 ?
		    max : 1, timeout_ms, &je);
		if (s == NATS_TIMEOUT || (s == NATS_OK &&
		    sub->list.Count == 0))
			return 0;
		if (s != NATS_OK)
			return nats_fail(err, "fetch", "fetch", s);
	}
	if ((*m = calloc(1, sizeof(**m))) == NULL)
		return art_err_set(err, "nomem", "out of memory");
	(*m)->m = sub->list.Msgs[sub->at];
	sub->list.Msgs[sub->at++] = NULL;
	return 1;
}

const char *
art_bus_msg_data(const struct art_bus_msg *m, size_t *len)
{
	*len = (size_t)natsMsg_GetDataLength(m->m);
	return natsMsg_GetData(m->m);
}

int
art_bus_msg_ack(struct art_bus_msg *m, struct art_err *err)
{
	natsStatus s = NATS_OK;
	jsErrCode je;

	for (int i = 0; i < 5; i++) {
		je = 0;
		if ((s = natsMsg_AckSync(m->m, NULL, &je)) == NATS_OK)
			return 0;
		nap_ms(200);
	}
	return nats_fail(err, "ack", "ack", s);
}

void
art_bus_msg_progress(struct art_bus_msg *m)
{
	natsMsg_InProgress(m->m, NULL);
}

void
art_bus_msg_free(struct art_bus_msg *m)
{
	if (m == NULL)
		return;
	natsMsg_Destroy(m->m);
	free(m);
}
