// Server-Sent Events over fetch: EventSource cannot send the Authorization header. The stream is
// parsed by hand (WHATWG rules: `id:`, `event:`, `data:`, comments, blank line = dispatch) and
// resumed with Last-Event-ID after a dropped connection, so no event is lost or shown twice.

import { authHeaders, apiUrl } from "./api.js";

const TERMINAL = new Set(["run.completed", "run.failed", "run.cancelled"]);

/**
 * Follow a run's events until its terminal event or until `signal` aborts.
 * onEvent({id, event, data}) for each event; onState("live" | "reconnecting" | "ended").
 */
export async function followEvents(path, { signal, onEvent, onState, onError, lastEventId = null }) {
  let last = lastEventId;
  let failures = 0;
  while (!signal.aborted) {
    try {
      const headers = authHeaders({ Accept: "text/event-stream" });
      if (last !== null) headers["Last-Event-ID"] = String(last);
      const response = await fetch(apiUrl(path), { headers, signal, cache: "no-store" });
      if (!response.ok) {
        let message = `HTTP ${response.status}`;
        try {
          message = (await response.json()).error.message;
        } catch {
          // keep the status
        }
        if (response.status < 500 && response.status !== 429) {
          onError?.(message, response.status);
          return;
        }
        throw new Error(message);
      }
      onState?.("live");
      let finished = false;
      for await (const message of parse(response.body)) {
        failures = 0;
        if (message.id !== null) last = message.id;
        let data = {};
        try {
          data = JSON.parse(message.data);
        } catch {
          data = { raw: message.data };
        }
        await onEvent({ id: Number(message.id), event: message.event, data });
        if (TERMINAL.has(message.event)) finished = true;
      }
      if (finished) {
        onState?.("ended");
        return;
      }
    } catch (error) {
      if (signal.aborted || error.name === "AbortError") return;
    }
    failures += 1;
    onState?.("reconnecting");
    await sleep(Math.min(500 * failures, 5000), signal);
  }
}

async function* parse(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let event = { id: null, event: "message", data: [] };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      // A trailing \r may be the first half of \r\n: hold it back until the next chunk.
      const held = buffer.endsWith("\r") ? "\r" : "";
      const lines = (held ? buffer.slice(0, -1) : buffer).split(/\r\n|\r|\n/);
      buffer = lines.pop() + held;
      for (const line of lines) {
        if (line === "") {
          if (event.data.length) {
            yield { id: event.id, event: event.event, data: event.data.join("\n") };
          }
          event = { id: null, event: "message", data: [] };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const name = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (name === "data") event.data.push(value);
        else if (name === "event") event.event = value;
        else if (name === "id") event.id = value;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
