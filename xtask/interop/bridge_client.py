"""A client written by others in front of `mcp bridge`: the official Python
SDK's `Client` (`mcp==2.3.0`) over its stdio transport, which starts the
command line it is given (the bridge, serving a server) and drives it as it
would any stdio server.

    python bridge_client.py --server python|everything --mode legacy|auto|2026-07-28
        [--expect-era VERSION|legacy] [--wire-log FILE] [--http PORT] -- COMMAND [ARGS...]

`--server` names the server behind the bridge, which picks the tools and
the answers expected of them. `--mode` is the SDK's own: `legacy` (the
`initialize` handshake), `auto` (`server/discover`, falling back to
`initialize`), or a 2026-07-28 pin. `--expect-era` is what the connection
must end up speaking: a version, or `legacy` for any handshake revision.
`--wire-log FILE` is the wire log of a `wiretap.py` between the bridge and
the server: the cancel check looks there for the cancel the bridge relayed.
The bridge's stderr (`mcp -v` shows the server's stderr there) is read too:
the Python server says on it that a cancelled `slow` stopped.

With `--http PORT` the command is a bridge serving Streamable HTTP on
`127.0.0.1:PORT` (`mcp bridge --serve http --listen 127.0.0.1:PORT …`): the
script starts it, connects the SDK's Streamable HTTP client to
`http://127.0.0.1:PORT/mcp`, and at the end sends the bridge SIGTERM, which
must end it within 5 s.

Prints one line per check, `ok <check>: what was seen` or `FAIL <check>:
why`, and exits 1 if any failed (2 on bad usage).
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import PROCESS_TERMINATION_TIMEOUT, StdioServerParameters, stdio_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS


@dataclass
class Profile:
    """What differs between the servers: tool names, arguments, answers."""

    tools: list[str]
    echo: tuple[str, dict[str, Any]]
    echoed: str
    elicit: tuple[str, dict[str, Any]]
    answer: dict[str, Any]
    elicited: list[str]
    progress: tuple[str, dict[str, Any]]
    steps: int
    slow: tuple[str, dict[str, Any]]
    # What the server writes to stderr when it stops a cancelled call.
    cancelled_on_stderr: str | None = None


PROFILES = {
    "python": Profile(
        tools=["echo", "greet", "count", "slow"],
        echo=("echo", {"text": "héllo from the Python SDK"}),
        echoed="héllo from the Python SDK",
        elicit=("greet", {}),
        answer={"name": "Ada"},
        elicited=["Hello, Ada!"],
        progress=("count", {"steps": 4}),
        steps=4,
        slow=("slow", {"seconds": 60}),
        cancelled_on_stderr="interop-python: slow was cancelled",
    ),
    "everything": Profile(
        tools=["echo", "trigger-elicitation-request", "trigger-long-running-operation"],
        echo=("echo", {"message": "héllo from the Python SDK"}),
        echoed="Echo: héllo from the Python SDK",
        elicit=("trigger-elicitation-request", {}),
        answer={"name": "Ada", "check": True, "integer": 7},
        elicited=["Name: Ada", "Favorite Integer: 7"],
        progress=("trigger-long-running-operation", {"duration": 0.4, "steps": 4}),
        steps=4,
        slow=("trigger-long-running-operation", {"duration": 60, "steps": 600}),
    ),
}


@dataclass
class Options:
    server: str = ""
    mode: str = ""
    expect_era: str | None = None
    wire_log: Path | None = None
    http: int | None = None
    command: list[str] = field(default_factory=list)


def parse(argv: list[str]) -> Options | None:
    options = Options()
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            options.command = argv[i + 1 :]
            break
        if arg not in ("--server", "--mode", "--expect-era", "--wire-log", "--http") or i + 1 >= len(argv):
            return None
        value = argv[i + 1]
        if arg == "--server":
            options.server = value
        elif arg == "--mode":
            options.mode = value
        elif arg == "--expect-era":
            options.expect_era = value
        elif arg == "--http":
            options.http = int(value)
        else:
            options.wire_log = Path(value)
        i += 2
    if options.server not in PROFILES or not options.mode or not options.command:
        return None
    return options


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def eventually(test: Callable[[], bool], seconds: float) -> bool:
    """Waits up to `seconds` for `test()` to hold."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if test():
            return True
        await anyio.sleep(0.025)
    return test()


class Checks:
    def __init__(self) -> None:
        self.failures = 0

    async def run(self, name: str, body: Callable[[], Awaitable[str]]) -> bool:
        try:
            seen = await body()
        except Exception as e:  # noqa: BLE001 (a check's failure is any error)
            self.failures += 1
            why = re.sub(r"\s+", " ", f"{type(e).__name__}: {e}")[:400]
            print(f"FAIL {name}: {why}", flush=True)
            return False
        print(f"ok {name}: {seen}", flush=True)
        return True


async def drive(options: Options, profile: Profile, stderr_path: Path, checks: Checks) -> None:
    elicitations: list[str] = []

    async def on_elicit(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        elicitations.append(params.message)
        return types.ElicitResult(action="accept", content=profile.answer)

    def bridge_stderr() -> str:
        return stderr_path.read_text(errors="replace")

    with stderr_path.open("w") as errlog:
        bridge: subprocess.Popen[bytes] | None = None
        if options.http is not None:
            bridge = subprocess.Popen(options.command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errlog)
            if not await listening(options.http, bridge):
                print(f"FAIL connect: the bridge did not listen on port {options.http}", flush=True)
                print(f"bridge stderr: {bridge_stderr()[-800:]!r}")
                checks.failures += 1
                bridge.kill()
                return
            server: Any = f"http://127.0.0.1:{options.http}/mcp"
        else:
            params = StdioServerParameters(command=options.command[0], args=options.command[1:])
            server = stdio_client(params, errlog=errlog)
        client = Client(
            server,
            mode=options.mode,
            elicitation_callback=on_elicit,
            client_info=types.Implementation(name="bridge-interop-python", version=version("mcp")),
        )
        entered = False

        async def connect() -> str:
            nonlocal entered
            await client.__aenter__()
            entered = True
            era = client.protocol_version
            if options.expect_era == "legacy" and era not in HANDSHAKE_PROTOCOL_VERSIONS:
                raise RuntimeError(f"speaks {era}, wanted a handshake revision")
            if options.expect_era not in (None, "legacy") and era != options.expect_era:
                raise RuntimeError(f"speaks {era}, wanted {options.expect_era}")
            info = client.server_info
            who = f"{info.name} {info.version}" if info else "an anonymous server"
            return f"{who}, protocol {era} (mode {options.mode}), Python SDK {version('mcp')}"

        if not await checks.run("connect", connect):
            print(f"bridge stderr: {bridge_stderr()[-800:]!r}")
            return
        try:
            await checks_on(client, options, profile, elicitations, bridge_stderr, checks)
        finally:
            start = time.monotonic()
            await client.__aexit__(None, None, None)
            took = time.monotonic() - start

        async def stop() -> str:
            assert bridge is not None
            start = time.monotonic()
            bridge.send_signal(signal.SIGTERM)
            while bridge.poll() is None and time.monotonic() - start < 5:
                await anyio.sleep(0.02)
            took = time.monotonic() - start
            if bridge.poll() is None:
                bridge.kill()
                raise RuntimeError("the bridge was still there 5 s after SIGTERM")
            return f"the client's session ended in {closed_in * 1000:.0f} ms; SIGTERM ended the bridge in {took * 1000:.0f} ms (exit {bridge.returncode})"

        # The SDK closes the bridge's stdin and waits this long before it
        # sends SIGTERM: the bridge must have left on its own by then.
        async def close() -> str:
            if took >= PROCESS_TERMINATION_TIMEOUT:
                raise RuntimeError(
                    f"closing took {took * 1000:.0f} ms: the bridge was still there "
                    f"{PROCESS_TERMINATION_TIMEOUT:g} s after its stdin closed (the SDK sent SIGTERM)"
                )
            return f"the bridge left in {took * 1000:.0f} ms"

        closed_in = took
        await checks.run("close", stop if bridge is not None else close)
        if checks.failures:
            print(f"bridge stderr: {bridge_stderr()[-800:]!r}")


async def listening(port: int, bridge: subprocess.Popen[bytes]) -> bool:
    """Waits up to 20 s for the bridge to listen on `port`."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if bridge.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            await anyio.sleep(0.05)
    return False


async def checks_on(
    client: Client,
    options: Options,
    profile: Profile,
    elicitations: list[str],
    bridge_stderr: Callable[[], str],
    checks: Checks,
) -> None:
    async def list_tools() -> str:
        names = [t.name for t in (await client.list_tools()).tools]
        missing = [t for t in profile.tools if t not in names]
        if missing:
            raise RuntimeError(f"missing {missing} in {names}")
        return f"{len(names)} tools, {', '.join(profile.tools)} among them"

    async def echo() -> str:
        text = text_of(await client.call_tool(*profile.echo))
        if profile.echoed not in text:
            raise RuntimeError(f"got {text!r}")
        return repr(text)

    async def elicitation() -> str:
        before = len(elicitations)
        result = await client.call_tool(*profile.elicit)
        text = text_of(result)
        asked = len(elicitations) - before
        if asked != 1:
            raise RuntimeError(f"the callback was asked {asked} times; result {text!r}")
        lacking = [w for w in profile.elicited if w not in text]
        if lacking:
            raise RuntimeError(f"result lacks {lacking}: {text!r}")
        return f"callback asked once; result has {', '.join(profile.elicited)}"

    async def progress() -> str:
        seen: list[str] = []

        async def on_progress(done: float, total: float | None, _message: str | None) -> None:
            seen.append(f"{done:g}/{total:g}" if total is not None else f"{done:g}")

        await client.call_tool(*profile.progress, progress_callback=on_progress)
        want = [f"{i}/{profile.steps}" for i in range(1, profile.steps + 1)]
        if seen != want:
            raise RuntimeError(f"progress {seen}, wanted {want}")
        return " ".join(seen)

    async def cancel() -> str:
        started = anyio.Event()
        returned = False

        async def on_progress(_done: float, _total: float | None, _message: str | None) -> None:
            started.set()

        async def call() -> None:
            nonlocal returned
            await client.call_tool(*profile.slow, progress_callback=on_progress)
            returned = True

        start = time.monotonic()
        with anyio.move_on_after(20) as limit:
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                await started.wait()
                # The user stops it once the server is at work.
                group.cancel_scope.cancel()
        took = time.monotonic() - start
        if limit.cancelled_caught:
            raise RuntimeError("no progress within 20 s")
        if returned:
            raise RuntimeError("the call returned instead")
        seen = [f"cancelled after {took * 1000:.0f} ms"]
        if options.wire_log is not None:
            wire_log = options.wire_log

            def relayed() -> bool:
                try:
                    lines = wire_log.read_text(errors="replace").splitlines()
                except OSError:
                    return False
                return any(re.match(r"^\s*[\d.]+ > ", l) and '"notifications/cancelled"' in l for l in lines)

            if not await eventually(relayed, 5):
                raise RuntimeError(f"no notifications/cancelled reached the server (wire log {wire_log})")
            seen.append("the bridge sent the server notifications/cancelled")
        if profile.cancelled_on_stderr is not None:
            said = profile.cancelled_on_stderr
            if not await eventually(lambda: said in bridge_stderr(), 5):
                raise RuntimeError(f"the server did not say {said!r}")
            seen.append("the server stopped the call")
        return "; ".join(seen)

    async def after_cancel() -> str:
        await echo()
        return "echo works"

    await checks.run("list-tools", list_tools)
    await checks.run("echo", echo)
    await checks.run("elicitation", elicitation)
    await checks.run("progress", progress)
    await checks.run("cancel", cancel)
    await checks.run("after-cancel", after_cancel)


async def main(argv: list[str]) -> int:
    options = parse(argv)
    if options is None:
        print(__doc__, file=sys.stderr)
        return 2
    checks = Checks()
    with tempfile.TemporaryDirectory(prefix="bridge-client-") as scratch:
        try:
            await drive(options, PROFILES[options.server], Path(scratch) / "bridge.stderr", checks)
        except Exception as e:  # noqa: BLE001 (reported, then the run fails)
            checks.failures += 1
            print(f"FAIL client: {type(e).__name__}: {e}", flush=True)
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
