#!/usr/bin/env python3
"""A scripted OpenAI-compatible model server on loopback, for running real agent CLIs offline.

    python3 fake_openai.py [--port 0] [--log requests.jsonl] [--script script.json]

Binds 127.0.0.1 only and prints "LISTENING <port>" once bound (port 0 picks a free one).

Endpoints
    POST /v1/chat/completions   Chat Completions; SSE when body.stream is true (Qwen Code, Copilot CLI)
    POST /v1/responses          Responses API; SSE when body.stream is true (Codex CLI)
    POST /v1beta/models/<model>:streamGenerateContent?alt=sse
                                Gemini API, SSE (Gemini CLI)
    POST /v1beta/models/<model>:generateContent
                                Gemini API, one JSON answer (Gemini CLI's routing side call:
                                a JSON schema answer, {"complexity_reasoning", "complexity_score"})
    GET  /v1/models             one model per id the script names, plus "fake-model"
    anything else               logged; GET -> 200 {}, POST -> 404 with an OpenAI-style error

The script (JSON, re-read on every request so a test may change it between turns):
    {"rules": [                                  first rule whose "match" is a substring of the
        {"match": "notes",                       turn's prompt wins; a rule without "match" is
         "tool_call": {"name": "read_file",      the default
                       "arguments": {"absolute_path": "/x/notes.md"}},
         "tool_text": "Let me read that file.",  text sent with the tool call (optional)
         "final": ["Part one. ", "Part two."]},  the final answer, streamed as separate parts
        {"match": "boom", "fail": 500},           answer that HTTP status with an error body
        {"final": "PLAIN-ANSWER"}],
     "echo_tool": true,                          append " [tool: <first 200 chars of the result>]"
                                                 to the final answer after a tool call
     "side_text": "Side answer"}                 answer to requests that carry no tools
A request is answered statelessly from its own body:
    * no tools in the request                         -> side_text (titles, summaries, checks)
    * the last item is a tool result                  -> the rule's final answer
    * the rule has a tool_call naming an offered tool -> tool_text + that one tool call
    * otherwise                                       -> the rule's final answer
Every request is appended to the log as one JSON line: method, path, headers (credentials
redacted), the parsed body, the prompt it matched on, and exactly what was answered
({"label", "text", "tool_call"}), so a test can compare what reached a memory server with
what the model said.
"""
import argparse
import json
import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOG_LOCK = threading.Lock()
SEQ = [0]


def load_script():
    script = {"rules": [{"final": "FINAL-ANSWER"}], "echo_tool": True, "side_text": "Side answer"}
    if ARGS.script and os.path.exists(ARGS.script):
        try:
            with open(ARGS.script) as f:
                script.update(json.load(f))
        except Exception as e:  # keep serving with the defaults
            sys.stderr.write("script load error: %r\n" % (e,))
    return script


def log(entry):
    with LOG_LOCK:
        SEQ[0] += 1
        entry["seq"] = SEQ[0]
        entry["t"] = round(time.time(), 3)
        with open(ARGS.log, "a") as f:
            f.write(json.dumps(entry) + "\n")


def flatten(content):
    """Text of a message content: a string, or a list of parts with text."""
    if isinstance(content, str):
        return content
    out = []
    for part in content or []:
        if isinstance(part, dict):
            t = part.get("text")
            if isinstance(t, str):
                out.append(t)
        elif isinstance(part, str):
            out.append(part)
    return "\n".join(out)


def parts_of(final):
    return [final] if isinstance(final, str) else [str(p) for p in final]


def pick_rule(script, prompt):
    default = None
    for rule in script.get("rules") or []:
        m = rule.get("match")
        if m is None:
            default = default or rule
        elif m in (prompt or ""):
            return rule
    return default or {"final": "FINAL-ANSWER"}


def decide(script, prompt, tool_names, tool_result):
    """Returns {"label", "parts", "tool_call"}: what to answer."""
    if not tool_names:
        return {"label": "side", "parts": [script.get("side_text", "Side answer")], "tool_call": None}
    rule = pick_rule(script, prompt)
    parts = parts_of(rule.get("final", "FINAL-ANSWER"))
    if tool_result is not None:
        if script.get("echo_tool", True):
            seen = tool_result[:200].replace("\n", " | ")
            parts = parts + [" [tool: %s]" % seen]
        return {"label": "final-after-tool", "parts": parts, "tool_call": None}
    tc = rule.get("tool_call")
    if tc and tc.get("name") in tool_names:
        call = {"id": "call_" + uuid.uuid4().hex[:20], "name": tc["name"],
                "arguments": json.dumps(tc.get("arguments", {}))}
        text = rule.get("tool_text")
        return {"label": "tool_call-" + tc["name"], "parts": [text] if text else [], "tool_call": call}
    return {"label": "final", "parts": parts, "tool_call": None}


# --- Chat Completions --------------------------------------------------------------------

def chat_view(body):
    """(prompt, tool names, tool result or None) of a chat completions request.

    The prompt is the text of every user message since the last final answer (an assistant
    message without tool calls): the user's words plus whatever hooks injected. The tool
    result is the last tool message when nothing but user messages follow it."""
    msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    names = set()
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            fn = t.get("function") if isinstance(t.get("function"), dict) else t
            if fn.get("name"):
                names.add(fn["name"])
    start = 0
    for i, m in enumerate(msgs):
        if m.get("role") == "assistant" and not m.get("tool_calls"):
            start = i + 1
    users = [flatten(m.get("content")) for m in msgs[start:] if m.get("role") == "user"]
    prompt = "\n".join(users) if users else None
    result = None
    for m in reversed(msgs):
        if m.get("role") == "tool":
            result = flatten(m.get("content"))
            break
        if m.get("role") != "user":
            break
    return prompt, names, result


def chat_chunks(answer, model, include_usage):
    cid = "chatcmpl-" + uuid.uuid4().hex[:20]
    created = int(time.time())

    def chunk(delta, finish=None):
        return {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    for p in answer["parts"]:
        for j in range(0, max(len(p), 1), 40):
            out.append(chunk({"content": p[j:j + 40]}))
    tc = answer["tool_call"]
    if tc:
        args = tc["arguments"]
        half = len(args) // 2
        out.append(chunk({"tool_calls": [{"index": 0, "id": tc["id"], "type": "function",
                                          "function": {"name": tc["name"], "arguments": args[:half]}}]}))
        out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[half:]}}]}))
    out.append(chunk({}, "tool_calls" if tc else "stop"))
    usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    if include_usage:
        out.append({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [], "usage": usage})
    return out


def chat_message(answer, model):
    msg = {"role": "assistant", "content": "".join(answer["parts"]) or None}
    tc = answer["tool_call"]
    if tc:
        msg["tool_calls"] = [{"id": tc["id"], "type": "function",
                              "function": {"name": tc["name"], "arguments": tc["arguments"]}}]
    return {"id": "chatcmpl-" + uuid.uuid4().hex[:20], "object": "chat.completion",
            "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if tc else "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}


# --- Responses API -----------------------------------------------------------------------

TOOL_OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output", "local_shell_call_output",
                     "mcp_tool_call_output")


def responses_view(body):
    """(prompt, tool names, tool result or None) of a Responses API request, by the same
    rules as chat_view (Codex's environment and instructions blocks are not the prompt)."""
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    items = [i for i in items or [] if isinstance(i, dict)]
    names = set()
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            names.add(t.get("name") or t.get("type"))
    start = 0
    for i, it in enumerate(items):
        nxt = items[i + 1] if i + 1 < len(items) else {}
        if it.get("role") == "assistant" and nxt.get("type") not in ("function_call", "custom_tool_call",
                                                                       "local_shell_call"):
            start = i + 1
    users = []
    for it in items[start:]:
        if it.get("role") == "user" and it.get("type", "message") == "message":
            text = flatten(it.get("content"))
            if not text.lstrip().startswith(("<environment_context>", "<user_instructions>", "# AGENTS.md")):
                users.append(text)
    prompt = "\n".join(users) if users else None
    result = None
    for it in reversed(items):
        if it.get("type") in TOOL_OUTPUT_TYPES:
            out = it.get("output")
            result = out if isinstance(out, str) else json.dumps(out)
            break
        if it.get("role") not in ("user", "developer"):
            break
    return prompt, names, result


def responses_events(answer, model):
    rid = "resp_" + uuid.uuid4().hex[:20]
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model,
            "status": "in_progress", "output": []}
    events = [("response.created", {"type": "response.created", "response": base})]
    output = []
    idx = 0
    if answer["parts"]:
        mid = "msg_" + uuid.uuid4().hex[:20]
        events.append(("response.output_item.added", {
            "type": "response.output_item.added", "output_index": idx,
            "item": {"type": "message", "id": mid, "role": "assistant", "status": "in_progress",
                     "content": []}}))
        content = []
        for ci, p in enumerate(answer["parts"]):
            events.append(("response.content_part.added", {
                "type": "response.content_part.added", "item_id": mid, "output_index": idx,
                "content_index": ci, "part": {"type": "output_text", "text": "", "annotations": []}}))
            for j in range(0, max(len(p), 1), 40):
                events.append(("response.output_text.delta", {
                    "type": "response.output_text.delta", "item_id": mid, "output_index": idx,
                    "content_index": ci, "delta": p[j:j + 40]}))
            events.append(("response.output_text.done", {
                "type": "response.output_text.done", "item_id": mid, "output_index": idx,
                "content_index": ci, "text": p}))
            part = {"type": "output_text", "text": p, "annotations": []}
            events.append(("response.content_part.done", {
                "type": "response.content_part.done", "item_id": mid, "output_index": idx,
                "content_index": ci, "part": part}))
            content.append(part)
        item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                "content": content}
        events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                     "output_index": idx, "item": item}))
        output.append(item)
        idx += 1
    tc = answer["tool_call"]
    if tc:
        fid = "fc_" + uuid.uuid4().hex[:20]
        added = {"type": "function_call", "id": fid, "call_id": tc["id"], "name": tc["name"],
                 "arguments": "", "status": "in_progress"}
        events.append(("response.output_item.added", {"type": "response.output_item.added",
                                                      "output_index": idx, "item": added}))
        events.append(("response.function_call_arguments.delta", {
            "type": "response.function_call_arguments.delta", "item_id": fid, "output_index": idx,
            "delta": tc["arguments"]}))
        events.append(("response.function_call_arguments.done", {
            "type": "response.function_call_arguments.done", "item_id": fid, "output_index": idx,
            "arguments": tc["arguments"]}))
        item = dict(added, arguments=tc["arguments"], status="completed")
        events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                     "output_index": idx, "item": item}))
        output.append(item)
    done = dict(base, status="completed", output=output, usage={
        "input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120})
    events.append(("response.completed", {"type": "response.completed", "response": done}))
    return events, done


# --- Gemini API --------------------------------------------------------------------------

def gemini_view(body):
    """(prompt, tool names, tool result or None) of a Gemini generateContent request, by the
    same rules as chat_view: the prompt is the text of every user content since the last
    model content without a functionCall; the tool result is the last functionResponse when
    nothing but user contents follow it."""
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    names = set()
    for t in body.get("tools") or []:
        for fd in (t.get("functionDeclarations") or []) if isinstance(t, dict) else []:
            if isinstance(fd, dict) and fd.get("name"):
                names.add(fd["name"])

    def parts(c):
        return [p for p in c.get("parts") or [] if isinstance(p, dict)]

    start = 0
    for i, c in enumerate(contents):
        if c.get("role") == "model" and not any("functionCall" in p for p in parts(c)):
            start = i + 1
    users = []
    for c in contents[start:]:
        if c.get("role") == "user":
            text = "\n".join(p["text"] for p in parts(c) if isinstance(p.get("text"), str))
            if text:
                users.append(text)
    prompt = "\n".join(users) if users else None
    result = None
    for c in reversed(contents):
        responses = [p["functionResponse"] for p in parts(c) if isinstance(p.get("functionResponse"), dict)]
        if responses:
            out = responses[-1].get("response")
            if isinstance(out, dict) and "output" in out:
                out = out["output"]
            elif isinstance(out, dict) and "error" in out:
                out = out["error"]
            result = out if isinstance(out, str) else json.dumps(out)
            break
        if c.get("role") != "user":
            break
    return prompt, names, result


def gemini_chunks(answer, model):
    """The SSE chunks of a streamGenerateContent answer: the text in 40-char pieces, then the
    function call, the last chunk with finishReason STOP and usage."""
    pieces = []
    for p in answer["parts"]:
        for j in range(0, max(len(p), 1), 40):
            pieces.append({"text": p[j:j + 40]})
    tc = answer["tool_call"]
    if tc:
        pieces.append({"functionCall": {"name": tc["name"], "args": json.loads(tc["arguments"])}})
    out = []
    for i, part in enumerate(pieces or [{"text": ""}]):
        cand = {"content": {"role": "model", "parts": [part]}, "index": 0}
        chunk = {"candidates": [cand], "modelVersion": model, "responseId": "r" + uuid.uuid4().hex[:12]}
        if i == len(pieces or [None]) - 1:
            cand["finishReason"] = "STOP"
            chunk["usageMetadata"] = {"promptTokenCount": 100, "candidatesTokenCount": 20,
                                      "totalTokenCount": 120}
        out.append(chunk)
    return out


def gemini_side(body, script):
    """A generateContent answer without tools: the routing call's JSON, or side_text."""
    cfg = body.get("generationConfig") or {}
    if cfg.get("responseMimeType") == "application/json":
        text = json.dumps({"complexity_reasoning": "a scripted turn", "complexity_score": 10})
    else:
        text = script.get("side_text", "Side answer")
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}


# --- HTTP --------------------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-openai/1.0"

    def log_message(self, fmt, *a):
        pass

    def _headers_for_log(self):
        secret = ("authorization", "api-key", "x-api-key")
        return {k: ("<redacted>" if k.lower() in secret else v) for k, v in self.headers.items()}

    def _send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _sse(self, data, event=None):
        head = ("event: %s\n" % event) if event else ""
        self.wfile.write((head + "data: %s\n\n" % data).encode())
        self.wfile.flush()

    def do_GET(self):
        log({"method": "GET", "path": self.path, "headers": self._headers_for_log()})
        if self.path.split("?")[0].endswith("/models"):
            return self._send_json(200, {"object": "list", "data": [
                {"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}]})
        self._send_json(200, {})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw) if raw else None
        except Exception:
            body = None
        path = self.path.split("?")[0]
        entry = {"method": "POST", "path": self.path, "headers": self._headers_for_log(), "body": body}
        script = load_script()
        if script.get("delay_s"):
            time.sleep(float(script["delay_s"]))
        if isinstance(body, dict) and path.endswith((":streamGenerateContent", ":generateContent")):
            return self._gemini_post(path, body, entry, script)
        if not isinstance(body, dict) or not path.endswith(("/chat/completions", "/responses")):
            entry["answer"] = "404"
            log(entry)
            return self._send_json(404, {"error": {"message": "fake server: no route " + path,
                                                   "type": "invalid_request_error"}})
        responses = path.endswith("/responses")
        prompt, names, result = (responses_view if responses else chat_view)(body)
        rule = pick_rule(script, prompt) if names else {}
        if rule.get("fail"):
            entry["prompt"] = prompt
            entry["answer"] = {"label": "fail-%s" % rule["fail"], "text": "", "parts": [], "tool_call": None}
            log(entry)
            return self._send_json(int(rule["fail"]), {"error": {
                "message": "fake server: scripted failure", "type": "server_error"}})
        answer = decide(script, prompt, names, result)
        model = body.get("model") or "fake-model"
        entry["prompt"] = prompt
        entry["answer"] = {"label": answer["label"], "text": "".join(answer["parts"]),
                           "parts": answer["parts"], "tool_call": answer["tool_call"]}
        log(entry)
        if responses:
            events, done = responses_events(answer, model)
            if not body.get("stream"):
                return self._send_json(200, done)
            self._start_sse()
            for name, data in events:
                self._sse(json.dumps(data), event=name)
            return
        if not body.get("stream"):
            return self._send_json(200, chat_message(answer, model))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self._start_sse()
        for c in chat_chunks(answer, model, include_usage):
            self._sse(json.dumps(c))
        self._sse("[DONE]")


    def _gemini_post(self, path, body, entry, script):
            model = path.rsplit("/", 1)[-1].split(":")[0]
            prompt, names, result = gemini_view(body)
            if not names:
                side = gemini_side(body, script)
                entry["prompt"] = prompt
                entry["answer"] = {"label": "side", "text": side["candidates"][0]["content"]["parts"][0]["text"],
                                   "parts": [], "tool_call": None}
                log(entry)
                if path.endswith(":streamGenerateContent"):
                    self._start_sse()
                    self._sse(json.dumps(side))
                    return
                return self._send_json(200, side)
            rule = pick_rule(script, prompt)
            if rule.get("fail"):
                entry["prompt"] = prompt
                entry["answer"] = {"label": "fail-%s" % rule["fail"], "text": "", "parts": [], "tool_call": None}
                log(entry)
                return self._send_json(int(rule["fail"]), {"error": {
                    "code": int(rule["fail"]), "message": "fake server: scripted failure", "status": "INTERNAL"}})
            answer = decide(script, prompt, names, result)
            entry["prompt"] = prompt
            entry["answer"] = {"label": answer["label"], "text": "".join(answer["parts"]),
                               "parts": answer["parts"], "tool_call": answer["tool_call"]}
            log(entry)
            chunks = gemini_chunks(answer, model)
            if not path.endswith(":streamGenerateContent"):
                merged = {"candidates": [{"content": {"role": "model", "parts": [
                    p for c in chunks for p in c["candidates"][0]["content"]["parts"]]},
                    "finishReason": "STOP", "index": 0}], "usageMetadata": chunks[-1].get("usageMetadata")}
                return self._send_json(200, merged)
            self._start_sse()
            for c in chunks:
                # The Gemini API ends each event with CRLF CRLF.
                self.wfile.write(("data: %s\r\n\r\n" % json.dumps(c)).encode())
                self.wfile.flush()


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", default="requests.jsonl")
    ap.add_argument("--script", default=None)
    ARGS = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    srv.daemon_threads = True
    print("LISTENING %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
