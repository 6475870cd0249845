// The public API, called with the key the user signed in with. The key lives in sessionStorage:
// it survives a reload of this tab and is gone when the tab closes.

const KEY_NAME = "atrium.apiKey";

// The API is served by the same deployment, one level above /dashboard/ (works under a prefix).
export const API_ROOT = new URL("..", window.location.href.split("#")[0]);

export function getKey() {
  return sessionStorage.getItem(KEY_NAME);
}

export function setKey(key) {
  sessionStorage.setItem(KEY_NAME, key);
}

export function clearKey() {
  sessionStorage.removeItem(KEY_NAME);
}

/** An error answer of the API: status, code, message and the parameter at fault (400s). */
export class ApiError extends Error {
  constructor(status, code, message, parameter = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.parameter = parameter;
  }
}

let unauthorizedHandler = () => {};

/** Called when the API refuses the key (401): the app signs the user out. */
export function onUnauthorized(handler) {
  unauthorizedHandler = handler;
}

export function apiUrl(path, query) {
  const url = new URL(path.replace(/^\//, ""), API_ROOT);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== "") {
      url.searchParams.set(name, String(value));
    }
  }
  return url;
}

export function authHeaders(extra = {}, key = getKey()) {
  return { Authorization: `Bearer ${key}`, ...extra };
}

async function send(path, { method = "GET", query, json, form, upload, headers, signal, key } = {}) {
  const init = { method, headers: authHeaders({ Accept: "application/json", ...headers }, key) };
  if (signal) init.signal = signal;
  if (upload !== undefined) {
    // A FormData body: the browser writes the multipart Content-Type with its boundary.
    init.body = upload;
  } else if (json !== undefined) {
    init.body = JSON.stringify(json);
    init.headers["Content-Type"] = "application/json";
  } else if (form !== undefined) {
    init.body = new URLSearchParams(form);
    init.headers["Content-Type"] = "application/x-www-form-urlencoded";
  }
  let response;
  try {
    response = await fetch(apiUrl(path, query), init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, "NETWORK_ERROR", "The server could not be reached. Check your connection.");
  }
  if (!response.ok) throw await errorOf(response, key === undefined);
  return response;
}

async function errorOf(response, signOutOn401) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    // not JSON: keep the status only
  }
  const error = body && body.error ? body.error : {};
  const details = error.details || {};
  const apiError = new ApiError(
    response.status,
    error.code || `HTTP_${response.status}`,
    error.message || response.statusText || "Request failed",
    details.parameter || null,
  );
  if (response.status === 401 && signOutOn401) unauthorizedHandler(apiError);
  return apiError;
}

/** Call the API and return the parsed JSON body; throws ApiError. */
export async function api(path, options = {}) {
  const response = await send(path, options);
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

/** Upload one file (multipart field `file`); the file's record. */
export async function uploadFile(path, file, { signal } = {}) {
  const upload = new FormData();
  upload.append("file", file, file.name);
  return api(path, { method: "POST", upload, signal });
}

/** A file fetched with the key, as a `data:` URL (what the page's policy lets an img show). */
export async function dataUrl(path, { signal } = {}) {
  const response = await send(path, { headers: { Accept: "*/*" }, signal });
  const blob = await response.blob();
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

/** Fetch a file with the key and hand it to the browser as a download. */
export async function download(path, fallbackName) {
  const response = await send(path, { headers: { Accept: "*/*" } });
  const blob = await response.blob();
  const name = filenameOf(response.headers.get("Content-Disposition")) || fallbackName;
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return { name, size: blob.size };
}

function filenameOf(disposition) {
  if (!disposition) return null;
  const star = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
  if (star) return decodeURIComponent(star[1]);
  const plain = /filename="?([^";]+)"?/i.exec(disposition);
  return plain ? plain[1] : null;
}

/** Path (and query) of an absolute URL the API returned, so it is fetched from this origin. */
export function pathOf(absoluteUrl) {
  const url = new URL(absoluteUrl, API_ROOT);
  return url.pathname + url.search;
}
