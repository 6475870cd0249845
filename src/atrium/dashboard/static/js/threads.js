// Threads: the list (#/threads) and one thread (#/threads/thr_…) with its conversation, its
// runs, a prompt that continues it, fork, compact and delete.

import { api } from "./api.js";
import { messageItem } from "./conversation.js";
import {
  abbreviate, errorBox, field, formError, formErrorBox, h, pageHeader, replace, sleep,
  statusBadge, timeEl, toast,
} from "./dom.js";
import { agentLabel, agentNames } from "./runs.js";

const THREADS = "/api/v1/public/threads";
const RUNS = "/api/v1/public/agent/runs";
const BUSY = new Set(["busy", "requires_action"]);
// Polling budget as on the runs page: fast while a run of the thread is unfinished.
const POLL_ACTIVE_MS = 2000;
const POLL_IDLE_MS = 15000;
const MESSAGES_PAGE = 50;

function metadataText(metadata) {
  return Object.entries(metadata || {})
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(", ");
}

function threadLink(threadId) {
  return h("a", { href: `#/threads/${threadId}` }, h("code", {}, threadId));
}

function lastRunCell(run) {
  if (!run) return h("span", { class: "muted" }, "no run yet");
  return h("span", { class: "last-run" },
    h("a", { href: `#/runs/${run.id}` }, h("code", {}, run.id)), " ", statusBadge(run.status));
}

/** `key=value` of the metadata filter as the query parameter `metadata[key]`. */
function metadataQuery(filter) {
  const [key, ...rest] = filter.split("=");
  return filter && key ? { [`metadata[${key}]`]: rest.join("=") } : {};
}

export async function threadsView({ main, query, signal }) {
  const agentId = query.get("agent_id") || "";
  const metadata = query.get("metadata") || "";
  const agents = await agentNames(signal);

  const agentSelect = h("select", { name: "agent_id" },
    h("option", { value: "" }, "Any agent"),
    agents.map((agent) => h("option", { value: agent.agent_id, selected: agent.agent_id === agentId }, agent.name)));
  const metadataInput = h("input", {
    name: "metadata", value: metadata, placeholder: "customer=acme", autocomplete: "off", spellcheck: "false",
  });
  const filters = h("form", { class: "toolbar list-controls", "aria-label": "Filter threads" }, [
    field("Agent", agentSelect),
    field("Metadata", metadataInput, "key=value: threads whose metadata has it"),
    h("div", { class: "actions end" }, h("button", { type: "submit", class: "secondary" }, "Filter")),
  ]);
  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    if (agentSelect.value) params.set("agent_id", agentSelect.value);
    if (metadataInput.value.trim()) params.set("metadata", metadataInput.value.trim());
    const search = params.toString();
    window.location.hash = search ? `#/threads?${search}` : "#/threads";
  });

  const tbody = h("tbody");
  const columns = ["Thread", "Status", "Metadata", "Last run", "Created"];
  const table = h("table", { class: "cards threads" },
    h("caption", { class: "visually-hidden" }, "Threads, newest first"),
    h("thead", {}, h("tr", {}, columns.map((name) => h("th", { scope: "col" }, name)))),
    tbody);
  const filtered = Boolean(agentId || metadata);
  const empty = h("p", { class: "muted", hidden: true },
    filtered ? "No threads match these filters." : "No threads yet. Every run starts one, or continues the thread it names.");
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Load more");
  const listError = h("div");
  const baseQuery = { agent_id: agentId, ...metadataQuery(metadata) };
  let rows = [];
  let cursor = null;

  function draw() {
    replace(tbody, rows.map((thread) => h("tr", {}, [
      h("td", { "data-label": "Thread" }, threadLink(thread.id)),
      h("td", { "data-label": "Status" }, statusBadge(thread.status)),
      h("td", { "data-label": "Metadata", class: "excerpt", title: metadataText(thread.metadata) },
        metadataText(thread.metadata) || "—"),
      h("td", { "data-label": "Last run" }, lastRunCell(thread.last_run)),
      h("td", { "data-label": "Created" }, timeEl(thread.created_at)),
    ])));
    empty.hidden = rows.length > 0;
    table.hidden = rows.length === 0;
    more.hidden = !cursor;
  }

  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      const page = await api(THREADS, { query: { ...baseQuery, limit: 20, cursor }, signal });
      rows = [...rows, ...page.data];
      cursor = page.next_cursor;
      draw();
    } catch (error) {
      replace(listError, errorBox(error));
    } finally {
      more.disabled = false;
    }
  });

  try {
    const page = await api(THREADS, { query: { ...baseQuery, limit: 20 }, signal });
    rows = page.data;
    cursor = page.next_cursor;
  } catch (error) {
    if (error.name === "AbortError") throw error;
    replace(listError, errorBox(error)); // a malformed metadata filter names itself
  }
  draw();
  replace(main,
    pageHeader("Threads"),
    h("p", { class: "muted" }, "Conversations: each run of a thread is given the messages of the runs before it."),
    filters,
    h("section", { "aria-label": "Threads list" }, [listError, table, empty, more]),
  );
}

export async function threadView({ main, params: [threadId], signal }) {
  const path = `${THREADS}/${encodeURIComponent(threadId)}`;
  let thread = await api(path, { signal });
  const agents = await agentNames(signal);
  let runs = [];
  let messages = [];
  let messagesCursor = null;

  const statusBox = h("p", { class: "run-status", "aria-live": "polite" });
  const meta = h("dl", { class: "meta" });
  const errorArea = h("div");
  const deleteButton = h("button", { type: "button", class: "danger secondary" }, "Delete thread");
  const compactButton = h("button", {
    type: "button", class: "secondary",
    title: "Summarise the history but its newest runs: the next runs are given the summary instead",
  }, "Compact");

  const conversation = h("ol", { class: "conversation", "aria-label": "Conversation" });
  const conversationNote = h("p", { class: "muted" });
  const moreMessages = h("button", { type: "button", class: "secondary", hidden: true }, "Load more messages");
  const runsBody = h("tbody");
  const runsTable = h("table", { class: "cards thread-runs" },
    h("caption", { class: "visually-hidden" }, "Runs of this thread, newest first"),
    h("thead", {}, h("tr", {}, ["Run", "Status", "Prompt", "Agent", "Created"].map(
      (name) => h("th", { scope: "col" }, name)))),
    runsBody);
  const runsNote = h("p", { class: "muted" }, "No runs yet.");

  // Continue the thread with a new prompt.
  const prompt = h("textarea", { name: "prompt", rows: 2, required: true, placeholder: "Ask a follow-up" });
  const promptAgent = h("select", { name: "agent_id" },
    h("option", { value: "" }, "Default agent"),
    agents.map((agent) => h("option", { value: agent.agent_id }, agent.name)));
  const promptError = formErrorBox();
  const send = h("button", { type: "submit" }, "Send");
  const promptForm = h("form", { class: "card", "aria-labelledby": "continue-title" }, [
    h("h2", { id: "continue-title" }, "Continue the thread"),
    field("Prompt", prompt),
    h("div", { class: "row" }, field("Agent", promptAgent), h("div", { class: "actions end" }, send)),
    promptError,
  ]);
  promptForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    send.disabled = true;
    formError(promptForm, promptError, null);
    try {
      const body = { prompt: prompt.value, thread_id: thread.id };
      if (promptAgent.value) body.agent_id = promptAgent.value;
      const run = await api(RUNS, { method: "POST", json: body });
      toast(`Run ${run.run_id} started`);
      window.location.hash = `#/runs/${run.run_id}`;
    } catch (error) {
      formError(promptForm, promptError, error);
    } finally {
      send.disabled = false;
    }
  });

  // Fork at a run of the history: the completed runs (newest first, the default first).
  const forkAt = h("select", { name: "at_run_id" });
  const forkError = formErrorBox();
  const forkButton = h("button", { type: "submit", class: "secondary" }, "Fork thread");
  const forkForm = h("form", { class: "card", "aria-labelledby": "fork-title" }, [
    h("h2", { id: "fork-title" }, "Fork"),
    h("p", { class: "muted small" }, "A new thread whose history is this one's up to and including the run you pick; this thread is not changed."),
    h("div", { class: "row" }, field("Up to run", forkAt), h("div", { class: "actions end" }, forkButton)),
    forkError,
  ]);
  forkForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    forkButton.disabled = true;
    formError(forkForm, forkError, null);
    try {
      const body = forkAt.value ? { at_run_id: forkAt.value } : {};
      const fork = await api(`${path}/fork`, { method: "POST", json: body });
      toast(`Forked into ${fork.id}`);
      window.location.hash = `#/threads/${fork.id}`;
    } catch (error) {
      formError(forkForm, forkError, error);
    } finally {
      forkButton.disabled = false;
    }
  });

  deleteButton.addEventListener("click", async () => {
    const busy = BUSY.has(thread.status) ? " Its unfinished runs are cancelled first." : "";
    if (!window.confirm(`Delete thread ${thread.id} with its runs, their events and files?${busy} Usage stays.`)) return;
    deleteButton.disabled = true;
    try {
      await api(path, { method: "DELETE" });
      toast(`Thread ${thread.id} deleted`);
      window.location.hash = "#/threads";
    } catch (error) {
      replace(errorArea, errorBox(error));
      deleteButton.disabled = false;
    }
  });

  compactButton.addEventListener("click", async () => {
    compactButton.disabled = true;
    replace(errorArea);
    try {
      const done = await api(`${path}/compact`, { method: "POST" });
      toast(done.compacted
        ? `Compacted through ${done.through_run_id || "the copied history"}`
        : "Nothing to compact: no history older than the newest runs");
      thread = await api(path, { signal });
      await loadMessages(messages.length);
      drawThread();
      drawMessages();
    } catch (error) {
      replace(errorArea, errorBox(error)); // THREAD_BUSY while a run is unfinished
    } finally {
      compactButton.disabled = false;
    }
  });

  function drawThread() {
    replace(statusBox, "Status: ", statusBadge(thread.status));
    const origin = thread.forked_from;
    replace(meta, [
      ["Created", timeEl(thread.created_at)],
      ["Metadata", metadataText(thread.metadata) || "—"],
      ["Runs", String(thread.counts?.runs ?? runs.length)],
      ["Messages", String(thread.counts?.messages ?? "—")],
      ["Last run", lastRunCell(thread.last_run)],
      origin ? ["Forked from", h("span", {}, threadLink(origin.thread_id),
        origin.run_id ? [" at ", h("a", { href: `#/runs/${origin.run_id}` }, h("code", {}, origin.run_id))] : null)] : null,
    ].filter(Boolean).map(([term, value]) => h("div", {}, h("dt", {}, term), h("dd", {}, value))));
  }

  function drawRuns() {
    replace(runsBody, runs.map((run) => h("tr", {}, [
      h("td", { "data-label": "Run" }, h("a", { href: `#/runs/${run.run_id}` }, h("code", {}, run.run_id))),
      h("td", { "data-label": "Status" }, statusBadge(run.status)),
      h("td", { "data-label": "Prompt", class: "excerpt", title: abbreviate(run.prompt, 2000) }, abbreviate(run.prompt, 120)),
      h("td", { "data-label": "Agent" }, agentLabel(agents, run.agent_id)),
      h("td", { "data-label": "Created" }, timeEl(run.created_at)),
    ])));
    runsTable.hidden = runs.length === 0;
    runsNote.hidden = runs.length > 0;
    const chosen = forkAt.value;
    const completed = runs.filter((run) => run.status === "completed");
    replace(forkAt, completed.map((run, index) => h("option", {
      value: run.run_id, selected: run.run_id === chosen,
    }, `${run.run_id} · ${abbreviate(run.prompt, 40)}${index === 0 ? " (latest)" : ""}`)));
    if (completed.length === 0) {
      forkAt.append(h("option", { value: "" }, "No completed run: the fork starts empty"));
    }
  }

  function drawMessages() {
    replace(conversation, messages.map(messageItem));
    conversation.hidden = messages.length === 0;
    conversationNote.textContent = messages.length ? "" : "No messages yet: a run's messages join once it completes.";
    moreMessages.hidden = !messagesCursor;
  }

  async function loadRuns() {
    const page = await api(RUNS, { query: { thread_id: thread.id, limit: 100 }, signal });
    runs = page.data;
  }

  async function loadMessages(count = MESSAGES_PAGE) {
    const page = await api(`${path}/messages`, { query: { limit: Math.min(Math.max(count, MESSAGES_PAGE), 100) }, signal });
    messages = page.data;
    messagesCursor = page.next_cursor;
  }

  moreMessages.addEventListener("click", async () => {
    moreMessages.disabled = true;
    try {
      const page = await api(`${path}/messages`, { query: { limit: MESSAGES_PAGE, cursor: messagesCursor }, signal });
      messages = [...messages, ...page.data];
      messagesCursor = page.next_cursor;
      drawMessages();
    } catch (error) {
      replace(errorArea, errorBox(error));
    } finally {
      moreMessages.disabled = false;
    }
  });

  await Promise.all([loadRuns(), loadMessages()]);
  drawThread();
  drawRuns();
  drawMessages();
  replace(main,
    pageHeader("Thread", h("code", { class: "run-id" }, thread.id)),
    h("div", { class: "toolbar status-row" }, statusBox, h("div", { class: "actions" }, compactButton, deleteButton)),
    errorArea,
    meta,
    h("section", { class: "card", "aria-labelledby": "conversation-title" }, [
      h("h2", { id: "conversation-title" }, "Conversation"),
      h("p", { class: "muted small" }, "As the model is given it, oldest first: prompts, answers, tool calls and their results."),
      conversation, conversationNote, moreMessages]),
    promptForm,
    h("section", { class: "card", "aria-labelledby": "thread-runs-title" }, [
      h("h2", { id: "thread-runs-title" }, "Runs"), runsTable, runsNote]),
    forkForm,
  );

  // Live while a run of the thread is unfinished: its status, its runs, and the messages a
  // run adds once it completes.
  (async () => {
    while (!signal.aborted) {
      await sleep(BUSY.has(thread.status) ? POLL_ACTIVE_MS : POLL_IDLE_MS, signal);
      if (signal.aborted || document.hidden) continue;
      try {
        const seen = thread.counts?.messages;
        thread = await api(path, { signal });
        await loadRuns();
        if (thread.counts?.messages !== seen) await loadMessages(messages.length);
        drawThread();
        drawRuns();
        drawMessages();
      } catch (error) {
        if (signal.aborted) return;
        replace(errorArea, errorBox(error));
      }
    }
  })();
}
