// The agent editor's `config.tools` (docs/guide/tools.md): built-in tools as checkboxes, MCP servers
// and function tools as small cards. The list is sent in the order shown (built-ins, servers,
// functions), so an API error about `tools[i]` is put next to the card and field it names.
//
// MCP header values are write-only: the API shows each as "***". A stored header is shown as
// "set", never its value; left blank it is sent back as "***" (the API keeps the stored value,
// for the same server_label and server_url only), typed over it replaces the value, removed it
// is dropped.

import { ApiError } from "./api.js";
import { field, h, showAtField } from "./dom.js";

export const BUILTIN_TOOLS = ["write_artifact", "list_artifacts", "read_artifact"];
const MASK = "***";
const NO_ARGUMENTS = '{"type": "object", "properties": {}}';

function names(text) {
  return text.split(/[\s,]+/).map((each) => each.trim()).filter(Boolean);
}

function removeButton(label, onclick) {
  return h("button", { type: "button", class: "danger secondary small", "aria-label": label, onclick }, "Remove");
}

/** Parse a JSON text area: the value, or null when blank; a 400-like error naming `parameter`. */
export function parseJsonField(text, parameter) {
  if (!text.trim()) return null;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, "INVALID_PARAMETER", `${parameter}: not valid JSON (${error.message})`, parameter);
  }
}

// What a failed call of the entry's tools does (`on_error`, `max_consecutive_errors`).
function onErrorFields(tool) {
  const mode = h("select", { "data-key": "on_error" }, [
    ["fail", "End the run"], ["return", "Tell the model"],
  ].map(([value, text]) => h("option", { value, selected: value === (tool?.on_error ?? "fail") }, text)));
  const limit = h("input", {
    "data-key": "max_consecutive_errors", type: "number", min: 1, max: 100, step: 1,
    value: String(tool?.max_consecutive_errors ?? 3),
  });
  const limitField = field("Errors in a row the model may see", limit, "One more ends the run", { errorSlot: true });
  limitField.hidden = mode.value !== "return";
  mode.addEventListener("change", () => { limitField.hidden = mode.value !== "return"; });
  return {
    element: h("div", { class: "row" },
      field("When a call fails", mode, "Tell the model: it reads the error and may try again", { errorSlot: true }),
      limitField),
    read: () => ({ on_error: mode.value, max_consecutive_errors: Number(limit.value) }),
  };
}

function headerRow(header) {
  const stored = Boolean(header);
  const name = h("input", {
    "data-key": "headers", autocomplete: "off", spellcheck: "false", value: header?.name || "",
    readonly: stored, placeholder: "Authorization",
  });
  const value = h("input", {
    type: "password", autocomplete: "off", spellcheck: "false",
    placeholder: stored ? "set · blank keeps it" : "value",
  });
  const row = h("li", { class: "header-row", dataset: { stored: String(stored) } }, [
    field("Header name", name),
    field(stored ? `Value of ${header.name} (set)` : "Header value", value,
      stored ? "Stored encrypted; never shown. Type a new value to replace it." : null),
    h("div", { class: "actions end" }, removeButton(
      `Remove header ${header?.name || ""}`.trim(), () => row.remove())),
  ]);
  row.read = () => {
    const key = name.value.trim();
    if (!key && !value.value) return null;
    return [key, stored && !value.value ? MASK : value.value];
  };
  return row;
}

function mcpCard(server, number, onRemove) {
  const label = h("input", { "data-key": "server_label", autocomplete: "off", spellcheck: "false", value: server?.server_label || "", placeholder: "docs" });
  const url = h("input", { "data-key": "server_url", inputmode: "url", autocomplete: "off", spellcheck: "false", value: server?.server_url || "", placeholder: "https://example.com/" });
  const allowed = h("input", { "data-key": "allowed_tools", autocomplete: "off", spellcheck: "false", value: (server?.allowed_tools || []).join(", "), placeholder: "every tool" });
  const approval = server?.require_approval ?? "never";
  const mode = h("select", { "data-key": "require_approval" }, [
    ["never", "Never"], ["always", "Always"], ["some", "Only for some tools"],
  ].map(([value, text]) => h("option", {
    value, selected: value === (typeof approval === "string" ? approval : "some"),
  }, text)));
  const some = h("input", { "data-key": "require_approval.always", autocomplete: "off", spellcheck: "false", value: typeof approval === "object" ? approval.always.join(", ") : "" });
  const someField = field("Tools that need approval", some, "Comma-separated names of the server's tools", { errorSlot: true });
  someField.hidden = mode.value !== "some";
  mode.addEventListener("change", () => { someField.hidden = mode.value !== "some"; });
  const headers = h("ul", { class: "header-rows" },
    Object.keys(server?.headers || {}).map((name) => headerRow({ name })));
  const onError = onErrorFields(server);
  const card = h("fieldset", { class: "tool-card", dataset: { kind: "mcp" } }, [
    h("legend", {}, `MCP server ${number}`),
    h("div", { class: "row" },
      field("Server label", label, "The model sees its tools as label_tool", { errorSlot: true }),
      field("Server URL", url, "Streamable HTTP endpoint", { errorSlot: true })),
    h("div", { class: "row" },
      field("Allowed tools", allowed, "Comma-separated; empty: every tool of the server", { errorSlot: true }),
      field("Require approval", mode, "A run waits for your approval before such a call", { errorSlot: true })),
    someField,
    onError.element,
    h("fieldset", { class: "headers" }, [
      h("legend", {}, "Headers (write-only)"),
      h("p", { class: "hint" }, "Sent to the server on every request and stored encrypted. A stored value is shown as “set”; leave it blank to keep it (the server asks for it again if the URL changes)."),
      headers,
      h("p", { class: "error field-error", role: "alert", hidden: true, dataset: { slot: "headers" } }),
      h("button", { type: "button", class: "secondary small", onclick: () => headers.append(headerRow(null)) }, "Add header"),
    ]),
    h("div", { class: "actions" }, removeButton(`Remove MCP server ${number}`, () => onRemove(card))),
  ]);
  card.read = () => {
    const requireApproval = mode.value === "some" ? { always: names(some.value) } : mode.value;
    return {
      type: "mcp",
      server_label: label.value.trim(),
      server_url: url.value.trim(),
      headers: Object.fromEntries([...headers.children].map((row) => row.read()).filter(Boolean)),
      allowed_tools: allowed.value.trim() ? names(allowed.value) : null,
      require_approval: requireApproval,
      // Not edited here: kept as stored, so a save from this page does not reset it.
      idempotent: server?.idempotent ?? false,
      ...onError.read(),
    };
  };
  return card;
}

function functionCard(tool, number, onRemove) {
  const name = h("input", { "data-key": "name", autocomplete: "off", spellcheck: "false", value: tool?.name || "", placeholder: "lookup" });
  const description = h("input", { "data-key": "description", maxlength: 1024, value: tool?.description || "" });
  const parameters = h("textarea", { "data-key": "parameters", rows: 4, spellcheck: "false", class: "mono", placeholder: NO_ARGUMENTS });
  parameters.value = tool?.parameters ? JSON.stringify(tool.parameters, null, 2) : "";
  const onError = onErrorFields(tool);
  const card = h("fieldset", { class: "tool-card", dataset: { kind: "function" } }, [
    h("legend", {}, `Function ${number}`),
    h("div", { class: "row" },
      field("Function name", name, "A run that calls it waits for you to send its output", { errorSlot: true }),
      field("Function description", description, "What the model reads about it", { errorSlot: true })),
    field("Parameters (JSON Schema)", parameters, "An object schema; empty: no arguments", { errorSlot: true }),
    onError.element,
    h("div", { class: "actions" }, removeButton(`Remove function ${number}`, () => onRemove(card))),
  ]);
  card.read = () => {
    const entry = { type: "function", name: name.value.trim(), description: description.value, ...onError.read() };
    const schema = parseJsonField(parameters.value, "parameters");
    if (schema !== null) entry.parameters = schema;
    return entry;
  };
  card.jsonControl = parameters;
  return card;
}

/**
 * The tools part of the agent form for `tools` (a config's list); `.element` to show,
 * `.read()` the list to send, `.showError(error)` puts an API error about config.tools next to
 * what it names (false when it names nothing shown).
 */
export function toolsEditor(tools) {
  const boxes = BUILTIN_TOOLS.map((tool) => h("input", {
    type: "checkbox", name: "config.tools", value: tool, defaultChecked: tools.includes(tool),
  }));
  const servers = h("div", { class: "tool-cards" });
  const functions = h("div", { class: "tool-cards" });
  const slot = h("p", { class: "error field-error", role: "alert", hidden: true, dataset: { slot: "tools" } });

  const renumber = () => {
    [...servers.children].forEach((card, index) => { card.querySelector("legend").textContent = `MCP server ${index + 1}`; });
    [...functions.children].forEach((card, index) => { card.querySelector("legend").textContent = `Function ${index + 1}`; });
  };
  const remove = (card) => { card.remove(); renumber(); };
  const addServer = (server) => servers.append(mcpCard(server, servers.children.length + 1, remove));
  const addFunction = (tool) => functions.append(functionCard(tool, functions.children.length + 1, remove));
  for (const tool of tools) {
    if (tool?.type === "mcp") addServer(tool);
    else if (tool?.type === "function") addFunction(tool);
  }

  const element = h("div", { class: "tools-editor" }, [
    h("fieldset", { class: "tools" }, h("legend", {}, "Built-in tools"),
      boxes.map((box) => h("label", { class: "check" }, box, ` ${box.value}`))),
    h("fieldset", { class: "tools" }, [
      h("legend", {}, "MCP servers"),
      h("p", { class: "hint" }, "Remote MCP servers (streamable HTTP) whose tools the agent may call. Private and loopback addresses need ATRIUM_ALLOW_PRIVATE_TARGETS=true on the server."),
      servers,
      h("button", { type: "button", class: "secondary small", onclick: () => addServer(null) }, "Add MCP server"),
    ]),
    h("fieldset", { class: "tools" }, [
      h("legend", {}, "Function tools"),
      h("p", { class: "hint" }, "Tools you run: the run waits for their output (answer on the run's page)."),
      functions,
      h("button", { type: "button", class: "secondary small", onclick: () => addFunction(null) }, "Add function"),
    ]),
    slot,
  ]);

  function cards() {
    return [...servers.children, ...functions.children];
  }

  function read() {
    const builtins = boxes.filter((box) => box.checked).map((box) => box.value);
    const entries = [];
    for (const card of cards()) {
      try {
        entries.push(card.read());
      } catch (error) {
        if (card.jsonControl) error.control = card.jsonControl;
        throw error;
      }
    }
    return [...builtins, ...entries];
  }

  function showError(error) {
    const builtinCount = boxes.filter((box) => box.checked).length;
    const found = /tools\[(\d+)\](?:\.([a-z_]+)(?:\.([a-z_]+))?)?/.exec(error.message || "");
    let target = error.control || null;
    if (!target && found) {
      const card = cards()[Number(found[1]) - builtinCount];
      const key = found[2] === "require_approval" && found[3] ? "require_approval.always" : found[2];
      if (card && key === "headers") {
        // The header rows share one message, under the server's headers.
        const headerSlot = card.querySelector("[data-slot=headers]");
        headerSlot.hidden = false;
        headerSlot.textContent = error.message;
        const first = card.querySelector('[data-key="headers"]');
        first?.setAttribute("aria-invalid", "true");
        (first || headerSlot.nextElementSibling).focus();
        return true;
      }
      if (card) target = (key && card.querySelector(`[data-key="${key}"]`)) || card.querySelector("[data-key]");
    }
    if (target && showAtField(target, error.message)) return true;
    slot.hidden = false;
    slot.textContent = error.message;
    (target || boxes[0]).focus();
    return true;
  }

  return { element, read, showError };
}

/** How an agent's tools are listed in a table: built-ins by name, servers and functions said. */
export function toolSummary(tools) {
  if (!tools.length) return "none";
  return tools.map((tool) => {
    if (typeof tool === "string") return tool;
    if (tool.type === "mcp") return `${tool.server_label} (MCP)`;
    return `${tool.name} (function)`;
  }).join(", ");
}
