"""The I/O-free half of evals, shared by both clients: reading a dataset, scoring an output
with a case's checks, the judge's prompt and verdict, and the body that stores the result
(docs/guide/evals.md)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from atrium.client.errors import AtriumError

# The judge answers with this object (an output schema the run is given, so any model, the
# offline one included, returns it as JSON).
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"pass": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["pass", "reason"],
    "additionalProperties": False,
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExactCheck(_Strict):
    type: Literal["exact"]
    value: Any


class ContainsCheck(_Strict):
    type: Literal["contains"]
    value: str


class JsonSchemaCheck(_Strict):
    type: Literal["json_schema"]
    schema_: dict[str, Any] = Field(alias="schema")


class JudgeCheck(_Strict):
    type: Literal["judge"]
    agent: str = Field(min_length=1)
    criteria: str = Field(min_length=1)


Check = ExactCheck | ContainsCheck | JsonSchemaCheck | JudgeCheck
_Check = Annotated[Check, Field(discriminator="type")]


class Case(_Strict):
    """One line of a dataset."""

    id: str | None = Field(default=None, min_length=1, max_length=200)
    prompt: str | None = None
    input: list[dict[str, Any]] | None = None
    checks: list[_Check] = Field(min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    sha256: str
    cases: list[tuple[str, Case]]  # (case id, case)


def load_dataset(source: str | Path) -> Dataset:
    """Read a JSONL dataset whole; any bad line raises `InvalidParameterError` naming the line
    and the field, before anything runs."""
    path = Path(source)
    raw = path.read_bytes()
    cases: list[tuple[str, Case]] = []
    seen: set[str] = set()
    for number, line in enumerate(raw.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name} line {number}"
        try:
            case = Case.model_validate_json(line)
        except ValidationError as exc:
            error = exc.errors()[0]
            name = ".".join(str(part) for part in error["loc"]) or "line"
            raise _bad(f"{where}: {name}: {error['msg']}", number, name) from None
        if case.prompt is None and not case.input:
            raise _bad(f"{where}: prompt: a case needs a prompt or input", number, "prompt")
        if problem := _schema_problem(case):
            raise _bad(f"{where}: {problem[0]}: {problem[1]}", number, problem[0])
        case_id = case.id or str(number)
        if case_id in seen:
            raise _bad(f"{where}: id: {case_id!r} appears twice", number, "id")
        seen.add(case_id)
        cases.append((case_id, case))
    if not cases:
        raise _bad(f"{path.name}: no cases", None, "dataset")
    return Dataset(path.name, hashlib.sha256(raw).hexdigest(), cases)


class DatasetError(AtriumError):
    """A dataset line the eval cannot run; `line` and `field` name it. Nothing was run."""

    def __init__(self, message: str, *, line: int | None, field: str) -> None:
        super().__init__(message)
        self.line = line
        self.field = field


def _bad(message: str, line: int | None, name: str) -> DatasetError:
    return DatasetError(message, line=line, field=name)


def _schema_problem(case: Case) -> tuple[str, str] | None:
    for index, check in enumerate(case.checks):
        if isinstance(check, JsonSchemaCheck):
            try:
                jsonschema.Draft202012Validator.check_schema(check.schema_)
            except jsonschema.SchemaError as exc:
                return f"checks.{index}.schema", exc.message
    return None


def output_text(result: str | Mapping[str, Any] | None) -> str:
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    return json.dumps(result, sort_keys=True)


def score(check: Check, result: str | Mapping[str, Any] | None) -> tuple[bool, str | None]:
    """A check that needs no model: exact, contains, json_schema. (passed, reason)."""
    text = output_text(result)
    if isinstance(check, ExactCheck):
        if isinstance(check.value, str):
            return text.strip() == check.value.strip(), None
        value = result if not isinstance(result, str) else _json_or_none(result)
        return value == check.value, None
    if isinstance(check, ContainsCheck):
        return check.value in text, None
    if isinstance(check, JsonSchemaCheck):
        value = result if not isinstance(result, str) else _json_or_none(result)
        if value is None:
            return False, "the output is not JSON"
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(check.schema_).iter_errors(value)
        )
        return (error is None), (None if error is None else error.message[:500])
    raise TypeError(check)


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def judge_prompt(case: Case, result: str | Mapping[str, Any] | None, criteria: str) -> str:
    """The judge run's prompt: the criteria first (a scripted offline judge's `output` line is
    read from the first one it finds), then the case and the output."""
    return "\n".join(
        [
            "Judge whether the output meets the criteria. Answer with JSON"
            ' {"pass": true|false, "reason": "..."}.',
            "Criteria:",
            criteria,
            "",
            "Case prompt:",
            case.prompt or json.dumps(case.input),
            "",
            "Output:",
            output_text(result),
        ]
    )


def verdict(result: str | Mapping[str, Any] | None) -> tuple[bool, str]:
    value = result if not isinstance(result, str) else _json_or_none(result)
    if not isinstance(value, Mapping) or not isinstance(value.get("pass"), bool):
        return False, "the judge gave no verdict"
    return bool(value["pass"]), str(value.get("reason") or "")[:2000]


@dataclass(frozen=True, slots=True)
class Job:
    """A case to run on one agent."""

    case_id: str
    case: Case
    agent: str
    timeout: float | None


@dataclass(slots=True)
class Outcome:
    """A case's run on one agent, scored."""

    case_id: str
    agent: str
    run_id: str
    checks: list[dict[str, Any]] = field(default_factory=list)


def store_body(
    dataset: Dataset, agents: Sequence[str], outcomes: Sequence[Outcome]
) -> dict[str, Any]:
    by_case: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_case.setdefault(outcome.case_id, []).append(outcome)
    order = {agent: index for index, agent in enumerate(agents)}
    return {
        "dataset": {"name": dataset.name[:255], "sha256": dataset.sha256},
        "agents": list(agents),
        "cases": [
            {
                "case_id": case_id,
                "results": [
                    {"agent": o.agent, "run_id": o.run_id, "checks": o.checks}
                    for o in sorted(by_case[case_id], key=lambda o: order[o.agent])
                ],
            }
            for case_id, _ in dataset.cases
        ],
    }
