// The dashboard page's shared browser helpers: the page state (the overlaid runs), element builders
// and number formats. Browser-only: no Node APIs, and text goes in through textContent (no HTML
// injection from run files).

/** @typedef {import("./api.js").Run} Run */
/** @typedef {Record<string, string | number | ((e: Event) => void)>} Props */
/** @typedef {Node | string | null | undefined | false} Kid */

export const PALETTE = ["#2563eb", "#d97706", "#059669", "#dc2626", "#7c3aed", "#0891b2", "#be185d", "#4d7c0f", "#475569"];
/** The page state: the overlaid runs, filled by main.js from /api/runs. @type {{ runs: Run[] }} */
export const S = { runs: [] };

/**
 * The page's element with this id; the markup (page.ts) defines every id the modules use.
 * @param {string} id
 * @returns {HTMLElement}
 */
export function $(id) {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the page has no #${id}`);
  return e;
}
/**
 * The page's element with this id, checked to be a `type` (an input, a select, a button).
 * @template {HTMLElement} T
 * @param {string} id
 * @param {{ new (): T }} type
 * @returns {T}
 */
export function $as(id, type) {
  const e = $(id);
  if (!(e instanceof type)) throw new Error(`#${id} is not a ${type.name}`);
  return e;
}
/** @param {string} id */
export const $input = (id) => $as(id, HTMLInputElement);
/** @param {string} id */
export const $select = (id) => $as(id, HTMLSelectElement);
/**
 * An element: props `text` (its text), `cls` (its class), `on<event>` (a listener), else attributes.
 * @param {string} tag
 * @param {Props} [props]
 * @param {Kid[]} [kids]
 * @returns {HTMLElement}
 */
export function el(tag, props, kids) {
  const e = document.createElement(tag);
  if (props)
    for (const k in props) {
      const v = props[k];
      if (typeof v === "function") {
        if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), v);
      } else if (k === "text") e.textContent = String(v);
      else if (k === "cls") e.className = String(v);
      else e.setAttribute(k, String(v));
    }
  for (const c of kids || []) if (c) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  return e;
}
/**
 * @param {string} tag
 * @param {Record<string, string | number>} attrs
 * @param {string} [text]
 */
export function svg(tag, attrs, text) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const k in attrs) e.setAttribute(k, String(attrs[k]));
  if (text !== undefined) e.textContent = text;
  return e;
}
/** @param {unknown} v */
export function json(v) {
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
}
/**
 * A value as a person reads it: strings as they are (JSON text parsed and indented), the rest as indented JSON.
 * @param {unknown} v
 */
export function readable(v) {
  if (typeof v === "string") {
    const t = v.trim();
    if (t[0] === "{" || t[0] === "[") {
      try {
        return JSON.stringify(JSON.parse(t), null, 2);
      } catch {
        /* not JSON: as written */
      }
    }
    return v;
  }
  return v === undefined ? "" : json(v);
}
/**
 * @param {string} text
 * @param {Props} [props]
 */
export function code(text, props) {
  return el("pre", props || {}, [el("code", { text })]);
}
/** @param {number | null | undefined} v */
export function fmtNum(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e6 || a < 1e-4)) return v.toExponential(3);
  return String(Number(v.toPrecision(4)));
}
/** @param {number | null | undefined} s */
export function fmtSeconds(s) {
  if (s === null || s === undefined) return "–";
  if (s < 60) return s.toFixed(1) + " s";
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  return h ? h + " h " + (m % 60) + " min" : m + " min " + Math.round(s % 60) + " s";
}
/**
 * The JSON answer of `url`; an error answer rejects with its `error` text.
 * @template T
 * @param {string} url
 * @returns {Promise<T>}
 */
export function getJson(url) {
  return fetch(url).then((r) =>
    r.json().then((b) => {
      if (!r.ok) throw new Error(b.error || r.statusText);
      return b;
    }),
  );
}
