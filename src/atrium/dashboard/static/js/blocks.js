// Memory blocks: the list with a form to add one (#/blocks), and one block's edit form with its
// versions (#/blocks/persona): who wrote each, a run (linked) and tool call or an API key.

import { api } from "./api.js";
import { abbreviate, field, formError, formErrorBox, h, pageHeader, replace, timeEl, toast } from "./dom.js";

const BLOCKS = "/v1/memory/blocks";

export async function blocksView({ main, signal }) {
  const page = await api(BLOCKS, { query: { limit: 200 }, signal });
  const rows = page.data.map((block) => h("tr", {}, [
    h("td", { "data-label": "Label" }, h("a", { href: `#/blocks/${block.label}` }, block.label)),
    h("td", { "data-label": "Version" }, String(block.version)),
    h("td", { "data-label": "Characters" }, `${block.chars}/${block.limit}`),
    h("td", { "data-label": "Text", class: "excerpt" }, abbreviate(block.value)),
    h("td", { "data-label": "Updated" }, timeEl(block.updated_at)),
  ]));
  const table = h("table", { class: "cards blocks", hidden: page.data.length === 0 },
    h("caption", { class: "visually-hidden" }, "Memory blocks, newest first"),
    h("thead", {}, h("tr", {}, ["Label", "Version", "Characters", "Text", "Updated"].map(
      (name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, rows));
  const empty = h("p", { class: "muted", hidden: page.data.length > 0 }, "No blocks yet.");

  const label = h("input", { name: "label", required: true, placeholder: "persona", spellcheck: "false", autocomplete: "off" });
  const value = h("textarea", { name: "value", rows: 3 });
  const limit = h("input", { name: "limit", type: "number", min: "1", value: "2000" });
  const box = formErrorBox();
  const form = h("form", { class: "card", "aria-labelledby": "new-block" }, [
    h("h2", { id: "new-block" }, "New block"),
    h("div", { class: "row" }, [
      field("Label", label, "Letters, digits, _ . -", { errorSlot: true }),
      field("Limit", limit, "Most characters", { errorSlot: true }),
    ]),
    field("Text", value, null, { errorSlot: true }),
    box,
    h("button", { type: "submit" }, "Create block"),
  ]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const json = { label: label.value.trim(), value: value.value, limit: Number(limit.value) };
      const made = await api(BLOCKS, { method: "POST", json });
      toast(`Block ${made.label} created`);
      window.location.hash = `#/blocks/${made.label}`;
    } catch (error) {
      formError(form, box, error);
    }
  });
  replace(main, pageHeader("Blocks"), table, empty, form);
}

function writer(version) {
  if (version.run_id) {
    return h("span", {}, [
      "run ", h("a", { href: `#/runs/${version.run_id}` }, h("code", {}, version.run_id)),
      " tool call ", h("code", {}, version.tool_call_id || "?"),
    ]);
  }
  return version.api_key_id !== null ? `API key ${version.api_key_id}` : "unknown";
}

export async function blockView({ main, params: [label], signal }) {
  const path = `${BLOCKS}/${encodeURIComponent(label)}`;
  const [block, history] = await Promise.all([
    api(path, { signal }),
    api(`${path}/history`, { query: { limit: 200 }, signal }),
  ]);
  const value = h("textarea", { name: "value", rows: 6 }, block.value);
  const limit = h("input", { name: "limit", type: "number", min: "1", value: String(block.limit) });
  const box = formErrorBox();
  const form = h("form", { class: "card", "aria-labelledby": "edit-block" }, [
    h("h2", { id: "edit-block" }, `${block.label} · version ${block.version}`),
    field("Text", value, null, { errorSlot: true }),
    field("Limit", limit, "Most characters", { errorSlot: true }),
    box,
    h("button", { type: "submit" }, "Save block"),
  ]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      // if_version: an edit made meanwhile (by a person or an agent) is a 409, not overwritten.
      const json = { value: value.value, limit: Number(limit.value), if_version: block.version };
      const saved = await api(path, { method: "PATCH", json });
      toast(`Block ${saved.label} saved as version ${saved.version}`);
      await blockView({ main, params: [label], signal });
    } catch (error) {
      formError(form, box, error);
    }
  });
  const rows = history.data.map((version) => h("tr", {}, [
    h("td", { "data-label": "Version" }, String(version.version)),
    h("td", { "data-label": "Action" }, version.action),
    h("td", { "data-label": "Text", class: "excerpt" }, abbreviate(version.value)),
    h("td", { "data-label": "Written by" }, writer(version)),
    h("td", { "data-label": "When" }, timeEl(version.created_at)),
  ]));
  const table = h("table", { class: "cards block-history" },
    h("caption", { class: "visually-hidden" }, "Versions, newest first"),
    h("thead", {}, h("tr", {}, ["Version", "Action", "Text", "Written by", "When"].map(
      (name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, rows));
  const remove = h("button", {
    type: "button", class: "danger secondary",
    onclick: async () => {
      const agents = "Agents that list it no longer see it; its versions stay readable.";
      if (!window.confirm(`Delete block “${block.label}”? ${agents}`)) return;
      try {
        await api(path, { method: "DELETE" });
        toast(`Deleted block ${block.label}`);
        window.location.hash = "#/blocks";
      } catch (error) {
        toast(error.message);
      }
    },
  }, "Delete block");
  replace(main, pageHeader("Block"), form, remove,
    h("section", { class: "card", "aria-labelledby": "versions-title" }, [h("h2", { id: "versions-title" }, "Versions"), table]));
}
