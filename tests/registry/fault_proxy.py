#!/usr/bin/env python3
"""A loopback proxy in front of a real registry, for Kernodeck's tests.

fault_proxy.py PORT UPSTREAM MODE LOGFILE   (PORT 0: any free port, written to LOGFILE.port)
MODE: ok | 429 | 5xx | drop | wrongdigest | html | stall | bearer
Every request is logged as one line "METHOD PATH STATUS" to LOGFILE. The proxy
stops by itself after 10 minutes."""
import http.server
import os
import secrets
import socketserver
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

PORT, UPSTREAM, MODE, LOG = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
seen = {}
tokens = set()
lock = threading.Lock()


def count(key):
    with lock:
        seen[key] = seen.get(key, 0) + 1
        return seen[key]


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def log(self, status):
        with lock, open(LOG, "a") as f:
            f.write("%s %s %s\n" % (self.command, self.path, status))

    def reply(self, status, body=b"", headers=()):
        # Logged before the client can have the answer: a test that reads the log once the
        # client is done sees every request of it.
        self.log(status)
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def upstream(self):
        req = urllib.request.Request(UPSTREAM + self.path, method=self.command)
        for h in ("Accept", "Range"):
            if self.headers.get(h):
                req.add_header(h, self.headers[h])
        try:
            resp = urllib.request.urlopen(req, timeout=30)
            return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def do_GET(self):
        path = self.path.split("?")[0]
        is_blob = "/blobs/" in path
        is_manifest = "/manifests/" in path
        if MODE == "bearer":
            if path == "/token":
                auth = self.headers.get("Authorization", "")
                import base64
                if auth != "Basic " + base64.b64encode(b"alice:wonderland").decode():
                    return self.reply(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}')
                # Read as a token server reads it (percent-escapes of either case, as RFC 3986 allows).
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                if query.get("scope") != ["repository:team/demo:pull"] or query.get("service") != ["kdk-test"]:
                    return self.reply(403, b"{}")
                t = secrets.token_hex(16)
                tokens.add(t)
                return self.reply(200, ('{"token":"%s","expires_in":300}' % t).encode(), [("Content-Type", "application/json")])
            auth = self.headers.get("Authorization", "")
            if not auth.startswith("Bearer ") or auth[7:] not in tokens:
                challenge = 'Bearer realm="http://127.0.0.1:%d/token",service="kdk-test",scope="repository:team/demo:pull"' % PORT
                return self.reply(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}', [("WWW-Authenticate", challenge)])
        if MODE == "429" and count(path) == 1:
            return self.reply(429, b"slow down", [("Retry-After", "1")])
        if MODE == "5xx":
            n = count(path)
            if n <= 2:
                return self.reply([500, 502, 503][n % 3], b"oops")
        if MODE == "html" and is_manifest:
            return self.reply(200, b"<html><body>maintenance</body></html>", [("Content-Type", "text/html")])
        status, headers, body = self.upstream()
        out = [(k, v) for k, v in headers.items() if k.lower() in ("content-type", "docker-content-digest", "content-range", "www-authenticate")]
        if MODE == "wrongdigest" and is_blob and status == 200 and body:
            body = bytes([body[0] ^ 0xFF]) + body[1:]
        if MODE in ("drop", "stall") and is_blob and status in (200, 206) and len(body) > 16 and (MODE == "stall" or count(path) == 1):
            self.log("%d-cut" % status)
            self.send_response(status)
            for k, v in out:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            if MODE == "stall":
                time.sleep(60)
            self.close_connection = True
            return
        return self.reply(status, body, out)

    do_HEAD = do_GET


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server(("127.0.0.1", PORT), Proxy)
PORT = srv.server_address[1]
with open(LOG + ".port.tmp", "w") as f:
    f.write(str(PORT))
os.rename(LOG + ".port.tmp", LOG + ".port")
threading.Timer(600, lambda: os._exit(0)).start()
srv.serve_forever()
