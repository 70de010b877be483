#!/usr/bin/env python3
"""A fake model server on loopback for running real agent hosts offline.

It answers the three model APIs the hosts speak with one short text reply ("Done: the
hook ran."), streamed the way each host expects:

- Anthropic Messages (Claude Code): POST /v1/messages, server-sent events.
- OpenAI Responses (Codex): POST /v1/responses (or /responses), server-sent events.
- Gemini (Gemini CLI): POST /v1beta/models/<model>:streamGenerateContent (SSE) and
  :generateContent / :countTokens (JSON).

Every request is appended to the file named by --log as "METHOD PATH marker=yes|no", the
marker saying whether the request body contains the --marker text (so a test can see that
the model was given what a hook injected). Prints "listening <port>" on stdout once it
accepts connections; stops when stdin closes.
"""

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY = "Done: the hook ran."


def sse(handler, events):
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    for name, data in events:
        chunk = ""
        if name:
            chunk += f"event: {name}\n"
        chunk += f"data: {json.dumps(data)}\n\n"
        handler.wfile.write(chunk.encode())
        handler.wfile.flush()
    handler.close_connection = True


def anthropic(handler, body):
    model = body.get("model", "claude")
    if not body.get("stream"):
        return handler.json({
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": REPLY}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
        })
    usage = {"input_tokens": 10, "output_tokens": 0}
    sse(handler, [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": REPLY}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def openai_responses(handler, body):
    model = body.get("model", "gpt")
    item = {"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": REPLY, "annotations": []}]}
    response = {"id": "resp_fake", "object": "response", "created_at": 0, "model": model,
                "status": "completed", "output": [item],
                "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                          "total_tokens": 15}}
    created = dict(response, status="in_progress", output=[])
    sse(handler, [
        ("response.created", {"type": "response.created", "response": created}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                        "item": dict(item, status="in_progress", content=[])}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "item_id": "msg_fake",
                                        "output_index": 0, "content_index": 0, "delta": REPLY}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response}),
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
        if self.server.log_path:
            marker = self.server.marker
            seen = "yes" if marker and marker.encode() in raw else "no"
            with open(self.server.log_path, "a") as log:
                log.write(f"{self.command} {self.path} marker={seen}\n")

    def do_GET(self):
        self.record()
        # Model listings: one model, whichever API asks.
        self.json({"data": [{"id": "fake", "object": "model"}], "models": [{"name": "models/gemini-fake"}]})

    def do_HEAD(self):
        self.record()
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self.record(raw)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            return self.json({"input_tokens": 10})
        if path.endswith("/messages"):
            return anthropic(self, body)
        if path.endswith("/responses"):
            return openai_responses(self, body)
        if "/models/" in path:
            return gemini(self, self.path, body)
        self.json({"error": {"message": f"fake model server: no API at {path}"}}, status=404)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", default="")
    parser.add_argument("--marker", default="")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.log_path = args.log
    server.marker = args.marker
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        sys.stdin.read()
    except KeyboardInterrupt:
        pass
    server.shutdown()


if __name__ == "__main__":
    main()
