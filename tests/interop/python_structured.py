"""Structured results, checked by the official Python MCP SDK: `ragdown serve` (a folder
endpoint and the root endpoint) is asked for its tools, and every tool that declares an
`outputSchema` is called; the SDK validates each result's `structuredContent` against the
declared schema (jsonschema), and this script validates it again explicitly and compares it
with the text where the text is JSON. Usage: python_structured.py RAGDOWN_BINARY. Exits
non-zero on any mismatch."""

import asyncio
import json
import os
import sys
import tempfile

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from python_http_client import TOKEN, start, text_of, wait_indexed


async def check(session: ClientSession, name: str, args: dict, declared: dict, called: set) -> dict:
    result = await session.call_tool(name, args)
    assert not result.is_error, f"{name}: {text_of(result)}"
    schema = declared[name]
    if schema is None:
        assert result.structured_content is None, f"{name} declares no schema: {result}"
        return {}
    assert result.structured_content is not None, f"{name}: no structured content"
    await session.validate_tool_result(name, result)
    called.add(name)
    return result.structured_content


async def endpoint(url: str, http, calls, called_all: set) -> int:
    checked = 0
    async with streamable_http_client(url, http_client=http) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            declared = {t.name: t.output_schema for t in tools}
            for t in tools:
                if t.output_schema is not None:
                    assert t.output_schema.get("type") == "object", (t.name, t.output_schema)
            called: set = set()
            for name, args in calls:
                data = await check(session, name, args, declared, called)
                if name == "ragdown_recall" and args.get("format") == "json":
                    again = await session.call_tool(name, args)
                    assert json.loads(text_of(again)) == again.structured_content, text_of(again)
                checked += 1
            missing = {n for n, s in declared.items() if s is not None} - called
            assert not missing, f"{url}: tools with an output schema never called: {missing}"
            called_all.update(called)
    return checked


async def main(binary: str) -> None:
    with tempfile.TemporaryDirectory() as docs, tempfile.TemporaryDirectory() as data:
        os.makedirs(os.path.join(docs, "work", "ops"))
        with open(os.path.join(docs, "work", ".ragdown.json"), "w") as f:
            f.write('{"mcp": true}')
        with open(os.path.join(docs, "work", "ops", "backups.md"), "w") as f:
            f.write("# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n")
        with open(os.path.join(docs, "work", "index.md"), "w") as f:
            f.write("# Index\n\nSee [[ops/backups]].\n")
        os.environ["RAGDOWN_ROOT_MCP"] = "true"
        proc, port = start(binary, docs, data)
        checked = 0
        called: set = set()
        try:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with create_mcp_http_client(headers=headers) as http:
                await wait_indexed(http, port, 2)
                folder = [
                    ("ragdown_recall", {"query": "restore pg_restore"}),
                    ("ragdown_recall", {"query": "restore pg_restore", "format": "json"}),
                    ("ragdown_read_doc", {"path": "ops/backups.md"}),
                    ("ragdown_backlinks", {"path": "ops/backups.md"}),
                    ("ragdown_list", {}),
                    ("ragdown_stats", {"include_files": True}),
                    ("ragdown_context", {"prompt": "how do I restore with pg_restore"}),
                    ("ragdown_remember", {"title": "A fact", "content": "The sky is green here.", "name": "fact"}),
                    ("ragdown_ingest", {"content": "# Page\n\nFetched text.", "format": "markdown", "source": "https://example.org/p"}),
                    ("ragdown_write", {"path": "py/new.md", "text": "# New\n\nwritten\n"}),
                    ("ragdown_edit", {"path": "py/new.md", "edits": [{"old_text": "written", "new_text": "edited"}]}),
                    ("ragdown_move", {"from": "py/new.md", "to": "py/moved.md"}),
                    ("ragdown_delete", {"path": "py/moved.md"}),
                    ("ragdown_reindex", {}),
                ]
                checked += await endpoint(f"http://127.0.0.1:{port}/mcp/work", http, folder, called)
                root = [
                    ("ragdown_folders", {}),
                    ("ragdown_recall", {"query": "restore pg_restore"}),
                    ("ragdown_recall", {"query": "restore pg_restore", "format": "json"}),
                    ("ragdown_list", {}),
                    ("ragdown_stats", {}),
                    ("ragdown_stats", {"folder": "work"}),
                    ("ragdown_read_doc", {"folder": "work", "path": "ops/backups.md"}),
                    ("ragdown_backlinks", {"folder": "work", "path": "ops/backups.md"}),
                    ("ragdown_remember", {"folder": "work", "title": "B", "content": "b", "name": "b"}),
                    ("ragdown_ingest", {"folder": "work", "content": "x", "format": "text", "source": "s"}),
                    ("ragdown_write", {"folder": "work", "path": "r.md", "text": "# R\n"}),
                    ("ragdown_edit", {"folder": "work", "path": "r.md", "edits": [{"old_text": "R", "new_text": "S"}]}),
                    ("ragdown_move", {"folder": "work", "from": "r.md", "to": "s.md"}),
                    ("ragdown_delete", {"folder": "work", "path": "s.md"}),
                    ("ragdown_reindex", {}),
                    ("ragdown_create_folder", {"name": "made"}),
                ]
                checked += await endpoint(f"http://127.0.0.1:{port}/mcp", http, root, called)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    print(f"python structured content: {checked} calls checked, {len(called)} tools validated, 0 failed")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    asyncio.run(main(sys.argv[1]))
