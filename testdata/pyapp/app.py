#!/usr/bin/env python3
"""A small orders API with idempotency keys, written with Python's standard library only.

It is what retrysafe's lifecycle example starts (targets/examples/python-app-managed.yaml): an
application that is not retrysafe's reference, started and killed by the harness through the
command the target file declares. It has the reference's route shape:

  POST /v1/orders, POST /v1/refunds     {"ref", "amount", "currency"}, Idempotency-Key required
  GET  /v1/orders?ref=R, /v1/refunds?ref=R   {"count": N, "items": [...]}: the observer
  GET  /healthz                         the readiness probe

Keys are the raw header value, scoped by (tenant, method, path, key) and stored in SQLite with a
fingerprint of the query and the canonical JSON body. A claim is one INSERT in an IMMEDIATE
transaction; an in-progress key is taken over after --lock-timeout seconds (a claim fenced by a
token, so that the attempt of a killed process cannot complete it); the record and the key's
completion commit in one transaction. Before the record it POSTs a charge to --downstream with a
key derived from the idempotency key, so every attempt of one operation sends the same one. A
failed downstream call is stored as a 502 and replayed. Tenants are bearer tokens (alice, bob).

  python3 app.py --addr 127.0.0.1:8090 --db orders.db --downstream http://127.0.0.1:9999/charge
"""

import argparse
import hashlib
import json
import secrets
import sqlite3
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPERATIONS = {"/v1/orders": ("orders", "order", "ord_"), "/v1/refunds": ("refunds", "refund", "rfd_")}
TENANTS = {"alice", "bob"}
MAX_KEY_LENGTH = 255

SCHEMA = """
CREATE TABLE IF NOT EXISTS idempotency_keys (
  scope TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, state TEXT NOT NULL, token INTEGER NOT NULL,
  created REAL NOT NULL, locked REAL NOT NULL, status INTEGER, body TEXT);
CREATE TABLE IF NOT EXISTS records (
  id TEXT PRIMARY KEY, tenant TEXT NOT NULL, kind TEXT NOT NULL, ref TEXT NOT NULL,
  amount INTEGER NOT NULL, currency TEXT NOT NULL, created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS records_by_ref ON records (tenant, kind, ref);
"""


class Config:
    db = "orders.db"
    downstream = ""
    lock_timeout = 30.0
    retention = 24 * 3600.0


def connect():
    conn = sqlite3.connect(Config.db, timeout=30, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def problem(status, detail):
    return status, {"type": "about:blank", "title": "error", "status": status, "detail": detail}


def fingerprint(query, body):
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    pairs = sorted(urllib.parse.parse_qsl(query, keep_blank_values=True))
    return hashlib.sha256((urllib.parse.urlencode(pairs) + "\n" + canonical).encode()).hexdigest()


def claim(scope, fp):
    """Claims the key: ("claimed", token), ("in-flight",), ("done", status, body) or ("mismatch",)."""
    now = time.time()
    conn = connect()
    try:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT fingerprint, state, token, created, locked, status, body FROM idempotency_keys WHERE scope = ?",
                           (scope,)).fetchone()
        if row is not None and row[3] > now - Config.retention:
            stored_fp, state, token, _, locked, status, body = row
            if stored_fp != fp:
                conn.execute("COMMIT")
                return ("mismatch",)
            if state == "done":
                conn.execute("COMMIT")
                return ("done", status, body)
            if locked > now - Config.lock_timeout:
                conn.execute("COMMIT")
                return ("in-flight",)
            conn.execute("UPDATE idempotency_keys SET token = ?, locked = ? WHERE scope = ?", (token + 1, now, scope))
            conn.execute("COMMIT")
            return ("claimed", token + 1)
        token = (row[2] + 1) if row is not None else 1
        conn.execute("INSERT OR REPLACE INTO idempotency_keys (scope, fingerprint, state, token, created, locked) VALUES (?, ?, 'in_progress', ?, ?, ?)",
                     (scope, fp, token, now, now))
        conn.execute("COMMIT")
        return ("claimed", token)
    finally:
        conn.close()


def complete(scope, token, status, body, record):
    """Stores the answer and the record in one transaction if the claim still holds the token."""
    conn = connect()
    try:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT state, token FROM idempotency_keys WHERE scope = ?", (scope,)).fetchone()
        if row is None or row[0] != "in_progress" or row[1] != token:
            conn.execute("ROLLBACK")
            return False
        if record is not None:
            conn.execute("INSERT INTO records (id, tenant, kind, ref, amount, currency, created) VALUES (?, ?, ?, ?, ?, ?, ?)", record)
        conn.execute("UPDATE idempotency_keys SET state = 'done', status = ?, body = ? WHERE scope = ?", (status, body, scope))
        conn.execute("COMMIT")
        return True
    finally:
        conn.close()


def charge(tenant, kind, key, order):
    """POSTs the charge downstream with a key derived from the idempotency key; True on a 2xx."""
    if not Config.downstream:
        return True
    derived = "py_" + hashlib.sha256(f"{len(tenant)}:{tenant}|{len(kind)}:{kind}|{key}".encode()).hexdigest()[:40]
    payload = json.dumps({"tenant": tenant, "operation": kind, "ref": order["ref"], "amount": order["amount"],
                          "currency": order["currency"]}).encode()
    req = urllib.request.Request(Config.downstream, data=payload, method="POST",
                                 headers={"Content-Type": "application/json", "Idempotency-Key": derived})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return 200 <= resp.status < 300
    except (urllib.error.URLError, OSError):
        return False


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body, replayed=False, extra=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if status < 400 else "application/problem+json")
        self.send_header("Content-Length", str(len(data)))
        if replayed:
            self.send_header("Idempotent-Replayed", "true")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def tenant(self):
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else ""
        return token if token in TENANTS else None

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/healthz":
            return self.send(200, {"status": "ok"})
        if url.path not in OPERATIONS:
            return self.send(*problem(404, "not found"))
        tenant = self.tenant()
        if tenant is None:
            return self.send(*problem(401, "a bearer token of a known tenant is required"))
        ref = urllib.parse.parse_qs(url.query).get("ref", [""])[0]
        kind, obj, _ = OPERATIONS[url.path]
        conn = connect()
        try:
            rows = conn.execute("SELECT id, ref, amount, currency FROM records WHERE tenant = ? AND kind = ? AND ref = ? ORDER BY created",
                                (tenant, kind, ref)).fetchall()
        finally:
            conn.close()
        items = [{"id": r[0], "object": obj, "ref": r[1], "amount": r[2], "currency": r[3]} for r in rows]
        self.send(200, {"count": len(items), "items": items})

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if url.path not in OPERATIONS:
            return self.send(*problem(404, "not found"))
        tenant = self.tenant()
        if tenant is None:
            return self.send(*problem(401, "a bearer token of a known tenant is required"))
        keys = self.headers.get_all("Idempotency-Key") or []
        if len(keys) != 1:
            return self.send(*problem(400, "one Idempotency-Key header is required"))
        key = keys[0].strip()
        if not key or len(key) > MAX_KEY_LENGTH:
            return self.send(*problem(400, f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters"))
        try:
            order = json.loads(raw)
            order = {"ref": str(order["ref"]), "amount": int(order["amount"]), "currency": str(order["currency"]), "_body": order}
        except (ValueError, KeyError, TypeError):
            return self.send(*problem(400, "the body must be a JSON object with ref, amount and currency"))
        kind, obj, prefix = OPERATIONS[url.path]
        scope = hashlib.sha256(json.dumps([tenant, "POST", url.path, key]).encode()).hexdigest()
        outcome = claim(scope, fingerprint(url.query, order.pop("_body")))
        if outcome[0] == "mismatch":
            return self.send(*problem(422, "Idempotency-Key was used with a different payload"))
        if outcome[0] == "in-flight":
            return self.send(*problem(409, "a request with this Idempotency-Key is in progress"), extra={"Retry-After": "1"})
        if outcome[0] == "done":
            return self.send(outcome[1], outcome[2].encode(), replayed=True)
        token = outcome[1]
        if not charge(tenant, kind, key, order):
            status, body = problem(502, "the downstream provider failed")
            record = None
        else:
            rid = prefix + secrets.token_hex(12)
            status, body = 201, {"id": rid, "object": obj, "ref": order["ref"], "amount": order["amount"], "currency": order["currency"]}
            record = (rid, tenant, kind, order["ref"], order["amount"], order["currency"], time.time())
        text = json.dumps(body)
        if not complete(scope, token, status, text, record):
            return self.send(*problem(409, "this attempt was superseded by a retry after the lock timeout"))
        self.send(status, text.encode())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--addr", default="127.0.0.1:8090", help="host:port to listen on")
    ap.add_argument("--db", default="orders.db", help="the SQLite file (created when missing)")
    ap.add_argument("--downstream", default="", help="the charge provider's URL (none: no call)")
    ap.add_argument("--lock-timeout", type=float, default=30.0, help="seconds after which an in-progress key is taken over")
    ap.add_argument("--retention", type=float, default=24 * 3600.0, help="seconds a key is kept")
    args = ap.parse_args()
    Config.db, Config.downstream, Config.lock_timeout, Config.retention = args.db, args.downstream, args.lock_timeout, args.retention
    conn = connect()
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(SCHEMA)
    conn.close()
    host, _, port = args.addr.rpartition(":")
    server = ThreadingHTTPServer((host, int(port)), Handler)
    server.daemon_threads = True
    print(f"listening on {args.addr}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
