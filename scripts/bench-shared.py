#!/usr/bin/env python3
"""Two `ragdown serve` processes sharing one PostgreSQL database (RAGDOWN_DATABASE_URL) on a
copy of a corpus, each with a data dir of its own, measured as a team would feel them:

  first index     the first server's spawn -> its folder indexed (records in PostgreSQL)
  join            the second server's spawn -> it follows with every document searchable
  write->other    a document written through one server -> found by a search on the other
  warm query      /api/search on the follower, p50 / p95
  takeover        kill -9 of the primary -> the follower reports itself primary

  scripts/bench-shared.py CORPUS [--binary target/release/ragdown] [--rounds 20]

Needs RAGDOWN_DATABASE_URL (e.g. `eval "$(scripts/test-postgres.sh)"` and pass
RAGDOWN_TEST_DATABASE_URL) and the model variables of `.test-model/env`. Prints one JSON
object. The folder is the corpus's directory name; its schema is dropped at the end.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

TOKEN = "bench-token"


def call(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {TOKEN}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read() or b"null")


def spawn(binary, docs, data, env):
    env = dict(env, RAGDOWN_DOCS_DIR=docs, RAGDOWN_DATA_DIR=data, RAGDOWN_TOKEN=TOKEN,
               PORT="0", RAGDOWN_LOG="info")
    child = subprocess.Popen([binary, "serve"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    for line in child.stderr:
        if "listening on http://" in line:
            address = "http://" + line.split("listening on http://", 1)[1].strip()
            # Its log goes on: read it away so the pipe never fills and blocks the server.
            threading.Thread(target=lambda: [None for _ in child.stderr], daemon=True).start()
            return child, address.rstrip("/")
    raise SystemExit(f"the server never listened (exit {child.wait()})")


def folder(base, name):
    for f in call(base, "GET", "/api/folders")["folders"]:
        if f["name"] == name:
            return f
    return {}


def wait(check, within, what):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.02)
    raise SystemExit(f"{what}: not within {within} s")


def found_first(base, name, q):
    query = urllib.parse.urlencode({"folder": name, "q": q})
    hits = call(base, "GET", f"/api/search?{query}")["hits"]
    return hits[0]["path"] if hits else None


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus")
    parser.add_argument("--binary", default="target/release/ragdown")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    url = os.environ.get("RAGDOWN_DATABASE_URL")
    if not url:
        raise SystemExit("set RAGDOWN_DATABASE_URL to the PostgreSQL database to use")
    work = tempfile.mkdtemp(prefix="ragdown-bench-shared-")
    name = "corpus"
    docs = os.path.join(work, "docs")
    shutil.copytree(args.corpus, os.path.join(docs, name))
    schema = f"bench_{os.getpid()}"
    env = dict(os.environ, RAGDOWN_DATABASE_SCHEMA=schema,
               RAGDOWN_TAKEOVER_MS=os.environ.get("RAGDOWN_TAKEOVER_MS", "1000"))
    children = []
    result = {}
    try:
        started = time.monotonic()
        a, base_a = spawn(args.binary, docs, os.path.join(work, "a"), env)
        children.append(a)
        wait(lambda: folder(base_a, name).get("role") == "primary"
             and call(base_a, "GET", "/api/status").get("syncing") is False
             and folder(base_a, name).get("files", 0) > 0, 3600, "first index")
        result["first_index_s"] = round(time.monotonic() - started, 2)
        files = folder(base_a, name)["files"]
        result["files"] = files
        result["chunks"] = folder(base_a, name)["chunks"]

        started = time.monotonic()
        b, base_b = spawn(args.binary, docs, os.path.join(work, "b"), env)
        children.append(b)
        wait(lambda: folder(base_b, name).get("role") == "follower"
             and folder(base_b, name).get("files") == files, 600, "join")
        result["join_s"] = round(time.monotonic() - started, 3)

        latencies = []
        for i in range(args.rounds):
            word = f"zqxbench{i}marker"
            writer, reader = (base_a, base_b) if i % 2 == 0 else (base_b, base_a)
            path = f"{name}/bench-{i}.md"
            started = time.monotonic()
            call(writer, "POST", "/api/doc",
                 {"path": path, "text": f"# Bench {i}\n\nThe word {word} is here.\n"})
            wait(lambda: found_first(reader, name, word) == path, 30, "write->other")
            latencies.append((time.monotonic() - started) * 1000)
        result["write_to_other_ms"] = {"p50": round(statistics.median(latencies), 1),
                                       "p95": round(pct(latencies, 95), 1)}

        queries = []
        for i in range(args.rounds * 2):
            started = time.monotonic()
            found_first(base_b, name, "how do I configure the server")
            queries.append((time.monotonic() - started) * 1000)
        result["follower_query_ms"] = {"p50": round(statistics.median(queries), 1),
                                       "p95": round(pct(queries, 95), 1)}

        a.send_signal(signal.SIGKILL)
        a.wait()
        started = time.monotonic()
        wait(lambda: folder(base_b, name).get("role") == "primary", 120, "takeover")
        result["takeover_s"] = round(time.monotonic() - started, 3)
        result["takeover_every_ms"] = int(env["RAGDOWN_TAKEOVER_MS"])
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
        shutil.rmtree(work, ignore_errors=True)
        subprocess.run(["psql", url, "-qc",
                        f'DROP SCHEMA IF EXISTS "{schema}_{name}" CASCADE'],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
