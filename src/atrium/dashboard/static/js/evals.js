// Stored evals (made by `atrium eval` or client.evals.run): the list (#/evals) and one eval's
// side-by-side table (#/evals/eval_…): a row per case, per agent pass/FAIL, credits, latency,
// and a totals row; delete after a confirm.

import { api } from "./api.js";
import { h, pageHeader, replace, timeEl, toast } from "./dom.js";

const EVALS = "/v1/evals";

const percent = (rate) => `${Math.round(rate * 100)}%`;
const ms = (value) => (value === null || value === undefined ? "–" : `${value} ms`);
const credits = (value) => String(Number(value.toFixed(6)));

export async function evalsView({ main, signal }) {
  const page = await api(EVALS, { query: { limit: 100 }, signal });
  const rows = page.data.map((found) => h("tr", {}, [
    h("td", { "data-label": "Eval" }, h("a", { href: `#/evals/${found.eval_id}` }, h("code", {}, found.eval_id))),
    h("td", { "data-label": "Dataset" }, found.dataset.name),
    h("td", { "data-label": "Cases" }, String(found.cases)),
    h("td", { "data-label": "Pass rate" }, found.totals.map((t) => `${t.agent} ${percent(t.pass_rate)}`).join(", ")),
    h("td", { "data-label": "Created" }, timeEl(found.created_at)),
  ]));
  const table = h("table", { class: "cards evals", hidden: page.data.length === 0 },
    h("caption", { class: "visually-hidden" }, "Evals, newest first"),
    h("thead", {}, h("tr", {}, ["Eval", "Dataset", "Cases", "Pass rate", "Created"].map(
      (name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, rows));
  const empty = h("p", { class: "muted", hidden: page.data.length > 0 },
    "No evals yet. Run one with: atrium eval DATASET.jsonl --agent agt_…@1 --agent agt_…@2");
  replace(main, pageHeader("Evals"), table, empty);
}

function resultCells(result) {
  if (!result) return [h("td", {}, "–"), h("td", {}, "–"), h("td", {}, "–")];
  const failed = result.checks.filter((check) => !check.passed).map((check) => check.type);
  if (result.status !== "completed") failed.unshift(result.status);
  const reasons = result.checks.filter((check) => check.reason).map((check) => `${check.type}: ${check.reason}`);
  const verdict = result.passed ? "pass" : `FAIL ${failed.join(",")}`;
  return [
    h("td", { class: result.passed ? "eval-pass" : "eval-fail", title: reasons.join("\n") }, [
      h("a", { href: `#/runs/${result.run_id}` }, verdict),
    ]),
    h("td", { class: "num" }, credits(result.credits)),
    h("td", { class: "num" }, ms(result.latency_ms)),
  ];
}

export async function evalView({ main, params: [evalId], signal }) {
  const found = await api(`${EVALS}/${encodeURIComponent(evalId)}`, { signal });
  const head = [h("th", { scope: "col" }, "Case")];
  for (const agent of found.agents) {
    const versions = agent.versions.map((v) => `v${v}`).join(",");
    head.push(h("th", { scope: "col" }, versions ? `${agent.ref} (${versions})` : agent.ref));
    head.push(h("th", { scope: "col" }, "Credits"), h("th", { scope: "col" }, "Latency"));
  }
  const rows = found.cases.map((item) => {
    const byAgent = new Map(item.results.map((result) => [result.agent, result]));
    return h("tr", { dataset: { case: item.case_id } }, [
      h("th", { scope: "row" }, item.case_id),
      ...found.agents.flatMap((agent) => resultCells(byAgent.get(agent.ref))),
    ]);
  });
  const totals = new Map(found.totals.map((total) => [total.agent, total]));
  const totalRow = h("tr", { class: "totals" }, [
    h("th", { scope: "row" }, "Total"),
    ...found.agents.flatMap((agent) => {
      const total = totals.get(agent.ref);
      return [
        h("td", {}, `${total.passed}/${total.cases} (${percent(total.pass_rate)})`),
        h("td", { class: "num" }, credits(total.credits)),
        h("td", { class: "num" }, `p50 ${ms(total.p50_latency_ms)}`),
      ];
    }),
  ]);
  const table = h("table", { class: "eval-table" },
    h("caption", {}, `${found.dataset.name} · sha256 ${found.dataset.sha256.slice(0, 12)}…`),
    h("thead", {}, h("tr", {}, head)),
    h("tbody", {}, rows),
    h("tfoot", {}, totalRow));
  const remove = h("button", { type: "button", class: "secondary danger" }, "Delete eval");
  remove.addEventListener("click", async () => {
    if (!window.confirm(`Delete eval ${found.eval_id}? Its runs stay.`)) return;
    await api(`${EVALS}/${encodeURIComponent(found.eval_id)}`, { method: "DELETE" });
    toast(`Eval ${found.eval_id} deleted`);
    window.location.hash = "#/evals";
  });
  replace(main, pageHeader(`Eval ${found.eval_id}`),
    h("p", {}, [h("a", { href: "#/evals" }, "All evals"), " · ", timeEl(found.created_at)]),
    h("div", { class: "table-scroll" }, table), remove);
}
