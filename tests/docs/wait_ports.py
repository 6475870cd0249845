"""`python -m tests.docs.wait_ports SECONDS LOG PORT…`: return once every loopback PORT is open,
TCP (it accepts a connection) or UDP (a socket is bound to it), or, with no PORT, once LOG has
a line. Exit status 1 after SECONDS. The docs runner calls it after a background block."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path


def _open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        pass
    return _udp_bound(port)


def _udp_bound(port: int) -> bool:
    """Whether a UDP socket is bound to `port`, read from the kernel's table: probing it with
    a bind of our own could take the port from the server in the instant it starts."""
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        if any(int(row.split()[1].rsplit(":", 1)[1], 16) == port for row in rows):
            return True
    return False


def main(seconds: float, log: Path, ports: list[int]) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ports and all(_open(port) for port in ports):
            return 0
        if not ports and log.exists() and "\n" in log.read_text(errors="replace"):
            return 0
        time.sleep(0.05)
    what = f"ports {ports} did not open" if ports else f"{log} printed nothing"
    print(f"docs runner: {what} within {seconds} s", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1]), Path(sys.argv[2]), [int(p) for p in sys.argv[3:]]))
