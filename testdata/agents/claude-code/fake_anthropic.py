#!/usr/bin/env python3
"""A scripted Anthropic Messages API on loopback, enough to drive the real Claude Code CLI
headless (`claude -p`) with no network.

    fake_anthropic.py --log REQUESTS.jsonl --scenario SCENARIO.json [--port 0]

Prints `LISTENING <port>` once bound to 127.0.0.1. Every request is appended to the log as one
JSON line {seq, method, path, body, reply}, so a test can see exactly what the model was shown.

The scenario file is read again for every request (a test rewrites it between turns):
    {"answer": ["first block", "second block"],  # text blocks of the final answer
     "read_path": "notes.md",                    # ask for one Read of this path first (or null)
     "error_status": 500,                        # answer every model call with this HTTP error
     "side_text": "ok"}                          # answer of tool-less side requests
A main-agent request (its `tools` include Read) whose last message carries a tool_result gets the
final answer, with what the tool returned appended to its last block (`[tool_result is_error=…: …]`)
so the test can assert what the model saw. Otherwise it gets a Read call when `read_path` is set,
else the final answer. The server holds no state of its own.
"""
import argparse
import json
import os
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPTS = None
LOCK = threading.Lock()
COUNTER = [0]


def scenario():
    s = {"answer": ["FINAL-ANSWER"], "read_path": None, "error_status": None, "side_text": "ok"}
    try:
        with open(OPTS.scenario) as f:
            s.update(json.load(f))
    except (OSError, ValueError, TypeError):
        pass
    if isinstance(s["answer"], str):
        s["answer"] = [s["answer"]]
    return s


def record(entry):
    with LOCK:
        COUNTER[0] += 1
        entry["seq"] = COUNTER[0]
        with open(OPTS.log, "a") as f:
            f.write(json.dumps(entry) + "\n")


def flatten(content):
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif isinstance(block, dict) and block.get("type") == "tool_result":
            parts.append(flatten(block.get("content")))
    return "\n".join(parts)


def reply_for(body, s):
    """(blocks, stop_reason) for one request."""
    names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    if "Read" not in names:
        return [{"type": "text", "text": s["side_text"]}], "end_turn"
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    blocks = last.get("content") if isinstance(last.get("content"), list) else []
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    answer = [{"type": "text", "text": t} for t in s["answer"]]
    if results:
        seen = flatten(results[-1].get("content"))[:300].replace("\n", " | ")
        note = " [tool_result is_error=%s: %s]" % (bool(results[-1].get("is_error")), seen)
        answer[-1] = {"type": "text", "text": answer[-1]["text"] + note}
        return answer, "end_turn"
    if s.get("read_path"):
        call = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": "Read",
                "input": {"file_path": s["read_path"]}}
        return [{"type": "text", "text": "Reading it."}, call], "tool_use"
    return answer, "end_turn"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_HEAD(self):
        record({"method": "HEAD", "path": self.path})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        record({"method": "GET", "path": self.path})
        self.send_json(200, {})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        entry = {"method": "POST", "path": path, "body": body}
        if path == "/v1/messages/count_tokens":
            record(entry)
            return self.send_json(200, {"input_tokens": max(1, len(raw) // 4)})
        if path != "/v1/messages":
            record(entry)
            return self.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                                    "message": "no such endpoint"}})
        s = scenario()
        if s.get("error_status"):
            entry["reply"] = {"error_status": s["error_status"]}
            record(entry)
            return self.send_json(int(s["error_status"]), {"type": "error", "error": {
                "type": "api_error", "message": "scripted failure"}})
        blocks, stop = reply_for(body, s)
        entry["reply"] = {"blocks": blocks, "stop_reason": stop}
        record(entry)
        message = {"id": "msg_" + uuid.uuid4().hex[:24], "type": "message", "role": "assistant",
                   "model": body.get("model", "fake"), "content": [], "stop_reason": None,
                   "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
        if not body.get("stream"):
            message.update(content=blocks, stop_reason=stop)
            return self.send_json(200, message)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def event(name, data):
            data["type"] = name
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())

        event("message_start", {"message": message})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                event("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}})
                event("content_block_delta", {"index": i, "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                start = dict(b, input={})
                event("content_block_start", {"index": i, "content_block": start})
                event("content_block_delta", {"index": i, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps(b["input"])}})
            event("content_block_stop", {"index": i})
        event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                "usage": {"output_tokens": 5}})
        event("message_stop", {})
        self.wfile.flush()


def main():
    global OPTS
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", required=True)
    ap.add_argument("--scenario", required=True)
    OPTS = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", OPTS.port), Handler)
    server.daemon_threads = True
    print("LISTENING %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
