// Domains and spaces (phpShort's API): lists with search, sort and pagination; create, edit,
// delete; a domain's verification (verification.js). Bodies are form-encoded, as that API takes
// them. List state lives in the URL (#/domains?search=…&sort_by=…&sort=…&per_page=…&page=…) so
// reload and Back keep it.

import { api } from "./api.js";
import { verificationCell } from "./verification.js";
import {
  field, formError, formErrorBox, formatInt, h, pageHeader, replace, timeEl, toast,
} from "./dom.js";

const COLORS = ["Blue", "Purple", "Pink", "Orange", "Green", "Teal"];

function colorSwatch(color) {
  return h("span", { class: "color-cell" },
    h("span", { class: `swatch color-${color}`, "aria-hidden": "true" }), `${color} · ${COLORS[color - 1] || ""}`);
}

function colorSelect(value) {
  return h("select", { name: "color" }, COLORS.map((label, index) =>
    h("option", { value: String(index + 1), selected: index + 1 === Number(value) }, `${index + 1} · ${label}`)));
}

function urlInput(name, value) {
  return h("input", { name, type: "url", value: value || "", placeholder: "https://example.com/", autocomplete: "off" });
}

export const DOMAINS = {
  key: "domains",
  title: "Domains",
  singular: "domain",
  path: "/api/v1/domains",
  columns: [
    ["Name", (r) => h("a", { href: r.url, rel: "noreferrer", target: "_blank" }, r.name)],
    ["Verification", verificationCell],
    ["Index page", (r) => r.index_page || "—"],
    ["404 page", (r) => r.not_found_page || "—"],
    ["Created", (r) => timeEl(r.created_at)],
  ],
  createFields: () => [
    field("Name", h("input", { name: "name", required: true, placeholder: "links.example.com", autocomplete: "off", spellcheck: "false" }), "A host name; it cannot be changed later"),
    field("Index page", urlInput("index_page"), "Where the domain's / redirects (optional)"),
    field("404 page", urlInput("not_found_page"), "Where any other path redirects (optional)"),
  ],
  editFields: (record) => [
    field("Name", h("input", { name: "name_shown", value: record.name, readonly: true, disabled: true }), "Not updatable"),
    field("Index page", urlInput("index_page", record.index_page), "Empty clears it"),
    field("404 page", urlInput("not_found_page", record.not_found_page), "Empty clears it"),
  ],
};

export const SPACES = {
  key: "spaces",
  title: "Spaces",
  singular: "space",
  path: "/api/v1/spaces",
  columns: [
    ["Name", (r) => r.name],
    ["Color", (r) => colorSwatch(r.color)],
    ["Created", (r) => timeEl(r.created_at)],
  ],
  createFields: () => [
    field("Name", h("input", { name: "name", required: true, maxlength: 32, autocomplete: "off" }), "1 to 32 characters, unique in your account"),
    field("Color", colorSelect(1)),
  ],
  editFields: (record) => [
    field("Name", h("input", { name: "name", required: true, maxlength: 32, value: record.name, autocomplete: "off" })),
    field("Color", colorSelect(record.color)),
  ],
};

function formBody(form) {
  const body = {};
  for (const [name, value] of new FormData(form)) {
    if (name !== "name_shown") body[name] = value;
  }
  return body;
}

export async function recordsView(kind, { main, query, signal }) {
  const state = {
    search: query.get("search") || "",
    sort_by: query.get("sort_by") || "id",
    sort: query.get("sort") || "desc",
    per_page: query.get("per_page") || "25",
    page: query.get("page") || "1",
  };
  const page = await api(kind.path, { query: { ...state, search_by: "name" }, signal });
  // Edit pages return to the list as it was (search, sort, page).
  const listQuery = query.toString();

  function go(changes) {
    const next = { ...state, ...changes };
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(next)) if (value !== "") params.set(name, value);
    const target = `#/${kind.key}?${params}`;
    // The same URL after a write: render again to show the change.
    if (window.location.hash === target) window.dispatchEvent(new HashChangeEvent("hashchange"));
    else window.location.hash = target;
  }

  const search = h("input", { type: "search", name: "search", value: state.search, placeholder: "Search by name", autocomplete: "off" });
  const sortBy = h("select", { name: "sort_by" },
    [["id", "Date created"], ["name", "Name"]].map(([value, label]) => h("option", { value, selected: value === state.sort_by }, label)));
  const sort = h("select", { name: "sort" },
    [["desc", "Descending"], ["asc", "Ascending"]].map(([value, label]) => h("option", { value, selected: value === state.sort }, label)));
  const perPage = h("select", { name: "per_page" },
    ["10", "25", "50", "100"].map((value) => h("option", { value, selected: value === state.per_page }, value)));
  const controls = h("form", { class: "toolbar list-controls", role: "search", "aria-label": `Search ${kind.title.toLowerCase()}` }, [
    field("Search", search),
    field("Sort by", sortBy),
    field("Order", sort),
    field("Per page", perPage),
    h("div", { class: "actions end" }, h("button", { type: "submit", class: "secondary" }, "Search")),
  ]);
  controls.addEventListener("submit", (event) => {
    event.preventDefault();
    go({ search: search.value.trim(), page: "1" });
  });
  for (const select of [sortBy, sort, perPage]) {
    select.addEventListener("change", () => go({ [select.name]: select.value, page: "1" }));
  }

  const rows = page.data.map((record) => h("tr", {}, [
    ...kind.columns.map(([label, cell]) => h("td", { "data-label": label }, cell(record))),
    h("td", { "data-label": "Actions", class: "row-actions" }, [
      h("a", { class: "button secondary small", href: `#/${kind.key}/${record.id}/edit${listQuery ? `?${listQuery}` : ""}`, "aria-label": `Edit ${record.name}` }, "Edit"),
      h("button", {
        type: "button", class: "danger secondary small", "aria-label": `Delete ${record.name}`,
        onclick: async () => {
          if (!window.confirm(`Delete ${kind.singular} “${record.name}”?`)) return;
          try {
            await api(`${kind.path}/${record.id}`, { method: "DELETE" });
            toast(`Deleted ${record.name}`);
            const lastOnPage = page.data.length === 1 && Number(state.page) > 1;
            go({ page: lastOnPage ? String(Number(state.page) - 1) : state.page });
          } catch (error) {
            toast(error.message);
          }
        },
      }, "Delete"),
    ]),
  ]));
  const meta = page.meta;
  const table = page.data.length
    ? h("table", { class: "cards" },
      h("caption", { class: "visually-hidden" }, `${kind.title}, page ${meta.current_page} of ${meta.last_page}`),
      h("thead", {}, h("tr", {}, [...kind.columns.map(([label]) => label), "Actions"].map((label) => h("th", { scope: "col" }, label)))),
      h("tbody", {}, rows))
    : h("p", { class: "muted" }, state.search ? `No ${kind.title.toLowerCase()} match “${state.search}”.` : `No ${kind.title.toLowerCase()} yet.`);

  const current = meta.current_page;
  const pager = h("nav", { class: "pager", "aria-label": "Pagination" }, [
    h("button", { type: "button", class: "secondary small", disabled: current <= 1, onclick: () => go({ page: "1" }) }, "« First"),
    h("button", { type: "button", class: "secondary small", disabled: current <= 1, onclick: () => go({ page: String(current - 1) }) }, "‹ Previous"),
    h("span", { "aria-live": "polite" },
      `Page ${current} of ${meta.last_page} · ${meta.total ? `${meta.from}–${meta.to} of ${formatInt(meta.total)}` : "0 results"}`),
    h("button", { type: "button", class: "secondary small", disabled: current >= meta.last_page, onclick: () => go({ page: String(current + 1) }) }, "Next ›"),
    h("button", { type: "button", class: "secondary small", disabled: current >= meta.last_page, onclick: () => go({ page: String(meta.last_page) }) }, "Last »"),
  ]);

  const error = formErrorBox();
  const createForm = h("form", { class: "card", "aria-labelledby": `new-${kind.singular}` }, [
    h("h2", { id: `new-${kind.singular}` }, `New ${kind.singular}`),
    h("div", { class: "row" }, kind.createFields()),
    error,
    h("div", { class: "actions" }, h("button", { type: "submit" }, `Create ${kind.singular}`)),
  ]);
  createForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    formError(createForm, error, null);
    try {
      const created = await api(kind.path, { method: "POST", form: formBody(createForm) });
      toast(`Created ${created.data.name}`);
      go({ search: "", sort_by: "id", sort: "desc", page: "1" });
    } catch (failure) {
      formError(createForm, error, failure);
    }
  });

  replace(main,
    pageHeader(kind.title, h("span", { class: "muted small" },
      state.search ? `${formatInt(meta.total)} matching “${state.search}”` : `${formatInt(meta.total)} in all`)),
    controls,
    h("section", { "aria-label": `${kind.title} list` }, table, pager),
    createForm);
}

export async function recordEditView(kind, { main, params: [id], query, signal }) {
  const { data: record } = await api(`${kind.path}/${id}`, { signal });
  const back = `#/${kind.key}${query.toString() ? `?${query}` : ""}`;
  const error = formErrorBox();
  const form = h("form", { class: "card", "aria-label": `Edit ${kind.singular}` }, [
    h("div", { class: "row" }, kind.editFields(record)),
    error,
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Save changes"),
      h("a", { class: "button secondary", href: back }, "Cancel")),
  ]);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    formError(form, error, null);
    try {
      const saved = await api(`${kind.path}/${record.id}`, { method: "PATCH", form: formBody(form) });
      toast(`Saved ${saved.data.name}`);
      window.location.hash = back;
    } catch (failure) {
      formError(form, error, failure);
    }
  });
  replace(main, pageHeader(`Edit ${kind.singular}`, h("span", { class: "muted" }, record.name)), form);
}
