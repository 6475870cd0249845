"""Print the `uv pip install` options that give uv the package sources pip is configured with.

`make install` installs with uv (docs/decisions/0028-test-suite-cost.md: 27-32 s against pip's
128-197 s on a clean clone), but uv reads no pip configuration: a machine whose pip.conf or PIP_*
variables add a local index, a folder of wheels or a constraints file must get the same sources
from uv. Read from `pip config list` (files and environment, as pip itself merges them):
index-url, extra-index-url, find-links and constraint. `--index-strategy unsafe-best-match` makes
uv choose as pip does, the best version across every index, not the first index naming a package.
"""

from __future__ import annotations

import shlex
import subprocess
import sys

OPTIONS = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
}


def uv_args(config_list: str) -> list[str]:
    """`pip config list` lines (`global.find-links='/opt/wheels'`, `:env:.find-links='…'`) as
    uv options; an option pip takes once (index-url) is given once, the environment's winning."""
    found: dict[str, list[str]] = {}
    for line in config_list.splitlines():
        key, _, value = line.partition("=")
        name = key.rsplit(".", 1)[-1]
        if name not in OPTIONS or not value:
            continue
        values = shlex.split(value)
        if len(values) == 1:
            values = values[0].split()
        if name == "index-url":
            if key.startswith(":env:") or name not in found:
                found[name] = values[:1]
            continue
        found.setdefault(name, [])
        found[name] += [v for v in values if v not in found[name]]
    args = ["--index-strategy", "unsafe-best-match"]
    for name, values in found.items():
        for value in values:
            args += [OPTIONS[name], value]
    return args


def main() -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    print(shlex.join(uv_args(listed)))


if __name__ == "__main__":
    main()
