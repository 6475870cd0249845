// The shell: sign-in, navigation and a hash router (#/runs, #/runs/run_…, #/threads, #/agents, …).
// Every view gets an AbortSignal that fires when the user leaves it, which stops its polling
// and event streams.

import { ApiError, api, clearKey, getKey, onUnauthorized, setKey } from "./api.js";
import { errorBox, field, h, pageHeader, replace, toast } from "./dom.js";
import { agentEditView, agentsView } from "./agents.js";
import { blockView, blocksView } from "./blocks.js";
import { evalView, evalsView } from "./evals.js";
import { memoryItemView, memoryView } from "./memory.js";
import { recordEditView, recordsView, DOMAINS, SPACES } from "./records.js";
import { runView, runsView } from "./runs.js";
import { scheduleView, schedulesView } from "./schedules.js";
import { threadView, threadsView } from "./threads.js";
import { usageView } from "./usage.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const accountBox = document.getElementById("account");
const accountName = document.getElementById("account-name");

const ROUTES = [
  [/^\/runs$/, "Runs", runsView],
  [/^\/runs\/([\w-]+)$/, "Run", runView],
  [/^\/threads$/, "Threads", threadsView],
  [/^\/threads\/([\w-]+)$/, "Thread", threadView],
  [/^\/schedules$/, "Schedules", schedulesView],
  [/^\/schedules\/([\w-]+)$/, "Schedule", scheduleView],
  [/^\/memory$/, "Memory", memoryView],
  [/^\/memory\/([\w-]+)$/, "Memory item", memoryItemView],
  [/^\/blocks$/, "Blocks", blocksView],
  [/^\/blocks\/([\w.-]+)$/, "Block", blockView],
  [/^\/evals$/, "Evals", evalsView],
  [/^\/evals\/([\w-]+)$/, "Eval", evalView],
  [/^\/agents$/, "Agents", agentsView],
  [/^\/agents\/([\w-]+)\/edit$/, "Edit agent", agentEditView],
  [/^\/usage$/, "Usage", usageView],
  [/^\/domains$/, "Domains", (ctx) => recordsView(DOMAINS, ctx)],
  [/^\/domains\/(\d+)\/edit$/, "Edit domain", (ctx) => recordEditView(DOMAINS, ctx)],
  [/^\/spaces$/, "Spaces", (ctx) => recordsView(SPACES, ctx)],
  [/^\/spaces\/(\d+)\/edit$/, "Edit space", (ctx) => recordEditView(SPACES, ctx)],
];

let current = null;
let firstRender = true;
let account = null;

function parseHash() {
  const raw = window.location.hash.replace(/^#/, "");
  const [path, search = ""] = raw.split("?");
  return { path: path.startsWith("/") ? path : "/runs", query: new URLSearchParams(search) };
}

async function render() {
  const { path, query } = parseHash();
  current?.abort();
  current = new AbortController();
  const signal = current.signal;

  if (!getKey()) {
    showSignedOut();
    signInView(path);
    return;
  }
  if (!account) {
    try {
      account = await api("/v1/account", { signal });
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiError && error.status === 401) return; // handler signed out
      replace(main, pageHeader("atrium"), errorBox(error));
      return;
    }
    showSignedIn();
  }

  const match = ROUTES.map(([pattern, title, view]) => [pattern.exec(path), title, view])
    .find(([found]) => found);
  highlightNav(path);
  if (!match) {
    document.title = "Not found · atrium";
    replace(main, pageHeader("Page not found"), h("p", {}, h("a", { href: "#/runs" }, "Go to runs")));
    focusHeading();
    return;
  }
  const [found, title, view] = match;
  document.title = `${title} · atrium`;
  replace(main, h("p", { class: "muted" }, "Loading…"));
  // aria-busy while the view loads its data: assistive technology waits for the whole page.
  main.setAttribute("aria-busy", "true");
  try {
    await view({ main, params: found.slice(1), query, signal, account });
  } catch (error) {
    if (signal.aborted || error.name === "AbortError") return;
    if (error instanceof ApiError && error.status === 401) return;
    replace(main, pageHeader(title), errorBox(error));
  }
  if (!signal.aborted) {
    main.setAttribute("aria-busy", "false");
    focusHeading();
  }
}

function focusHeading() {
  // Move focus to the new page's heading so keyboard and screen reader users start there;
  // not on the first load, where the browser's own focus handling is expected.
  if (firstRender) {
    firstRender = false;
    return;
  }
  main.querySelector("h1")?.focus({ preventScroll: false });
}

function highlightNav(path) {
  for (const link of nav.querySelectorAll("a")) {
    const section = link.getAttribute("href").slice(1);
    if (path === section || path.startsWith(`${section}/`)) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

function showSignedIn() {
  nav.hidden = false;
  accountBox.hidden = false;
  accountName.textContent = `${account.account.name} · ${account.key.tier}`;
}

function showSignedOut() {
  account = null;
  nav.hidden = true;
  accountBox.hidden = true;
  accountName.textContent = "";
}

function signInView(path, notice = "") {
  document.title = "Sign in · atrium";
  const input = h("input", {
    type: "password", name: "api_key", required: true, autocomplete: "off",
    spellcheck: "false", placeholder: "atr_…",
  });
  const message = h("p", { class: "error", role: "alert", hidden: !notice }, notice);
  const button = h("button", { type: "submit" }, "Sign in");
  const form = h("form", { class: "card signin", novalidate: true }, [
    field("API key", input, "Kept in this browser tab only (session storage) and sent to the API as a Bearer token. Sign out or close the tab to forget it."),
    message,
    h("div", { class: "actions" }, button),
  ]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) {
      message.hidden = false;
      message.textContent = "Enter an API key.";
      input.setAttribute("aria-invalid", "true");
      input.focus();
      return;
    }
    button.disabled = true;
    message.hidden = true;
    try {
      account = await api("/v1/account", { key });
      setKey(key);
      showSignedIn();
      toast(`Signed in as ${account.account.name}`);
      firstRender = false;
      if (path === parseHash().path) render();
      else window.location.hash = `#${path}`;
    } catch (error) {
      message.hidden = false;
      message.textContent = error instanceof ApiError && error.status === 401
        ? "This API key was refused. Check it and try again."
        : errorBox(error).textContent;
      input.setAttribute("aria-invalid", "true");
      input.focus();
    } finally {
      button.disabled = false;
    }
  });
  replace(
    main,
    h("div", { class: "signin-wrap" }, [
      pageHeader("Sign in to atrium"),
      h("p", {}, "Use an API key of your account. ", h("code", {}, "atrium serve"),
        " prints one on its first start; ", h("code", {}, "atrium keys create --account NAME"),
        " makes more."),
      form,
    ]),
  );
  input.focus();
}

document.getElementById("sign-out").addEventListener("click", () => {
  clearKey();
  showSignedOut();
  toast("Signed out");
  render();
});

onUnauthorized(() => {
  clearKey();
  showSignedOut();
  current?.abort();
  signInView(parseHash().path, "Your API key was refused (revoked or invalid). Sign in again.");
});

// The skip link moves focus without touching the hash (the hash is the router's).
document.querySelector(".skip-link").addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});

window.addEventListener("hashchange", render);
render();
