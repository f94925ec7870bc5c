"""Interoperability: the official Python MCP SDK (from PyPI, written by nobody here) talks to
`ragdown stdio`. Lists the tools, then calls recall, read_doc, edit and context against a
fixture folder. Usage: python_client.py RAGDOWN_BINARY. Exits non-zero on any mismatch."""

import asyncio
import os
import re
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def main(binary: str) -> None:
    with tempfile.TemporaryDirectory() as docs, tempfile.TemporaryDirectory() as data:
        os.makedirs(os.path.join(docs, "ops"))
        with open(os.path.join(docs, "ops", "backups.md"), "w") as f:
            f.write("# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n")
        env = dict(os.environ)
        env.update(RAGDOWN_DOCS_DIR=docs, RAGDOWN_DATA_DIR=data, RAGDOWN_EMBEDDER="hash",
                   RAGDOWN_HOOK_MIN_SCORE="0.05")
        params = StdioServerParameters(command=binary, args=["stdio"], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name.startswith("ragdown-"), init.server_info
                tools = sorted(t.name for t in (await session.list_tools()).tools)
                assert len(tools) == 13 and "ragdown_recall" in tools, tools

                recall = ""
                for _ in range(100):  # the first sync runs in the background
                    recall = text_of(await session.call_tool("ragdown_recall", {"query": "restore pg_restore"}))
                    if recall.startswith("[1]"):
                        break
                    await asyncio.sleep(0.05)
                assert re.match(r"^\[1\] ops/backups\.md:7-7 — Backups › Restore \(similarity", recall), recall

                read_doc = text_of(await session.call_tool("ragdown_read_doc", {"path": "ops/backups.md"}))
                header = read_doc.split("\n", 1)[0]
                m = re.match(r"^ops/backups\.md:1-8 of 8 \(hash ([0-9a-f]{12})\)$", header)
                assert m, header

                edited = await session.call_tool("ragdown_edit", {
                    "path": "ops/backups.md", "base_hash": m.group(1),
                    "edits": [{"old_text": "twice", "new_text": "three times"}]})
                assert not edited.is_error and text_of(edited).startswith("edited ops/backups.md"), text_of(edited)
                with open(os.path.join(docs, "ops", "backups.md")) as f:
                    assert "Run pg_restore three times." in f.read()

                refused = await session.call_tool("ragdown_read_doc", {"path": "../../etc/passwd"})
                assert refused.is_error and "outside the docs folder" in text_of(refused), text_of(refused)

                context = text_of(await session.call_tool("ragdown_context", {
                    "prompt": "how do I restore the backups with pg_restore", "session_id": "py"}))
                assert context.startswith("<ragdown-context ") and "Backups › Restore" in context, context
    print("python mcp client: 6 passed, 0 failed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
