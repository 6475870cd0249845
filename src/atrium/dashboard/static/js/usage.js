// Usage (#/usage?start=…&end=…&agent=…): credits and runs per day, totals, per-agent table;
// for one agent, its runs per version too.

import { api } from "./api.js";
import { barChart } from "./chart.js";
import {
  field, formError, formErrorBox, formatCredits, formatInt, h, pageHeader, replace, sleep,
} from "./dom.js";

const REFRESH_MS = 30_000;

function isoDay(date) {
  return date.toISOString().slice(0, 10);
}

function daysBefore(day, count) {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - count);
  return isoDay(date);
}

export async function usageView({ main, query, signal }) {
  const today = isoDay(new Date());
  const end = query.get("end") || today;
  const start = query.get("start") || daysBefore(end, 29);
  const agentId = query.get("agent") || "";
  const { data: agents } = await api("/v1/agents", { signal });

  const startInput = h("input", { type: "date", name: "start_date", value: start, required: true });
  const endInput = h("input", { type: "date", name: "end_date", value: end, required: true });
  const agentSelect = h("select", { name: "agent_id" },
    h("option", { value: "" }, "All agents"),
    agents.map((agent) => h("option", { value: agent.agent_id, selected: agent.agent_id === agentId }, agent.name)));
  const error = formErrorBox();
  const presets = [7, 14, 30, 90].map((days) => h("button", {
    type: "button", class: "secondary small",
    onclick: () => go(daysBefore(today, days - 1), today, agentSelect.value),
  }, `Last ${days} days`));
  const form = h("form", { class: "card filters", "aria-label": "Range and agent" }, [
    h("div", { class: "row" }, field("From", startInput), field("To", endInput), field("Agent", agentSelect),
      h("div", { class: "actions end" }, h("button", { type: "submit" }, "Show"))),
    h("div", { class: "presets" }, presets),
    error,
  ]);

  function go(from, to, agent) {
    const params = new URLSearchParams({ start: from, end: to });
    if (agent) params.set("agent", agent);
    const target = `#/usage?${params}`;
    if (window.location.hash === target) window.dispatchEvent(new HashChangeEvent("hashchange"));
    else window.location.hash = target;
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    go(startInput.value, endInput.value, agentSelect.value);
  });

  const results = h("div", { "aria-live": "polite" }, h("p", { class: "muted" }, "Loading…"));
  replace(main, pageHeader("Usage", h("span", { class: "muted small" }, "UTC days; runs count on the day they finish")), form, results);

  let report;
  try {
    report = await api("/v1/analytics/usage", {
      query: { start_date: start, end_date: end, agent_id: agentId }, signal,
    });
  } catch (failure) {
    if (failure.name === "AbortError") throw failure;
    formError(form, error, failure);
    return;
  }
  drawReport(results, report, agents, agentId);

  // A range that includes today keeps counting: refresh it every 30 s while the tab is visible.
  if (end >= today) {
    (async () => {
      for (;;) {
        await sleep(REFRESH_MS, signal);
        if (signal.aborted) return;
        if (document.hidden) continue;
        try {
          const fresh = await api("/v1/analytics/usage", {
            query: { start_date: start, end_date: end, agent_id: agentId }, signal,
          });
          if (JSON.stringify(fresh) !== JSON.stringify(report)) {
            report = fresh;
            drawReport(results, report, agents, agentId);
          }
        } catch {
          // keep the last report; the next tick tries again
        }
      }
    })();
  }
}

function drawReport(results, report, agents, agentId) {
  const totals = report.totals;
  const agentName = agentId ? (agents.find((a) => a.agent_id === agentId)?.name || agentId) : "all agents";
  replace(results,
    h("p", { class: "range" }, `${report.start_date} to ${report.end_date}, ${agentName}`),
    h("dl", { class: "stats four", "aria-label": "Totals" }, [
      ["Credits", formatCredits(totals.credits)],
      ["Runs", formatInt(totals.runs)],
      ["Completed", formatInt(totals.completed)],
      ["Failed", formatInt(totals.failed)],
      ["Cancelled", formatInt(totals.cancelled)],
      ["Input tokens", formatInt(totals.input_tokens)],
      ["Output tokens", formatInt(totals.output_tokens)],
      ["Model requests", formatInt(totals.requests)],
    ].map(([term, value]) => h("div", { class: "stat" }, h("dt", {}, term), h("dd", {}, value)))),
    h("div", { class: "chart-grid" }, [
      h("section", { class: "card", "aria-labelledby": "credits-chart" }, [
        h("h2", { id: "credits-chart" }, "Credits per day"),
        barChart({
          title: "Credits per day", className: "credits", format: formatCredits,
          points: report.daily.map((day) => ({ label: day.date, value: day.credits })),
        }),
      ]),
      h("section", { class: "card", "aria-labelledby": "runs-chart" }, [
        h("h2", { id: "runs-chart" }, "Runs per day"),
        barChart({
          title: "Runs per day", className: "runs", format: formatInt, integer: true,
          points: report.daily.map((day) => ({ label: day.date, value: day.runs })),
        }),
      ]),
    ]),
    h("details", { class: "card" }, h("summary", {}, "Daily numbers"),
      h("div", { class: "scroll" }, h("table", {},
        h("thead", {}, h("tr", {}, ["Day", "Runs", "Completed", "Failed", "Cancelled", "Credits", "Tokens in", "Tokens out"].map(
          (each) => h("th", { scope: "col", class: each === "Day" ? null : "num" }, each)))),
        h("tbody", {}, report.daily.map((day) => h("tr", {}, [
          h("th", { scope: "row" }, day.date), formatInt(day.runs), formatInt(day.completed),
          formatInt(day.failed), formatInt(day.cancelled), formatCredits(day.credits),
          formatInt(day.input_tokens), formatInt(day.output_tokens),
        ].map((cell) => (cell instanceof Node ? cell : h("td", { class: "num" }, cell))))))))),
    h("section", { "aria-labelledby": "by-agent" }, [
      h("h2", { id: "by-agent" }, "By agent"),
      h("table", { class: "cards" },
        h("thead", {}, h("tr", {}, ["Agent", "Runs", "Completed", "Failed", "Credits"].map(
          (each) => h("th", { scope: "col", class: each === "Agent" ? null : "num" }, each)))),
        h("tbody", {}, report.agents.map((agent) => h("tr", {}, [
          h("td", { "data-label": "Agent" }, agent.name),
          h("td", { "data-label": "Runs", class: "num" }, formatInt(agent.runs)),
          h("td", { "data-label": "Completed", class: "num" }, formatInt(agent.completed)),
          h("td", { "data-label": "Failed", class: "num" }, formatInt(agent.failed)),
          h("td", { "data-label": "Credits", class: "num" }, formatCredits(agent.credits)),
        ])))),
    ]),
    report.versions ? versionsSection(report.versions) : null,
  );
}

// The chosen agent's finished runs per version they executed, newest version first.
function versionsSection(versions) {
  return h("section", { "aria-labelledby": "by-version" }, [
    h("h2", { id: "by-version" }, "By version"),
    versions.length === 0
      ? h("p", { class: "muted" }, "No finished runs of this agent in the range.")
      : h("table", { class: "cards versions-usage" },
        h("thead", {}, h("tr", {}, ["Version", "Runs", "Completed", "Failed", "Cancelled", "Credits"].map(
          (each) => h("th", { scope: "col", class: each === "Version" ? null : "num" }, each)))),
        h("tbody", {}, versions.map((row) => h("tr", {}, [
          // Runs created before agents had versions recorded none.
          h("td", { "data-label": "Version" }, row.version === null ? "none" : `Version ${row.version}`),
          h("td", { "data-label": "Runs", class: "num" }, formatInt(row.runs)),
          h("td", { "data-label": "Completed", class: "num" }, formatInt(row.completed)),
          h("td", { "data-label": "Failed", class: "num" }, formatInt(row.failed)),
          h("td", { "data-label": "Cancelled", class: "num" }, formatInt(row.cancelled)),
          h("td", { "data-label": "Credits", class: "num" }, formatCredits(row.credits)),
        ])))),
  ]);
}
