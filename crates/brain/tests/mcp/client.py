"""Drives brain's MCP server with the official MCP Python SDK (a client we did not write).

Usage: BRAIN_BIN=path/to/brain BRAIN_HOME=initialized/home python3 client.py   (stdio: `brain mcp`)
       BRAIN_MCP_URL=http://127.0.0.1:PORT/mcp python3 client.py               (`brain serve`'s /mcp)
Exits 0 when every check passes; prints the failing check otherwise.
"""

import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = {
    "brain_session_start",
    "brain_get_memory",
    "brain_search",
    "brain_context_pack",
    "brain_remember",
    "brain_update",
    "brain_feedback",
    "brain_status",
    "brain_mark",
    "brain_refresh",
}


def field(obj, snake, camel):
    """SDK versions differ: newer ones use snake_case attributes, older ones camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def is_error(result):
    return bool(field(result, "is_error", "isError"))


def texts(result):
    return [block.text for block in result.content if block.type == "text"]


def ok(result, what):
    assert not is_error(result), f"{what} failed: {texts(result)}"
    return texts(result)


async def main():
    url = os.environ.get("BRAIN_MCP_URL")
    if url:
        from mcp.client.streamable_http import streamable_http_client

        async with streamable_http_client(url) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await checks(session)
    else:
        server = StdioServerParameters(
            command=os.environ["BRAIN_BIN"],
            args=["mcp"],
            env={"BRAIN_HOME": os.environ["BRAIN_HOME"], "BRAIN_PROJECT": "demo", "PATH": os.environ.get("PATH", "")},
        )
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                await checks(session)
    print("mcp client: all checks passed")


async def review(session, arguments, cli):
    """Approving, and changing an approved item, is a reviewer's under write_policy = "draft":
    over stdio the agent is refused and the user does it (`brain …`); the callers of a server
    without tokens are the local user's, and review."""
    if os.environ.get("BRAIN_MCP_URL"):
        [updated] = ok(await session.call_tool("brain_update", arguments), arguments["action"])
        assert json.loads(updated)["updated"], updated
        return
    refused = await session.call_tool("brain_update", arguments)
    assert is_error(refused) and "reviewer" in texts(refused)[0], texts(refused)
    env = {"BRAIN_HOME": os.environ["BRAIN_HOME"], "BRAIN_PROJECT": "demo", "PATH": os.environ.get("PATH", "")}
    subprocess.run([os.environ["BRAIN_BIN"], *cli], env=env, check=True, capture_output=True)


async def checks(session):
    """Every tool, good and bad input; the test home sets write_policy = "draft"."""
    init = await session.initialize()
    assert field(init, "server_info", "serverInfo").name == "brain", init

    listed = await session.list_tools()
    names = {tool.name for tool in listed.tools}
    assert names == TOOLS, f"tools: {sorted(names)}"
    for tool in listed.tools:
        assert tool.description and len(tool.description) > 20, f"{tool.name}: no description"
        assert field(tool, "input_schema", "inputSchema").get("type") == "object", f"{tool.name}: no input schema"

    [remembered] = ok(
        await session.call_tool(
            "brain_remember",
            {
                "title": "Use WAL mode for SQLite",
                "content": "Concurrent readers need WAL; set journal_mode=WAL at open.",
                "kind": "decision",
                "importance": 4,
                "confidence": 0.9,
                "tags": ["sqlite", "storage"],
            },
        ),
        "remember",
    )
    item = json.loads(remembered)
    item_id = item["id"]
    assert item["source"] == "mcp", item
    assert item["scope"] == "project/demo", item
    # The test home's config sets write_policy = "draft".
    assert item["status"] == "draft", item

    [status] = ok(await session.call_tool("brain_status", {}), "status")
    status = json.loads(status)
    assert status["by_status"]["draft"] == 1, status
    assert status["project"] == "demo", status
    generation = status["generation"]

    await review(session, {"id": item_id, "action": "approve"}, ["approve", item_id])

    [page] = ok(await session.call_tool("brain_search", {"query": "WAL sqlite", "limit": 5}), "search")
    page = json.loads(page)
    assert [r["id"] for r in page["results"]] == [item_id], page
    assert page["next_offset"] is None, page

    # This home has no vault: a block has nowhere to go (over HTTP the inbox is global, which
    # a project's token may not write); a refresh still answers, without a rescan.
    no_vault = await session.call_tool("brain_mark", {"type": "lesson", "text": "Keep WAL on"})
    assert is_error(no_vault), texts(no_vault)
    assert "does not exist" in texts(no_vault)[0] or "arcs of project/demo only" in texts(no_vault)[0], texts(no_vault)
    refreshed = ok(await session.call_tool("brain_refresh", {"task": "storage"}), "refresh")
    assert "Working memory" in refreshed[0], refreshed
    assert json.loads(refreshed[-1])["vault_rescanned"] is False, refreshed

    bad_limit = await session.call_tool("brain_search", {"query": "x", "limit": 101})
    assert is_error(bad_limit) and "limit 101" in texts(bad_limit)[0], texts(bad_limit)

    document, fields = ok(await session.call_tool("brain_get_memory", {"token_budget": 2000}), "get_memory")
    assert "Use WAL mode for SQLite" in document, document
    assert json.loads(fields)["brainHash"], fields

    [status] = ok(await session.call_tool("brain_status", {}), "status")
    status = json.loads(status)
    assert status["by_status"]["approved"] == 1 and status["by_status"]["draft"] == 0, status
    assert status["generation"] > generation, status

    text, fields = ok(
        await session.call_tool("brain_session_start", {"topics": "sqlite", "task": "tune storage"}),
        "session_start",
    )
    assert text.strip(), "session_start text is empty"
    fields = json.loads(fields)
    assert item_id in fields["context_recall"], fields

    text, fields = ok(
        await session.call_tool("brain_context_pack", {"task": "sqlite storage", "token_budget": 600}),
        "context_pack",
    )
    assert text.strip(), "context_pack text is empty"
    fields = json.loads(fields)
    assert fields["budget"]["cap"] == 600 and fields["budget"]["used"] <= 600, fields

    # A second item supersedes the first.
    [newer] = ok(
        await session.call_tool("brain_remember", {"title": "WAL plus busy timeout", "content": "Also 5 s."}),
        "remember 2",
    )
    newer_id = json.loads(newer)["id"]
    await review(session, {"id": item_id, "action": "supersede", "by": newer_id}, ["supersede", item_id, newer_id])
    [old] = ok(await session.call_tool("brain_get_memory", {"id": item_id}), "get the superseded item")
    assert json.loads(old)["item"]["status"] == "superseded", old

    # Errors are tool errors with the brain's message, and the server stays up.
    missing = await session.call_tool("brain_update", {"id": "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV", "action": "approve"})
    assert is_error(missing) and "not found" in texts(missing)[0], texts(missing)
    bad = await session.call_tool("brain_update", {"id": "../etc", "action": "deprecate"})
    assert is_error(bad), texts(bad)
    no_by = await session.call_tool("brain_update", {"id": newer_id, "action": "supersede"})
    assert is_error(no_by) and "by" in texts(no_by)[0], texts(no_by)
    ok(await session.call_tool("brain_status", {}), "status after errors")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except AssertionError as err:
        print(f"mcp client check failed: {err}", file=sys.stderr)
        sys.exit(1)
