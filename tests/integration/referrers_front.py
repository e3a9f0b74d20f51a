#!/usr/bin/env python3
"""An OCI 1.1 referrers API in front of Debian's docker-registry (2.8, which has none), for tests.

Every request is passed to the registry behind it, except:
- a manifest PUT whose document has a `subject`: passed on, then indexed here (digest, size,
  artifactType, the manifest's annotations copied, as registries with the API do) and answered
  with the `OCI-Subject` header, so clients do not write the fallback tag;
- GET /v2/<name>/referrers/<digest>: the image index of the subject's referrers, answered as the
  distribution spec says and as Go registries (distribution, zot, Harbor) read it: the query is
  parsed like Go's url.ParseQuery (a raw '+' is a space, so an unencoded
  `artifactType=application/vnd.x+json` filters on "application/vnd.x json" and matches nothing),
  the answer is paged (--page-size entries, `Link: <...>; rel="next"`, relative), and with
  --no-filters the artifactType filter is ignored and `OCI-Filters-Applied` omitted (the client
  must filter).
Upload `Location`s are rewritten to relative references (RFC 3986: "uuid?_state=..." against the
POST's URL), which a client must resolve, not append to its host.

Usage: referrers_front.py --backend HOST:PORT [--page-size N] [--no-filters]
Prints the port it listens on (127.0.0.1), then serves until killed.
"""

import argparse
import hashlib
import http.client
import http.server
import json
import re
import sys
import threading
import urllib.parse

INDEX_TYPE = "application/vnd.oci.image.index.v1+json"


class State:
    def __init__(self, backend, page_size, filters):
        self.backend = backend
        self.page_size = page_size
        self.filters = filters
        self.lock = threading.Lock()
        self.referrers = {}  # (repository, subject digest) -> [descriptor], in push order


def make_handler(state):
    class Front(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet
            pass

        def _body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def _send(self, status, headers, body):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _proxy(self, body):
            conn = http.client.HTTPConnection(state.backend, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            conn.request(self.command, self.path, body=body if body else None, headers=headers)
            r = conn.getresponse()
            data = r.read()
            out = []
            for k, v in r.getheaders():
                lk = k.lower()
                if lk in ("content-length", "connection", "transfer-encoding"):
                    continue
                if lk == "location":
                    v = self._relative_location(v)
                out.append((k, v))
            conn.close()
            return r.status, out, data

        def _relative_location(self, v):
            # An upload location as a reference relative to the request's URL.
            u = urllib.parse.urlsplit(v)
            path = u.path
            req_dir = urllib.parse.urlsplit(self.path).path
            req_dir = req_dir[: req_dir.rfind("/") + 1]
            if path.startswith(req_dir) and len(path) > len(req_dir):
                rel = path[len(req_dir):]
            else:
                rel = path
            return rel + ("?" + u.query if u.query else "")

        def _referrers(self, repository, digest):
            url = urllib.parse.urlsplit(self.path)
            # Go's url.ParseQuery: '+' is a space, %XX decoded.
            query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
            want = query.get("artifactType", [None])[0]
            last = query.get("last", [None])[0]
            with state.lock:
                entries = list(state.referrers.get((repository, digest), []))
            headers = [("Content-Type", INDEX_TYPE)]
            if want is not None and state.filters:
                entries = [e for e in entries if e.get("artifactType") == want]
                headers.append(("OCI-Filters-Applied", "artifactType"))
            start = 0
            if last:
                for i, e in enumerate(entries):
                    if e["digest"] == last:
                        start = i + 1
            page = entries[start:start + state.page_size]
            if start + state.page_size < len(entries):
                q = {"last": page[-1]["digest"]}
                if want is not None:
                    q["artifactType"] = want
                link = "/v2/%s/referrers/%s?%s" % (repository, digest, urllib.parse.urlencode(q))
                headers.append(("Link", '<%s>; rel="next"' % link))
            body = json.dumps({"schemaVersion": 2, "mediaType": INDEX_TYPE, "manifests": page}).encode()
            self._send(200, headers, body)

        def _handle(self):
            body = self._body() if self.command in ("PUT", "POST", "PATCH") else b""
            path = urllib.parse.urlsplit(self.path).path
            m = re.match(r"^/v2/(.+)/referrers/(sha256:[0-9a-f]{64})$", path)
            if m and self.command == "GET":
                return self._referrers(m.group(1), m.group(2))
            status, headers, data = self._proxy(body)
            m = re.match(r"^/v2/(.+)/manifests/([^/]+)$", path)
            if m and self.command == "PUT" and status == 201:
                try:
                    doc = json.loads(body)
                except ValueError:
                    doc = None
                if isinstance(doc, dict) and isinstance(doc.get("subject"), dict):
                    subject = doc["subject"].get("digest", "")
                    desc = {
                        "mediaType": doc.get("mediaType", ""),
                        "digest": "sha256:" + hashlib.sha256(body).hexdigest(),
                        "size": len(body),
                    }
                    at = doc.get("artifactType") or (doc.get("config") or {}).get("mediaType")
                    if at:
                        desc["artifactType"] = at
                    if isinstance(doc.get("annotations"), dict):
                        desc["annotations"] = doc["annotations"]
                    with state.lock:
                        lst = state.referrers.setdefault((m.group(1), subject), [])
                        if all(e["digest"] != desc["digest"] for e in lst):
                            lst.append(desc)
                    headers.append(("OCI-Subject", subject))
            self._send(status, headers, data)

        do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = _handle

    return Front


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", required=True)
    p.add_argument("--page-size", type=int, default=10)
    p.add_argument("--no-filters", action="store_true")
    a = p.parse_args()
    state = State(a.backend, a.page_size, not a.no_filters)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
