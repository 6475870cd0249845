"""Liveness, readiness and metrics: outside every API group, no key needed."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from atrium.http.deps import DatabaseDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up and serving."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "A dependency is unavailable."}})
async def readyz(db: DatabaseDep, request: Request) -> JSONResponse:
    """The process can serve: the database (and Redis, when configured) answer."""
    checks: dict[str, str] = {}
    try:
        await db.ping()
        checks["database"] = "ok"
    except Exception as exc:  # any failure means "not ready"; the kind is enough to report
        checks["database"] = f"error: {type(exc).__name__}"
    ping = getattr(request.app.state, "redis_ping", None)
    if ping is not None:
        try:
            await ping()
            checks["redis"] = "ok"
        except Exception as exc:
            checks["redis"] = f"error: {type(exc).__name__}"
    ready = all(value == "ok" for value in checks.values())
    return JSONResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks},
        status_code=200 if ready else 503,
    )


# HEAD too, for load balancers and uptime checkers that probe with it; left out of the schema,
# where it would repeat the GET operation.
router.add_api_route("/healthz", healthz, methods=["HEAD"], include_in_schema=False)
router.add_api_route("/readyz", readyz, methods=["HEAD"], include_in_schema=False)


@router.get("/metrics", response_class=Response)
async def metrics(request: Request) -> Response:
    """Prometheus text format: request counts and latencies by route template."""
    registry = request.app.state.metrics.registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)
