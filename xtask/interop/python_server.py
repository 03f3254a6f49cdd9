"""The interop suite's own MCP server, on the official Python SDK (`mcp==2.3.0`).

It speaks both eras over stdio and Streamable HTTP (the SDK decides per
connection, or per request over HTTP: `initialize` for
2024-11-05..2025-11-25, per-request `_meta` and headers for 2026-07-28),
legacy over HTTP+SSE, and offers
one of each thing `cargo xtask interop` checks:

- `echo`: returns its text (structured output: `{"result": text}`).
- `greet`: needs a name it asks the user for (elicitation): answered by a
  multi round-trip request (`input_required`) in 2026-07-28 and by an
  `elicitation/create` request to the client in the legacy era.
- `count`: reports progress `1..steps` of `steps`, then returns.
- `slow`: reports progress every 100 ms for `seconds`; the suite cancels it,
  and it writes `interop-python: slow was cancelled` to stderr when it is.
- `add_tool`: registers a new tool and tells the client the list changed
  (`notifications/tools/list_changed` in legacy, `subscriptions/listen` in
  2026-07-28).
- `roots`: asks the client for its roots (a `roots/list` request in legacy,
  `input_required` in 2026-07-28) and returns their URIs.
- resources `interop://text` (UTF-8 text, not only ASCII) and
  `interop://blob` (every byte value 0..255, sent as base64).
- prompt `review`, with one argument.

Run: `python python_server.py` (stdio), `python python_server.py
streamable-http PORT [--stateless]` (Streamable HTTP at
`http://127.0.0.1:PORT/mcp`, both eras; legacy sessions unless
`--stateless`) or `python python_server.py sse PORT` (the 2024-11-05
HTTP+SSE transport, `GET http://127.0.0.1:PORT/sse`). Written against the 2.3.0 API
(`mcp.server.MCPServer`, formerly FastMCP; `Resolve`/`Elicit`/`ListRoots`
from `mcp.server.mcpserver.resolve`); the suite pins that version.
"""

from __future__ import annotations

import sys
from typing import Annotated

import anyio
from mcp.server import MCPServer, NotificationOptions
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve
from mcp.server.stdio import stdio_server
from mcp_types import ListRootsResult
from pydantic import BaseModel, Field

# The resource contents the suite compares byte for byte.
TEXT = "interop text: héllo wörld ✓ 🦀\nsecond line\n"
BLOB = bytes(range(256))

server = MCPServer(
    name="interop-python",
    version="1.0.0",
    instructions="The mcp-client interop suite's Python server.",
)

# Over stdio each connection is its own process; over HTTP the connections
# share the process and so this list (each added tool gets a new name).
added: list[str] = []


@server.tool()
def echo(text: str) -> str:
    """Returns the text it is given."""
    return text


class Name(BaseModel):
    """What `greet` asks the user for."""

    name: str = Field(description="Who to greet")


def ask_name() -> Elicit[Name]:
    """Asks the client (elicitation) for a name."""
    return Elicit("Who should be greeted?", Name)


@server.tool()
def greet(who: Annotated[Name, Resolve(ask_name)], greeting: str = "Hello") -> str:
    """Greets someone whose name is asked of the user."""
    return f"{greeting}, {who.name}!"


def ask_roots() -> ListRoots:
    """Asks the client for its roots."""
    return ListRoots()


@server.tool()
def roots(found: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """Returns the client's root URIs, one per line."""
    return "\n".join(str(root.uri) for root in found.roots)


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Reports progress 1..steps of steps, then returns."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i} of {steps}")
        await anyio.sleep(0.02)
    return f"counted to {steps}"


# Written to stderr when a `slow` call is cancelled: the suite reads it to
# know the cancel reached the server.
SLOW_CANCELLED = "interop-python: slow was cancelled"


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Works for `seconds`, reporting progress every 100 ms; says on stderr
    when it is cancelled."""
    ticks = max(1, int(seconds * 10))
    try:
        for i in range(1, ticks + 1):
            await ctx.report_progress(i, ticks)
            await anyio.sleep(0.1)
    except anyio.get_cancelled_exc_class():
        print(f"{SLOW_CANCELLED} (request {ctx.request_id})", file=sys.stderr, flush=True)
        raise
    return f"slept {seconds} s"


@server.tool()
async def add_tool(ctx: Context) -> str:
    """Adds a tool named `added_<n>` and announces the new tool list."""
    name = f"added_{len(added) + 1}"
    added.append(name)

    def added_tool() -> str:
        return name

    server.add_tool(added_tool, name=name, description="Added at run time by add_tool.")
    # 2026-07-28 clients hear of changes on their subscriptions/listen
    # stream; legacy ones by a notification on the connection.
    await ctx.notify_tools_changed()
    if ctx.protocol_version is not None and ctx.protocol_version < "2026-07-28":
        await ctx.session.send_tool_list_changed()
    return name


@server.resource("interop://text", mime_type="text/plain")
def text_resource() -> str:
    """UTF-8 text the suite compares byte for byte."""
    return TEXT


@server.resource("interop://blob", mime_type="application/octet-stream")
def blob_resource() -> bytes:
    """Every byte value, in order (sent base64-encoded)."""
    return BLOB


@server.prompt()
def review(code: str) -> str:
    """Asks for a review of some code."""
    return f"Please review this code:\n\n{code}"


def announce_tool_changes() -> None:
    """Makes every transport advertise `tools.listChanged` to legacy clients.

    `MCPServer` builds its initialization options without it (over stdio,
    SSE and Streamable HTTP alike); this server does send tool list
    changes, so it says so.
    """
    lowlevel = server._lowlevel_server  # noqa: SLF001 (no public accessor in 2.3.0)
    plain = lowlevel.create_initialization_options

    def with_tools_changed(notification_options=None, *args, **kwargs):
        options = notification_options or NotificationOptions(tools_changed=True)
        return plain(options, *args, **kwargs)

    lowlevel.create_initialization_options = with_tools_changed


async def serve_stdio() -> None:
    lowlevel = server._lowlevel_server  # noqa: SLF001
    async with stdio_server() as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def usage() -> str:
    return (
        "usage: python_server.py [--check]\n"
        "       python_server.py stdio\n"
        "       python_server.py streamable-http PORT [--stateless]\n"
        "       python_server.py sse PORT"
    )


def main(argv: list[str]) -> int:
    if "--check" in argv:
        # Imports and registrations succeeded.
        print("ok")
        return 0
    announce_tool_changes()
    transport = argv[0] if argv else "stdio"
    if transport == "stdio" and len(argv) <= 1:
        anyio.run(serve_stdio)
        return 0
    if transport not in ("streamable-http", "sse") or len(argv) < 2 or not argv[1].isdigit():
        print(usage(), file=sys.stderr)
        return 2
    port = int(argv[1])
    flags = argv[2:]
    if transport == "sse":
        if flags:
            print(usage(), file=sys.stderr)
            return 2
        # The 2024-11-05 HTTP+SSE transport: GET /sse, POST /messages/.
        server.run("sse", host="127.0.0.1", port=port)
        return 0
    if flags not in ([], ["--stateless"]):
        print(usage(), file=sys.stderr)
        return 2
    # Streamable HTTP at /mcp. One server for both eras: a request whose
    # Mcp-Protocol-Version names no handshake revision is served the
    # 2026-07-28 way; the rest is legacy Streamable HTTP, in sessions
    # (stateful) or each POST on its own (--stateless).
    server.run("streamable-http", host="127.0.0.1", port=port, stateless_http=bool(flags))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
