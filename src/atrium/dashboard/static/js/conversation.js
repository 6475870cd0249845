// A thread's conversation as the model is given it: one entry per prompt, model response,
// tool result and summary, oldest first (GET /threads/{id}/messages).

import { abbreviate, h, timeEl } from "./dom.js";

const ROLE_LABEL = {
  user: "User",
  assistant: "Assistant",
  tool: "Tool result",
  summary: "Summary",
  system: "System",
};
// A tool's result can be a whole web page: the entry shows its start, the rest is one click away.
const TOOL_SHOWN_CHARS = 1200;

function text(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function partText(part) {
  if (typeof part === "string") return part;
  if (part && part.url) return `[image ${part.url}]`;
  return JSON.stringify(part);
}

function callText(call) {
  const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {});
  return `${call.name}(${abbreviate(args, 400)})`;
}

function head(message) {
  const parts = [h("span", { class: "message-role" }, ROLE_LABEL[message.role] || message.role)];
  if (message.role === "tool") {
    parts.push(h("code", {}, message.name || "?"));
    if (message.is_error) parts.push(h("span", { class: "badge status-failed" }, "failed"));
  }
  if (message.role === "summary") {
    parts.push(h("span", { class: "muted" }, "the model is given this in place of the items marked compacted"));
  }
  if (message.compacted) {
    parts.push(h("span", { class: "badge compacted-badge", title: "A later summary stands in for it: the model no longer sees it." }, "compacted"));
  }
  parts.push(message.run_id
    ? h("a", { class: "message-run", href: `#/runs/${message.run_id}` }, h("code", {}, message.run_id))
    : h("span", { class: "message-run muted" }, message.role === "summary" ? "" : "copied from the original thread"));
  parts.push(timeEl(message.created_at, { class: "muted" }));
  return h("div", { class: "message-head" }, parts);
}

function body(message) {
  const parts = [];
  // A prompt with input parts (files, images: docs/guide/files.md) is a list: a line each.
  const content = message.role === "user" && Array.isArray(message.content)
    ? message.content.map(partText).join("\n")
    : text(message.content);
  if (content) {
    if (message.role === "tool" && content.length > TOOL_SHOWN_CHARS) {
      parts.push(h("details", {}, h("summary", {}, abbreviate(content, 200)),
        h("pre", { class: "message-text" }, content)));
    } else {
      parts.push(h("pre", { class: "message-text" }, content));
    }
  }
  if (message.tool_calls?.length) {
    parts.push(h("ul", { class: "message-calls", "aria-label": "Tool calls" },
      message.tool_calls.map((call) => h("li", { title: text(call.arguments) },
        h("span", { "aria-hidden": "true" }, "→ "), h("code", {}, callText(call))))));
  }
  return parts;
}

/** One list item per message; `data-role` and the `compacted` class style it. */
export function messageItem(message) {
  return h("li", {
    class: `message${message.compacted ? " compacted" : ""}`,
    dataset: { role: message.role, id: message.id },
  }, head(message), body(message));
}
