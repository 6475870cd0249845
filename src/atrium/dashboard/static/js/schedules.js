// Schedules: the list (#/schedules) with a form that creates one, and one schedule
// (#/schedules/sch_…) with its next fire times, its firings (fired with their run, skipped with
// the reason) and pause, resume, fire-now and delete.

import { api } from "./api.js";
import {
  errorBox, field, formError, formErrorBox, h, pageHeader, replace, statusBadge, timeEl, toast,
} from "./dom.js";
import { agentNames } from "./runs.js";
import { versionPicker } from "./agent_versions.js";

const SCHEDULES = "/v1/schedules";
const OVERLAP = ["skip", "enqueue", "cancel_previous"];
const MISSED = ["run_once", "skip", "run_all"];

function scheduleLink(schedule) {
  return h("a", { href: `#/schedules/${schedule.schedule_id}` }, h("code", {}, schedule.schedule_id));
}

function nextCell(schedule) {
  if (schedule.paused) return h("span", { class: "badge" }, "paused");
  return schedule.next_fire_at ? timeEl(schedule.next_fire_at) : h("span", { class: "muted" }, "none left");
}

function options(values, selected) {
  return values.map((value) => h("option", { value, selected: value === selected }, value));
}

export async function schedulesView({ main, signal }) {
  const agents = await agentNames(signal);
  const page = await api(SCHEDULES, { query: { limit: 100 }, signal });

  const tbody = h("tbody", {}, page.data.map((schedule) => h("tr", {}, [
    h("td", { "data-label": "Schedule" }, scheduleLink(schedule)),
    h("td", { "data-label": "Cron" }, h("code", {}, schedule.cron)),
    h("td", { "data-label": "Zone" }, schedule.timezone),
    h("td", { "data-label": "Next" }, nextCell(schedule)),
    h("td", { "data-label": "Prompt", class: "excerpt", title: schedule.prompt }, schedule.prompt),
  ])));
  const table = h("table", { class: "cards schedules", hidden: page.data.length === 0 },
    h("caption", { class: "visually-hidden" }, "Schedules, newest first"),
    h("thead", {}, h("tr", {}, ["Schedule", "Cron", "Zone", "Next", "Prompt"].map(
      (name) => h("th", { scope: "col" }, name)))),
    tbody);
  const empty = h("p", { class: "muted", hidden: page.data.length > 0 }, "No schedules yet.");

  const prompt = h("textarea", { name: "prompt", rows: 2, required: true, placeholder: "Write the daily report" });
  const cron = h("input", { name: "cron", required: true, value: "0 9 * * MON-FRI", spellcheck: "false", autocomplete: "off" });
  const timezone = h("input", {
    name: "timezone", value: Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC",
    spellcheck: "false", autocomplete: "off",
  });
  const agent = h("select", { name: "agent_id" },
    h("option", { value: "" }, "Default agent"),
    agents.map((each) => h("option", { value: each.agent_id }, each.name)));
  const version = versionPicker(agent, { signal });
  const overlap = h("select", { name: "on_overlap" }, options(OVERLAP, "skip"));
  const missed = h("select", { name: "on_missed" }, options(MISSED, "run_once"));
  const cap = h("input", { name: "max_credits_per_day", type: "number", min: "0", step: "any", placeholder: "no cap" });
  const createError = formErrorBox();
  const create = h("button", { type: "submit" }, "Create schedule");
  const form = h("form", { class: "card", "aria-labelledby": "new-schedule" }, [
    h("h2", { id: "new-schedule" }, "New schedule"),
    field("Prompt", prompt, null, { errorSlot: true }),
    h("div", { class: "row" }, [
      field("Cron", cron, "minute hour day month weekday", { errorSlot: true }),
      field("Time zone", timezone, "IANA, such as Europe/Berlin", { errorSlot: true }),
      field("Agent", agent, null, { errorSlot: true }),
      version.field,
    ]),
    h("div", { class: "row" }, [
      field("If the last run is still going", overlap),
      field("Fire times missed while down", missed),
      field("Credits per day", cap, null, { errorSlot: true }),
    ]),
    createError,
    h("div", { class: "actions" }, create),
  ]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    create.disabled = true;
    formError(form, createError, null);
    try {
      const body = {
        prompt: prompt.value, cron: cron.value, timezone: timezone.value.trim() || "UTC",
        on_overlap: overlap.value, on_missed: missed.value,
      };
      if (agent.value) body.agent_id = version.agentId();
      if (cap.value) body.max_credits_per_day = Number(cap.value);
      const made = await api(SCHEDULES, { method: "POST", json: body });
      toast(`Schedule ${made.schedule_id} created`);
      window.location.hash = `#/schedules/${made.schedule_id}`;
    } catch (error) {
      formError(form, createError, error);
    } finally {
      create.disabled = false;
    }
  });

  replace(main,
    pageHeader("Schedules"),
    h("p", { class: "muted" }, "Prompts run on a cron expression in a time zone, once per fire time."),
    h("section", { "aria-label": "Schedules list" }, [table, empty]),
    form,
  );
}

function firingRow(firing) {
  const outcome = firing.run_id
    ? h("a", { href: `#/runs/${firing.run_id}` }, h("code", {}, firing.run_id))
    : h("span", {}, firing.reason || "");
  return h("tr", {}, [
    h("td", { "data-label": "Fire time" }, timeEl(firing.fire_at),
      firing.trigger === "manual" ? h("span", { class: "muted" }, " (fired by hand)") : null),
    h("td", { "data-label": "Status" }, statusBadge(firing.status)),
    h("td", { "data-label": "Run or reason" }, outcome),
    h("td", { "data-label": "Detail", class: "excerpt", title: firing.detail || "" }, firing.detail || ""),
  ]);
}

export async function scheduleView({ main, params: [scheduleId], signal }) {
  const path = `${SCHEDULES}/${encodeURIComponent(scheduleId)}`;
  const [schedule, upcoming, firings] = await Promise.all([
    api(path, { signal }),
    api(`${path}/next`, { query: { n: 5 }, signal }),
    api(`${path}/firings`, { query: { limit: 50 }, signal }),
  ]);
  const errorArea = h("div");

  async function act(label, request) {
    replace(errorArea);
    try {
      await request();
      toast(label);
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    } catch (error) {
      replace(errorArea, errorBox(error));
    }
  }

  const pauseButton = h("button", { type: "button", class: "secondary" }, schedule.paused ? "Resume" : "Pause");
  pauseButton.addEventListener("click", () => act(schedule.paused ? "Resumed" : "Paused",
    () => api(`${path}/${schedule.paused ? "resume" : "pause"}`, { method: "POST" })));
  const fireButton = h("button", { type: "button" }, "Fire now");
  fireButton.addEventListener("click", () => act("Fired", async () => {
    const firing = await api(`${path}/trigger`, { method: "POST" });
    if (firing.status === "skipped") throw new Error(`Skipped: ${firing.reason}. ${firing.detail || ""}`);
  }));
  const deleteButton = h("button", { type: "button", class: "danger secondary" }, "Delete");
  deleteButton.addEventListener("click", async () => {
    if (!window.confirm("Delete this schedule and its firings? Its runs stay.")) return;
    try {
      await api(path, { method: "DELETE" });
      toast("Schedule deleted");
      window.location.hash = "#/schedules";
    } catch (error) {
      replace(errorArea, errorBox(error));
    }
  });

  const meta = h("dl", { class: "meta" }, [
    ["Cron", h("code", {}, schedule.cron)],
    ["Time zone", schedule.timezone],
    ["Thread", schedule.thread],
    ["Agent", h("code", {}, schedule.agent_id)],
    ["If the last run is still going", schedule.on_overlap],
    ["Fire times missed while down", schedule.on_missed],
    ["Credits per day", schedule.max_credits_per_day === null ? "no cap" : String(schedule.max_credits_per_day)],
    ["Next", nextCell(schedule)],
  ].flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]));

  const nextList = h("ol", { class: "next-firings", "aria-label": "Next fire times" },
    upcoming.data.map((each) => h("li", {}, timeEl(each.fire_at), " ",
      h("span", { class: "muted" }, `${each.local_time} (${upcoming.timezone})`))));
  const history = h("table", { class: "cards firings", hidden: firings.data.length === 0 },
    h("caption", { class: "visually-hidden" }, "Firings, latest first"),
    h("thead", {}, h("tr", {}, ["Fire time", "Status", "Run or reason", "Detail"].map(
      (name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, firings.data.map(firingRow)));

  replace(main,
    pageHeader(`Schedule ${schedule.schedule_id}`),
    h("p", {}, schedule.prompt),
    h("div", { class: "actions" }, [fireButton, pauseButton, deleteButton]),
    errorArea,
    meta,
    h("section", { "aria-labelledby": "next-title" }, [
      h("h2", { id: "next-title" }, "Next fire times"),
      upcoming.data.length ? nextList : h("p", { class: "muted" }, "No fire time is left."),
    ]),
    h("section", { "aria-labelledby": "history-title" }, [
      h("h2", { id: "history-title" }, "History"),
      history,
      firings.data.length ? null : h("p", { class: "muted" }, "No firings yet."),
    ]),
  );
}
