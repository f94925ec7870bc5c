"""Interoperability over HTTP: the official Python MCP SDK's Streamable HTTP client talks to a
folder endpoint of `ragdown serve` (started here on a free port, with a bearer token). Lists the
tools, searches, reads and writes through /mcp/work, and checks that a human-only folder is not
served. Usage: python_http_client.py RAGDOWN_BINARY. Exits non-zero on any mismatch."""

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import threading

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

TOKEN = "py-interop-token"


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def start(binary: str, docs: str, data: str) -> tuple[subprocess.Popen, int]:
    env = dict(os.environ)
    env.update(RAGDOWN_DOCS_DIR=docs, RAGDOWN_DATA_DIR=data, RAGDOWN_EMBEDDER="hash",
               RAGDOWN_TOKEN=TOKEN, PORT="0")
    proc = subprocess.Popen([binary, "serve"], env=env, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        m = re.search(r"listening on http://[^:]+:(\d+)", line)
        if m:
            # Keep draining the log so the server never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, int(m.group(1))
    raise RuntimeError("serve did not start")


async def wait_indexed(http, port: int, files: int) -> None:
    """Waits (bounded) until the server has loaded its model and indexed `files` documents."""
    for _ in range(400):
        status = (await http.get(f"http://127.0.0.1:{port}/api/status")).json()
        if status.get("ready") and status.get("files") == files and not status.get("syncing"):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never indexed {files} documents: {status}")


async def main(binary: str) -> None:
    with tempfile.TemporaryDirectory() as docs, tempfile.TemporaryDirectory() as data:
        os.makedirs(os.path.join(docs, "work", "ops"))
        os.makedirs(os.path.join(docs, "home"))
        with open(os.path.join(docs, "work", ".ragdown.json"), "w") as f:
            f.write('{"mcp": true}')
        with open(os.path.join(docs, "work", "ops", "backups.md"), "w") as f:
            f.write("# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n")
        with open(os.path.join(docs, "home", "garden.md"), "w") as f:
            f.write("# Garden\n\nTomatoes.\n")
        proc, port = start(binary, docs, data)
        passed = 0
        try:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            url = f"http://127.0.0.1:{port}/mcp/work"
            async with create_mcp_http_client(headers=headers) as http:
                async with streamable_http_client(url, http_client=http) as (read, write, *_):
                    async with ClientSession(read, write) as session:
                        init = await session.initialize()
                        assert init.server_info.name == "ragdown-work", init.server_info
                        tools = sorted(t.name for t in (await session.list_tools()).tools)
                        assert len(tools) == 13 and "ragdown_recall" in tools, tools
                        passed += 1

                        recall = ""
                        for _ in range(200):  # the model loads and the first sync runs meanwhile
                            try:
                                recall = text_of(await session.call_tool(
                                    "ragdown_recall", {"query": "restore pg_restore"}))
                            except Exception as e:  # 503 while the model loads
                                recall = str(e)
                            if recall.startswith("[1]"):
                                break
                            await asyncio.sleep(0.05)
                        assert re.match(r"^\[1\] ops/backups\.md:7-7 — Backups › Restore", recall), recall
                        passed += 1

                        read_doc = text_of(await session.call_tool("ragdown_read_doc", {"path": "ops/backups.md"}))
                        assert read_doc.startswith("ops/backups.md:1-8 of 8 (hash "), read_doc
                        passed += 1

                        wrote = await session.call_tool("ragdown_write", {
                            "path": "py/new.md", "text": "# From Python\n\nwritten over HTTP\n"})
                        assert not wrote.is_error, text_of(wrote)
                        assert os.path.exists(os.path.join(docs, "work", "py", "new.md"))
                        passed += 1

                        refused = await session.call_tool("ragdown_read_doc", {"path": "../home/garden.md"})
                        assert refused.is_error, text_of(refused)
                        passed += 1

                # A human-only folder is not an endpoint: the client cannot connect.
                response = await http.post(f"http://127.0.0.1:{port}/mcp/home", json={})
                assert response.status_code == 404, response.status_code
                passed += 1
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    print(f"python mcp http client: {passed} passed, 0 failed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
