"""Runs a stdio MCP server and logs every line each way: a wire log.

    python wiretap.py LOGFILE -- PROGRAM [ARGS...]

Lines from the client go to the server's stdin and into LOGFILE as
`<ms> > line`; lines from the server go to the client and into LOGFILE as
`<ms> < line` (`<ms>`: milliseconds since the start). The server's stderr
is passed through. The interop runner puts it in front of a server when
given `--wire-log DIR`; it has no other use.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    log = open(sys.argv[1], "ab", buffering=0)  # noqa: SIM115 (lives as long as the process)
    start = time.monotonic()
    lock = threading.Lock()

    def record(direction: bytes, line: bytes) -> None:
        stamp = f"{(time.monotonic() - start) * 1000:9.1f} ".encode()
        with lock:
            log.write(stamp + direction + b" " + line.rstrip(b"\n") + b"\n")

    child = subprocess.Popen(sys.argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None

    def to_server() -> None:
        for line in sys.stdin.buffer:
            record(b">", line)
            try:
                child.stdin.write(line)
                child.stdin.flush()
            except BrokenPipeError:
                break
        record(b"#", b"client closed stdin")
        try:
            child.stdin.close()
        except BrokenPipeError:
            pass

    threading.Thread(target=to_server, daemon=True).start()
    out = sys.stdout.buffer
    for line in child.stdout:
        record(b"<", line)
        try:
            out.write(line)
            out.flush()
        except BrokenPipeError:
            break
    code = child.wait()
    record(b"#", f"server exited with {code}".encode())
    return code


if __name__ == "__main__":
    sys.exit(main())
