"""One `remstore serve` process for a test: the interop suite's and the peer
suite's (which serves the peer's database)."""
import os
import secrets
import subprocess
import threading


class Server:
    """`remstore serve` on 127.0.0.1 (a free port) over db, with one API key;
    stopped with stop()."""

    def __init__(self, db: str, env: dict | None = None, args: tuple = ()):
        b = os.environ.get("REMSTORE_BIN")
        if not b:
            raise RuntimeError("REMSTORE_BIN is not set: run the suite with scripts/interop.sh (make test)")
        self.key = "k-" + secrets.token_hex(12)
        self.db = db
        e = {**os.environ, "REMSTORE_DB": db, "REMSTORE_API_KEYS": self.key, **(env or {})}
        self.proc = subprocess.Popen([b, "serve", "--addr", "127.0.0.1:0", *args], env=e,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line, self.log = "", []
        while "listening on" not in line:
            line = self.proc.stderr.readline()
            if not line:
                raise AssertionError(f"remstore serve exited {self.proc.wait()}: {''.join(self.log)}")
            self.log.append(line)
        self.url = line.split("listening on ")[1].strip()
        # Drain the log so the server never blocks on a full pipe.
        threading.Thread(target=lambda: self.log.extend(self.proc.stderr), daemon=True).start()

    def client(self, user: str, **kw):
        import remstore
        return remstore.Client(self.url, api_key=self.key, user_id=user, **kw)

    def async_client(self, user: str, **kw):
        import remstore
        return remstore.AsyncClient(self.url, api_key=self.key, user_id=user, **kw)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            assert self.proc.wait(timeout=20) == 0, "".join(self.log)
