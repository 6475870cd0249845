"""The collector settings of `atrium serve` and `atrium worker` (`gc_thresholds.tune_gc`) keep
a request's cyclic garbage from piling up: on a steady load a large pile swings the heap by
megabytes, and the server's RSS creeps up with each swing
(docs/decisions/0011-garbage-collector-thresholds.md).

Run in a subprocess: `tune_gc` freezes every object of the process it runs in."""

from __future__ import annotations

import subprocess
import sys

# Cyclic garbage of the shape requests leave (a dict and a list that refer to each other),
# made one cycle at a time (`sys.argv[1]` of them), each kept in use while the next WINDOW
# (`sys.argv[2]`) are made: like requests and runs in flight, a cycle kept for a while reaches
# the old generation before it becomes garbage (0: dropped at once). A finalizer per cycle
# counts the cycles collected so far. Prints the pile (the most cycles ever dropped and not yet
# collected) and the number of full collections made meanwhile.
_PILE = """
import collections, gc, sys, weakref
from atrium.process_tuning.gc_thresholds import tune_gc

tune_gc()
before = gc.get_stats()[2]["collections"]


class Node:
    pass


CYCLES, WINDOW = int(sys.argv[1]), int(sys.argv[2])
made = collected = pile = 0
in_use = collections.deque()


def gone() -> None:
    global collected
    collected += 1


for _ in range(CYCLES):
    node = Node()
    node.cycle = {"self": node, "items": [node, {"n": made}]}
    weakref.finalize(node, gone)
    in_use.append(node)
    made += 1
    if len(in_use) > WINDOW:
        in_use.popleft()
    pile = max(pile, made - len(in_use) - collected)
    del node
print(pile, gc.get_stats()[2]["collections"] - before)
"""


def _pile(cycles: int, window: int) -> tuple[int, int]:
    """(the pile, full collections) of `_PILE` run in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _PILE, str(cycles), str(window)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    pile, full_collections = map(int, done.stdout.split())
    return pile, full_collections


def test_cyclic_garbage_is_collected_before_it_piles_up() -> None:
    pile, _ = _pile(200_000, 0)
    # Each cycle is a few tracked objects plus its finalizer's: collected every 5,000 net
    # allocations, about 800 wait at most. With the young generation collected every 50,000
    # allocations (before the soak), over 7,000 did.
    assert 0 < pile <= 2_000, pile


def test_garbage_that_reached_the_old_generation_is_collected() -> None:
    pile, full_collections = _pile(300_000, 20_000)
    # Collected by a full collection every ~40,000 cycles here. Before, start-up's objects
    # counted as the old generation's, so no full collection came and all 280,000 piled up.
    assert 0 < pile <= 100_000, pile
    assert full_collections >= 3, full_collections
