// Toolbox Platform — helpers shared by every page: JSON requests with the platform's error shapes, DOM building
// without innerHTML (text is never parsed as markup), notices, and a stored key per page.

/** Builds an element: h('button', { class: 'secondary', onclick }, 'Save'). Strings become text nodes. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'class') element.className = value;
    else if (name in element && typeof value !== 'string') element[name] = value;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** Replaces an element's children. */
export function render(target, ...children) {
  const element = typeof target === 'string' ? document.querySelector(target) : target;
  element.replaceChildren(...children.flat(Infinity).filter((child) => child !== null && child !== undefined));
  return element;
}

/** An error from an API answer, with the status and the platform's code when the body has one. */
export class ApiError extends Error {
  constructor(status, code, message, body) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** The message and code of any of the platform's error bodies (registry, result, OpenAI and JSON-RPC shapes). */
export function errorOf(status, body) {
  if (body && typeof body === 'object') {
    const error = body.error && typeof body.error === 'object' ? body.error : body;
    const message = error.message ?? error.detail ?? body.info?.help_text ?? `HTTP ${status}`;
    const code = error.code ?? error.type ?? body.code ?? null;
    return new ApiError(status, code, String(message), body);
  }
  return new ApiError(status, null, typeof body === 'string' && body ? body : `HTTP ${status}`, body);
}

/** fetch + JSON: `api('/admin/users', { method: 'POST', body: {...}, key })`; throws ApiError on a non-2xx answer. */
export async function api(path, { method = 'GET', body, key, headers = {}, signal } = {}) {
  const init = { method, headers: { Accept: 'application/json', ...headers }, signal, credentials: 'same-origin' };
  if (key) init.headers.Authorization = `Bearer ${key}`;
  if (body instanceof FormData || body instanceof Blob) init.body = body;
  else if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let parsed = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  if (!response.ok) throw errorOf(response.status, parsed);
  return parsed;
}

/** Shows a short notice in the corner (role=status, so screen readers announce it). */
export function notify(message, { error = false, timeoutMs = 6000 } = {}) {
  let box = document.getElementById('toast');
  if (!box) {
    box = h('div', { id: 'toast', role: 'status', 'aria-live': 'polite' });
    document.body.append(box);
  }
  const item = h('div', { class: error ? 'error' : '' }, message);
  box.append(item);
  setTimeout(() => item.remove(), timeoutMs);
}

/** A key kept in sessionStorage under a page's name (never in localStorage: it leaves with the tab). */
export const storedKey = {
  get: (name) => sessionStorage.getItem(`tb-key:${name}`),
  set: (name, value) => sessionStorage.setItem(`tb-key:${name}`, value),
  clear: (name) => sessionStorage.removeItem(`tb-key:${name}`),
};

/** 1234567 → "1.2 MB". */
export function formatBytes(bytes) {
  if (!Number.isFinite(bytes)) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** A date (ISO string, seconds or milliseconds) in the reader's locale. */
export function formatDate(value) {
  if (value === null || value === undefined || value === '') return '—';
  const date = typeof value === 'number' ? new Date(value < 1e12 ? value * 1000 : value) : new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}

/** Runs an async action from a button: disables it meanwhile and shows a failure as a notice. */
export async function withBusy(button, action) {
  if (button) button.disabled = true;
  try {
    return await action();
  } catch (error) {
    notify(error?.message ?? String(error), { error: true });
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

/**
 * Accessible tabs: `tabs([{ id, label, content }], { label, prefix })` → `{ element, select(id) }`. Arrow keys,
 * Home and End move between tabs (WAI-ARIA tabs pattern); only the selected panel is shown.
 */
export function tabs(items, { label, prefix = 'tab', selected = items[0]?.id, onSelect } = {}) {
  const buttons = [];
  const panels = [];
  const select = (id, focus = false) => {
    items.forEach((item, index) => {
      const on = item.id === id;
      buttons[index].setAttribute('aria-selected', String(on));
      buttons[index].tabIndex = on ? 0 : -1;
      panels[index].hidden = !on;
      if (on && focus) buttons[index].focus();
    });
    onSelect?.(id);
  };
  items.forEach((item, index) => {
    const move = (event) => {
      const target = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: items.length - 1 }[event.key];
      if (target === undefined) return;
      event.preventDefault();
      select(items[(target + items.length) % items.length].id, true);
    };
    const ids = { tab: `${prefix}-${item.id}`, panel: `${prefix}-panel-${item.id}` };
    buttons.push(
      h(
        'button',
        {
          type: 'button',
          role: 'tab',
          id: ids.tab,
          'aria-controls': ids.panel,
          onclick: () => select(item.id),
          onkeydown: move,
        },
        item.label,
      ),
    );
    panels.push(h('div', { role: 'tabpanel', id: ids.panel, 'aria-labelledby': ids.tab, tabindex: '0' }, item.content));
  });
  const element = h('div', {}, h('div', { class: 'tabs', role: 'tablist', 'aria-label': label }, buttons), panels);
  select(selected);
  return { element, select };
}
