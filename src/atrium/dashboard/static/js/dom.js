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

/** A labelled field: label + control (+ hint), wired with for/id and aria-describedby. */
export function field(label, control, hint) {
  const id = control.id || nextId(control.name || "field");
  control.id = id;
  const parts = [h("label", { for: id }, label), control];
  if (hint) {
    const hintId = `${id}-hint`;
    control.setAttribute("aria-describedby", hintId);
    parts.push(h("p", { class: "hint", id: hintId }, hint));
  }
  return h("div", { class: "field" }, parts);
}

/** A status pill; the text says the status, the color only repeats it. */
export function statusBadge(status) {
  return h("span", { class: `badge status-${status}` }, status);
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const short = new Intl.DateTimeFormat(undefined, {
  month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
});

export function formatDateTime(iso, compact = false) {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return (compact ? short : dateTime).format(date);
}

/** A <time> element showing a local date-time, the ISO value in its datetime attribute. */
export function timeEl(iso, compact = false) {
  if (!iso) return "—";
  return h("time", { datetime: iso, title: iso }, formatDateTime(iso, compact));
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

/** Show a short message in the polite live region at the bottom of the page. */
export function toast(message) {
  const el = document.getElementById("toast");
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

/** Show (or clear, with error null) a form's error and mark the field the API named. */
export function formError(form, box, error) {
  for (const el of form.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  if (!error) {
    box.hidden = true;
    box.textContent = "";
    return;
  }
  box.hidden = false;
  box.textContent = errorBox(error).textContent;
  const name = error.parameter;
  const target = name && form.querySelector(`[name="${CSS.escape(name)}"]`);
  if (target) {
    target.setAttribute("aria-invalid", "true");
    target.focus();
  }
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
