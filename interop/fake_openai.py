"""A stand-in for the OpenAI API on 127.0.0.1, so the docs' snippets run as
written (Agent("openai:gpt-4o"), the Agents SDK's default model) with no
network: OPENAI_BASE_URL points here. It answers Chat Completions and
Responses requests with a text naming how many messages it was sent."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    def __init__(self):
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, body))
                n = len(outer.requests)
                if self.path.endswith("/chat/completions"):
                    msgs = body["messages"]
                    text = f"Answer {n} ({len(msgs)} messages sent)."
                    out = {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 1700000000,
                           "model": body["model"], "choices": [{"index": 0, "finish_reason": "stop",
                                                                 "message": {"role": "assistant", "content": text}}],
                           "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}
                elif self.path.endswith("/responses"):
                    items = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    text = f"Answer {n} ({len(items)} items sent)."
                    out = {"id": f"resp_{n}", "object": "response", "created_at": 1700000000, "status": "completed",
                           "model": body["model"], "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
                           "output": [{"type": "message", "id": f"msg_{n}", "status": "completed", "role": "assistant",
                                       "content": [{"type": "output_text", "text": text, "annotations": []}]}],
                           "usage": {"input_tokens": 5, "output_tokens": 5, "total_tokens": 10,
                                     "input_tokens_details": {"cached_tokens": 0},
                                     "output_tokens_details": {"reasoning_tokens": 0}}}
                else:
                    self.send_error(404)
                    return
                data = json.dumps(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
