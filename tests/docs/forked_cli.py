"""The `atrium` client commands a page runs, forked from a process that has imported the client.

A page runs `.venv/bin/atrium` once a command, up to two dozen times, and each start of the
installed script is mostly imports (httpx, typer, rich, the client's pydantic models): ~0.3 s of
CPU on a quiet machine, ~0.85 s on CI. In the page's folder `.venv/bin/atrium` is a small script
instead (`install`), which hands its arguments, environment, working folder and standard file
descriptors to a server started for the page (`python -m tests.docs.forked_cli SOCKET`); the
server forks a process that imports `atrium.cli` and runs the command on those descriptors, as
tests/processes.py's forkserver does (`run_cli`), and the script exits with its status.

Only the client's commands (`CLIENT_COMMANDS`) are forked. `serve`, `worker`, `migrate` and
`keys` (and a bare `atrium`) run the installed script: they are the server's start-up the pages
show, and a background `serve` must stay in the page's process group. A forked command is killed
(SIGKILL) when its script is, e.g. with a background block's process group. `ATRIUM_TEST_SPAWN=exec`
gives the page the installed script for every command (tests/processes.py).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import sys
from contextlib import suppress
from pathlib import Path

CLIENT_COMMANDS = frozenset(
    {"run", "runs", "artifacts", "agents", "webhooks", "providers", "domains", "spaces", "usage"}
)
# What the client's commands import before they run (`atrium.cli` itself is imported by each
# forked command, after its environment is set: its consoles read COLUMNS and the like).
PRELOAD = ("atrium.client", "typer", "rich.console", "rich.table", "httpx")
_HEADER = 8  # bytes of the request's length
_ROOT = Path(__file__).parents[2]

_SCRIPT = """#!{python} -IS
# Written by tests/docs/forked_cli.py: the client's commands forked from {socket}.
import sys
sys.path.insert(0, {root!r})
from tests.docs.forked_cli import client
client({socket!r}, {real!r})
"""


def install(bin_dir: Path, socket_path: Path, real: Path) -> None:
    """Write the `atrium` script of `bin_dir` that hands client commands to the server at
    `socket_path` and runs `real` (the installed script) for the others."""
    script = bin_dir / "atrium"
    text = _SCRIPT.format(
        python=sys.executable, socket=str(socket_path), root=str(_ROOT), real=str(real)
    )
    script.write_text(text)
    script.chmod(0o755)


def client(socket_path: str, real: str) -> None:
    """The script's side: `atrium ARGS` run by the server; exits with the command's status."""
    args = sys.argv[1:]
    if not args or args[0] not in CLIENT_COMMANDS:
        os.execv(real, [real, *args])
    request = json.dumps({"args": args, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(socket_path)
        socket.send_fds(conn, [len(request).to_bytes(_HEADER, "big") + request], [0, 1, 2])
        status = b""
        while chunk := conn.recv(64):
            status += chunk
    code = int(status)
    if code < 0:  # killed by a signal: so is this script, as the command's own process would be
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    length = int.from_bytes(data[:_HEADER], "big")
    body = data[_HEADER:]
    while len(body) < length:
        chunk = conn.recv(length - len(body))
        if not chunk:
            raise ConnectionError("the script hung up before its request ended")
        body += chunk
    request: dict[str, object] = json.loads(body)
    return request, fds


def _command(request: dict[str, object], fds: list[int]) -> None:
    """The forked process: the script's descriptors, environment and folder, then the command;
    never returns."""
    from tests.cli_main import run_cli  # imported by `serve`, before it forks

    code = 1
    try:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        env = request["env"]
        args = request["args"]
        assert isinstance(env, dict) and isinstance(args, list)
        os.environ.clear()
        os.environ.update(env)
        os.chdir(str(request["cwd"]))
        run_cli(args, env)
        code = 0
    except SystemExit as exit:
        if exit.code is None or isinstance(exit.code, int):
            code = exit.code or 0
        else:
            print(exit.code, file=sys.stderr)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):  # a closed pipe: the status still goes back
                stream.flush()
        os._exit(code)


def serve(socket_path: str) -> None:
    """Fork a command for each script that connects, and answer with its exit status."""
    import gc
    import importlib

    for module in (*PRELOAD, "tests.cli_main"):
        importlib.import_module(module)
    # Forked commands neither walk nor copy the preloaded heap (tests/frozen_preload.py).
    gc.collect()
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(f"{socket_path}.binding")
    listener.listen(64)
    os.rename(f"{socket_path}.binding", socket_path)  # there once it accepts connections
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    running: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, the script's socket)

    def stop(*_: object) -> None:
        for pid, _conn in running.values():
            os.kill(pid, signal.SIGKILL)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    while True:
        for key, _ in selector.select():
            if key.fileobj is listener:
                conn, _ = listener.accept()
                try:
                    request, fds = _receive(conn)
                except (OSError, ValueError):  # the script died while it sent
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    # Not held open by this command: the other scripts' ends, so each script
                    # sees its own end close once its status is sent.
                    for pidfd, (_, other) in running.items():
                        os.close(pidfd)
                        other.close()
                    for held in (conn, listener, selector):
                        held.close()
                    _command(request, fds)
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                running[pidfd] = (pid, conn)
                selector.register(pidfd, selectors.EVENT_READ)
                selector.register(conn, selectors.EVENT_READ, data=pid)
            elif isinstance(key.fileobj, socket.socket):
                # The script sent nothing more: it is gone (killed), and so goes its command.
                selector.unregister(key.fileobj)
                os.kill(key.data, signal.SIGKILL)
            else:
                pidfd = key.fd
                pid, conn = running.pop(pidfd)
                selector.unregister(pidfd)
                os.close(pidfd)
                _, status = os.waitpid(pid, 0)
                with suppress(OSError):  # the script is gone
                    conn.sendall(str(os.waitstatus_to_exitcode(status)).encode())
                if conn.fileno() in selector.get_map():
                    selector.unregister(conn)
                conn.close()


if __name__ == "__main__":
    serve(sys.argv[1])
