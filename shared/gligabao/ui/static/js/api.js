// The public HTTP API, and the settings that say where it is: the base URL
// (this server unless told otherwise) and the user are kept in localStorage,
// the bearer token in sessionStorage only (gone with the tab).

const KEY = 'gligabao.settings';
const TOKEN_KEY = 'gligabao.token';

export const settings = (() => {
  let saved = {};
  try { saved = JSON.parse(localStorage.getItem(KEY) || '{}'); } catch { saved = {}; }
  return {
    base: saved.base || '',
    user: saved.user || 'u1',
    dataset: saved.dataset || 'main',
    token: sessionStorage.getItem(TOKEN_KEY) || '',
  };
})();

export function saveSettings(next) {
  Object.assign(settings, next);
  const { base, user, dataset } = settings;
  localStorage.setItem(KEY, JSON.stringify({ base, user, dataset }));
  if (settings.token) sessionStorage.setItem(TOKEN_KEY, settings.token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function baseUrl() {
  return (settings.base || location.origin).replace(/\/+$/, '');
}

// One request: `query` goes to the query string (user_id and dataset are
// added to GET and DELETE unless given), `body` is sent as JSON.
export async function api(method, path, { query = {}, body, scoped = true } = {}) {
  const params = new URLSearchParams();
  if (scoped && method !== 'POST') {
    params.set('user_id', settings.user);
    params.set('dataset', settings.dataset);
  }
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') params.delete(k);
    else params.set(k, String(v));
  }
  const qs = params.toString();
  const headers = { Accept: 'application/json' };
  if (settings.token) headers.Authorization = `Bearer ${settings.token}`;
  const init = { method, headers };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(`${baseUrl()}${path}${qs ? `?${qs}` : ''}`, init);
  } catch (err) {
    throw new ApiError(0, `cannot reach ${baseUrl()} (${err.message})`);
  }
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!response.ok) {
    throw new ApiError(response.status, (data && data.error) || `${response.status} ${response.statusText}`);
  }
  return data;
}

// The body fields every POST carries.
export function scope(extra = {}) {
  return { user_id: settings.user, dataset: settings.dataset, ...extra };
}

// Every page of a listing route, up to `max` items.
export async function allPages(path, key, { query = {}, max = 1000, limit = 100, cursorField = 'next_cursor' } = {}) {
  const items = [];
  let cursor = null;
  do {
    const page = await api('GET', path, { query: { ...query, limit, cursor } });
    items.push(...(page[key] || []));
    cursor = page[cursorField] || null;
  } while (cursor && items.length < max);
  return { items: items.slice(0, max), truncated: Boolean(cursor) || items.length > max };
}

// Run `fn` over `items` with at most `width` requests in flight.
export async function pool(items, width, fn) {
  const out = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}
