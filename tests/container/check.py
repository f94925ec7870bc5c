"""Checks a running ragdown container from the host, as its user would reach it.

    check.py BASE_URL TOKEN first     the first start: status, a search, MCP on /mcp/work
    check.py BASE_URL TOKEN restart   after a restart: the index was kept (nothing embedded)

Standard library only: it runs on the CI machine's own Python. Exits non-zero, saying what
was expected, on the first check that fails.
"""

import json
import sys
import time
import urllib.parse
import urllib.request

BASE, TOKEN, STAGE = sys.argv[1], sys.argv[2], sys.argv[3]
DOCUMENT = "work/backup.md"


def get(path, token=True):
    request = urllib.request.Request(BASE + path)
    if token:
        request.add_header("Authorization", f"Bearer {TOKEN}")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def mcp(method, params, folder="work"):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    request = urllib.request.Request(
        f"{BASE}/mcp/{folder}",
        data=body.encode(),
        headers={
            "Authorization": f"Bearer {TOKEN}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    if response.headers.get("Content-Type", "").startswith("text/event-stream"):
        text = next(l[5:] for l in text.splitlines() if l.startswith("data:") and l[5:].strip())
    answer = json.loads(text)
    if "error" in answer:
        raise SystemExit(f"{method} failed: {answer['error']}")
    return answer["result"]


def tool(name, arguments):
    result = mcp("tools/call", {"name": name, "arguments": arguments})
    if result.get("isError"):
        raise SystemExit(f"{name} answered an error: {result}")
    return result["content"][0]["text"]


def wait_until(what, check, seconds=120):
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        try:
            last = check()
            if last:
                return last
        except OSError as e:  # not listening yet, reset while starting
            last = e
        time.sleep(0.5)
    raise SystemExit(f"timed out waiting for {what}; last seen: {last}")


def indexed():
    status = get("/api/status", token=False)
    return status if status.get("ready") and status.get("files") == 1 and not status.get("syncing") else None


status = wait_until("the status to show the mounted document indexed", indexed)
print(f"status: {status['files']} file, {status['chunks']} sections, embedder {status['embedder']}")
assert status["auth_required"] is True, status
try:
    get("/api/folders", token=False)
    raise SystemExit("/api/folders answered without the token")
except urllib.error.HTTPError as e:
    assert e.code == 401, e

hits = get("/api/search?" + urllib.parse.urlencode({"q": "how do I restore the nightly backup?", "folder": "work"}))["hits"]
assert hits and hits[0]["path"] == DOCUMENT, hits
print(f"search: {hits[0]['path']} first, similarity {hits[0]['similarity']}")

initialized = mcp("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "container-check", "version": "1"}})
assert initialized["serverInfo"]["name"] == "ragdown-work", initialized
recalled = json.loads(tool("ragdown_recall", {"query": "restore the nightly backup", "format": "json"}))
assert recalled["hits"][0]["path"] == "backup.md", recalled
print("mcp: ragdown_recall on /mcp/work finds backup.md")

if STAGE == "restart":
    def last_sync():
        stats = json.loads(tool("ragdown_stats", {"format": "json"}))
        return stats.get("last_sync")

    sync = wait_until("the first sync after the restart", last_sync)
    assert sync["unchanged"] == 1 and sync["added"] == 0 and sync["chunks"] == 0, sync
    print(f"restart: the index was kept ({sync['unchanged']} unchanged, {sync['chunks']} sections embedded)")
