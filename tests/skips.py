"""The end of a test run says why tests were skipped: one line per reason, with its count.

Loaded by `-p tests.skips` in pyproject's `addopts`. pytest's own `-rs` lists a skip per test
function (a `skipif` mark is reported at each test's line), hundreds of lines for the PostgreSQL
variants alone; grouped by reason they fit on a screen, and each reason says how to enable its
tests (tests/conftest.py: which variable to set).
"""

from __future__ import annotations

from collections import Counter

import pytest

# More reasons than this are counted in one last line: a run is read, not scrolled.
SHOWN_REASONS = 20


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The reason a test gave for its skip, without pytest's "Skipped: " prefix."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr)
    return reason.removeprefix("Skipped: ")


# First among the summaries: the calibration line (tests/conftest.py) stays beside the times.
@pytest.hookimpl(tryfirst=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(report, (pytest.TestReport, pytest.CollectReport))
    ]
    if not skipped:
        return
    reasons = Counter(skip_reason(report) for report in skipped)
    terminalreporter.write_sep("=", f"{len(skipped)} skipped, by reason")
    width = len(str(max(reasons.values())))
    # Ties in alphabetical order: xdist's workers report in no fixed order.
    ranked = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
    for reason, count in ranked[:SHOWN_REASONS]:
        terminalreporter.write_line(f"{count:>{width}}  {reason}")
    rest = ranked[SHOWN_REASONS:]
    if rest:
        tests = sum(count for _, count in rest)
        terminalreporter.write_line(
            f"{tests:>{width}}  for {len(rest)} other reasons (pytest -rs lists every skip)"
        )
