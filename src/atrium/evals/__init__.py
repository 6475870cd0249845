"""Evals: a dataset's cases run on agents, scored by their checks, stored side by side
(docs/guide/evals.md, docs/decisions/0062-evals.md)."""
