// Files given to runs: the new-run form's attachments (uploaded, then given as input parts) and
// a run page's input, with a preview of each image.

import { dataUrl, uploadFile } from "./api.js";
import { field, formatBytes, h, replace } from "./dom.js";

export const FILES = "/api/v1/public/files";

/** The new-run form's file picker, and how to turn its files into the run's input parts. */
export function attachments() {
  const picker = h("input", { type: "file", name: "files", multiple: true });
  const list = h("ul", { class: "attachments muted small", "aria-live": "polite" });
  picker.addEventListener("change", () => {
    replace(list, [...picker.files].map((file) => h("li", {}, `${file.name} (${formatBytes(file.size)})`)));
  });
  return {
    field: field("Files", picker, "Images and PDFs go to the model as such, text files inline."),
    list,
    /** Upload the chosen files; their input parts (none chosen: null). */
    async parts(signal) {
      const parts = [];
      for (const file of picker.files) {
        const made = await uploadFile(FILES, file, { signal });
        parts.push({ type: "file", file_id: made.file_id });
      }
      return parts.length ? parts : null;
    },
    clear() {
      picker.value = "";
      replace(list);
    },
  };
}

function partLabel(part) {
  if (part.type === "text") return part.text;
  if (part.url) return part.url;
  const id = part.file_id || part.artifact_id;
  return `${part.filename} (${part.content_type}, ${formatBytes(part.size_bytes)}) · ${id}`;
}

/** A run's input parts; each image file is previewed (fetched with the key). */
export function inputSection(run, { signal } = {}) {
  if (!run.input || !run.input.length) return null;
  const items = run.input.map((part) => {
    const item = h("li", { dataset: { type: part.type } }, h("span", { class: "input-label" }, partLabel(part)));
    const image = part.file_id && String(part.content_type || "").startsWith("image/");
    if (image) {
      const preview = h("img", { class: "input-preview", alt: `Preview of ${part.filename}` });
      item.append(preview);
      dataUrl(`${FILES}/${encodeURIComponent(part.file_id)}/content`, { signal })
        .then((url) => { preview.src = url; })
        .catch(() => { preview.replaceWith(h("span", { class: "muted small" }, " (no preview: the file is gone)")); });
    }
    return item;
  });
  return h("section", { class: "card", "aria-labelledby": "input-title" }, [
    h("h2", { id: "input-title" }, "Input"),
    h("ul", { class: "run-input" }, items),
  ]);
}
