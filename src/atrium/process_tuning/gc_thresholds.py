"""The garbage collector's thresholds of the long-running processes
(docs/decisions/0011-garbage-collector-thresholds.md)."""

from __future__ import annotations

import gc

# Young objects are collected every YOUNG_COLLECTION net allocations of tracked objects, the
# middle generation every MIDDLE_COLLECTIONS young collections, the old one every
# OLD_COLLECTIONS middle collections (when enough objects have reached it since the last).
YOUNG_COLLECTION = 10_000
MIDDLE_COLLECTIONS = 20
OLD_COLLECTIONS = 2


def tune_gc() -> None:
    """Fewer, cheaper garbage collections in the long-running processes, in bounded piles.

    With CPython's default thresholds (700, 10, 10), full collections of a server's ~230 MB
    heap stop the event loop for 110-225 ms each: the whole tail of the event lag under a
    thousand streams. Freezing moves what start-up allocated (modules, models, the app) out of
    every later collection.

    The young generation is collected every 10,000 net allocations, the middle one every 20 of
    those. A request leaves cyclic garbage, which waits for the collection of its generation:
    collected too rarely, the pile swings by megabytes, each swing reaches memory the one
    before had not, and the RSS of a server under steady load rises for hours; 10,000 keeps the
    swing near 1 MB (`tests/process_tuning/test_gc_thresholds.py` bounds it) and costs the
    collector less CPU in a burst of runs than 5,000.

    Garbage that was still in use at a middle collection (a request, a run in flight) reaches
    the old generation and waits for a full collection. CPython makes one only when the
    objects that reached it since the last outnumber a quarter of those the last one left, a
    count it does not reset on `gc.freeze()`: with start-up's ~200,000 objects counted there,
    no full collection would come for hours and that garbage would grow all along. The
    collection right after the freeze finds the old generation empty and so counts
    only what the server itself keeps; the old generation (~40,000 objects, the frozen ones
    left out) is then collected when the quarter rule allows, at most every third middle
    collection, a few milliseconds each (docs/decisions/0011-garbage-collector-thresholds.md).
    """
    gc.freeze()
    gc.collect()
    gc.set_threshold(YOUNG_COLLECTION, MIDDLE_COLLECTIONS, OLD_COLLECTIONS)
