// A run's trace as a waterfall: the spans GET …/runs/{id}/trace returns, which are the spans
// atrium sends to an OpenTelemetry collector (docs/guide/traces.md), as bars on one time axis.
// Bars are SVG rectangles placed by attributes: the CSP allows no inline styles.

import { api } from "./api.js";
import { errorBox, h, replace } from "./dom.js";

const RUNS = "/api/v1/public/agent/runs";
const AXIS = 1000; // the bars' viewBox width
const MAX_DEPTH = 4; // indentation classes depth-0 … depth-4

function kindOf(span) {
  const operation = span.attributes["gen_ai.operation.name"];
  if (operation) return { invoke_agent: "run", chat: "chat", execute_tool: "tool" }[operation] || "other";
  return span.name; // execute, retry, wait
}

function duration(ms) {
  if (ms === null) return "open";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

function summary(span) {
  const lines = [`${span.name} — ${duration(span.duration_ms)}`];
  if (span.status === "error") lines.push(`error: ${span.status_message || ""}`);
  for (const [key, value] of Object.entries(span.attributes)) lines.push(`${key} = ${value}`);
  for (const link of span.links) lines.push(`linked to span ${link.span_id}`);
  return lines.join("\n");
}

/** Depth of each span under the run's span (parents come before their children). */
function depths(spans) {
  const depth = new Map();
  for (const span of spans) {
    const parent = depth.get(span.parent_span_id);
    depth.set(span.span_id, parent === undefined ? 0 : parent + 1);
  }
  return depth;
}

export function traceSection(runId, { signal }) {
  const body = h("div", { class: "waterfall-box" }, h("p", { class: "muted" }, "Loading…"));
  const traceId = h("span", { class: "muted small" });
  const section = h("section", { class: "card", "aria-labelledby": "trace-title" }, [
    h("div", { class: "toolbar" }, h("h2", { id: "trace-title" }, "Trace"), traceId),
    body,
  ]);

  function draw(trace) {
    const spans = trace.spans;
    traceId.textContent = `trace ${trace.trace_id}`;
    const ends = spans.map((s) => s.start_offset_ms + (s.duration_ms ?? 0));
    const total = Math.max(1, ...ends, ...spans.map((s) => s.start_offset_ms));
    const depth = depths(spans);
    replace(body, h("table", { class: "waterfall" },
      h("caption", { class: "visually-hidden" }, "Spans of the run, on one time axis"),
      h("thead", {}, h("tr", {}, [
        h("th", { scope: "col" }, "Span"),
        h("th", { scope: "col", class: "num" }, "Duration"),
        h("th", { scope: "col" }, `Time (0 – ${duration(total)})`),
      ])),
      h("tbody", {}, spans.map((span) => {
        const start = (span.start_offset_ms / total) * AXIS;
        const length = span.duration_ms === null ? AXIS - start : (span.duration_ms / total) * AXIS;
        const kind = kindOf(span);
        return h("tr", { dataset: { spanId: span.span_id, kind, status: span.status } }, [
          h("th", { scope: "row", class: `span-name depth-${Math.min(depth.get(span.span_id), MAX_DEPTH)}` },
            span.name, span.links.length ? h("span", { class: "muted small" }, " ↺ retry of a lost attempt") : null),
          h("td", { class: "num" }, duration(span.duration_ms)),
          h("td", { class: "bar-cell" }, h("svg:svg", {
            viewBox: `0 0 ${AXIS} 10`, preserveAspectRatio: "none", class: "bar", role: "img",
            "aria-label": `${span.name}: starts at ${duration(span.start_offset_ms)}, lasts ${duration(span.duration_ms)}`,
          }, h("svg:rect", {
            x: start.toFixed(1), y: 1, height: 8, width: Math.max(2, length).toFixed(1),
            class: `bar-${kind}${span.status === "error" ? " bar-error" : ""}${span.end === null ? " bar-open" : ""}`,
          }, h("svg:title", {}, summary(span))))),
        ]);
      })),
    ));
  }

  async function refresh() {
    try {
      draw(await api(`${RUNS}/${encodeURIComponent(runId)}/trace`, { signal }));
    } catch (error) {
      if (error.name === "AbortError") return;
      replace(body, errorBox(error));
    }
  }

  return { section, refresh };
}
