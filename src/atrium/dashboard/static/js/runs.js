// Runs: the live list (#/runs) and one run followed live (#/runs/run_…).

import { api, download, pathOf } from "./api.js";
import {
  abbreviate, errorBox, field, formError, formErrorBox, formatBytes, formatCredits, formatInt, h,
  pageHeader, replace, resultText, sleep, statusBadge, timeEl, toast,
} from "./dom.js";
import { actionPanel } from "./actions.js";
import { followEvents } from "./sse.js";
import { traceSection } from "./trace.js";
import { attachments, inputSection } from "./files.js";
import { versionPicker } from "./agent_versions.js";

const RUNS = "/api/v1/public/agent/runs";
const ACTIVE = new Set(["queued", "running", "requires_action"]);
const STATUSES = ["queued", "running", "requires_action", "completed", "failed", "cancelled"];
// Why a cancelled run was cancelled (its `cancel_reason`).
const CANCELLED_BY = {
  client: "The run was cancelled.",
  interrupt: "Cancelled by a later prompt of its thread (interrupt): what it produced stays in the thread.",
  rollback: "Cancelled by a later prompt of its thread (rollback): it was dropped from the thread.",
  thread_deleted: "Cancelled: its thread was deleted.",
  superseded: "Cancelled: its schedule fired again (on_overlap cancel_previous).",
};
// Polling budget: the runs group allows 1000 requests an hour per standard key.
const POLL_ACTIVE_MS = 2000;
const POLL_IDLE_MS = 15000;
const MAX_EVENTS_SHOWN = 500;

export async function agentNames(signal) {
  try {
    const { data } = await api("/v1/agents", { signal });
    return data;
  } catch (error) {
    if (error.name === "AbortError") throw error;
    return [];
  }
}

/** A failed run's error as one line: its code, then its message. */
function runError(error) {
  return [error?.code || "error", error?.message].filter(Boolean).join(": ");
}

export function agentLabel(agents, agentId) {
  const agent = agents.find((each) => each.agent_id === agentId);
  return agent ? agent.name : agentId;
}

export async function runsView({ main, query, signal }) {
  const status = query.get("status") || "";
  const agents = await agentNames(signal);
  const updated = h("span", { class: "muted small" });

  const prompt = h("textarea", { name: "prompt", rows: 3, required: true, placeholder: "Write a haiku about rain" });
  const agentSelect = h("select", { name: "agent_id" },
    h("option", { value: "" }, "Default agent"),
    agents.map((agent) => h("option", { value: agent.agent_id }, agent.name)));
  const version = versionPicker(agentSelect, { signal });
  const createError = formErrorBox();
  const startButton = h("button", { type: "submit" }, "Start run");
  const attached = attachments();
  const form = h("form", { class: "card", "aria-labelledby": "new-run-title" }, [
    h("h2", { id: "new-run-title" }, "New run"),
    field("Prompt", prompt),
    attached.field,
    attached.list,
    h("div", { class: "row" }, field("Agent", agentSelect, null, { errorSlot: true }), version.field,
      h("div", { class: "actions end" }, startButton)),
    createError,
  ]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    startButton.disabled = true;
    formError(form, createError, null);
    try {
      const body = { prompt: prompt.value };
      if (agentSelect.value) body.agent_id = version.agentId();
      const input = await attached.parts(signal);
      if (input) body.input = input;
      const run = await api(RUNS, { method: "POST", json: body });
      toast(`Run ${run.run_id} started`);
      window.location.hash = `#/runs/${run.run_id}`;
    } catch (error) {
      formError(form, createError, error);
    } finally {
      startButton.disabled = false;
    }
  });

  const statusFilter = h("select", { name: "status" },
    h("option", { value: "" }, "All statuses"),
    STATUSES.map((each) => h("option", { value: each, selected: each === status }, each)));
  statusFilter.addEventListener("change", () => {
    window.location.hash = statusFilter.value ? `#/runs?status=${statusFilter.value}` : "#/runs";
  });

  const tbody = h("tbody");
  const columns = ["Run", "Status", "Prompt", "Agent", "Model", "Created", "Credits", "Result"];
  const table = h("table", { class: "cards runs" },
    h("caption", { class: "visually-hidden" }, "Runs, newest first"),
    h("colgroup", {}, columns.map((name) => h("col", { class: `col-${name.toLowerCase()}` }))),
    h("thead", {}, h("tr", {}, columns.map(
      (name) => h("th", { scope: "col", class: name === "Credits" ? "num" : null }, name)))),
    tbody);
  const empty = h("p", { class: "muted", hidden: true }, "No runs yet. Start one above.");
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Load more");
  const listError = h("div");

  let rows = [];
  let cursor = null;

  function draw() {
    // Cells cut to their column's width show the whole text as their tooltip.
    replace(tbody, rows.map((run) => h("tr", {}, [
      h("td", { "data-label": "Run", title: run.run_id },
        h("a", { href: `#/runs/${run.run_id}` }, h("code", {}, run.run_id))),
      h("td", { "data-label": "Status" }, statusBadge(run.status)),
      h("td", { "data-label": "Prompt", class: "excerpt", title: abbreviate(run.prompt, 2000) }, abbreviate(run.prompt, 120)),
      h("td", { "data-label": "Agent" }, agentLabel(agents, run.agent_id)),
      h("td", { "data-label": "Model", title: run.model }, h("code", { class: "small" }, run.model)),
      h("td", { "data-label": "Created" }, timeEl(run.created_at)),
      h("td", { "data-label": "Credits", class: "num" }, run.billing ? formatCredits(run.billing.credits) : "—"),
      run.error
        ? h("td", { "data-label": "Result", class: "excerpt failed", title: runError(run.error) }, runError(run.error))
        : h("td", { "data-label": "Result", class: "excerpt", title: abbreviate(resultText(run.result, 0), 2000) },
          abbreviate(resultText(run.result, 0), 200)),
    ])));
    empty.hidden = rows.length > 0;
    table.hidden = rows.length === 0;
    more.hidden = !cursor;
  }

  async function refresh() {
    const limit = Math.min(Math.max(rows.length, 20), 100);
    const page = await api(RUNS, { query: { limit, status }, signal });
    const fresh = new Set(page.data.map((run) => run.run_id));
    rows = [...page.data, ...rows.slice(limit).filter((run) => !fresh.has(run.run_id))];
    if (rows.length <= limit) cursor = page.next_cursor;
    replace(updated, "Live · updated ", timeEl(new Date().toISOString()));
    draw();
  }

  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      const page = await api(RUNS, { query: { limit: 20, status, cursor }, signal });
      rows = [...rows, ...page.data];
      cursor = page.next_cursor;
      draw();
    } catch (error) {
      replace(listError, errorBox(error));
    } finally {
      more.disabled = false;
    }
  });

  await refresh();
  replace(main,
    pageHeader("Runs", updated),
    form,
    h("section", { "aria-labelledby": "runs-list-title" }, [
      h("div", { class: "toolbar" }, h("h2", { id: "runs-list-title" }, "Recent runs"),
        field("Status", statusFilter)),
      listError, table, empty, more,
    ]),
  );

  // Live: poll fast while a run is active, slowly otherwise, never while the tab is hidden.
  (async () => {
    while (!signal.aborted) {
      await sleep(rows.some((run) => ACTIVE.has(run.status)) ? POLL_ACTIVE_MS : POLL_IDLE_MS, signal);
      if (signal.aborted || document.hidden) continue;
      try {
        await refresh();
        replace(listError);
      } catch (error) {
        if (signal.aborted) return;
        replace(listError, errorBox(error));
      }
    }
  })();
}

// tool.returned carries no server_label: its call's (same tool_call_id) says it.
const toolLabels = new Map();

function toolName(data) {
  if (data.server_label) toolLabels.set(data.tool_call_id, data.server_label);
  const label = data.server_label ?? toolLabels.get(data.tool_call_id);
  return label ? `${label}_${data.name}` : data.name;
}

/** The full text behind an event's abbreviated line (shown as its tooltip). */
function fullText(event) {
  const data = event.data || {};
  if (event.event === "tool.called") return JSON.stringify(data.arguments ?? {}, null, 2);
  if (event.event === "tool.returned") return String(data.output ?? "");
  return null;
}

function describe(event) {
  const data = event.data || {};
  switch (event.event) {
    case "run.queued":
      return data.reason ? `queued (${data.reason})` : "queued";
    case "run.started":
      return `started, attempt ${data.attempt ?? 1}`;
    case "run.restarted":
      return `restarted, attempt ${data.attempt ?? ""}: the text so far is superseded`;
    case "run.step":
      if (data.step === "model_request") return `model request ${data.index ?? ""}`.trim();
      if (data.step === "tool_call") return `tool call: ${data.tool}`;
      if (data.step === "tool_result") return `tool result: ${data.tool}`;
      return data.step || "step";
    case "message.delta":
      return `“${data.text ?? ""}”`;
    case "artifact.created":
      return `${data.name} (${formatBytes(data.size_bytes ?? 0)})`;
    case "tool.called":
      return `${toolName(data)}(${abbreviate(JSON.stringify(data.arguments ?? {}), 160)})`;
    case "tool.returned":
      return `${toolName(data)}${data.is_error ? " failed" : " returned"}: ${abbreviate(data.output ?? "", 200)}`;
    case "run.requires_action": {
      const calls = data.required_action?.tool_calls?.length ?? 0;
      return `waiting for you: ${calls} call${calls === 1 ? "" : "s"}`;
    }
    case "run.completed":
      return `completed · ${formatCredits(data.billing?.credits)} credits`;
    case "run.failed":
      return `failed: ${data.error?.message || data.error?.code || ""}`;
    case "run.cancelled":
      return "cancelled";
    default:
      return "";
  }
}

const STATUS_OF_EVENT = {
  "run.queued": "queued",
  "run.started": "running",
  "run.requires_action": "requires_action",
  "run.completed": "completed",
  "run.failed": "failed",
  "run.cancelled": "cancelled",
};

export async function runView({ main, params: [runId], signal }) {
  let run = await api(`${RUNS}/${encodeURIComponent(runId)}`, { signal });
  const agents = await agentNames(signal);

  const statusBox = h("p", { class: "run-status", "aria-live": "polite" });
  const streamState = h("span", { class: "stream-state muted small" });
  const cancel = h("button", { type: "button", class: "danger secondary" }, "Cancel run");
  const meta = h("dl", { class: "meta" });
  const eventList = h("ol", { class: "events", "aria-label": "Events" });
  const eventCount = h("span", { class: "muted small" });
  const output = h("pre", { class: "output", tabindex: "0", "aria-label": "Result text" });
  const prompt = h("pre", { class: "output prompt", tabindex: "0", "aria-label": "Prompt text" }, run.prompt);
  const resultNote = h("p", { class: "muted small" });
  // A failed run's card says why in place of a result (and keeps any text streamed before).
  const resultTitle = h("h2", { id: "result-title" }, "Result");
  const failure = h("p", { class: "error", role: "alert", hidden: true });
  const artifactsBox = h("div");
  const billingBox = h("div");
  const errorArea = h("div");
  const actionArea = h("div");
  const trace = traceSection(run.run_id, { signal });
  let streamed = "";
  let events = 0;

  function drawStatus() {
    replace(statusBox, "Status: ", statusBadge(run.status));
    cancel.hidden = !ACTIVE.has(run.status);
    const duration = run.started_at && run.finished_at
      ? `${((new Date(run.finished_at) - new Date(run.started_at)) / 1000).toFixed(1)} s` : "—";
    replace(meta, [
      ["Model", h("code", {}, run.model)],
      ["Agent", [h("a", { href: "#/agents" }, agentLabel(agents, run.agent_id)),
        run.agent_version ? ` · version ${run.agent_version}` : null]],
      ["Thread", h("a", { href: `#/threads/${run.thread_id}` }, h("code", {}, run.thread_id))],
      ["Created", timeEl(run.created_at)],
      ["Started", timeEl(run.started_at)],
      ["Finished", timeEl(run.finished_at)],
      ["Duration", duration],
    ].map(([term, value]) => h("div", {}, h("dt", {}, term), h("dd", {}, value))));
  }

  function drawResult() {
    const failed = run.status === "failed";
    resultTitle.textContent = failed ? "Error" : "Result";
    failure.hidden = !failed;
    output.hidden = failed && !streamed;
    if (run.status === "completed") {
      output.textContent = resultText(run.result);
      output.dataset.json = String(typeof run.result === "object" && run.result !== null);
      resultNote.textContent = output.dataset.json === "true"
        ? "Final result: a JSON object of the agent's output schema." : "Final result.";
    } else if (failed) {
      replace(failure, h("code", {}, run.error?.code || "error"), " ", run.error?.message || "");
      output.textContent = streamed;
      resultNote.textContent = streamed ? "The text streamed before the run failed." : "";
    } else if (run.status === "cancelled") {
      output.textContent = streamed;
      resultNote.textContent = CANCELLED_BY[run.cancel_reason] || "The run was cancelled.";
    } else {
      output.textContent = streamed;
      resultNote.textContent = run.status === "requires_action" ? "Waiting for your answer."
        : streamed ? "Streaming…" : "Waiting for the model…";
    }
  }

  function drawArtifacts(artifacts) {
    if (!artifacts || artifacts.length === 0) {
      replace(artifactsBox, h("p", { class: "muted" },
        ACTIVE.has(run.status) ? "None yet." : "This run wrote no files."));
      return;
    }
    replace(artifactsBox, h("table", { class: "cards" },
      h("caption", { class: "visually-hidden" }, "Artifacts"),
      h("thead", {}, h("tr", {}, ["Name", "Type", "Size", "SHA-256", "Download"].map(
        (name) => h("th", { scope: "col", class: name === "Size" ? "num" : null }, name)))),
      h("tbody", {}, artifacts.map((artifact) => h("tr", {}, [
        h("td", { "data-label": "Name" }, artifact.name),
        h("td", { "data-label": "Type" }, artifact.mime_type),
        h("td", { "data-label": "Size", class: "num" }, formatBytes(artifact.size_bytes)),
        h("td", { "data-label": "SHA-256" }, h("code", { title: artifact.sha256 }, `${artifact.sha256.slice(0, 12)}…`)),
        h("td", { "data-label": "" }, h("button", {
          type: "button", class: "secondary small",
          "aria-label": `Download ${artifact.name}`,
          onclick: async (event) => {
            event.target.disabled = true;
            try {
              const saved = await download(pathOf(artifact.download_url), artifact.name);
              toast(`Downloaded ${saved.name} (${formatBytes(saved.size)})`);
            } catch (error) {
              replace(errorArea, errorBox(error));
            } finally {
              event.target.disabled = false;
            }
          },
        }, "Download")),
      ])))));
  }

  function drawBilling() {
    const billing = run.billing;
    if (!billing) {
      replace(billingBox, h("p", { class: "muted" }, "Shown when the run finishes."));
      return;
    }
    replace(billingBox, h("dl", { class: "stats" }, [
      ["Credits", formatCredits(billing.credits)],
      ["Input tokens", formatInt(billing.input_tokens)],
      ["Output tokens", formatInt(billing.output_tokens)],
      ["Model requests", formatInt(billing.requests)],
      ["Tool calls", formatInt(billing.tool_calls)],
    ].map(([term, value]) => h("div", { class: "stat" }, h("dt", {}, term), h("dd", {}, value)))));
  }

  function drawActions() {
    if (run.status === "requires_action" && run.required_action) {
      replace(actionArea, actionPanel(run, (queued) => {
        run = queued;
        drawStatus();
        drawActions();
      }));
    } else {
      replace(actionArea);
    }
  }

  async function reloadArtifacts() {
    const { data } = await api(`${RUNS}/${run.run_id}/artifacts`, { signal });
    drawArtifacts(data);
  }

  cancel.addEventListener("click", async () => {
    cancel.disabled = true;
    try {
      run = await api(`${RUNS}/${run.run_id}/cancel`, { method: "POST" });
      drawStatus();
      toast("Cancellation requested");
    } catch (error) {
      replace(errorArea, errorBox(error));
    } finally {
      cancel.disabled = false;
    }
  });

  drawStatus();
  drawActions();
  drawResult();
  drawArtifacts(run.artifacts);
  drawBilling();
  replace(main,
    pageHeader("Run", h("code", { class: "run-id" }, run.run_id)),
    h("div", { class: "toolbar status-row" }, statusBox, cancel),
    errorArea,
    actionArea,
    meta,
    h("section", { class: "card", "aria-labelledby": "prompt-title" }, [
      h("h2", { id: "prompt-title" }, "Prompt"), prompt]),
    inputSection(run, { signal }),
    h("div", { class: "run-grid" }, [
      h("section", { class: "card", "aria-labelledby": "result-title" }, [
        resultTitle, failure, output, resultNote]),
      h("section", { class: "card", "aria-labelledby": "events-title" }, [
        h("div", { class: "toolbar" }, h("h2", { id: "events-title" }, "Events"), eventCount, streamState),
        eventList]),
    ]),
    h("section", { class: "card", "aria-labelledby": "artifacts-title" }, [
      h("h2", { id: "artifacts-title" }, "Artifacts"), artifactsBox]),
    h("section", { class: "card", "aria-labelledby": "credits-title" }, [
      h("h2", { id: "credits-title" }, "Credits"), billingBox]),
    trace.section,
  );
  trace.refresh();

  followEvents(pathOf(run.events_url), {
    signal,
    onState(state) {
      streamState.textContent = { live: "● Live", reconnecting: "Reconnecting…", ended: "Stream ended" }[state];
      streamState.dataset.state = state;
    },
    onError(message) {
      replace(errorArea, h("p", { class: "error", role: "alert" }, `Event stream: ${message}`));
    },
    async onEvent(event) {
      events += 1;
      eventCount.textContent = `${events} event${events === 1 ? "" : "s"}`;
      eventList.append(h("li", { dataset: { kind: event.event } }, [
        h("span", { class: "event-id" }, `#${event.id}`),
        h("span", { class: "event-kind" }, event.event),
        h("span", { class: "event-text", title: fullText(event) }, describe(event)),
        event.data.created_at ? timeEl(event.data.created_at, { class: "muted small" }) : null,
      ]));
      // A long answer streams thousands of deltas: keep the page light, show the latest ones.
      if (eventList.children.length > MAX_EVENTS_SHOWN) eventList.firstElementChild.remove();
      eventList.scrollTop = eventList.scrollHeight;
      if (event.event === "message.delta") {
        streamed += event.data.text || "";
      } else if (event.event === "run.restarted") {
        streamed = ""; // the run is executed again (worker lost): its answer starts over
      }
      const status = STATUS_OF_EVENT[event.event];
      if (status && !(ACTIVE.has(status) && !ACTIVE.has(run.status))) {
        run = { ...run, status };
        drawStatus();
      }
      if (event.event === "artifact.created") await reloadArtifacts();
      if (event.event === "run.requires_action" || event.event === "run.queued") {
        // The stream replays earlier waits too: only the run as it is now decides.
        run = await api(`${RUNS}/${run.run_id}`, { signal });
        drawStatus();
        drawActions();
      }
      if (["run.completed", "run.failed", "run.cancelled"].includes(event.event)) {
        run = await api(`${RUNS}/${run.run_id}`, { signal });
        drawStatus();
        drawActions();
        drawArtifacts(run.artifacts);
        drawBilling();
      }
      // A wait or an end closes spans: the waterfall shows them (the replay's too, once).
      if (["run.requires_action", "run.completed", "run.failed", "run.cancelled"].includes(event.event)) {
        trace.refresh();
      }
      drawResult();
    },
  });
}
