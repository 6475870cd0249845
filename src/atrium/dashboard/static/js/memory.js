// Memory: the store browsed by namespace and searched by words or, when the server has an
// embeddings model, by meaning (#/memory); one item with its history (#/memory/mem_…): which run
// and tool call, or which API key, wrote each version. Items can be deleted from both.

import { api } from "./api.js";
import { abbreviate, errorBox, field, h, pageHeader, replace, timeEl, toast } from "./dom.js";

const MEMORY = "/v1/memory";

function valueText(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Ask before forgetting `item`; true once the server deleted it (its history stays). */
async function deleteItem(item) {
  const name = `${item.namespace.join("/")} · ${item.key}`;
  if (!window.confirm(`Delete memory item “${name}”? Agents no longer find it; its history stays.`)) return false;
  try {
    await api(`${MEMORY}/items/${encodeURIComponent(item.item_id)}`, { method: "DELETE" });
    toast(`Deleted ${name}`);
    return true;
  } catch (error) {
    toast(error.message);
    return false;
  }
}

function itemsTable(items, caption, onDeleted) {
  const rows = items.map((item) => h("tr", {}, [
    h("td", { "data-label": "Item" }, h("a", { href: `#/memory/${item.item_id}` }, h("code", {}, item.item_id))),
    h("td", { "data-label": "Namespace" }, item.namespace.join("/")),
    h("td", { "data-label": "Key" }, item.key),
    h("td", { "data-label": "Value", class: "excerpt" }, abbreviate(valueText(item.value))),
    h("td", { "data-label": "Updated" }, timeEl(item.updated_at)),
    h("td", { "data-label": "Actions", class: "row-actions" }, h("button", {
      type: "button", class: "danger secondary small", "aria-label": `Delete ${item.namespace.join("/")} ${item.key}`,
      onclick: async () => { if (await deleteItem(item)) await onDeleted(); },
    }, "Delete")),
  ]));
  return h("table", { class: "cards memory" },
    h("caption", { class: "visually-hidden" }, caption),
    h("thead", {}, h("tr", {}, ["Item", "Namespace", "Key", "Value", "Updated", "Actions"].map(
      (name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, rows));
}

/** Whether the server searches by meaning: without an embeddings model it refuses `mode`. */
async function searchesByMeaning(signal) {
  try {
    await api(`${MEMORY}/search`, { method: "POST", json: { query: "probe", mode: "semantic", limit: 1 }, signal });
    return true;
  } catch (error) {
    if (error.name === "AbortError") throw error;
    // 400 naming `mode`: no embeddings model. Anything else (the model's server is down, 502):
    // configured, so offered; a search then shows the error.
    return !(error.status === 400 && error.parameter === "mode");
  }
}

export async function memoryView({ main, signal }) {
  const prefix = h("input", { name: "namespace_prefix", placeholder: "users/alice", spellcheck: "false", autocomplete: "off" });
  const query = h("input", { name: "query", type: "search", placeholder: "words to find", spellcheck: "false" });
  const mode = h("select", { name: "mode" }, [
    h("option", { value: "text" }, "Words"),
    h("option", { value: "semantic" }, "Meaning"),
  ]);
  const byMeaning = await searchesByMeaning(signal);
  const results = h("div", { "aria-live": "polite" });
  const form = h("form", { class: "card", role: "search", "aria-label": "Memory" }, [
    h("div", { class: "row" }, [
      field("Namespace", prefix, "Segments joined by /; empty: every namespace."),
      field("Search", query, "Empty: list the namespace."),
      byMeaning
        ? field("Match", mode, "Words: every word, in any order. Meaning: the nearest items first.")
        : h("p", { class: "hint" }, "Search by meaning needs an embeddings model (ATRIUM_EMBEDDINGS_MODEL)."),
    ]),
    h("button", { type: "submit" }, "Show"),
  ]);

  async function show() {
    const namespace = prefix.value.trim().replace(/^\/+|\/+$/g, "");
    try {
      let items;
      if (query.value.trim()) {
        const json = { query: query.value.trim(), mode: byMeaning ? mode.value : "text" };
        if (namespace) json.namespace_prefix = namespace.split("/");
        items = (await api(`${MEMORY}/search`, { method: "POST", json, signal })).data;
      } else {
        items = (await api(`${MEMORY}/items`, { query: { namespace_prefix: namespace, limit: 100 }, signal })).data;
      }
      replace(results, items.length ? itemsTable(items, "Memory items", show) : h("p", { class: "muted" }, "No items."));
    } catch (error) {
      replace(results, errorBox(error));
    }
  }
  form.addEventListener("submit", (event) => { event.preventDefault(); show(); });
  replace(main, pageHeader("Memory"), form, results);
  await show();
}

function writer(entry) {
  if (entry.run_id) {
    return h("span", {}, [
      "run ", h("a", { href: `#/runs/${entry.run_id}` }, h("code", {}, entry.run_id)),
      " tool call ", h("code", {}, entry.tool_call_id || "?"),
    ]);
  }
  return entry.api_key_id !== null ? `API key ${entry.api_key_id}` : "unknown";
}

export async function memoryItemView({ main, params: [itemId], signal }) {
  const path = `${MEMORY}/items/${encodeURIComponent(itemId)}`;
  const history = await api(`${path}/history`, { signal });
  let item = null;
  try {
    item = await api(path, { signal });
  } catch {
    item = null; // deleted or expired: the history stays readable
  }
  const latest = history.data[0];
  const summary = h("section", { class: "card", "aria-labelledby": "item-title" }, [
    h("h2", { id: "item-title" }, latest ? `${latest.namespace.join("/")} · ${latest.key}` : itemId),
    item
      ? h("pre", { class: "output" }, JSON.stringify(item.value, null, 2))
      : h("p", { class: "muted" }, "Deleted or expired."),
    item
      ? h("button", {
        type: "button", class: "danger secondary",
        onclick: async () => { if (await deleteItem(item)) await memoryItemView({ main, params: [itemId], signal }); },
      }, "Delete item")
      : null,
  ]);
  const rows = history.data.map((entry) => h("tr", {}, [
    h("td", { "data-label": "When" }, timeEl(entry.created_at)),
    h("td", { "data-label": "Action" }, entry.action),
    h("td", { "data-label": "Value", class: "excerpt" }, entry.value === null ? "" : abbreviate(valueText(entry.value))),
    h("td", { "data-label": "Written by" }, writer(entry)),
  ]));
  const table = h("table", { class: "cards memory-history" },
    h("caption", { class: "visually-hidden" }, "History, newest first"),
    h("thead", {}, h("tr", {}, ["When", "Action", "Value", "Written by"].map(
      (name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, rows));
  replace(main, pageHeader("Memory item"), summary,
    h("section", { class: "card", "aria-labelledby": "history-title" }, [h("h2", { id: "history-title" }, "History"), table]));
}
