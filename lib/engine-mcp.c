/* engine-mcp.c - an agent's MCP servers: their tools asked for, recorded
 *
 * An agent file may name MCP servers ("mcp_servers") instead of copying
 * their tools' schemas.  Before a session's session.start decision goes
 * out, the engine asks the ring for each server's tools: it records
 * tools.requested (the servers, the decision, a deadline) and emits one
 * tools.list line per server, which agentrt-tool answers with a
 * tools.listed line.  Each answer is recorded (tools.listed, the list
 * as the model will see it) before anything acts on it; once every
 * server has answered, the decision goes out with the agent file's
 * tools and theirs, so the session's config, and every request built
 * on it, holds them.  Replay reads the recorded lists; no server runs.
 * A server that fails, or sends nothing by the deadline, fails the run
 * naming it.  A tools.listed that comes later (the server's list
 * changed) is recorded and replaces that server's tools in the config
 * as an agent.updated.
 *
 * The summary's "mcp" keeps, per server, what the log says
 * (views.c): {decision, deadline} once asked, then tools or error.
 */
#include "engine-int.h"

#include <stdio.h>
#include <string.h>

#include "session.h"
#include "store.h"

/* How long the servers of one session.start have to list their tools. */
#define TOOLS_LIST_MS	60000

/* The agent's own tools' names, and each server's, as keys; for clashes. */
static int
clash(const jv *names, const char *name, const char *server, char *why,
    size_t n)
{
	jv by = jv_object_get(jv_copy(*names), jv_string(name));
	int r = 0;

	if (jv_get_kind(by) == JV_KIND_STRING) {
		if (*jv_string_value(by) == '\0')
			snprintf(why, n, "tool '%s' of mcp server '%s' clashes "
			    "with the agent's own tool '%s'", name, server,
			    name);
		else
			snprintf(why, n, "tool '%s' of mcp server '%s' clashes "
			    "with tool '%s' of mcp server '%s'", name, server,
			    name, jv_string_value(by));
		r = -1;
	}
	jv_free(by);
	return r;
}

/*
 * config (consumed) with the tools of server replaced by tools
 * (borrowed): those it declared before are dropped, the new ones
 * appended.  jv_invalid() with why filled when a name clashes.
 */
static jv
layer(jv config, const char *server, const jv *tools, char *why, size_t n)
{
	jv own = art_json_field(&config, "tools"), kept = jv_array();
	jv names = jv_object();
	const char *name, *by;

	if (jv_get_kind(own) == JV_KIND_ARRAY)
		jv_array_foreach(own, i, t) {
			name = jv_get_kind(t) == JV_KIND_STRING ?
			    jv_string_value(t) : art_json_str(&t, "name");
			by = art_json_str(&t, "mcp_server");
			if (by != NULL && strcmp(by, server) == 0) {
				jv_free(t);
				continue;
			}
			if (name != NULL)
				names = jv_object_set(names, jv_string(name),
				    jv_string(by != NULL ? by : ""));
			kept = jv_array_append(kept, t);
			(void)i;
		}
	jv_free(own);
	jv_array_foreach(*tools, i, t) {
		name = art_json_str(&t, "name");
		if (jv_is_valid(kept) && name != NULL &&
		    clash(&names, name, server, why, n) == -1) {
			jv_free(kept);
			kept = jv_invalid();
		}
		if (jv_is_valid(kept) && name != NULL) {
			names = jv_object_set(names, jv_string(name),
			    jv_string(server));
			/* Stamped, whoever made the line: the next list of
			 * this server replaces it, and its calls go there. */
			kept = jv_array_append(kept, jv_get_kind(t) ==
			    JV_KIND_OBJECT ? set(jv_copy(t), "mcp_server",
			    jv_string(server)) : jv_copy(t));
		}
		jv_free(t);
		(void)i;
	}
	jv_free(names);
	if (!jv_is_valid(kept)) {
		jv_free(config);
		return kept;
	}
	return set(config, "tools", kept);
}

/* The tools.list line for server name (spec borrowed). */
static jv
list_line(struct cx *c, const char *name, const jv *spec, const char *id)
{
	jv line = set(set(obj("tools.list"), "session_id",
	    jv_string(c->sid)), "id", jv_string(id));

	line = set(line, "server", jv_string(name));
	line = set(line, "command", art_json_field(spec, "command"));
	line = set_some(line, "tools", art_json_field(spec, "tools"));
	return set_some(line, "env", art_json_field(spec, "env"));
}

/*
 * Whether the decision d (borrowed: the queue entry, its id and its
 * agent_file) may go out: 1, with *file (the agent file, consumed and
 * replaced) holding the servers' tools; 0 while it waits for them (the
 * lists asked for, or on their way: a wake at the deadline); -1 on a
 * store failure.  A server that failed or timed out fails the run.
 */
int
eng_mcp_ready(struct cx *c, const jv *s, const jv *d, jv *file)
{
	jv servers = art_json_field(file, "mcp_servers"), mcp, ask, e;
	const char *did = art_json_str(d, "id"), *ed, *err;
	char why[512], id[ART_ID_BUFSZ];
	int64_t dl, deadline = -1;
	int r = 1, n = 0;

	if (jv_get_kind(servers) != JV_KIND_OBJECT || did == NULL) {
		jv_free(servers);
		return 1;
	}
	mcp = art_json_field(s, "mcp");
	ask = jv_array();
	why[0] = '\0';
	jv_object_foreach(servers, k, spec) {
		e = art_json_field(&mcp, jv_string_value(k));
		ed = art_json_str(&e, "decision");
		err = art_json_str(&e, "error");
		if (ed == NULL || strcmp(ed, did) != 0)
			ask = jv_array_append(ask, jv_copy(k));
		else if (err != NULL) {
			if (why[0] == '\0')
				snprintf(why, sizeof(why), "mcp server '%s': "
				    "%s", jv_string_value(k), err);
		} else if (jv_object_has(jv_copy(e), jv_string("tools"))) {
			jv tools = art_json_field(&e, "tools");

			if (why[0] == '\0' && jv_is_valid(*file)) {
				*file = layer(*file, jv_string_value(k), &tools,
				    why, sizeof(why));
				if (!jv_is_valid(*file))
					*file = jv_null();
			}
			jv_free(tools);
		} else if ((dl = eng_ms_of(&e, "deadline")) >= 0 &&
		    dl <= c->now) {
			if (why[0] == '\0')
				snprintf(why, sizeof(why), "mcp server '%s': no "
				    "tools list within %d ms",
				    jv_string_value(k), TOOLS_LIST_MS);
		} else {
			r = 0;
			eng_wake_at(c, dl);
		}
		jv_free(e);
		jv_free(k);
		jv_free(spec);
	}
	jv_free(mcp);
	if (why[0] != '\0') {
		jv_free(ask);
		jv_free(servers);
		return eng_fail_run(c, why) == -1 ? -1 : 0;
	}
	if (jv_array_length(jv_copy(ask)) > 0) {
		deadline = c->now + TOOLS_LIST_MS;
		r = eng_rec(c, set(set(set(obj("tools.requested"), "servers",
		    jv_copy(ask)), "decision", jv_string(did)), "deadline",
		    eng_iso(deadline)));
		jv_array_foreach(ask, i, k) {
			jv spec = art_json_field(&servers, jv_string_value(k));

			if (r != -1 && (r = eng_mint(c, id)) == 0) {
				eng_emit(c, list_line(c, jv_string_value(k),
				    &spec, id));
				n++;
			}
			jv_free(spec);
			jv_free(k);
			(void)i;
		}
		eng_wake_at(c, deadline);
		if (r != -1)
			r = 0;
	}
	jv_free(ask);
	jv_free(servers);
	(void)n;
	return r;
}

/*
 * A tools.listed line: {session_id, id?, server, tools} or {…, error};
 * or a tools.list of ours that came round with no stage answering it,
 * which is that server's error.
 * Recorded as it is (tools must be an array of objects with a name);
 * when the session already runs on a config that names the server, its
 * tools there are replaced (agent.updated), unless a name clashes,
 * which is recorded as an error naming both.
 */
int
eng_mcp_listed(struct cx *c, const jv *line)
{
	const char *server = art_json_str(line, "server");
	const char *error = art_json_str(line, "error");
	jv tools = art_json_field(line, "tools"), p, cfg, servers, spec;
	char h[ART_ID_MAX + 1], why[512];
	int bad = 0, r;

	/* Our own tools.list, come round unanswered. */
	if (strcmp(art_json_str(line, "type"), "tools.list") == 0)
		error = "no stage answered tools.list (is agentrt-tool in "
		    "the ring?)";
	if (server == NULL)
		bad = 1;
	else if (error == NULL && jv_get_kind(tools) != JV_KIND_ARRAY)
		bad = 1;
	else if (error == NULL)
		jv_array_foreach(tools, i, t) {
			if (jv_get_kind(t) != JV_KIND_OBJECT ||
			    art_json_str(&t, "name") == NULL)
				bad = 1;
			jv_free(t);
			(void)i;
		}
	if (bad) {
		jv_free(tools);
		return eng_rec_error(c, "bad_line", "tools.listed: expected "
		    "a \"server\" and \"tools\" (objects with a \"name\") or "
		    "an \"error\"", line);
	}
	p = set(obj("tools.listed"), "server", jv_string(server));
	p = set_some(p, "id", art_json_field(line, "id"));
	p = error != NULL ? set(p, "error", jv_string(error)) :
	    set(p, "tools", jv_copy(tools));
	if (eng_rec(c, p) == -1 || eng_head(c, h, sizeof(h)) == -1) {
		jv_free(tools);
		return -1;
	}
	if (error != NULL) {
		jv_free(tools);
		return 0;
	}
	/* A session already started: its config's tools follow the server. */
	cfg = eng_config_at(c, h);
	if (!jv_is_valid(cfg)) {
		jv_free(tools);
		return -1;
	}
	servers = art_json_field(&cfg, "mcp_servers");
	spec = art_json_field(&servers, server);
	jv_free(servers);
	if (jv_get_kind(spec) != JV_KIND_OBJECT) {
		jv_free(spec);
		jv_free(tools);
		jv_free(cfg);
		return 0;
	}
	jv_free(spec);
	p = layer(jv_copy(cfg), server, &tools, why, sizeof(why));
	jv_free(tools);
	if (!jv_is_valid(p)) {
		jv_free(cfg);
		return eng_rec_error(c, "tool_clash", why, NULL);
	}
	r = 0;
	if (!art_json_equal(&p, &cfg))
		r = eng_rec(c, set(set(obj("agent.updated"), "config", p),
		    "anchor", eng_head_jv(h)));
	else
		jv_free(p);
	jv_free(cfg);
	return r;
}
