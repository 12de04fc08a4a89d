"""Drives kith's MCP server with the official MCP Python SDK (`mcp`).

Usage:
  mcp_check.py stdio KITH_BINARY PACK      spawns `KITH_BINARY --pack PACK mcp`
  mcp_check.py http URL KEY OTHER_KEY      the Streamable HTTP endpoint URL
                                           (…/mcp); KEY and OTHER_KEY belong
                                           to two different owners

Both: lists the tools (each with an output schema and annotations), stores
a message with memory_store, ingests one with memory_ingest, retrieves
both with memory_retrieve, and refuses arguments of the wrong type. Every
successful answer's structured content is checked against the tool's
output schema by the SDK, and must equal the JSON of its text content.
Over HTTP also: another owner's key does not see the memory, and a wrong
key cannot connect.

Prints what it did, one line a step, and `ok: {json summary}` last; any
failed check raises, so the exit status is non-zero with a traceback.
Run by kith-cli's tests/python.rs.
"""

import asyncio
import importlib.metadata
import json
import sys
import urllib.error
import urllib.request

from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

EXPECTED_TOOLS = {"memory_store", "memory_ingest", "memory_retrieve", "memory_get_node"}
# docs/mcp.md, "Answers": the tools that change no memory.
READ_ONLY = {
    "memory_retrieve",
    "memory_get_node",
    "memory_path",
    "memory_list_alias_proposals",
    "memory_list_claims",
}

MOVED = "I moved to Lisbon in September."
WORKS = "My sister Rosa works at Northwind Bakery."


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def describe(error):
    """An exception's text with that of every exception it groups or wraps."""
    parts = [f"{type(error).__name__}: {error}"]
    for inner in getattr(error, "exceptions", ()):
        parts.append(describe(inner))
    if error.__cause__ is not None:
        parts.append(describe(error.__cause__))
    return "; ".join(parts)


def text_of(result):
    return "".join(getattr(part, "text", "") for part in result.content)


async def call(client, name, arguments):
    """A successful call's structured content, checked three ways."""
    result = await client.call_tool(name, arguments)
    check(not result.is_error, f"{name} failed: {text_of(result)}")
    check(result.structured_content is not None, f"{name}: no structured content")
    # The SDK already checked it when the call returned; asking again makes
    # the check explicit (raises RuntimeError naming the mismatch).
    await client.session.validate_tool_result(name, result)
    check(
        json.loads(text_of(result)) == result.structured_content,
        f"{name}: the text content is not the structured content",
    )
    return result.structured_content


async def exercise(client, label):
    """The checks both transports share; returns a summary."""
    tools = (await client.list_tools()).tools
    names = {tool.name for tool in tools}
    check(EXPECTED_TOOLS <= names, f"missing tools: {EXPECTED_TOOLS - names}")
    for tool in tools:
        check(tool.output_schema is not None, f"{tool.name} has no outputSchema")
        check(tool.annotations is not None, f"{tool.name} has no annotations")
        read_only = tool.annotations.read_only_hint
        check(bool(read_only) == (tool.name in READ_ONLY), f"{tool.name}: readOnlyHint {read_only}")
    print(f"{label}: {len(tools)} tools, each with an output schema and annotations")

    stored = await call(client, "memory_store", {"content": MOVED, "speaker": "Alice", "session_id": "s1"})
    check(stored["created"] is True, f"memory_store: {stored}")
    print(f"{label}: memory_store -> event {stored['event_id']}")

    ingested = await call(client, "memory_ingest", {"content": WORKS, "speaker": "Alice", "session_id": "s1"})
    check(ingested["status"] == "complete", f"memory_ingest: {ingested}")
    print(f"{label}: memory_ingest -> {ingested['status']}, derivation {json.dumps(ingested['derivation'])}")

    moved = await call(client, "memory_retrieve", {"query": "Where did Alice move?", "token_budget": 200})
    check("Lisbon" in moved["context"], f"memory_retrieve: Lisbon not in {moved['context']!r}")
    check(
        any(r["event_id"] == stored["event_id"] for r in moved["results"]),
        f"memory_retrieve: the stored event is not among {moved['results']}",
    )
    check(moved["tokens"] <= 200, f"memory_retrieve: {moved['tokens']} tokens over a budget of 200")
    works = await call(client, "memory_retrieve", {"query": "Where does Rosa work?", "token_budget": 200})
    check("Northwind" in works["context"], f"memory_retrieve: Northwind not in {works['context']!r}")
    print(f"{label}: memory_retrieve -> {len(moved['results'])} results, context {moved['context']!r}")

    refused = await client.call_tool("memory_store", {"content": 5})
    check(refused.is_error, "memory_store with content 5 was accepted")
    check(text_of(refused).startswith("invalid_input:"), f"refusal: {text_of(refused)!r}")
    print(f"{label}: wrong argument type refused: {text_of(refused)!r}")

    return {
        "transport": label,
        "sdk": importlib.metadata.version("mcp"),
        "protocol": client.protocol_version,
        "tools": len(tools),
        "event_id": stored["event_id"],
        "context": moved["context"],
    }


def post_status(url, key):
    """The HTTP status of an `initialize` POSTed with `key`, outside the SDK."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        }
    ).encode()
    request = urllib.request.Request(
        url,
        data=body,
        headers={
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


def http_client(url, key):
    transport = streamable_http_client(
        url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    )
    return Client(transport, read_timeout_seconds=60)


async def over_stdio(kith, pack):
    params = StdioServerParameters(
        command=kith,
        args=["--pack", pack, "mcp"],
        env={"KITH_MCP_OWNER": "alice", "KITH_LOG": "warn"},
    )
    async with Client(params, read_timeout_seconds=60) as client:
        return await exercise(client, "stdio")


async def over_http(url, key, other_key):
    async with http_client(url, key) as client:
        summary = await exercise(client, "http")
    # The owner comes from the key: the other owner's memory is empty.
    async with http_client(url, other_key) as client:
        other = await call(client, "memory_retrieve", {"query": "Where did Alice move?"})
        check(other["results"] == [], f"another owner sees {other['results']}")
        check("Lisbon" not in other["context"], f"another owner sees {other['context']!r}")
    print("http: another owner's key sees none of it")
    try:
        async with http_client(url, "not-a-key-of-this-server-0000") as client:
            await client.list_tools()
    except Exception as e:  # grouped by anyio; the SDK's own error inside
        # Usually MCPError; sometimes the connection is closed before the
        # SDK reads the 401 (the server answers before reading the body).
        refusal = describe(e)
    else:
        raise AssertionError("a wrong key was let in")
    # The SDK reports any refusal as "Server returned an error response";
    # the status it got is the server's 401.
    status = post_status(url, "not-a-key-of-this-server-0000")
    check(status == 401, f"a wrong key was answered {status}, not 401")
    print(f"http: a wrong key cannot connect (HTTP {status}; the SDK: {refusal[-120:]})")
    return summary


def main():
    mode, args = sys.argv[1] if len(sys.argv) > 1 else "", sys.argv[2:]
    if mode == "stdio" and len(args) == 2:
        summary = asyncio.run(over_stdio(*args))
    elif mode == "http" and len(args) == 3:
        summary = asyncio.run(over_http(*args))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print("ok:", json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
