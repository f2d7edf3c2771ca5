// The page: settings, the dataset, the graph with its search, focus and `as
// of` slider, and the panels (Datasets, Details, Timeline, Ask, Costs).

import { api, ApiError, saveSettings, settings } from './api.js';
import { setupAsk } from './ask.js';
import { renderCosts } from './costs.js';
import { renderEdge, renderEntity, renderText } from './details.js';
import { renderConflicts } from './facts.js';
import { clear, fmtInt, fmtTime, h, linkButton } from './dom.js';
import { Graph } from './graph.js';
import { fold, instants, loadMemory, visibleAt } from './memory.js';
import { renderTimeline } from './timeline.js';

const $ = (id) => document.getElementById(id);
const status = $('status');

function say(text, isError = false) {
  status.textContent = text;
  status.classList.toggle('error', isError);
}

const app = {
  memory: { entities: new Map(), edges: new Map(), texts: new Map(), truncated: false },
  stops: [],
  timelineOf: null,

  // Run a request, say what went wrong instead of throwing.
  async guard(fn) {
    try {
      return await fn();
    } catch (err) {
      const msg = err instanceof ApiError ? `${err.message}${err.status ? ` (${err.status})` : ''}` : String(err);
      say(msg, true);
      return null;
    }
  },

  async showEntity(id, { fromHistory = false } = {}) {
    if (!fromHistory) remember({ entity: id });
    graph.pick('entity', id);
    openTab('details');
    await app.guard(() => renderEntity(app, $('panel-details'), id));
    if (app.timelineOf !== null) app.timelineOf = id;
  },
  async showEdge(id) {
    graph.pick('edge', id);
    openTab('details');
    await app.guard(() => renderEdge(app, $('panel-details'), id));
  },
  async showText(id) {
    openTab('details');
    await app.guard(() => renderText(app, $('panel-details'), id));
  },
  focus(id) {
    redraw();
    graph.focus(id, 1);
    graph.pick('entity', id);
    listDrawn();
  },
  timeline(id) {
    app.timelineOf = id;
    renderTimeline(app, $('panel-timeline'), id);
    openTab('timeline');
  },
  highlight(entityIds, edgeIds) {
    graph.highlight(entityIds, edgeIds);
    listDrawn();
  },
  isEvidence(kind, id) {
    return (kind === 'edge' ? graph.evidence.edges : graph.evidence.nodes).has(id);
  },
  // The instant the slider stands at (ms), or null for "now".
  asOfTime() {
    const i = Number($('asof').value);
    return i >= app.stops.length ? null : app.stops[i];
  },
  async reload() {
    await loadDataset();
  },
};

const graph = new Graph($('cy'), { onEntity: (id) => app.showEntity(id), onEdge: (id) => app.showEdge(id) });

// --- tabs (arrow keys move between them, as the ARIA pattern says)
const tabs = [...document.querySelectorAll('[role=tab]')];
function openTab(name) {
  for (const tab of tabs) {
    const on = tab.id === `tab-${name}`;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
    $(tab.getAttribute('aria-controls')).hidden = !on;
  }
  if (name === 'costs') app.guard(() => renderCosts(app, $('panel-costs')));
  if (name === 'datasets') app.guard(renderDatasets);
  if (name === 'conflicts') app.guard(() => renderConflicts(app, $('panel-conflicts')));
}
for (const tab of tabs) {
  tab.addEventListener('click', () => openTab(tab.id.slice(4)));
  tab.addEventListener('keydown', (ev) => {
    const i = tabs.indexOf(tab);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[ev.key];
    if (next === undefined) return;
    ev.preventDefault();
    const target = tabs[(next + tabs.length) % tabs.length];
    target.focus();
    openTab(target.id.slice(4));
  });
}

// --- datasets
async function renderDatasets() {
  const out = await api('GET', '/v1/gb/datasets', { query: { dataset: null } });
  const rows = out.datasets.map((d) => h('tr', { 'data-dataset': d.name },
    h('th', { scope: 'row' }, d.name), h('td', { className: 'num' }, fmtInt(d.entities)),
    h('td', { className: 'num' }, fmtInt(d.edges)), h('td', { className: 'num' }, fmtInt(d.artifacts)),
    h('td', {}, fmtTime(d.created_at)),
    h('td', {}, d.name === settings.dataset ? '(open)' : linkButton(`Open ${d.name}`, () => pickDataset(d.name)))));
  clear($('panel-datasets'),
    h('h2', {}, `Datasets of ${settings.user}`),
    out.datasets.length
      ? h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'name'), h('th', { className: 'num' }, 'entities'),
        h('th', { className: 'num' }, 'facts'), h('th', { className: 'num' }, 'texts'), h('th', {}, 'created'), h('th', {}, 'action'))),
      h('tbody', {}, rows))
      : h('p', { className: 'hint' }, 'No dataset yet: remember a text first.'));
  return out.datasets;
}

async function fillDatasetSelect() {
  const out = await app.guard(() => api('GET', '/v1/gb/datasets', { query: { dataset: null } }));
  const names = out ? out.datasets.map((d) => d.name) : [];
  if (!names.includes(settings.dataset)) names.unshift(settings.dataset);
  clear($('dataset'), names.map((n) => h('option', { value: n, selected: n === settings.dataset }, n)));
  return out !== null;
}

async function pickDataset(name) {
  saveSettings({ dataset: name });
  await fillDatasetSelect();
  await loadDataset();
  openTab('datasets');
}

// --- the graph, the slider and the list of what is drawn
function redraw() {
  const t = app.asOfTime();
  graph.show(visibleAt(app.memory, t, $('world-only').checked));
  $('asof-label').value = t === null ? 'now (live facts)' : fmtTime(new Date(t).toISOString());
  listDrawn();
  if (app.timelineOf !== null && !$('panel-timeline').hidden) renderTimeline(app, $('panel-timeline'), app.timelineOf);
}

function listDrawn() {
  const drawn = graph.drawn();
  $('drawn-count').textContent = String(drawn.nodes.length);
  clear($('drawn-list'), drawn.nodes.sort((a, b) => a.name.localeCompare(b.name)).map((n) => h('li', {},
    linkButton(n.evidence ? `★ ${n.name}` : n.name, () => app.showEntity(n.id), { 'data-entity': n.id }))));
}

function resetSlider() {
  app.stops = instants(app.memory, $('world-only').checked);
  const slider = $('asof');
  slider.max = String(app.stops.length);
  slider.value = String(app.stops.length);
  slider.setAttribute('aria-valuetext', 'now');
}

async function loadDataset() {
  say(`Loading ${settings.dataset}…`);
  const memory = await app.guard(async () => {
    try {
      return await loadMemory((done, total) => say(`Loading ${settings.dataset}: ${done} of ${total} texts…`));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && err.message === 'no such route') {
        throw new ApiError(404, 'this API has no browse routes (GET /v1/gb/entities, /v1/gb/artifacts): the graph needs them; Ask and Costs still work');
      }
      throw err;
    }
  });
  if (!memory) return;
  app.memory = memory;
  graph.setMemory(memory);
  resetSlider();
  redraw();
  graph.fit();
  say(`${settings.dataset}: ${memory.entities.size} entities, ${memory.edges.size} facts (with their history), ${memory.texts.size} texts${memory.truncated ? ' (the latest only: the dataset is larger)' : ''}.`);
  document.body.dataset.loaded = String(Date.now());
}

// --- search
function setupFind() {
  const input = $('find');
  const results = $('find-results');
  let timer = null;
  const run = async () => {
    const q = fold(input.value.trim());
    if (!q) { clear(results); return; }
    let hits = [...app.memory.entities.values()].filter((e) => fold(e.name).includes(q));
    if (app.memory.truncated) {
      const out = await app.guard(() => api('GET', '/v1/gb/entities', { query: { q: input.value.trim(), limit: 20 } }));
      if (out) hits = [...new Map([...hits, ...out.entities].map((e) => [e.id, e])).values()];
    }
    clear(results, hits.slice(0, 20).map((e) => h('li', {}, h('button', { type: 'button', 'data-entity': e.id,
      onclick: () => { app.focus(e.id); app.showEntity(e.id); } }, e.name))),
    hits.length ? null : h('li', { className: 'hint' }, 'No entity by that name.'));
  };
  input.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(run, 200); });
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') { ev.preventDefault(); const first = results.querySelector('button'); if (first) first.click(); }
  });
}

function setup() {
  $('user').value = settings.user;
  $('base').value = settings.base;
  $('token').value = settings.token;
  $('scope').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    saveSettings({ user: $('user').value.trim() || settings.user, dataset: $('dataset').value || 'main' });
    await fillDatasetSelect();
    await loadDataset();
  });
  $('dataset').addEventListener('change', () => pickDataset($('dataset').value));
  $('settings').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    saveSettings({ base: $('base').value.trim(), token: $('token').value.trim() });
    $('settings-box').open = false;
    if (await fillDatasetSelect()) await loadDataset();
  });
  $('zoom-in').addEventListener('click', () => graph.zoom(1.25));
  $('zoom-out').addEventListener('click', () => graph.zoom(0.8));
  $('zoom-fit').addEventListener('click', () => graph.fit());
  $('show-all').addEventListener('click', () => { redraw(); graph.fit(); });
  $('asof').addEventListener('input', () => {
    redraw();
    $('asof').setAttribute('aria-valuetext', $('asof-label').value);
  });
  $('world-only').addEventListener('change', () => { resetSlider(); redraw(); });
  setupFind();
  setupAsk(app);
  // For tests and the curious: what the canvas draws, read from Cytoscape.
  window.gligabao = { drawn: () => graph.drawn(), point: (id) => graph.screenPoint(id), stops: () => app.stops.length };
}

// --- the page's state in its URL: ?user_id=…&dataset=…&entity=… opens that
// view; each entity opened is a step back and forward go through.
function remember(state) {
  const url = new URL(location.href);
  url.searchParams.set('user_id', settings.user);
  url.searchParams.set('dataset', settings.dataset);
  if (state.entity !== undefined) url.searchParams.set('entity', String(state.entity));
  if (url.href !== location.href) history.pushState(state, '', url);
}

window.addEventListener('popstate', async () => {
  const params = new URLSearchParams(location.search);
  const user = params.get('user_id') || settings.user;
  const dataset = params.get('dataset') || settings.dataset;
  if (user !== settings.user || dataset !== settings.dataset) {
    saveSettings({ user, dataset });
    $('user').value = user;
    await fillDatasetSelect();
    await loadDataset();
  }
  const entity = params.get('entity');
  if (entity) await app.showEntity(Number(entity), { fromHistory: true });
  else clear($('panel-details'), h('p', { className: 'hint' }, 'Pick an entity in the graph, the search box or the list of entities drawn.'));
});

// On the local server (SQLite, no authentication) the users present, to
// pick from: GET /local/users, a route of `gligabao serve` only (elsewhere
// 404, and the picker stays hidden).
async function fillUsers() {
  let out = null;
  try { out = await api('GET', '/local/users', { scoped: false }); } catch { return; }
  const users = (out && out.users) || [];
  if (!users.length) return;
  const pick = $('user-pick');
  clear(pick, h('option', { value: '' }, '—'), ...users.map((u) => h('option', { value: u }, u)));
  pick.value = users.includes(settings.user) ? settings.user : '';
  $('user-pick-label').hidden = false;
  pick.addEventListener('change', () => {
    if (!pick.value) return;
    $('user').value = pick.value;
    $('scope').requestSubmit();
  });
}

async function start() {
  const params = new URLSearchParams(location.search);
  if (params.get('user_id') || params.get('dataset')) {
    saveSettings({ user: params.get('user_id') || settings.user, dataset: params.get('dataset') || settings.dataset });
  }
  setup();
  fillUsers();
  const ok = await fillDatasetSelect();
  if (ok) await loadDataset();
  const entity = params.get('entity');
  if (entity) await app.showEntity(Number(entity), { fromHistory: true });
}

start();
