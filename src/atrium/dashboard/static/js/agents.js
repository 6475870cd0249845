// Agents: list, create (#/agents), edit (#/agents/agt_…/edit), delete.

import { api } from "./api.js";
import {
  field, formError, formErrorBox, h, pageHeader, replace, timeEl, toast,
} from "./dom.js";

const AGENTS = "/v1/agents";
const TOOLS = ["write_artifact", "list_artifacts", "read_artifact"];
const MODELS = ["atrium:offline", "openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest"];

/** The agent form; `agent` null creates, otherwise edits. Resolves the saved agent via onSaved. */
function agentForm(agent, onSaved) {
  const config = agent?.config || { model: "atrium:offline", temperature: 0.7, instructions: "", max_output_tokens: null, tools: TOOLS };
  const name = h("input", { name: "name", required: true, maxlength: 100, value: agent?.name || "", autocomplete: "off" });
  const description = h("textarea", { name: "description", rows: 2, maxlength: 2000 });
  description.value = agent?.description || "";
  const model = h("input", { name: "config.model", value: config.model, list: "model-options", autocomplete: "off", spellcheck: "false" });
  const temperature = h("input", { name: "config.temperature", type: "number", min: 0, max: 2, step: 0.1, value: String(config.temperature) });
  const maxTokens = h("input", { name: "config.max_output_tokens", type: "number", min: 1, step: 1, value: config.max_output_tokens ?? "" , placeholder: "no cap" });
  const instructions = h("textarea", { name: "config.instructions", rows: 3 });
  instructions.value = config.instructions || "";
  const toolBoxes = TOOLS.map((tool) => h("input", { type: "checkbox", name: "config.tools", value: tool, defaultChecked: config.tools.includes(tool) }));
  const error = formErrorBox();
  const submit = h("button", { type: "submit" }, agent ? "Save changes" : "Create agent");
  const form = h("form", { class: "card", "aria-labelledby": "agent-form-title" }, [
    h("h2", { id: "agent-form-title" }, agent ? `Edit ${agent.name}` : "New agent"),
    h("div", { class: "row" }, field("Name", name), field("Model", model, "provider:name, e.g. atrium:offline (built in, no network)")),
    h("datalist", { id: "model-options" }, MODELS.map((each) => h("option", { value: each }))),
    field("Description", description),
    h("div", { class: "row" }, field("Temperature", temperature, "0 to 2"), field("Max output tokens", maxTokens, "Per model request; empty for no cap")),
    field("Instructions", instructions, "System instructions given to the model"),
    h("fieldset", { class: "tools" }, h("legend", {}, "Tools"),
      toolBoxes.map((box) => h("label", { class: "check" }, box, ` ${box.value}`))),
    error,
    h("div", { class: "actions" }, submit,
      agent ? h("a", { class: "button secondary", href: "#/agents" }, "Cancel") : null),
  ]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    formError(form, error, null);
    const body = {
      name: name.value,
      description: description.value,
      config: {
        model: model.value.trim(),
        temperature: Number(temperature.value),
        instructions: instructions.value,
        max_output_tokens: maxTokens.value === "" ? null : Number(maxTokens.value),
        tools: toolBoxes.filter((box) => box.checked).map((box) => box.value),
      },
    };
    submit.disabled = true;
    try {
      const saved = agent
        ? await api(`${AGENTS}/${agent.agent_id}`, { method: "PUT", json: body })
        : await api(AGENTS, { method: "POST", json: body });
      onSaved(saved, form);
    } catch (failure) {
      formError(form, error, failure);
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

  async function load() {
    const { data } = await api(AGENTS, { signal });
    empty.hidden = data.length > 0;
    table.hidden = data.length === 0;
    replace(tbody, data.map((agent) => h("tr", {}, [
      h("td", { "data-label": "Name" }, h("div", {}, h("strong", {}, agent.name),
        agent.description ? h("div", { class: "muted small" }, agent.description) : null,
        h("div", {}, h("code", { class: "small" }, agent.agent_id)))),
      h("td", { "data-label": "Model" }, h("code", {}, agent.config.model)),
      h("td", { "data-label": "Temperature", class: "num" }, String(agent.config.temperature)),
      h("td", { "data-label": "Tools" }, agent.config.tools.length ? agent.config.tools.join(", ") : "none"),
      h("td", { "data-label": "Created" }, timeEl(agent.created_at, true)),
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
  const form = agentForm(null, async (saved, savedForm) => {
    toast(`Created agent ${saved.name}`);
    savedForm.reset();
    await load();
  });
  replace(main, pageHeader("Agents"),
    h("section", { "aria-label": "Agent list" }, table, empty),
    form);
}

export async function agentEditView({ main, params: [agentId], signal }) {
  const agent = await api(`${AGENTS}/${encodeURIComponent(agentId)}`, { signal });
  replace(main,
    pageHeader(`Edit agent`, h("code", {}, agent.agent_id)),
    agentForm(agent, (saved) => {
      toast(`Saved ${saved.name}`);
      window.location.hash = "#/agents";
    }));
}
