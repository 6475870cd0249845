// A bar chart drawn as inline SVG (no library, works offline). It is drawn at the width of its
// box in CSS pixels (and again when that changes), so labels stay crisp and legible on a phone.
// It is an image with a text alternative; the same numbers are in a table on the page.

import { h } from "./dom.js";

const HEIGHT = 220;
const PAD = { top: 12, right: 8, bottom: 26, left: 56 };

function niceMax(value, integer) {
  if (value <= 0) return 1;
  // Counts get whole-number grid lines: 1, or an even top so that half of it is whole too.
  if (integer && value <= 1) return 1;
  if (integer && value <= 10) return Math.ceil(value / 2) * 2;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of integer ? [1, 2, 5, 10] : [1, 2, 2.5, 5, 10]) {
    if (step * magnitude >= value) return step * magnitude;
  }
  return 10 * magnitude;
}

function draw(svg, { points, format, integer }, width) {
  svg.replaceChildren(...[...svg.childNodes].filter((node) => ["title", "desc"].includes(node.nodeName)));
  svg.setAttribute("viewBox", `0 0 ${width} ${HEIGHT}`);
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(HEIGHT));
  const max = niceMax(Math.max(0, ...points.map((point) => point.value)), integer);
  const innerW = width - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const slot = innerW / Math.max(points.length, 1);
  const barW = Math.max(2, Math.min(28, slot * 0.7));
  const ticks = integer && max === 1 ? [0, 1] : [0, 0.5, 1];
  for (const fraction of ticks) {
    const y = PAD.top + innerH * (1 - fraction);
    svg.append(
      h("svg:line", { x1: PAD.left, x2: width - PAD.right, y1: y, y2: y, class: "grid" }),
      h("svg:text", { x: PAD.left - 6, y: y + 4, class: "axis", "text-anchor": "end" }, format(max * fraction)),
    );
  }
  // About one date label per 70 px, always the last one.
  const labelEvery = Math.max(1, Math.ceil(points.length / Math.max(1, Math.floor(innerW / 70))));
  points.forEach((point, index) => {
    const x = PAD.left + slot * index + (slot - barW) / 2;
    const barH = (point.value / max) * innerH;
    svg.append(h("svg:rect", {
      x, y: PAD.top + innerH - barH, width: barW, height: Math.max(barH, point.value > 0 ? 1 : 0),
      class: "bar", "data-date": point.label, "data-value": point.value,
    }, h("svg:title", {}, `${point.label}: ${format(point.value)}`)));
    const last = index === points.length - 1;
    if ((index % labelEvery === 0 && points.length - 1 - index > labelEvery * 0.8) || last) {
      svg.append(h("svg:text", {
        x: PAD.left + slot * index + slot / 2, y: HEIGHT - 8, class: "axis",
        "text-anchor": last && labelEvery > 1 ? "end" : "middle",
      }, point.label.slice(5)));
    }
  });
}

/**
 * options: {title, points: [{label: "2026-11-22", value: 3}], format, integer, className}.
 * Returns a box holding an <svg role="img"> with a <title> and <desc>, one <rect> per point.
 */
export function barChart(options) {
  const { title, points, format, className = "" } = options;
  const total = points.reduce((sum, point) => sum + point.value, 0);
  const peak = points.reduce((best, point) => (point.value > best.value ? point : best), { value: -1 });
  const id = `chart-${Math.random().toString(36).slice(2)}`;
  const svg = h("svg:svg", { role: "img", class: `chart ${className}`, "aria-labelledby": `${id}-t ${id}-d` },
    h("svg:title", { id: `${id}-t` }, title),
    h("svg:desc", { id: `${id}-d` }, points.length
      ? `${points.length} days from ${points[0].label} to ${points.at(-1).label}; total ${format(total)}`
        + (peak.value > 0 ? `; highest ${format(peak.value)} on ${peak.label}.` : "; all zero.")
      : "No data."));
  const box = h("div", { class: "chart-box" }, svg);
  let drawnWidth = 0;
  const redraw = () => {
    const width = Math.floor(box.clientWidth);
    if (width > 0 && width !== drawnWidth) {
      drawnWidth = width;
      draw(svg, options, width);
    }
  };
  new ResizeObserver(redraw).observe(box);
  draw(svg, options, 640); // until the box is laid out
  return box;
}
