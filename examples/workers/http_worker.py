#!/usr/bin/env python3
"""http_worker.py - an agentrt decision worker over HTTP, standard library only

    python3 http_worker.py --port 8080 [--secret-env VAR] [--max-calls N]
    agentrt-decide --url http://127.0.0.1:8080/ [--signing-secret-env VAR] | ...

agentrt-decide POSTs each decision.request line to / and this server answers
with a DecisionResponse as application/json, or with null when the request
is for a later stage (tool.execute, llm.execute).  The decisions are a tool
loop, made here rather than copied from the request's "proposed": the
worker keeps {"model_calls": n} in the session's state and ends a turn
after --max-calls model calls (default 8).

With --secret-env VAR, every request must carry
    X-Agentrt-Signature: sha256=<hex HMAC-SHA256 of the raw body>
keyed with the value of $VAR, or it is refused with 401.  agentrt-decide
takes that as a decision error that is not retried, and the turn fails.

"listening on PORT" goes to stderr once the socket is bound; --port 0
picks a free port.
"""

import argparse
import hashlib
import hmac
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def model_calls(req):
    state = req.get("state")
    return state.get("model_calls", 0) if isinstance(state, dict) else 0


def ask_model(req, messages, made, limit):
    """Record messages and call the model on them, unless the cap is hit."""
    if made >= limit:
        return {"messages": messages,
                "actions": [{"type": "done",
                             "data": f"http_worker: stopped after {made} model calls"}]}
    agent = req.get("agent") or {}
    prompt = list(messages)
    if agent.get("system"):
        prompt.insert(0, {"role": "system", "content": agent["system"]})
    return {"messages": messages,
            "state": {"model_calls": made + 1},
            "actions": [{"type": "llm.call", "messages": prompt,
                         "stream": bool(agent.get("stream", False))}]}


def on_session_start(req, limit):
    # The agent file's config, which the engine proposes, is the one to use.
    return {"agent": req["proposed"]["agent"]}


def on_client_messages(req, limit):
    # The client's view is the whole conversation: record it, then ask.
    return ask_model(req, req["trigger"]["messages"], 0, limit)


def on_llm_finished(req, limit):
    t = req["trigger"]
    if not t.get("ok") or t.get("truncated"):
        reason = t.get("error") or "truncated"
        return {"actions": [{"type": "interrupt",
                             "reason": f"llm call failed: {reason}",
                             "payload": {"type": "llm.failed", "id": t["id"],
                                         "error": t.get("error"),
                                         "truncated": t.get("truncated")}}]}
    reply = t["message"]
    messages = req["messages"] + [reply]
    calls = reply.get("tool_calls") or []
    if not calls:
        return {"messages": messages,
                "actions": [{"type": "done", "data": reply.get("content")}]}
    return {"messages": messages,
            "actions": [{"type": "tool.call", "id": c["id"],
                         "name": c["function"]["name"],
                         "arguments": c["function"]["arguments"]}
                        for c in calls]}


def on_tool_finished(req, limit):
    t = req["trigger"]
    answer = t.get("result") if t.get("ok") else t.get("error")
    messages = req["messages"] + [{"role": "tool", "tool_call_id": t["id"],
                                   "name": t["name"], "content": answer or ""}]
    if req.get("pending_calls", 0) > 0:
        return {"messages": messages}   # wait for the other calls
    return ask_model(req, messages, model_calls(req), limit)


def on_interrupt_resumed(req, limit):
    return ask_model(req, req["messages"], model_calls(req), limit)


HANDLERS = {
    "session.start": on_session_start,
    "client.messages": on_client_messages,
    "llm.finished": on_llm_finished,
    "tool.finished": on_tool_finished,
    "interrupt.resumed": on_interrupt_resumed,
    "client.action": lambda req, limit: {},
}


def decide(req, limit):
    """A DecisionResponse, or None to pass the request on."""
    handler = HANDLERS.get(req.get("trigger", {}).get("type"))
    return handler(req, limit) if handler else None


class Worker(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    secret = None       # bytes, or None: no signature needed
    limit = 8

    def reply(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def signed(self, body):
        if self.secret is None:
            return True
        want = "sha256=" + hmac.new(self.secret, body,
                                    hashlib.sha256).hexdigest()
        got = self.headers.get("X-Agentrt-Signature", "")
        return hmac.compare_digest(want.encode(), got.encode())

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not self.signed(body):
            self.reply(401, {"error": "bad or missing X-Agentrt-Signature"})
            return
        try:
            req = json.loads(body)
        except ValueError as e:
            self.reply(400, {"error": f"body is not JSON: {e}"})
            return
        try:
            self.reply(200, decide(req, self.limit))
        except Exception as e:      # a bug here: a retryable 500
            self.reply(500, {"error": f"http_worker: {type(e).__name__}: {e}"})

    def log_message(self, fmt, *args):
        sys.stderr.write("http_worker: %s\n" % (fmt % args))


def main():
    ap = argparse.ArgumentParser(description="agentrt HTTP decision worker")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--secret-env", metavar="VAR",
                    help="verify X-Agentrt-Signature with the secret in $VAR")
    ap.add_argument("--max-calls", type=int, default=8,
                    help="model calls per turn before the turn ends")
    o = ap.parse_args()
    if o.secret_env:
        secret = os.environ.get(o.secret_env)
        if not secret:
            ap.error(f"--secret-env: ${o.secret_env} is not set")
        Worker.secret = secret.encode()
    Worker.limit = o.max_calls
    server = ThreadingHTTPServer((o.host, o.port), Worker)
    print(f"listening on {server.server_address[1]}", file=sys.stderr,
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
