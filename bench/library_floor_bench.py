"""The floor the mandated libraries alone set under the streaming workload: no atrium at all.

`streaming_bench.py` measures `atrium serve`: 1,000 runs at once on a 2 s, 20-chunk
OpenAI-compatible streaming model, one SSE follower each. This bench measures, with the same
model server (`slow_llm.py`, its own process), the same clients (`streaming_bench._one`: a
create, then one SSE follower, a connection each, in this process) and the same counters (the
server process's own CPU, psutil, divided by the runs), what the libraries atrium must use cost
for that workload when nothing of atrium runs, part by part, each server in a process of its
own:

- `a` model side: one process runs `--runs` pydantic-ai streamed runs at once,
  `Agent(OpenAIChatModel('bench', provider=OpenAIProvider(openai_client=AsyncOpenAI(...))))`,
  each read as a consumer reads one: `run_stream` + `stream_text(delta=True)` (`a`, or
  `--consumer`), `Agent.iter` + `node.stream` (`a.iter`), `Agent.run` over a `WrapperModel`
  that answers the graph's requests from the model's own stream (`a.wrapped`: the agent loop
  without its stream layers, the cheapest way known here), one
  `pydantic_ai.direct.model_request_stream` (`a.direct`: no agent loop), or the openai SDK
  alone (`a.sdk`: below what the rules allow; the layers' shares). The SDK client runs on the
  SDK's aiohttp transport (`DefaultAioHttpClient`), as atrium configures its
  `openai-compatible:` models (`--transport httpx`: the SDK's default one). No HTTP server:
  the process is started, warmed up, then told to go on stdin.
- `b` HTTP side: FastAPI on uvicorn with atrium's `serve` options (uvloop, httptools,
  `proxy_headers`, log level info, so the access log too); a POST of a run (a pydantic body,
  201 and a JSON id) and a GET of its events as sse-starlette's `EventSourceResponse`, which
  sends `--frames` small frames over `--latency` seconds, the last `run.completed`.
- `c` both in one server: the POST starts a pydantic-ai streamed run (as in `a`, `c.wrapped`
  as in `a.wrapped`) in a task and the GET forwards each text delta as a frame, then
  `run.completed`. No database: atrium without atrium.
- `d` SQLAlchemy: per run, the statements `--statements` counts (atrium's per run, counted on
  a live atrium burst; docs/decisions/0067-library-floor-per-run.md): point SELECTs, each on
  a reader connection of its own, and the INSERTs, UPDATEs and event rows (one executemany) in
  one write transaction, `--runs` runs at once on a SQLite file in WAL mode, one write
  connection (SQLite has one writer), through SQLAlchemy's async engine on aiosqlite (`d`) or
  its synchronous engine on sqlite3 right on the event loop (`d.sync`).
- `atrium`: `atrium serve` itself, `streaming_bench.burst` on its defaults (with `--atrium`).

Every server process gets atrium's garbage-collector settings (freeze after start-up, then
thresholds 10,000 / 20 / 2; docs/decisions/0011-garbage-collector-thresholds.md; `--default-gc`:
CPython's), since atrium's figure has them. Each part runs `--rounds` times, the parts taking
turns; each figure is printed in ms of server CPU per run and in calibrations (CPU time of
`sum(range(10**6))`, taken in the same minute), beside the load average.

    .venv/bin/python bench/library_floor_bench.py --atrium     # every part, then atrium; 2 rounds
    .venv/bin/python bench/library_floor_bench.py --parts b,c.wrapped --rounds 3
    .venv/bin/python bench/library_floor_bench.py --parts a.iter --transport httpx
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from harness import (
    HERE,
    RUNS,
    Meter,
    atrium_serve,
    calibration_ms,
    free_port,
    slow_llm,
    stop,
    wait_until_healthy,
)
from pydantic import BaseModel
from streaming_bench import Tally, _burst_limits, _one, burst

# The statements of one run of atrium's streaming burst on SQLite, rounded: counted on a live
# burst of 1,000 runs (listeners on `Engine`'s `before_cursor_execute`), 7.4 SELECTs, 2.9
# INSERTs, 3.7 UPDATEs and 10.65 event rows a run (docs/decisions/0067-library-floor-per-run.md).
STATEMENTS = "select=7,insert=3,update=4,event_rows=11"


# --- the servers (each in a process of its own) --------------------------------------------


class RunIn(BaseModel):
    """A run's create body, as atrium's (FastAPI validates it)."""

    prompt: str
    agent_id: str | None = None


def _tune_gc(default: bool) -> None:
    if not default:
        gc.freeze()
        gc.collect()
        gc.set_threshold(10_000, 20, 2)


def _agent(llm: str, transport: str) -> Any:
    from openai import AsyncOpenAI, DefaultAioHttpClient
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.profiles import ModelProfile
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(
        base_url=llm,
        api_key="not-needed",
        http_client=DefaultAioHttpClient() if transport == "aiohttp" else None,
    )
    # A local model's context window is unknown, which skips pydantic-ai's price lookup.
    model = OpenAIChatModel(
        "bench",
        provider=OpenAIProvider(openai_client=client),
        profile=ModelProfile(context_window=None),
    )
    return Agent(model)


async def _stream(agent: Any, prompt: str, consumer: str, emit: Callable[[str], None]) -> None:
    """One streamed run of `agent`, each text delta given to `emit` as a consumer reads it:
    `run_stream` (+ `stream_text(delta=True)`), `iter` (`Agent.iter` + `node.stream`),
    `wrapped` (`Agent.run`, its model wrapped in a `WrapperModel` that answers each request from
    the model's own stream: the agent loop without its stream layers), `direct` (one
    `pydantic_ai.direct.model_request_stream`: no agent loop) or `sdk` (the openai SDK's own
    streamed `chat.completions.create`: no pydantic-ai, below what the rules allow; for the
    layers' shares)."""
    if consumer == "run_stream":
        async with agent.run_stream(prompt) as result:
            async for text in result.stream_text(delta=True):
                emit(text)
        return
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelRequest,
        PartDeltaEvent,
        PartStartEvent,
        TextPart,
        TextPartDelta,
    )

    def text_of(event: Any) -> None:
        if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
            emit(event.part.content)
        elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
            emit(event.delta.content_delta)

    if consumer == "iter":
        async with agent.iter(prompt) as run:
            async for node in run:
                if Agent.is_model_request_node(node):
                    async with node.stream(run.ctx) as events:
                        async for event in events:
                            text_of(event)
        return
    if consumer == "wrapped":
        from pydantic_ai.models.wrapper import WrapperModel

        class Tapped(WrapperModel):
            """Answers the graph's non-streamed request from the wrapped model's stream, its
            text read on the way (pydantic-ai's public wrapper; no stream layers)."""

            async def request(self, *args: Any) -> Any:
                async with self.wrapped.request_stream(*args) as response:
                    async for event in response:
                        text_of(event)
                return response.get()

        await agent.run(prompt, model=Tapped(agent.model))
        return
    if consumer == "direct":
        from pydantic_ai.direct import model_request_stream

        messages = [ModelRequest.user_text_prompt(prompt)]
        async with model_request_stream(agent.model, messages) as response:
            async for event in response:
                text_of(event)
        return
    client = agent.model.client  # the AsyncOpenAI under the model
    stream = await client.chat.completions.create(
        model="bench",
        messages=[{"role": "user", "content": prompt}],
        stream=True,
        stream_options={"include_usage": True},
    )
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            emit(chunk.choices[0].delta.content)


def _loop_runner() -> asyncio.Runner:
    """The loop atrium's processes run on: uvicorn's choice (uvloop where installed)."""
    from uvicorn.loops.auto import auto_loop_factory

    return asyncio.Runner(loop_factory=auto_loop_factory())


def _on_command(args: argparse.Namespace, work: Callable[[int], Awaitable[dict[str, Any]]]) -> None:
    """A server without HTTP: warm up, say `ready`, run the burst when stdin says `go`, print
    its outcome as JSON, exit at stdin's end."""

    async def main() -> None:
        await work(args.warmup)
        _tune_gc(args.default_gc)
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        outcome = await work(args.runs)
        print(json.dumps(outcome), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

    with _loop_runner() as runner:
        runner.run(main())


def serve_model(args: argparse.Namespace) -> None:
    agent = _agent(args.llm, args.transport)

    async def work(runs: int) -> dict[str, Any]:
        deltas = [0] * runs
        started = time.perf_counter()

        async def one(index: int) -> None:
            def emit(_text: str) -> None:
                deltas[index] += 1

            await _stream(agent, f"burst {index}", args.consumer, emit)

        outcomes = await asyncio.gather(*(one(i) for i in range(runs)), return_exceptions=True)
        errors = [repr(o) for o in outcomes if isinstance(o, BaseException)]
        return {
            "wall": time.perf_counter() - started,
            "deltas": statistics.fmean(deltas) if deltas else 0,
            "failed": len(errors),
            "error": errors[0] if errors else None,
        }

    _on_command(args, work)


def _app(args: argparse.Namespace) -> Any:
    """FastAPI: POST a run, GET its events over SSE (part `b`: timed frames; `c`: the deltas
    of a pydantic-ai run started by the POST)."""
    from fastapi import FastAPI
    from sse_starlette import EventSourceResponse

    app = FastAPI()
    agent = _agent(args.llm, args.transport) if args.serve == "c" else None
    queues: dict[str, asyncio.Queue[str | None]] = {}
    tasks: set[asyncio.Task[None]] = set()

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    async def execute(prompt: str, queue: asyncio.Queue[str | None]) -> None:
        try:
            await _stream(agent, prompt, args.consumer, queue.put_nowait)
        finally:
            queue.put_nowait(None)

    @app.post(RUNS, status_code=201)
    async def create(body: RunIn) -> dict[str, str]:
        run_id = uuid.uuid4().hex
        if agent is not None:
            queue: asyncio.Queue[str | None] = asyncio.Queue()
            queues[run_id] = queue
            task = asyncio.create_task(execute(body.prompt, queue))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        return {"run_id": run_id, "status": "queued"}

    async def timed_frames(run_id: str) -> AsyncIterator[dict[str, str]]:
        pause = args.latency / args.frames
        for index in range(1, args.frames):
            await asyncio.sleep(pause)
            data = json.dumps({"run_id": run_id, "text": f" word{index}"})
            yield {"event": "run.delta", "id": str(index), "data": data}
        await asyncio.sleep(pause)
        data = json.dumps({"run_id": run_id, "status": "completed"})
        yield {"event": "run.completed", "id": str(args.frames), "data": data}

    async def run_frames(run_id: str) -> AsyncIterator[dict[str, str]]:
        queue = queues[run_id]
        index = 0
        try:
            while (text := await queue.get()) is not None:
                index += 1
                data = json.dumps({"run_id": run_id, "text": text})
                yield {"event": "run.delta", "id": str(index), "data": data}
        finally:
            queues.pop(run_id, None)
        data = json.dumps({"run_id": run_id, "status": "completed"})
        yield {"event": "run.completed", "id": str(index + 1), "data": data}

    @app.get(RUNS + "/{run_id}/events")
    async def events(run_id: str) -> EventSourceResponse:
        frames = run_frames(run_id) if agent is not None else timed_frames(run_id)
        return EventSourceResponse(frames)

    return app


def serve_http(args: argparse.Namespace) -> None:
    import uvicorn

    app = _app(args)
    _tune_gc(args.default_gc)
    # `atrium serve`'s options: its protocol is httptools' with bounds on request heads.
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=args.port,
        log_level="info",
        proxy_headers=True,
        http="httptools",
        loop="auto",
    )


def _statements(spec: str) -> list[tuple[str, int]]:
    pairs = [item.split("=") for item in spec.split(",") if item]
    return [(kind, int(count)) for kind, count in pairs]


def serve_database(args: argparse.Namespace) -> None:
    from sqlalchemy import (
        Column,
        Integer,
        MetaData,
        String,
        Table,
        Text,
        create_engine,
        event,
        insert,
        select,
        update,
    )
    from sqlalchemy.ext.asyncio import create_async_engine

    workdir = Path(tempfile.mkdtemp(prefix="library-floor-db-"))
    url = f"sqlite+aiosqlite:///{workdir / 'floor.db'}"
    metadata = MetaData()
    runs = Table(
        "runs",
        metadata,
        Column("id", String(40), primary_key=True),
        Column("status", String(16), nullable=False),
        Column("prompt", Text, nullable=False),
        Column("output", Text),
        Column("created_at", String(32), nullable=False),
    )
    events = Table(
        "run_events",
        metadata,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("run_id", String(40), nullable=False, index=True),
        Column("kind", String(32), nullable=False),
        Column("data", Text, nullable=False),
    )
    # One writer (SQLite has one), a pool of readers; WAL as any SQLite server would run.
    writer = create_async_engine(url, pool_size=1, max_overflow=0, pool_timeout=120)
    reader = create_async_engine(url, pool_size=8, max_overflow=0, pool_timeout=120)
    # `d.sync`: the same statements on SQLAlchemy's synchronous engine (the plain sqlite3
    # driver), run right on the event loop: no thread hand-offs.
    sync = args.consumer == "sync"
    plain = url.replace("+aiosqlite", "+pysqlite")
    sync_writer = create_engine(plain, pool_size=1, max_overflow=0)
    sync_reader = create_engine(plain, pool_size=8, max_overflow=0)
    for engine in (writer.sync_engine, reader.sync_engine, sync_writer, sync_reader):

        @event.listens_for(engine, "connect")
        def _wal(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

    plan = dict(_statements(args.statements))
    unknown = set(plan) - {"select", "insert", "update", "event_rows"}
    if unknown:
        raise SystemExit(f"--statements: unknown kinds {sorted(unknown)}")
    stamp = "2026-11-29T05:00:00.000000Z"

    def writes(run_id: str, index: int) -> list[tuple[Any, Any]]:
        statements: list[tuple[Any, Any]] = []
        for step in range(plan.get("insert", 0)):
            row = {"id": f"{run_id}{step}", "status": "queued", "prompt": f"burst {index}"}
            statements.append((insert(runs).values(**row, created_at=stamp), None))
        for step in range(plan.get("update", 0)):
            changed = update(runs).where(runs.c.id == f"{run_id}0").values(status=f"s{step}")
            statements.append((changed, None))
        rows = [
            {"run_id": f"{run_id}0", "kind": "run.delta", "data": json.dumps({"seq": seq})}
            for seq in range(plan.get("event_rows", 0))
        ]
        if rows:
            statements.append((insert(events), rows))
        return statements

    def one_sync(index: int) -> None:
        run_id = uuid.uuid4().hex
        with sync_writer.begin() as conn:
            for statement, rows in writes(run_id, index):
                conn.execute(statement, rows)
        for _ in range(plan.get("select", 0)):
            with sync_reader.connect() as conn:
                conn.execute(select(runs).where(runs.c.id == f"{run_id}0")).one()

    async def one(index: int) -> None:
        """A run's statements: its point reads, each on a reader connection of its own, and
        its writes in one transaction (the events in one executemany)."""
        if sync:
            await asyncio.sleep(0)
            one_sync(index)
            return
        run_id = uuid.uuid4().hex
        async with writer.begin() as conn:
            for statement, rows in writes(run_id, index):
                await conn.execute(statement, rows)
        for _ in range(plan.get("select", 0)):
            async with reader.connect() as conn:
                (await conn.execute(select(runs).where(runs.c.id == f"{run_id}0"))).one()

    async def work(runs_at_once: int) -> dict[str, Any]:
        if not work.created:  # type: ignore[attr-defined]
            async with writer.begin() as conn:
                await conn.run_sync(metadata.create_all)
            work.created = True  # type: ignore[attr-defined]
        started = time.perf_counter()
        outcomes = await asyncio.gather(
            *(one(i) for i in range(runs_at_once)), return_exceptions=True
        )
        errors = [repr(o) for o in outcomes if isinstance(o, BaseException)]
        return {
            "wall": time.perf_counter() - started,
            "deltas": 0,
            "failed": len(errors),
            "error": errors[0] if errors else None,
        }

    work.created = False  # type: ignore[attr-defined]
    _on_command(args, work)


# --- the measurements (this process: the clients and the counters) ---------------------------


@dataclass
class Figure:
    part: str
    round: int
    cpu_ms: float  # server CPU per run
    calibration: float
    load: float
    wall: float
    note: str

    @property
    def cal(self) -> float:
        return self.cpu_ms / self.calibration


def _split(part: str, args: argparse.Namespace) -> tuple[str, str]:
    """A part's letter and its consumer (`a.iter`: a, iter; `a`: a, `--consumer`)."""
    kind, _, consumer = part.partition(".")
    if kind == "d":
        return kind, consumer or "async"
    return kind, consumer or args.consumer


def _server_command(args: argparse.Namespace, part: str, llm: str, port: int = 0) -> list[str]:
    kind, consumer = _split(part, args)
    return [
        sys.executable,
        str(HERE / "library_floor_bench.py"),
        "--serve",
        kind,
        "--llm",
        llm,
        "--port",
        str(port),
        "--runs",
        str(args.runs),
        "--warmup",
        str(args.warmup),
        "--latency",
        str(args.latency),
        "--frames",
        str(args.frames),
        "--consumer",
        consumer,
        "--transport",
        args.transport,
        "--statements",
        args.statements,
        *(["--default-gc"] if args.default_gc else []),
    ]


def measure_on_command(args: argparse.Namespace, part: str, llm: str, round_: int) -> Figure:
    """Parts `a` and `d`: the server runs the burst itself when told to."""
    log = Path(tempfile.mkdtemp(prefix="library-floor-")) / "server.log"
    with log.open("w") as errors:
        process = subprocess.Popen(
            _server_command(args, part, llm),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )
    assert process.stdin is not None and process.stdout is not None
    try:
        if process.stdout.readline().strip() != "ready":
            raise SystemExit(f"part {part} did not start; see {log}")
        time.sleep(1)
        calibration = calibration_ms()
        meter = Meter(process.pid)
        before = meter.cpu_seconds()
        process.stdin.write("go\n")
        process.stdin.flush()
        outcome = json.loads(process.stdout.readline())
        spent = meter.cpu_seconds() - before
        calibration = min(calibration, calibration_ms())
        load = os.getloadavg()[0]
    finally:
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            stop(process)
    note = f"{outcome['failed']} failed" + (f" ({outcome['error']})" if outcome["error"] else "")
    if part.startswith("a"):
        note += f", {outcome['deltas']:.1f} text deltas a run"
    return Figure(part, round_, spent / args.runs * 1000, calibration, load, outcome["wall"], note)


async def _http_burst(url: str, pid: int, args: argparse.Namespace) -> tuple[float, float, Tally]:
    """Server CPU seconds and wall time of `--runs` creates with a follower each."""
    meter = Meter(pid)
    limits = _burst_limits(args.runs)
    async with httpx.AsyncClient(base_url=url, timeout=300, limits=limits) as http:
        warm = Tally()
        await asyncio.gather(*(_one(http, "bench", i, warm) for i in range(args.warmup)))
        await asyncio.sleep(1)
        tally = Tally()
        before = meter.cpu_seconds()
        started = time.perf_counter()
        await asyncio.gather(*(_one(http, "bench", i, tally) for i in range(args.runs)))
        wall = tally.last_done - started
        spent = meter.cpu_seconds() - before
    return spent, wall, tally


def measure_http(args: argparse.Namespace, part: str, llm: str, round_: int) -> Figure:
    """Parts `b` and `c`: a FastAPI server, the burst's clients in this process."""
    port = free_port()
    log = Path(tempfile.mkdtemp(prefix="library-floor-")) / "server.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            _server_command(args, part, llm, port), stdout=output, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(process, url, log)
        calibration = calibration_ms()
        spent, wall, tally = asyncio.run(_http_burst(url, process.pid, args))
        calibration = min(calibration, calibration_ms())
        load = os.getloadavg()[0]
    finally:
        stop(process)
    frames = statistics.fmean(tally.events) if tally.events else 0.0
    note = (
        f"{frames:.1f} frames a run, outcomes {tally.statuses}, "
        f"reconnects {sum(tally.reconnects.values())}, 408s {tally.timeouts}"
    )
    return Figure(part, round_, spent / args.runs * 1000, calibration, load, wall, note)


def measure_atrium(args: argparse.Namespace, llm: str, round_: int) -> Figure:
    """`atrium serve` on its defaults: `streaming_bench.burst`, which prints its own lines."""
    bench_args = argparse.Namespace(
        runs=args.runs,
        warmup=args.warmup,
        latency=args.latency,
        chunks=args.chunks,
        offline=False,
        tools=None,
        profile=None,
    )
    with atrium_serve(settings={"llm_base_url": llm}) as server:
        figures = asyncio.run(burst([server.url], server.key, {"server": [server.pid]}, bench_args))
    load = os.getloadavg()[0]
    return Figure(
        "atrium",
        round_,
        figures.cpu_ms_per_run["server"],
        figures.calibration,
        load,
        figures.wall,
        "streaming_bench.burst",
    )


_PARTS = "a,a.wrapped,a.direct,a.sdk,b,c,c.wrapped,d,d.sync"
_CONSUMERS = ["run_stream", "iter", "wrapped", "direct", "sdk"]
_NAMES = {
    "a": "model side: pydantic-ai + openai SDK",
    "b": "HTTP side: FastAPI + uvicorn + sse-starlette",
    "c": "a + b in one server, no database",
    "d": "SQLAlchemy statements on SQLite",
    "atrium": "atrium serve (streaming_bench)",
}


def _name(part: str, args: argparse.Namespace) -> str:
    kind, consumer = _split(part, args)
    return _NAMES[kind] + (f", {consumer}" if kind in {"a", "c", "d"} else "")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--parts",
        default=_PARTS,
        help="parts to measure, of a,b,c,d; a and c may name their consumer (a.iter, "
        f"a.direct, a.sdk, c.direct), d its engine (d.sync) ({_PARTS})",
    )
    parser.add_argument("--atrium", action="store_true", help="also atrium serve, each round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, parts alternated (2)")
    parser.add_argument("--runs", type=int, default=1000, help="runs at once (1000)")
    parser.add_argument("--warmup", type=int, default=20, help="runs before measuring (20)")
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per answer (2)")
    parser.add_argument("--chunks", type=int, default=20, help="text chunks per answer (20)")
    parser.add_argument("--frames", type=int, default=12, help="part b: SSE frames a run (12)")
    parser.add_argument(
        "--consumer",
        choices=[*_CONSUMERS, "async", "sync"],
        default="run_stream",
        help="parts a and c: how a run's text is read, unless the part names it (a.iter): "
        "run_stream + stream_text(delta=True), iter (Agent.iter + node.stream), wrapped "
        "(Agent.run over a WrapperModel reading the model's stream), direct "
        "(pydantic_ai.direct.model_request_stream) or sdk (the openai SDK alone); part d: async "
        "(the default) or sync (run_stream)",
    )
    parser.add_argument(
        "--transport",
        choices=["aiohttp", "httpx"],
        default="aiohttp",
        help="the openai SDK's HTTP transport: aiohttp (DefaultAioHttpClient, as atrium "
        "configures it) or httpx (the SDK's default) (aiohttp)",
    )
    parser.add_argument(
        "--statements",
        default=STATEMENTS,
        help=f"part d: kind=executions per run ({STATEMENTS})",
    )
    parser.add_argument("--default-gc", action="store_true", help="CPython's gc thresholds")
    parser.add_argument("--serve", choices=["a", "b", "c", "d"], help=argparse.SUPPRESS)
    parser.add_argument("--llm", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve == "a":
        return serve_model(args)
    if args.serve in {"b", "c"}:
        return serve_http(args)
    if args.serve == "d":
        return serve_database(args)

    parts = [part for part in args.parts.split(",") if part]
    for part in parts:
        kind, consumer = _split(part, args)
        known = {"async", "sync"} if kind == "d" else _CONSUMERS
        if kind not in {"a", "b", "c", "d"} or consumer not in known:
            parser.error(f"--parts: unknown part {part!r}")
    if args.atrium:
        parts.append("atrium")
    print(f"load average before: {os.getloadavg()}  cores: {os.cpu_count()}", flush=True)
    print(
        f"{args.runs} runs at once, {args.latency:g} s model of {args.chunks} chunks; "
        f"consumer {args.consumer}, transport {args.transport}, "
        f"gc {'CPython default' if args.default_gc else 'atrium thresholds'}",
        flush=True,
    )
    figures: list[Figure] = []
    with slow_llm(latency=args.latency, chunks=args.chunks) as llm:
        for round_ in range(1, args.rounds + 1):
            for part in parts if round_ % 2 else parts[::-1]:
                kind, _consumer = _split(part, args)
                if kind in {"a", "d"}:
                    figure = measure_on_command(args, part, llm, round_)
                elif kind in {"b", "c"}:
                    figure = measure_http(args, part, llm, round_)
                else:
                    figure = measure_atrium(args, llm, round_)
                figures.append(figure)
                print(
                    f"[{time.strftime('%H:%M:%S', time.gmtime())} UTC] round {round_} part "
                    f"{part} ({_name(part, args)}): "
                    f"{figure.cpu_ms:.2f} ms/run = {figure.cal:.3f} cal "
                    f"(calibration {figure.calibration:.1f} ms, load {figure.load:.1f}, "
                    f"wall {figure.wall:.1f} s; {figure.note})",
                    flush=True,
                )
    print("\n== server CPU per run, by part (every round) ==")
    for part in parts:
        mine = [f for f in figures if f.part == part]
        each = " / ".join(f"{f.cpu_ms:.2f}" for f in mine)
        cals = " / ".join(f"{f.cal:.2f}" for f in mine)
        calibrations = ", ".join(f"{f.calibration:.1f}" for f in mine)
        loads = ", ".join(f"{f.load:.1f}" for f in mine)
        print(
            f"{part:>12} {_name(part, args)}: {each} ms = {cals} cal "
            f"(calibration {calibrations} ms; load {loads})"
        )
    print(f"load average after: {os.getloadavg()}")
    return None


if __name__ == "__main__":
    main()
