"""A local JSON-over-HTTP server for the fake model providers of the interop
suites: answer(path, body) returns the JSON to send (None: 404); every
request body is kept in requests, as (path, body)."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JSONServer:
    def __init__(self, answer):
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, body))
                out = answer(self.path, body)
                if out is None:
                    self.send_error(404)
                    return
                data = json.dumps(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def bodies(self):
        return [b for _, b in self.requests]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
