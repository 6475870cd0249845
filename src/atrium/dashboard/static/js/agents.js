// Agents: list, create (#/agents), edit (#/agents/agt_…/edit, with its versions and aliases), delete.

import { api } from "./api.js";
import { BUILTIN_TOOLS, parseJsonField, toolSummary, toolsEditor } from "./agent_tools.js";
import { versionsPanel } from "./agent_versions.js";
import {
  field, formError, formErrorBox, h, pageHeader, replace, timeEl, toast,
} from "./dom.js";

const AGENTS = "/v1/agents";
const OFFLINE = "atrium:offline";
const MODEL_HINT = "provider:name. atrium:offline is built in (no network, follows a script: docs/guide/tools.md). "
  + "openai:…, anthropic:… and openai-compatible:… work once the server has that provider set up "
  + "(docs/guide/models.md); otherwise saving says what is missing.";

/**
 * Models to suggest: only ones this server has accepted (the built-in model and those of the
 * account's agents). Whether openai: or anthropic: models work depends on the server's keys,
 * which the dashboard cannot see; the API's refusal says what is missing.
 */
function suggestedModels(agents) {
  return [...new Set([OFFLINE, ...agents.map((agent) => agent.config.model)])];
}

/** The agent form; `agent` null creates, otherwise edits. Resolves the saved agent via onSaved. */
function agentForm(agent, models, onSaved) {
  const config = agent?.config || { model: OFFLINE, temperature: 0.7, instructions: "", max_output_tokens: null, tools: BUILTIN_TOOLS, output_schema: null };
  const name = h("input", { name: "name", required: true, maxlength: 100, value: agent?.name || "", autocomplete: "off" });
  const description = h("textarea", { name: "description", rows: 2, maxlength: 2000 });
  description.value = agent?.description || "";
  const model = h("input", { name: "config.model", value: config.model, list: "model-options", autocomplete: "off", spellcheck: "false" });
  const temperature = h("input", { name: "config.temperature", type: "number", min: 0, max: 2, step: 0.1, value: String(config.temperature) });
  const maxTokens = h("input", { name: "config.max_output_tokens", type: "number", min: 1, step: 1, value: config.max_output_tokens ?? "" , placeholder: "no cap" });
  const instructions = h("textarea", { name: "config.instructions", rows: 3 });
  instructions.value = config.instructions || "";
  const tools = toolsEditor(config.tools);
  const outputSchema = h("textarea", {
    name: "config.output_schema", rows: 5, spellcheck: "false", class: "mono",
    placeholder: '{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}',
  });
  outputSchema.value = config.output_schema ? JSON.stringify(config.output_schema, null, 2) : "";
  const error = formErrorBox();
  const submit = h("button", { type: "submit" }, agent ? "Save changes" : "Create agent");
  const form = h("form", { class: "card", "aria-labelledby": "agent-form-title" }, [
    h("h2", { id: "agent-form-title" }, agent ? `Edit ${agent.name}` : "New agent"),
    h("div", { class: "row" }, field("Name", name), field("Model", model, MODEL_HINT)),
    h("datalist", { id: "model-options" }, models.map((each) => h("option", { value: each }))),
    field("Description", description),
    h("div", { class: "row" }, field("Temperature", temperature, "0 to 2"), field("Max output tokens", maxTokens, "Per model request; empty for no cap")),
    field("Instructions", instructions, "System instructions given to the model"),
    tools.element,
    field("Output schema (JSON)", outputSchema,
      "A JSON Schema of type object: each run's result is then such a JSON object. Empty: a text result.",
      { errorSlot: true }),
    error,
    h("div", { class: "actions" }, submit,
      agent ? h("a", { class: "button secondary", href: "#/agents" }, "Cancel") : null),
  ]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    formError(form, error, null);
    let body;
    try {
      body = {
        name: name.value,
        description: description.value,
        config: {
          model: model.value.trim(),
          temperature: Number(temperature.value),
          instructions: instructions.value,
          max_output_tokens: maxTokens.value === "" ? null : Number(maxTokens.value),
          tools: tools.read(),
          output_schema: parseJsonField(outputSchema.value, "config.output_schema"),
        },
      };
    } catch (invalid) {
      // Text that is not JSON: said next to its box before anything is sent.
      if (invalid.control) {
        formError(form, error, null);
        tools.showError(invalid);
      } else {
        formError(form, error, invalid);
      }
      return;
    }
    submit.disabled = true;
    try {
      const saved = agent
        ? await api(`${AGENTS}/${agent.agent_id}`, { method: "PUT", json: body })
        : await api(AGENTS, { method: "POST", json: body });
      onSaved(saved, form);
    } catch (failure) {
      if (failure.parameter === "config.tools") {
        formError(form, error, null);
        tools.showError(failure);
      } else {
        formError(form, error, failure);
      }
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

export async function agentsView({ main, signal }) {
  const tbody = h("tbody");
  const empty = h("p", { class: "muted" }, "No agents yet. Runs without an agent create the default agent.");
  const table = h("table", { class: "cards" },
    h("caption", { class: "visually-hidden" }, "Agents, oldest first"),
    h("thead", {}, h("tr", {}, ["Name", "Model", "Temperature", "Tools", "Created", "Actions"].map(
      (each) => h("th", { scope: "col", class: each === "Temperature" ? "num" : null }, each)))),
    tbody);

  let agents = [];
  async function load() {
    const { data } = await api(AGENTS, { signal });
    agents = data;
    empty.hidden = data.length > 0;
    table.hidden = data.length === 0;
    replace(tbody, data.map((agent) => h("tr", {}, [
      h("td", { "data-label": "Name" }, h("div", {}, h("strong", {}, agent.name),
        agent.description ? h("div", { class: "muted small" }, agent.description) : null,
        h("div", {}, h("code", { class: "small" }, agent.agent_id)))),
      h("td", { "data-label": "Model" }, h("code", {}, agent.config.model)),
      h("td", { "data-label": "Temperature", class: "num" }, String(agent.config.temperature)),
      h("td", { "data-label": "Tools" }, toolSummary(agent.config.tools),
        agent.config.output_schema ? h("div", { class: "muted small" }, "JSON output") : null),
      h("td", { "data-label": "Created" }, timeEl(agent.created_at)),
      h("td", { "data-label": "Actions", class: "row-actions" }, [
        h("a", { class: "button secondary small", href: `#/agents/${agent.agent_id}/edit`, "aria-label": `Edit ${agent.name}` }, "Edit"),
        h("button", {
          type: "button", class: "danger secondary small", "aria-label": `Delete ${agent.name}`,
          onclick: async () => {
            if (!window.confirm(`Delete agent “${agent.name}”? Its past runs keep their usage.`)) return;
            try {
              await api(`${AGENTS}/${agent.agent_id}`, { method: "DELETE" });
              toast(`Deleted ${agent.name}`);
              await load();
            } catch (error) {
              toast(error.message);
            }
          },
        }, "Delete"),
      ]),
    ])));
  }

  await load();
  const formBox = h("div");
  // A new, empty form after each creation (its tool cards are built from the config).
  const newForm = () => replace(formBox, agentForm(null, suggestedModels(agents), async (saved) => {
    toast(`Created agent ${saved.name}`);
    await load();
    newForm();
  }));
  newForm();
  replace(main, pageHeader("Agents"),
    h("section", { "aria-label": "Agent list" }, table, empty),
    formBox);
}

export async function agentEditView(context) {
  const { main, params: [agentId], signal } = context;
  const agent = await api(`${AGENTS}/${encodeURIComponent(agentId)}`, { signal });
  const { data: agents } = await api(AGENTS, { signal });
  // A restore changes the config the form shows: the page is drawn again from the API.
  const versions = await versionsPanel(agent.agent_id, { signal, onRestored: () => agentEditView(context) });
  replace(main,
    pageHeader(`Edit agent`, h("code", {}, agent.agent_id)),
    agentForm(agent, suggestedModels(agents), (saved) => {
      toast(`Saved ${saved.name}`);
      window.location.hash = "#/agents";
    }),
    versions);
}
