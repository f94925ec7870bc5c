"""Documents as resources, through the official Python MCP SDK: over `ragdown stdio` (a live
session: list with cursors, templates, read, subscribe, and the notices an edit, a new file and
a removal bring) and over `ragdown serve` (a folder endpoint and the root endpoint list and read
their own documents, never a human-only folder's, and declare no subscriptions).
Usage: python_resources.py RAGDOWN_BINARY. Exits non-zero on any mismatch."""

import asyncio
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

sys.path.insert(0, os.path.dirname(__file__))
from python_http_client import TOKEN, start, wait_indexed  # noqa: E402

DOCS = 130  # more than one page


async def all_resources(session: ClientSession) -> list:
    found, cursor, pages = [], None, 0
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_resources(params=params)
        found.extend(page.resources)
        pages += 1
        cursor = page.next_cursor
        if not cursor:
            return found, pages


async def wait_for(events: list, predicate, what: str, seconds: float = 15.0):
    for _ in range(int(seconds / 0.05)):
        hit = next((e for e in events if predicate(e)), None)
        if hit is not None:
            return hit
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {what} within {seconds} s; got {events}")


async def over_stdio(binary: str) -> int:
    checked = 0
    with tempfile.TemporaryDirectory() as docs, tempfile.TemporaryDirectory() as data:
        os.makedirs(os.path.join(docs, "notes"))
        for i in range(DOCS):
            with open(os.path.join(docs, "notes", f"n{i:03}.md"), "w") as f:
                f.write(f"# Note {i}\n\nText {i}.\n")
        with open(os.path.join(docs, "my page.md"), "w") as f:
            f.write("# My Page\n\nFirst version.\n")
        env = dict(os.environ)
        env.update(RAGDOWN_DOCS_DIR=docs, RAGDOWN_DATA_DIR=data, RAGDOWN_EMBEDDER="hash")
        notices: list = []

        async def on_message(message) -> None:
            if isinstance(message, types.ServerNotification):
                notices.append(message)

        params = StdioServerParameters(command=binary, args=["stdio"], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                init = await session.initialize()
                caps = init.capabilities.resources
                assert caps is not None and caps.subscribe and caps.list_changed, caps
                name = init.server_info.name.removeprefix("ragdown-")
                resources, pages = [], 0
                for _ in range(200):  # the first sync runs in the background
                    resources, pages = await all_resources(session)
                    if len(resources) == DOCS + 1:
                        break
                    await asyncio.sleep(0.05)
                assert len(resources) == DOCS + 1 and pages == 2, (len(resources), pages)
                uris = [str(r.uri) for r in resources]
                assert len(set(uris)) == len(uris) and uris == sorted(uris), uris[:5]
                page = next(r for r in resources if r.name == "my page.md")
                assert str(page.uri) == f"ragdown://{name}/my%20page.md", page.uri
                assert page.title == "My Page" and page.mime_type == "text/markdown", page
                checked += 1

                templates = (await session.list_resource_templates()).resource_templates
                assert templates[0].uri_template == f"ragdown://{name}/{{+path}}", templates
                checked += 1

                read = await session.read_resource(str(page.uri))
                text = read.contents[0]
                assert text.text.startswith("# My Page") and text.mime_type == "text/markdown", read
                checked += 1
                try:
                    await session.read_resource(f"ragdown://{name}/nope.md")
                    raise AssertionError("a missing document was read")
                except Exception as e:  # McpError: resource not found
                    assert "nope.md" in str(e), e
                checked += 1

                await session.subscribe_resource(str(page.uri))
                await asyncio.sleep(1.2)  # the look-out has its first view
                with open(os.path.join(docs, "my page.md"), "w") as f:
                    f.write("# My Page\n\nSecond version.\n")
                await wait_for(notices, lambda n: isinstance(n, types.ResourceUpdatedNotification)
                               and str(n.params.uri) == str(page.uri), "resources/updated after an edit")
                read = await session.read_resource(str(page.uri))
                assert "Second version." in read.contents[0].text, read
                checked += 1

                with open(os.path.join(docs, "added.md"), "w") as f:
                    f.write("# Added\n")
                await wait_for(notices, lambda n: isinstance(n, types.ResourceListChangedNotification),
                               "resources/list_changed after a new file")
                checked += 1
    return checked


async def over_http(binary: str) -> int:
    checked = 0
    with tempfile.TemporaryDirectory() as docs, tempfile.TemporaryDirectory() as data:
        for folder, mcp in [("work", True), ("team", True), ("home", False)]:
            os.makedirs(os.path.join(docs, folder))
            with open(os.path.join(docs, folder, ".ragdown.json"), "w") as f:
                f.write('{"mcp": %s}' % ("true" if mcp else "false"))
            with open(os.path.join(docs, folder, "readme.md"), "w") as f:
                f.write(f"# {folder.title()} readme\n\nAbout {folder}.\n")
        os.environ["RAGDOWN_ROOT_MCP"] = "true"
        proc, port = start(binary, docs, data)
        try:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with create_mcp_http_client(headers=headers) as http:
                await wait_indexed(http, port, 3)
                for path, expected in [("/mcp/work", ["ragdown://work/readme.md"]),
                                       ("/mcp", ["ragdown://team/readme.md", "ragdown://work/readme.md"])]:
                    url = f"http://127.0.0.1:{port}{path}"
                    async with streamable_http_client(url, http_client=http) as (read, write, *_):
                        async with ClientSession(read, write) as session:
                            init = await session.initialize()
                            caps = init.capabilities.resources
                            assert caps is not None and not caps.subscribe, caps
                            resources, _ = await all_resources(session)
                            assert [str(r.uri) for r in resources] == expected, resources
                            read = await session.read_resource("ragdown://work/readme.md")
                            assert read.contents[0].text.startswith("# Work readme"), read
                            try:
                                await session.read_resource("ragdown://home/readme.md")
                                raise AssertionError("a human-only folder's document was read")
                            except Exception as e:
                                assert "no such resource" in str(e), e
                            checked += 1
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    return checked


async def main(binary: str) -> None:
    checked = await over_stdio(binary) + await over_http(binary)
    print(f"python resources: {checked} passed, 0 failed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
