"""A small DNS server on your machine, to try domain verification without touching real DNS
(docs/guide/domains.md).

    .venv/bin/python examples/dns_server.py --port 5353 --records records.txt

It answers on 127.0.0.1 (UDP) from a records file of lines `NAME TYPE VALUE`, for example

    _atrium-challenge.links.example.test  TXT    0123456789abcdef0123456789abcdef
    links.example.test                    A      127.0.0.1
    www.links.example.test                CNAME  links.example.test

(a line starting with `#` is a comment; TYPE is A, AAAA, CNAME or TXT; a TXT value is the
rest of the line, quotes around it optional).
The file is read again whenever it changes, so records you add are answered at once, without a
restart; a missing file means no records. `--record NAME TYPE VALUE` adds records from the
command line. An unknown name is answered NXDOMAIN, a known name without records of the type
asked an empty answer, as a real server does. Each query is printed.

Point atrium at it with `ATRIUM_DNS_NAMESERVERS=127.0.0.1:5353`: every lookup atrium makes
then goes here (for a trial only; a deployment uses the system's resolver or its own).
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
from pathlib import Path

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset

TYPES = ("A", "AAAA", "CNAME", "TXT")
Records = dict[str, dict[str, list[str]]]


def _name(text: str) -> str:
    return text.strip().rstrip(".").lower()


def parse_records(lines: list[str]) -> Records:
    """`NAME TYPE VALUE` lines as {name: {type: [values]}}; a malformed line is reported on
    stderr and skipped, so a typo never stops the server."""
    records: Records = {}
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        parts = text.split(None, 2)
        if len(parts) != 3 or parts[1].upper() not in TYPES:
            print(
                f"line {number}: expected NAME TYPE VALUE ({'/'.join(TYPES)}): {line!r}",
                file=sys.stderr,
                flush=True,
            )
            continue
        name, kind, value = _name(parts[0]), parts[1].upper(), parts[2].strip()
        if kind == "TXT" and len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]  # a quoted TXT value, as DNS providers show it
        records.setdefault(name, {}).setdefault(kind, []).append(value)
    return records


class RecordsFile:
    """The records of a file, read again when its modification time or size changes."""

    def __init__(self, path: Path | None, extra: Records) -> None:
        self.path = path
        self.extra = extra
        self._seen: tuple[int, int] | None = None
        self._records: Records = {}

    def current(self) -> Records:
        if self.path is not None:
            try:
                stat = self.path.stat()
                stamp: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
            except FileNotFoundError:
                stamp = None
            if stamp != self._seen:
                self._seen = stamp
                text = self.path.read_text(encoding="utf-8") if stamp else ""
                self._records = parse_records(text.splitlines())
        merged = {
            name: {k: list(v) for k, v in kinds.items()} for name, kinds in self._records.items()
        }
        for name, kinds in self.extra.items():
            for kind, values in kinds.items():
                merged.setdefault(name, {}).setdefault(kind, []).extend(values)
        return merged


def _txt(value: str) -> str:
    """A TXT value in zone-file syntax: quoted strings of at most 255 characters each."""
    chunks = [value[start : start + 255] for start in range(0, len(value), 255)] or [""]
    escaped = (chunk.replace("\\", "\\\\").replace('"', '\\"') for chunk in chunks)
    return " ".join(f'"{chunk}"' for chunk in escaped)


def reply(query: dns.message.Message, records: Records) -> dns.message.Message:
    """The answer to `query` from `records`: CNAMEs followed, NXDOMAIN for unknown names."""
    answer = dns.message.make_response(query)
    answer.flags |= dns.flags.RA
    question = query.question[0]
    name = _name(question.name.to_text())
    kind = dns.rdatatype.to_text(question.rdtype)
    if name not in records:
        answer.set_rcode(dns.rcode.NXDOMAIN)
        return answer
    for _ in range(8):  # follow CNAMEs, as a recursive server does
        alias = records.get(name, {}).get("CNAME")
        if kind == "CNAME" or not alias:
            break
        target = _name(alias[0])
        answer.answer.append(dns.rrset.from_text_list(name + ".", 0, "IN", "CNAME", [target + "."]))
        name = target
    values = records.get(name, {}).get(kind, [])
    if kind == "TXT":
        values = [_txt(value) for value in values]
    if values:
        answer.answer.append(dns.rrset.from_text_list(name + ".", 0, "IN", kind, values))
    return answer


def serve(host: str, port: int, records: RecordsFile) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((host, port))
    source = f"records from {records.path}" if records.path else "records from the command line"
    print(f"DNS server on {host}:{port} (UDP), {source}", flush=True)
    while True:
        wire, client = sock.recvfrom(4096)
        try:
            query = dns.message.from_wire(wire)
        except Exception:  # not a DNS query: ignored, as a real server would
            continue
        if not query.question:
            continue
        answer = reply(query, records.current())
        question = query.question[0]
        found = sum(len(rrset) for rrset in answer.answer)
        status = dns.rcode.to_text(answer.rcode())
        print(
            f"{question.name.to_text(omit_final_dot=True)} "
            f"{dns.rdatatype.to_text(question.rdtype)}: {status}, {found} record(s)",
            flush=True,
        )
        sock.sendto(answer.to_wire(), client)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=5353, help="UDP port (default 5353)")
    parser.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1)")
    parser.add_argument("--records", type=Path, help="file of NAME TYPE VALUE lines")
    parser.add_argument(
        "--record",
        nargs=3,
        action="append",
        default=[],
        metavar=("NAME", "TYPE", "VALUE"),
        help="a record (repeat)",
    )
    args = parser.parse_args()
    extra = parse_records([" ".join(record) for record in args.record])
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends it quietly
        serve(args.host, args.port, RecordsFile(args.records, extra))


if __name__ == "__main__":
    main()
