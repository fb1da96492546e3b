#!/usr/bin/env node
// http_worker.js - an agentrt decision worker over HTTP that streams (Node 18+)
//
//   node http_worker.js --port 8080 [--secret-env VAR] [--max-calls N] [--flaky N]
//   agentrt-decide --url http://127.0.0.1:8080/ [--signing-secret-env VAR] | ...
//
// agentrt-decide POSTs each decision.request line to / and reads the answer.
// This worker runs a tool loop, as examples/workers/http_worker.py does,
// keeping {"model_calls": n} in the session's state and ending a turn after
// --max-calls model calls (default 8).  Where it has something to say as it
// goes, it answers with Server-Sent Events instead of one JSON body:
//
//   event: llm.token.delta      a StreamDelta, {"text": "..."}; the client
//   data: {"text":"17*23 "}     sees each one as a token event, live
//
//   event: decision.result      exactly one: the DecisionResponse
//   data: {"messages":[...],"actions":[...]}
//
// It streams the model's final answer, word by word, before recording it.
// A failure inside the worker is a frame too:
//
//   event: decision.error
//   data: {"message":"...","retryable":true}
//
// which the engine records and retries.  --flaky N fails the first N
// requests that way, to watch it do so.  --secret-env VAR checks the
// X-Agentrt-Signature header (sha256=<hex HMAC-SHA256 of the body>) against
// the secret in $VAR and answers 401 when it does not match.  Only the http
// and crypto built-ins are used.  "listening on PORT" goes to stderr once
// bound; --port 0 picks a free port.

'use strict';
const http = require('http');
const crypto = require('crypto');

function options(argv) {
  const o = { port: 8080, host: '127.0.0.1', secretEnv: null, maxCalls: 8, flaky: 0 };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--port': o.port = Number(v); i++; break;
      case '--host': o.host = v; i++; break;
      case '--secret-env': o.secretEnv = v; i++; break;
      case '--max-calls': o.maxCalls = Number(v); i++; break;
      case '--flaky': o.flaky = Number(v); i++; break;
      default:
        process.stderr.write(`http_worker.js: unknown option '${argv[i]}'\n`);
        process.exit(2);
    }
  }
  return o;
}

const modelCalls = (req) =>
  req.state && typeof req.state === 'object' ? req.state.model_calls || 0 : 0;

// Record messages and call the model on them, unless the cap is reached.
function askModel(req, messages, made, o) {
  if (made >= o.maxCalls)
    return { messages, actions: [{ type: 'done',
      data: `http_worker.js: stopped after ${made} model calls` }] };
  const agent = req.agent || {};
  const prompt = agent.system ? [{ role: 'system', content: agent.system }, ...messages]
                              : messages;
  return { messages, state: { model_calls: made + 1 },
    actions: [{ type: 'llm.call', messages: prompt, stream: !!agent.stream }] };
}

// decide(req) -> { answer, stream }: answer is a DecisionResponse or null
// (pass the request on); stream is the text to send as deltas first.
function decide(req, o) {
  const t = req.trigger || {};
  switch (t.type) {
    case 'session.start':
      return { answer: { agent: req.proposed.agent } };
    case 'client.messages':
      return { answer: askModel(req, t.messages, 0, o) };
    case 'llm.finished': {
      if (!t.ok || t.truncated)
        return { answer: { actions: [{ type: 'interrupt',
          reason: `llm call failed: ${t.error || 'truncated'}`,
          payload: { type: 'llm.failed', id: t.id, error: t.error, truncated: t.truncated } }] } };
      const messages = [...req.messages, t.message];
      const calls = t.message.tool_calls || [];
      if (calls.length === 0)
        return { answer: { messages, actions: [{ type: 'done', data: t.message.content }] },
                 stream: t.message.content || '' };
      return { answer: { messages, actions: calls.map((c) => ({ type: 'tool.call',
        id: c.id, name: c.function.name, arguments: c.function.arguments })) } };
    }
    case 'tool.finished': {
      const messages = [...req.messages, { role: 'tool', tool_call_id: t.id,
        name: t.name, content: (t.ok ? t.result : t.error) || '' }];
      if (req.pending_calls > 0)
        return { answer: { messages } };
      return { answer: askModel(req, messages, modelCalls(req), o) };
    }
    case 'interrupt.resumed':
      return { answer: askModel(req, req.messages, modelCalls(req), o) };
    case 'client.action':
      return { answer: {} };
    default:            // tool.execute, llm.execute: for the stages after us
      return { answer: null };
  }
}

function signed(body, header, secret) {
  if (secret === null) return true;
  const want = Buffer.from('sha256=' +
    crypto.createHmac('sha256', secret).update(body).digest('hex'));
  const got = Buffer.from(header || '');
  return got.length === want.length && crypto.timingSafeEqual(got, want);
}

const frame = (event, data) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

function sendJson(res, status, obj) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { 'Content-Type': 'application/json',
                          'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

// The text in word-sized deltas ("17*23 ", "= ", "391"), then the answer.
function sendStream(res, text, answer) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  for (const piece of text.match(/\S+\s*|\s+/g) || [])
    res.write(frame('llm.token.delta', { text: piece }));
  res.end(frame('decision.result', answer));
}

function sendError(res, message) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  res.end(frame('decision.error', { message, retryable: true }));
}

function main() {
  const o = options(process.argv.slice(2));
  let secret = null;
  if (o.secretEnv !== null) {
    secret = process.env[o.secretEnv];
    if (!secret) {
      process.stderr.write(`http_worker.js: --secret-env: $${o.secretEnv} is not set\n`);
      process.exit(2);
    }
  }
  let failuresLeft = o.flaky;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method !== 'POST')
        return sendJson(res, 405, { error: 'POST a decision.request' });
      if (!signed(body, req.headers['x-agentrt-signature'], secret))
        return sendJson(res, 401, { error: 'bad or missing X-Agentrt-Signature' });
      let request;
      try {
        request = JSON.parse(body);
      } catch (e) {
        return sendJson(res, 400, { error: `body is not JSON: ${e.message}` });
      }
      try {
        if (failuresLeft > 0) {
          failuresLeft--;
          throw new Error('flaky: failing on purpose (--flaky)');
        }
        const { answer, stream } = decide(request, o);
        if (stream && answer) sendStream(res, stream, answer);
        else sendJson(res, 200, answer);
      } catch (e) {
        process.stderr.write(`http_worker.js: ${e.message}\n`);
        sendError(res, `http_worker.js: ${e.message}`);
      }
    });
  });
  server.listen(o.port, o.host, () =>
    process.stderr.write(`listening on ${server.address().port}\n`));
}

main();
