// Tiny DOM helpers. Text always goes in as text nodes, never as HTML, so API data cannot inject
// markup.

import { ApiError } from "./api.js";

/** Build an element: h("a", {href: "#/runs", class: "x", onclick: fn}, "text", child, ...). */
export function h(tag, attrs = {}, ...children) {
  const svg = tag.startsWith("svg:");
  const el = svg
    ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
    : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else if (name === "dataset") {
      Object.assign(el.dataset, value);
    } else if (!svg && name in el && typeof value !== "string" && name !== "list") {
      el[name] = value;
    } else {
      el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace an element's children. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let uid = 0;
/** A unique id for label/field pairs. */
export function nextId(prefix = "f") {
  uid += 1;
  return `${prefix}-${uid}`;
}

/**
 * A labelled field: label + control (+ hint), wired with for/id and aria-describedby.
 * `errorSlot`: the field gets its own error paragraph, where `formError` and `showAtField` put
 * a message about this control (next to it, rather than at the end of the form).
 */
export function field(label, control, hint, { errorSlot = false } = {}) {
  const id = control.id || nextId(control.name || "field");
  control.id = id;
  const parts = [h("label", { for: id }, label), control];
  const described = [];
  if (hint) {
    described.push(`${id}-hint`);
    parts.push(h("p", { class: "hint", id: `${id}-hint` }, hint));
  }
  if (errorSlot) {
    described.push(`${id}-error`);
    parts.push(h("p", { class: "error field-error", id: `${id}-error`, role: "alert", hidden: true }));
  }
  if (described.length) control.setAttribute("aria-describedby", described.join(" "));
  return h("div", { class: "field" }, parts);
}

/** A status pill; the text says the status, the color only repeats it. */
export function statusBadge(status) {
  return h("span", { class: `badge status-${status}` }, status);
}

// The one format of every timestamp the dashboard shows (the locale's medium date and time,
// "28 Nov 2026, 10:02:15"): a page never mixes two.
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

export function formatDateTime(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return dateTime.format(date);
}

/** A <time> element showing a local date-time, the ISO value in its datetime attribute. */
export function timeEl(iso, attrs = {}) {
  if (!iso) return "—";
  return h("time", { datetime: iso, title: iso, ...attrs }, formatDateTime(iso));
}

export function formatCredits(value) {
  const n = Number(value || 0);
  if (n === 0) return "0";
  if (Math.abs(n) < 1) return n.toLocaleString(undefined, { maximumSignificantDigits: 3 });
  return n.toLocaleString(undefined, { maximumFractionDigits: 2 });
}

export function formatInt(value) {
  return Number(value || 0).toLocaleString();
}

export function formatBytes(size) {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`;
  return `${(size / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * Show a short message in the polite live region: just under the top bar at the right, beside
 * the page's heading rather than over its tables (at the bottom on a phone: style.css).
 */
export function toast(message) {
  const el = document.getElementById("toast");
  const bar = document.querySelector(".topbar")?.getBoundingClientRect();
  el.style.setProperty("--toast-top", `${Math.max(bar?.bottom ?? 0, 0) + 8}px`);
  el.onclick = () => el.classList.remove("visible");
  el.textContent = message;
  el.classList.add("visible");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => el.classList.remove("visible"), 4000);
}

/** The page heading; views call it first so every page has exactly one <h1>. */
export function pageHeader(title, ...extra) {
  return h("div", { class: "page-header" }, h("h1", { tabindex: "-1" }, title), extra);
}

/** An alert paragraph describing an error (an ApiError names its code and parameter). */
export function errorBox(error) {
  let text = String(error.message || error);
  if (error instanceof ApiError) {
    if (error.parameter && !text.includes(error.parameter)) text += ` (field: ${error.parameter})`;
    if (error.status && error.status !== 400) text += ` [${error.status} ${error.code}]`;
  }
  return h("p", { class: "error", role: "alert" }, text);
}

/**
 * Show (or clear, with error null) a form's error and mark the field the API named. A field
 * with an error slot shows the message next to it; otherwise the form's box does.
 */
export function formError(form, box, error) {
  for (const el of form.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  for (const slot of form.querySelectorAll(".field-error")) {
    slot.hidden = true;
    slot.textContent = "";
  }
  box.hidden = true;
  box.textContent = "";
  if (!error) return;
  const text = errorBox(error).textContent;
  const name = error.parameter;
  const target = name && form.querySelector(`[name="${CSS.escape(name)}"]`);
  if (target && showAtField(target, text)) return;
  box.hidden = false;
  box.textContent = text;
}

/**
 * Mark `control` invalid, focus it and put `message` in its field's error slot; false when
 * the field has no slot (the caller shows the message elsewhere).
 */
export function showAtField(control, message) {
  control.setAttribute("aria-invalid", "true");
  control.focus();
  const slot = control.closest(".field")?.querySelector(".field-error");
  if (!slot) return false;
  slot.hidden = false;
  slot.textContent = message;
  return true;
}

/** A text cut to `max` characters with an ellipsis (the whole text belongs in a title). */
export function abbreviate(text, max = 160) {
  const value = String(text ?? "");
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}

/** A run's result as text: a JSON object (an agent with an output schema) pretty-printed. */
export function resultText(result, indent = 2) {
  if (result === null || result === undefined) return "";
  return typeof result === "string" ? result : JSON.stringify(result, null, indent);
}

/** The error paragraph of a form, hidden until formError fills it. */
export function formErrorBox() {
  return h("p", { class: "error", role: "alert", hidden: true });
}

/** Resolve after ms, or at once when signal aborts. */
export function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
