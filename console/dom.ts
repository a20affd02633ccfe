/**
 * The console's only way to make markup: elements built with createElement, and every value
 * (from upstreams, callers or storage) set as text, never parsed as HTML. There is no innerHTML
 * anywhere in the console, so a stored `<img src=x onerror=…>` shows as those characters.
 */
export type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

/** `<tag attrs…>children…</tag>`: `on…` attributes are listeners, the rest attributes (false/undefined: absent). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== undefined && value !== false) element.setAttribute(name, String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces what `parent` holds. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

const svgNamespace = 'http://www.w3.org/2000/svg';

export function svg(tag: string, attributes: Record<string, string | number>, ...children: (Node | string)[]): SVGElement {
  const element = document.createElementNS(svgNamespace, tag) as SVGElement;
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) element.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  return element;
}

/** A time as the reader's locale writes it, with the ISO text kept for a tooltip. */
export function time(iso: string | null | undefined): Child {
  if (!iso) return '-';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : h('time', { datetime: iso, title: iso }, date.toLocaleString());
}

/** "3 h 4 min", "12 s": how long from `from` to `to` (now when absent). */
export function duration(from: string, to?: string | null): string {
  const ms = (to ? Date.parse(to) : Date.now()) - Date.parse(from);
  if (!Number.isFinite(ms) || ms < 0) return '-';
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** A status-coloured badge (the colour is never the only sign: the text says it). */
export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge status-${status.toLowerCase()}` }, status);
}

/** A message in the page's live region, read out by screen readers. */
export function announce(message: string, kind: 'info' | 'error' = 'info'): void {
  const region = document.getElementById('announcer');
  if (!region) return;
  region.className = kind === 'error' ? 'announcer error' : 'announcer';
  region.textContent = message;
  // An error stays until the next message; news goes after a while.
  if (kind === 'info') setTimeout(() => region.textContent === message && (region.textContent = ''), announcementMs);
}

const announcementMs = 6000;
