#!/usr/bin/env python3
"""mockllm.py - a deterministic OpenAI-compatible model for the benchmarks.

usage: bench/mockllm.py [PORT [K]]
       bench/mockllm.py -h | --help

PORT (else $MOCKLLM_PORT, else 8089; 0 picks a free one, printed on
stderr) and K (else $MOCKLLM_K, else 10).  $MOCKLLM_HOST (127.0.0.1),
$MOCKLLM_LATENCY_MS (0) sleeps before each chat reply, $MOCKLLM_DUMP=FILE
appends each chat request body to FILE, one a line, $MOCKLLM_LOG=1 logs
each request on stderr.  Python standard library only.

The script is a K-step tool loop.  n is the number of "tool" messages
after the last "user" message of the request; while n < K the reply is
one call of the tool `add` with arguments {"a": n, "b": 1}, after that it
is the text "done after K steps".  Every reply carries usage.

  POST /v1/chat/completions   JSON, or SSE when "stream" is true (with a
                              usage chunk when stream_options.include_usage)
  GET  /v1/models             one model, mock-model
  GET  /mock/stats            {"chat_requests", "streamed", "tool_calls",
                               "finals", "errors", "k"}
  POST /mock/reset            zero the counters

Replies are the same bytes for the same request: ids come from n, the
timestamp is fixed.  Each connection gets its own thread, and HTTP/1.1
keep-alive, so clients that pool connections work.
"""
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STAMP = 1730000000


def setting(pos, name, default):
    try:
        return int(sys.argv[pos]) if len(sys.argv) > pos else int(os.environ.get(name, default))
    except ValueError:
        sys.stderr.write("mockllm: bad %s %r: expected a number\n%s" % (
            name[len("MOCKLLM_"):], sys.argv[pos] if len(sys.argv) > pos else os.environ.get(name),
            __doc__.split("\n\n")[1] + "\n"))
        sys.exit(2)


if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    sys.stdout.write(__doc__)
    sys.exit(0)
if len(sys.argv) > 3:
    sys.stderr.write("mockllm: too many arguments\n" + __doc__.split("\n\n")[1] + "\n")
    sys.exit(2)
PORT = setting(1, "MOCKLLM_PORT", 8089)
K = setting(2, "MOCKLLM_K", 10)
HOST = os.environ.get("MOCKLLM_HOST", "127.0.0.1")
DELAY = float(os.environ.get("MOCKLLM_LATENCY_MS") or 0) / 1000
DUMP = os.environ.get("MOCKLLM_DUMP") or None
VERBOSE = (os.environ.get("MOCKLLM_LOG") or "0") != "0"

lock = threading.Lock()
COUNTERS = ("chat_requests", "streamed", "tool_calls", "finals", "errors")
stats = dict.fromkeys(COUNTERS, 0)


def count(**incr):
    with lock:
        for key, by in incr.items():
            stats[key] += by


def steps_done(messages):
    """Tool messages after the last user message."""
    n = 0
    for m in messages:
        role = m.get("role") if isinstance(m, dict) else None
        if role == "user":
            n = 0
        elif role == "tool":
            n += 1
    return n


def content_chars(content):
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(len(part.get("text") or "") for part in content if isinstance(part, dict))
    return 0


def prompt_tokens(messages):
    return sum(3 + content_chars(m.get("content")) // 4 for m in messages if isinstance(m, dict))


def usage(prompt, completion):
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


# A large body is read from its bytes: parsing 200 KB of JSON in Python
# (3 ms at K = 1000) would be most of a step for every framework alike,
# and the benchmark would measure the mock.  Every client here writes
# compact JSON, so "role":"tool" and "role":"user" stand as they are,
# and inside a string they would be escaped (\"role\":...).
QUICK = 64 * 1024


def quick(raw):
    """(n, model, stream, with_usage, prompt tokens), or None."""
    if len(raw) < QUICK or not raw.startswith(b"{") or b'"messages":[' not in raw:
        return None
    u = raw.rfind(b'"role":"user"')
    m = re.search(rb'"model":"([^"\\]*)"', raw)
    if u < 0 or m is None:
        return None
    return (raw.count(b'"role":"tool"', u), m.group(1).decode(),
            b'"stream":true' in raw, b'"include_usage":true' in raw, len(raw) // 4)


def call_of(n):
    return {"id": "call_add_%d" % n, "type": "function",
            "function": {"name": "add", "arguments": json.dumps({"a": n, "b": 1})}}


def answer(n):
    """(message, finish_reason, completion tokens, id) for step n."""
    if n < K:
        return ({"role": "assistant", "content": None, "tool_calls": [call_of(n)]},
                "tool_calls", 10, "chatcmpl-step-%d" % n)
    text = "done after %d steps" % K
    return {"role": "assistant", "content": text}, "stop", 4, "chatcmpl-final-%d" % K


def completion(model, prompt, n):
    msg, finish, toks, cid = answer(n)
    return {"id": cid, "object": "chat.completion", "created": STAMP, "model": model,
            "system_fingerprint": "fp_mockllm",
            "choices": [{"index": 0, "message": msg, "finish_reason": finish, "logprobs": None}],
            "usage": usage(prompt, toks)}


def chunks(model, prompt, n, with_usage):
    msg, finish, toks, cid = answer(n)
    head = {"id": cid, "object": "chat.completion.chunk", "created": STAMP, "model": model,
            "system_fingerprint": "fp_mockllm"}

    def delta(d, fin=None):
        c = dict(head, choices=[{"index": 0, "delta": d, "finish_reason": fin, "logprobs": None}])
        if with_usage:
            c["usage"] = None
        return c

    if finish == "tool_calls":
        tc = msg["tool_calls"][0]
        args = tc["function"]["arguments"]
        cut = len(args) // 2
        yield delta({"role": "assistant", "content": None,
                     "tool_calls": [{"index": 0, "id": tc["id"], "type": "function",
                                     "function": {"name": "add", "arguments": ""}}]})
        for piece in (args[:cut], args[cut:]):
            yield delta({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
    else:
        yield delta({"role": "assistant", "content": ""})
        for i, word in enumerate(msg["content"].split(" ")):
            yield delta({"content": word if i == 0 else " " + word})
    yield delta({}, finish)
    if with_usage:
        yield dict(head, choices=[], usage=usage(prompt, toks))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mockllm"
    sys_version = ""
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        if VERBOSE:
            sys.stderr.write("mockllm: %s\n" % (fmt % args))

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        # Header and body in one write, so no segment waits on a delayed ACK.
        self.wfile.write(b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s"
                         % (code, self.responses.get(code, ("?",))[0].encode(), len(body), body))
        self.log_request(code, len(body))

    def fail(self, code, why):
        count(errors=1)
        self.reply(code, {"error": {"message": why, "type": "invalid_request_error",
                                    "param": None, "code": None}})

    def do_GET(self):
        path = self.path.partition("?")[0]
        if path in ("/v1/models", "/models"):
            self.reply(200, {"object": "list", "data": [
                {"id": "mock-model", "object": "model", "created": STAMP, "owned_by": "bench"}]})
        elif path == "/mock/stats":
            with lock:
                s = dict(stats)
            s["k"] = K
            self.reply(200, s)
        else:
            self.fail(404, "GET %s: no such route" % path)

    def do_POST(self):
        path = self.path.partition("?")[0]
        length = self.headers.get("Content-Length") or "0"
        if not length.isdigit() or self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            return self.fail(411, "a Content-Length is needed")
        raw = self.rfile.read(int(length))
        if path == "/mock/reset":
            with lock:
                for key in COUNTERS:
                    stats[key] = 0
            return self.reply(200, {"ok": True})
        if path not in ("/v1/chat/completions", "/chat/completions"):
            return self.fail(404, "POST %s: no such route" % path)
        q = quick(raw)
        if q is not None:
            n, model, stream, with_usage, prompt = q
        else:
            try:
                req = json.loads(raw)
                messages = req["messages"]
                if not isinstance(messages, list):
                    raise TypeError
            except (ValueError, KeyError, TypeError):
                return self.fail(400, "the body is not a chat request with a messages array")
            n = steps_done(messages)
            model = req.get("model") or "mock-model"
            stream = req.get("stream") is True
            opts = req.get("stream_options")
            with_usage = isinstance(opts, dict) and opts.get("include_usage") is True
            prompt = prompt_tokens(messages)
        if DUMP:
            with lock, open(DUMP, "ab") as f:
                f.write(raw.replace(b"\n", b" ") + b"\n")
        count(chat_requests=1, streamed=int(stream), tool_calls=int(n < K), finals=int(n >= K))
        if DELAY:
            time.sleep(DELAY)
        if not stream:
            return self.reply(200, completion(model, prompt, n))
        out = [b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
               b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"]
        events = [b"data: %s\n\n" % json.dumps(c).encode()
                  for c in chunks(model, prompt, n, with_usage)]
        events.append(b"data: [DONE]\n\n")
        for ev in events:
            out.append(b"%x\r\n%s\r\n" % (len(ev), ev))
        out.append(b"0\r\n\r\n")
        # One HTTP chunk per event; written one at a time as a server would.
        for piece in out:
            self.wfile.write(piece)
        self.log_request(200, sum(map(len, events)))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main():
    srv = Server((HOST, PORT), Handler)
    sys.stderr.write("mockllm: http://%s:%d/v1 K=%d\n" % (HOST, srv.server_address[1], K))
    sys.stderr.flush()
    try:
        srv.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        pass
    srv.server_close()


if __name__ == "__main__":
    main()
