"""A loopback server that answers the runs API the way a hostile or broken one could: artifact
names and `Content-Disposition` names that are paths or dot-files, and event ids that only
Python calls digits. The client and the `atrium` command must stay safe against it.

Run as `python hostile_server.py PORT SCENARIO_JSON`, where the scenario is
`{"artifacts": [{"name", "disposition", "content"}]}`: each artifact is listed under `name`
and downloaded with `disposition` as its file name. Every run's event stream sends a frame
with `id: ²`, then the run's `run.queued` and `run.completed`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any
from urllib.parse import quote

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

RUNS = "/api/v1/public/agent/runs"
SCENARIO: dict[str, Any] = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {"artifacts": []}
STAMP = "2026-01-01T00:00:00.000000Z"


def _artifact(run_id: str, index: int, spec: dict[str, str]) -> dict[str, Any]:
    content = spec["content"].encode()
    return {
        "artifact_id": f"art_{index}",
        "run_id": run_id,
        "name": spec["name"],
        "mime_type": "text/plain",
        "size_bytes": len(content),
        "sha256": hashlib.sha256(content).hexdigest(),
        "created_at": STAMP,
        "download_url": f"{RUNS}/{run_id}/artifacts/art_{index}/content",
    }


async def artifacts(request: Request) -> Response:
    run_id = request.path_params["run_id"]
    listed = [_artifact(run_id, i, spec) for i, spec in enumerate(SCENARIO["artifacts"])]
    return JSONResponse({"data": listed})


async def content(request: Request) -> Response:
    spec = SCENARIO["artifacts"][int(request.path_params["artifact_id"].removeprefix("art_"))]
    body = spec["content"].encode()
    return Response(
        body,
        media_type="text/plain",
        headers={
            "Content-Disposition": f"attachment; filename*=UTF-8''{quote(spec['disposition'])}",
            "ETag": f'"{hashlib.sha256(body).hexdigest()}"',
        },
    )


async def events(request: Request) -> Response:
    run_id = request.path_params["run_id"]

    def frame(event_id: str, kind: str, **payload: Any) -> str:
        data = {"run_id": run_id, "created_at": STAMP, **payload}
        return f"id: {event_id}\nevent: {kind}\ndata: {json.dumps(data)}\n\n"

    body = (
        frame("²", "run.started", status="running")
        + frame("1", "run.queued", status="queued")
        + frame("2", "run.completed", status="completed", result="done")
    )
    return Response(body.encode(), media_type="text/event-stream")


app = Starlette(
    routes=[
        Route(f"{RUNS}/{{run_id}}/artifacts", artifacts),
        Route(f"{RUNS}/{{run_id}}/artifacts/{{artifact_id}}/content", content),
        Route(f"{RUNS}/{{run_id}}/events", events),
    ]
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
