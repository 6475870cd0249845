// An agent's versions (every config it has had), the diff between two, restore, and its
// aliases with their weighted splits: the lower half of #/agents/agt_…/edit. Also the Version
// select of the forms that start a run (new run, new schedule).

import { api } from "./api.js";
import { field, formError, formErrorBox, h, replace, timeEl, toast } from "./dom.js";

const AGENTS = "/v1/agents";

const shown = (value) => JSON.stringify(value);

/** One line per JSON Patch operation: "~ path: before → after", "+ path: value", "- path: before". */
function patchList(diff) {
  if (diff.patch.length === 0) {
    return h("p", { class: "muted" }, `Versions ${diff.against} and ${diff.version} have the same config.`);
  }
  return h("ul", { class: "patch mono", "aria-label": `Changes from version ${diff.against} to ${diff.version}` },
    diff.patch.map((op) => {
      if (op.op === "replace") return h("li", { class: "patch-replace" }, `~ ${op.path}: ${shown(op.before)} → ${shown(op.value)}`);
      if (op.op === "add") return h("li", { class: "patch-add" }, `+ ${op.path}: ${shown(op.value)}`);
      return h("li", { class: "patch-remove" }, `- ${op.path}: ${shown(op.before)}`);
    }));
}

function versionOptions(versions, selected) {
  return versions.map((v) => h("option", { value: String(v.version), selected: v.version === selected }, `Version ${v.version}`));
}

/** The versions card and the aliases card; `onRestored(version)` after a restore. */
export async function versionsPanel(agentId, { signal, onRestored }) {
  const base = `${AGENTS}/${encodeURIComponent(agentId)}`;
  const versionsBody = h("tbody");
  const diffBox = h("div", { class: "diff" });
  const newer = h("select", { name: "version" });
  const older = h("select", { name: "against" });
  const aliasesBody = h("tbody");
  const noAliases = h("p", { class: "muted" }, "No aliases yet. Runs use one as agent_id “agt_…@name”.");
  let versions = [];

  async function showDiff() {
    const diff = await api(`${base}/versions/${newer.value}/diff`, { query: { against: older.value }, signal });
    replace(diffBox, patchList(diff));
  }

  async function loadVersions() {
    // Every version: an agent has a handful; 100 a page keeps this one request.
    ({ data: versions } = await api(`${base}/versions`, { query: { limit: 100 }, signal }));
    replace(versionsBody, versions.map((v) => h("tr", {}, [
      h("td", { "data-label": "Version", class: "num" }, String(v.version)),
      h("td", { "data-label": "Live" }, v.live ? h("span", { class: "badge live-badge" }, "live") : ""),
      h("td", { "data-label": "Hash" }, h("code", { title: v.content_hash }, v.content_hash.slice(0, 12))),
      h("td", { "data-label": "Created" }, timeEl(v.created_at)),
      h("td", { "data-label": "Model" }, h("code", {}, v.config.model)),
      h("td", { "data-label": "Restored from", class: "num" }, v.restored_from === null ? "" : String(v.restored_from)),
      h("td", { "data-label": "Actions", class: "row-actions" }, v.live ? "" : h("button", {
        type: "button", class: "secondary small", "aria-label": `Restore version ${v.version}`,
        onclick: async () => {
          try {
            const restored = await api(`${base}/versions/${v.version}/restore`, { method: "POST" });
            toast(`Version ${v.version} restored as version ${restored.version}`);
            await loadVersions();
            onRestored?.(restored);
          } catch (error) {
            toast(error.message);
          }
        },
      }, "Restore")),
    ])));
    replace(newer, versionOptions(versions, versions[0]?.version));
    replace(older, versionOptions(versions, versions[1]?.version ?? versions[0]?.version));
    if (versions.length) await showDiff();
  }

  async function loadAliases() {
    const { data } = await api(`${base}/aliases`, { signal });
    noAliases.hidden = data.length > 0;
    replace(aliasesBody, data.map((alias) => h("tr", {}, [
      h("td", { "data-label": "Alias" }, h("code", {}, alias.name)),
      h("td", { "data-label": "Version", class: "num" }, String(alias.version)),
      h("td", { "data-label": "Split" }, alias.split
        ? `${Math.round(alias.split.weight * 100)}% to version ${alias.split.version}` : ""),
      h("td", { "data-label": "Actions", class: "row-actions" }, h("button", {
        type: "button", class: "danger secondary small", "aria-label": `Delete alias ${alias.name}`,
        onclick: async () => {
          try {
            await api(`${base}/aliases/${encodeURIComponent(alias.name)}`, { method: "DELETE" });
            toast(`Deleted alias ${alias.name}`);
            await loadAliases();
          } catch (error) {
            toast(error.message);
          }
        },
      }, "Delete")),
    ])));
  }

  const aliasName = h("input", { name: "alias", required: true, maxlength: 32, autocomplete: "off", placeholder: "prod" });
  const aliasVersion = h("input", { name: "version", type: "number", min: 1, step: 1, required: true });
  const splitVersion = h("input", { name: "split.version", type: "number", min: 1, step: 1, placeholder: "none" });
  const splitWeight = h("input", { name: "split.weight", type: "number", step: "any", placeholder: "0.2" });
  const aliasError = formErrorBox();
  const aliasForm = h("form", { class: "alias-form", "aria-label": "Set an alias" }, [
    h("div", { class: "row" },
      field("Alias name", aliasName, "a-z, 0-9, - and _, starting with a letter; not v and a number (v2 is version 2)", { errorSlot: true }),
      field("Alias version", aliasVersion, null, { errorSlot: true })),
    h("div", { class: "row" },
      field("Split version", splitVersion, "Optional: a second version for a share of runs", { errorSlot: true }),
      field("Split weight", splitWeight, "The share of runs (0 to 1) on the split version", { errorSlot: true })),
    aliasError,
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Save alias")),
  ]);
  aliasForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    formError(aliasForm, aliasError, null);
    const body = { version: Number(aliasVersion.value) };
    if (splitVersion.value !== "" || splitWeight.value !== "") {
      body.split = { version: Number(splitVersion.value), weight: Number(splitWeight.value) };
    }
    try {
      const saved = await api(`${base}/aliases/${encodeURIComponent(aliasName.value.trim())}`, { method: "PUT", json: body });
      toast(`Alias ${saved.name} points at version ${saved.version}`);
      aliasForm.reset();
      await loadAliases();
    } catch (failure) {
      formError(aliasForm, aliasError, failure);
    }
  });

  newer.addEventListener("change", () => showDiff().catch((error) => toast(error.message)));
  older.addEventListener("change", () => showDiff().catch((error) => toast(error.message)));

  const versionsCard = h("section", { class: "card", "aria-labelledby": "versions-title" }, [
    h("h2", { id: "versions-title" }, "Versions"),
    h("p", { class: "muted" }, "Every change of the config is a version. Runs record the one they executed; restoring one makes it the live config again, as a new version."),
    h("table", { class: "cards versions" },
      h("caption", { class: "visually-hidden" }, "Versions, newest first"),
      h("thead", {}, h("tr", {}, ["Version", "Live", "Hash", "Created", "Model", "Restored from", "Actions"].map(
        (each) => h("th", { scope: "col", class: ["Version", "Restored from"].includes(each) ? "num" : null }, each)))),
      versionsBody),
    h("h3", {}, "Compare"),
    h("div", { class: "row" }, field("Compare version", newer), field("Against version", older)),
    diffBox,
  ]);
  const aliasesCard = h("section", { class: "card", "aria-labelledby": "aliases-title" }, [
    h("h2", { id: "aliases-title" }, "Aliases"),
    h("table", { class: "cards aliases" },
      h("caption", { class: "visually-hidden" }, "Aliases by name"),
      h("thead", {}, h("tr", {}, ["Alias", "Version", "Split", "Actions"].map(
        (each) => h("th", { scope: "col", class: each === "Version" ? "num" : null }, each)))),
      aliasesBody),
    noAliases,
    aliasForm,
  ]);
  await Promise.all([loadVersions(), loadAliases()]);
  return [versionsCard, aliasesCard];
}

function aliasLabel(alias) {
  const split = alias.split ? `, ${Math.round(alias.split.weight * 100)}% v${alias.split.version}` : "";
  return `alias ${alias.name} → v${alias.version}${split}`;
}

/**
 * A "Version" field for a form's agent select: hidden until an agent is chosen, then "Live
 * version", the agent's aliases and its versions, reloaded whenever the agent changes.
 * `agentId()` is what the API takes as agent_id: the plain id, or `agt_…@3` / `agt_…@prod`.
 */
export function versionPicker(agentSelect, { signal }) {
  const select = h("select", { name: "agent_version", disabled: true }, h("option", { value: "" }, "Live version"));
  const wrapper = field("Version", select, null);
  wrapper.hidden = true;
  // Each change of agent starts a load; only the latest one fills the options.
  let loads = 0;

  async function load() {
    const mine = ++loads;
    const live = h("option", { value: "" }, "Live version");
    replace(select, live);
    select.disabled = true;
    wrapper.hidden = !agentSelect.value;
    if (!agentSelect.value) return;
    const base = `${AGENTS}/${encodeURIComponent(agentSelect.value)}`;
    let choices = [];
    try {
      const [versions, aliases] = await Promise.all([
        api(`${base}/versions`, { query: { limit: 100 }, signal }),
        api(`${base}/aliases`, { signal }),
      ]);
      choices = [
        aliases.data.map((alias) => h("option", { value: alias.name }, aliasLabel(alias))),
        versions.data.map((v) => h("option", { value: String(v.version) }, `Version ${v.version}`)),
      ];
    } catch (error) {
      if (error.name === "AbortError") return;
      // Only the live version is offered; a run started with it reports what is wrong.
    }
    if (mine !== loads) return;
    replace(select, live, choices);
    select.disabled = false;
  }

  agentSelect.addEventListener("change", () => { load(); });
  return {
    field: wrapper,
    agentId: () => (agentSelect.value && select.value ? `${agentSelect.value}@${select.value}` : agentSelect.value),
  };
}
