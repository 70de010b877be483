#!/usr/bin/env python3
"""A fake model server on loopback for running real agent hosts offline: the one every
host test uses (crates/brain/tests/it/real_hosts.rs) and the research scripts of
docs/research/new-hosts/.

It answers the model APIs the hosts speak, streamed the way each host expects:

- Anthropic Messages (Claude Code): POST /v1/messages, server-sent events or JSON.
- OpenAI Responses (Codex): POST .../responses, server-sent events.
- OpenAI Chat Completions (Qwen Code, Copilot CLI, OpenCode, Cline): POST .../chat/completions,
  server-sent events (ended by [DONE]) or JSON.
- Gemini (Gemini CLI): POST /v1beta/models/<model>:streamGenerateContent (SSE) and
  :generateContent / :countTokens (JSON).
- GET .../models: one model, "fake".

The answer is the text REPLY ("Done: the hook ran."), or a tool call on the OpenAI APIs and
Anthropic Messages: when the latest user message holding `CALL name1|name2 {json-args}` lines
is answered, each line in turn becomes one call (one a request) to the first of its tools the
request offers; a line whose tools are not offered is skipped. On Anthropic Messages a
`QUOTE title` line in that message makes the final answer quote the memory of that title as
the request carries it (the line after `**title**` in what the host sent: the model using a
memory it was given, in words the user did not type).

--log FILE gets one line a request, "METHOD PATH marker=yes|no", the marker saying whether the
body holds the --marker text; --bodies FILE gets one JSON line a request {method, path,
headers, body} (the whole body, for tests that look inside). Prints "listening <port>" on
stdout once it accepts connections; stops when stdin closes (or never, with --forever).
"""

import argparse
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY = "Done: the hook ran."


CALL_RE = re.compile(r"CALL ([A-Za-z0-9_|.\-]+) (\{.*\})[^}\n]*$", re.M)


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict):
                out.append(str(part.get("text") or part.get("content") or ""))
            else:
                out.append(str(part))
        return "\n".join(out)
    return ""


def tool_names(body):
    names = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if fn.get("name"):
            names.append(fn["name"])
    return names


def normalize_args(args):
    """The CALL line's JSON, re-serialised; a prompt some host quoted (\\" for ") is unescaped."""
    for text in (args, args.replace('\\"', '"')):
        try:
            return json.dumps(json.loads(text))
        except ValueError:
            pass
    return args


def wanted_call(body, messages, last_is_user=None):
    """(name, args) when the conversation asks for a tool call now: the CALL lines of the
    latest user message holding any, issued one per request, in order; a CALL line whose
    tools are not offered is skipped."""
    offered = tool_names(body)
    anchor, calls = None, []
    for i, msg in enumerate(messages):
        if msg.get("role") == "user":
            found = CALL_RE.findall(text_of(msg.get("content")))
            if found:
                anchor, calls = i, found
    if anchor is None:
        return None
    done = sum(1 for m in messages[anchor + 1:]
               if m.get("role") == "tool" or m.get("type") == "function_call_output")
    for names, args in calls[done:]:
        for name in names.split("|"):
            if name in offered:
                return name, normalize_args(args)
        return None
    return None

def sse(handler, events, done=False):
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    for name, data in events:
        chunk = f"event: {name}\n" if name else ""
        chunk += f"data: {json.dumps(data)}\n\n"
        handler.wfile.write(chunk.encode())
        handler.wfile.flush()
    if done:
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
    handler.close_connection = True


def chat_completions(handler, body):
    model = body.get("model", "fake")
    messages = body.get("messages") or []
    last_is_user = bool(messages) and messages[-1].get("role") == "user"
    call = wanted_call(body, messages, last_is_user)
    created = int(time.time())
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": model}
    if call:
        name, args = call
        tc = {"index": 0, "id": f"call_{int(time.time()*1000)}", "type": "function",
              "function": {"name": name, "arguments": args}}
        if not body.get("stream"):
            return handler.json({"id": "chatcmpl-fake", "object": "chat.completion", "created": created, "model": model,
                                 "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                                     "role": "assistant", "content": None, "tool_calls": [
                                         {k: v for k, v in tc.items() if k != "index"}]}}], "usage": usage})
        return sse(handler, [
            (None, dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": [tc]}, "finish_reason": None}])),
            (None, dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])),
            (None, dict(base, choices=[], usage=usage)),
        ], done=True)
    if not body.get("stream"):
        return handler.json({"id": "chatcmpl-fake", "object": "chat.completion", "created": created, "model": model,
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": REPLY}}], "usage": usage})
    sse(handler, [
        (None, dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])),
        (None, dict(base, choices=[{"index": 0, "delta": {"content": REPLY}, "finish_reason": None}])),
        (None, dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}])),
        (None, dict(base, choices=[], usage=usage)),
    ], done=True)


def openai_responses(handler, body):
    model = body.get("model", "fake")
    items = body.get("input") or []
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    msgs = [i for i in items if isinstance(i, dict)]
    last = msgs[-1] if msgs else {}
    last_is_user = last.get("role") == "user" or (last.get("type") == "message" and last.get("role") == "user")
    call = wanted_call(body, msgs)
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    if call:
        name, args = call
        item = {"type": "function_call", "id": "fc_fake", "call_id": f"call_{int(time.time()*1000)}",
                "name": name, "arguments": args, "status": "completed"}
        delta_ev = ("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta",
                    "item_id": "fc_fake", "output_index": 0, "delta": args})
    else:
        item = {"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": REPLY, "annotations": []}]}
        delta_ev = ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": "msg_fake",
                    "output_index": 0, "content_index": 0, "delta": REPLY})
    response = {"id": "resp_fake", "object": "response", "created_at": int(time.time()), "model": model,
                "status": "completed", "output": [item], "usage": usage}
    created = dict(response, status="in_progress", output=[])
    added = dict(item, status="in_progress")
    if item["type"] == "message":
        added["content"] = []
    else:
        added["arguments"] = ""
    sse(handler, [
        ("response.created", {"type": "response.created", "response": created}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": added}),
        delta_ev,
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response}),
    ])


QUOTE_RE = re.compile(r"^QUOTE (.+?)\s*$", re.M)


def anthropic_call(body):
    """(name, args) of the tool call an Anthropic conversation asks for now (see the module
    docs); tool results come back as user messages of tool_result blocks."""
    offered = tool_names(body)
    messages = body.get("messages") or []
    anchor, calls = None, []
    for i, msg in enumerate(messages):
        if msg.get("role") != "user":
            continue
        found = CALL_RE.findall(text_of(msg.get("content")))
        if found:
            anchor, calls = i, found
    if anchor is None:
        return None
    done = sum(1 for m in messages[anchor + 1:] if isinstance(m.get("content"), list)
               for part in m["content"] if isinstance(part, dict) and part.get("type") == "tool_result")
    for names, args in calls[done:]:
        for name in names.split("|"):
            if name in offered:
                return name, json.loads(normalize_args(args))
    return None


def anthropic_reply(body):
    """REPLY, or with a QUOTE line in the conversation, the quoted memory's text."""
    everything = "\n".join(text_of(m.get("content")) for m in body.get("messages") or [])
    wanted = QUOTE_RE.findall(everything)
    if not wanted:
        return REPLY
    lines = everything.splitlines()
    for index, line in enumerate(lines):
        if f"**{wanted[-1]}**" in line and index + 1 < len(lines):
            return "As the project memory says: " + lines[index + 1].strip() + " " + REPLY
    return REPLY


def anthropic(handler, body):
    model = body.get("model", "claude")
    call = anthropic_call(body)
    if call:
        block = {"type": "tool_use", "id": f"toolu_fake{len(body.get('messages') or [])}", "name": call[0],
                 "input": call[1]}
        stop, text = "tool_use", None
    else:
        block, stop, text = None, "end_turn", anthropic_reply(body)
    if not body.get("stream"):
        content = [block] if block else [{"type": "text", "text": text}]
        return handler.json({
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop,
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
        })
    usage = {"input_tokens": 10, "output_tokens": 0}
    if block:
        parts = [
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": dict(block, input={})}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}),
        ]
    else:
        parts = [
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": text}}),
        ]
    sse(handler, [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}}),
        *parts,
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def from_schema(schema):
    """The smallest value a JSON schema (Gemini's upper-case types too) accepts."""
    kind = str(schema.get("type", "object")).lower()
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        return {key: from_schema(sub) for key, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return "fake"


def gemini(handler, path, body):
    config = body.get("generationConfig") or {}
    text = REPLY
    if config.get("responseMimeType") == "application/json":
        # Structured side calls (the model router, the next-speaker check) want JSON.
        text = json.dumps(from_schema(config.get("responseJsonSchema") or config.get("responseSchema") or {}))
    candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
    answer = {"candidates": [candidate],
              "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
              "modelVersion": "gemini-fake"}
    if ":countTokens" in path:
        return handler.json({"totalTokens": 10})
    if ":streamGenerateContent" in path:
        return sse(handler, [(None, answer)])
    return handler.json(answer)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def json(self, value, status=200):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def record(self, raw=b""):
        srv = self.server
        with srv.lock:
            if srv.log_path:
                seen = "yes" if srv.marker and srv.marker.encode() in raw else "no"
                with open(srv.log_path, "a") as log:
                    log.write(f"{self.command} {self.path} marker={seen}\n")
            if srv.bodies_path:
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with open(srv.bodies_path, "a") as out:
                    out.write(json.dumps({"method": self.command, "path": self.path,
                                          "headers": dict(self.headers), "body": body}) + "\n")

    def do_GET(self):
        self.record()
        # Model listings: one model, whichever API asks.
        self.json({"object": "list", "data": [{"id": "fake", "object": "model", "created": 0, "owned_by": "fake"}],
                   "models": [{"name": "models/gemini-fake"}]})

    def do_HEAD(self):
        self.record()
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            raw = self.rfile.read(length)
        elif self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
            raw = b""
        self.record(raw)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        if path.endswith("/chat/completions"):
            return chat_completions(self, body)
        if path.endswith("/responses"):
            return openai_responses(self, body)
        if path.endswith("/messages/count_tokens"):
            return self.json({"input_tokens": 10})
        if path.endswith("/messages"):
            return anthropic(self, body)
        if "/models/" in path:
            return gemini(self, self.path, body)
        self.json({"error": {"message": f"fake model server: no API at {path}"}}, status=404)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", default="")
    parser.add_argument("--bodies", default="")
    parser.add_argument("--marker", default="")
    parser.add_argument("--forever", action="store_true", help="keep serving after stdin closes")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.log_path, server.bodies_path, server.marker = args.log, args.bodies, args.marker
    server.lock = threading.Lock()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        if args.forever:
            threading.Event().wait()
        else:
            sys.stdin.read()
    except KeyboardInterrupt:
        pass
    server.shutdown()


if __name__ == "__main__":
    main()
