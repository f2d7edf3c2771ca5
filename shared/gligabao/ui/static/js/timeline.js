// The Timeline panel: an entity's facts on a time axis, each from valid_at
// to invalid_at (an arrow when it still holds), the superseded ones in their
// own group below, hatched and labelled. A row is a button: Enter opens the
// fact. The `as of` instant of the slider is a vertical line.

import { clear, fmtDay, h, ms, s } from './dom.js';
import { edgeStatus, factsOf } from './memory.js';

const W = 560;
const PAD = 12;
const ROW = 40;
const AXIS = 34;

function ticks(t0, t1) {
  const span = t1 - t0;
  const day = 86400000;
  const out = [];
  const d = new Date(t0);
  if (span > 3 * 365 * day) {
    const step = Math.max(1, Math.ceil(span / (365 * day) / 6));
    for (let y = d.getUTCFullYear(); Date.UTC(y, 0, 1) <= t1; y += step) out.push([Date.UTC(y, 0, 1), String(y)]);
  } else if (span > 60 * day) {
    const step = Math.max(1, Math.ceil(span / (30 * day) / 6));
    for (let i = 0; ; i += step) {
      const t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + i, 1);
      if (t > t1) break;
      out.push([t, new Date(t).toISOString().slice(0, 7)]);
    }
  } else {
    const step = Math.max(span / 5, 1000);
    for (let t = t0; t <= t1; t += step) {
      const iso = new Date(t).toISOString();
      out.push([t, span > 2 * day ? iso.slice(5, 10) : iso.slice(11, 19)]);
    }
  }
  return out.filter(([t]) => t >= t0);
}

function label(edge, entityId) {
  const other = edge.source_id === entityId ? `→ ${edge.target}` : `← ${edge.source}`;
  return `${edge.relation} ${other}`;
}

export function renderTimeline(app, panel, entityId) {
  const memory = app.memory;
  const entity = memory.entities.get(entityId);
  const facts = factsOf(memory, entityId);
  const now = Date.now();
  const start = (e) => ms(e.valid_at || e.created_at);
  const end = (e) => (e.invalid_at ? ms(e.invalid_at) : now);
  const current = facts.filter((e) => !e.expired_at).sort((a, b) => start(a) - start(b));
  const superseded = facts.filter((e) => e.expired_at).sort((a, b) => start(a) - start(b));
  if (!facts.length) {
    clear(panel, h('h2', {}, `Timeline of ${entity ? entity.name : entityId}`), h('p', { className: 'hint' }, 'No fact.'));
    return;
  }
  const times = facts.flatMap((e) => [start(e), end(e), ms(e.expired_at)]).filter((t) => !Number.isNaN(t));
  let t0 = Math.min(...times);
  let t1 = Math.max(...times, now);
  const margin = Math.max((t1 - t0) * 0.04, 1000);
  t0 -= margin;
  t1 += margin;
  const x = (t) => PAD + ((t - t0) / (t1 - t0)) * (W - 2 * PAD);
  const rows = [];
  let y = AXIS;
  const row = (e, old) => {
    const x1 = x(start(e));
    const x2 = Math.max(x(end(e)), x1 + 3);
    const open = !e.invalid_at;
    const status = edgeStatus(e);
    const words = `${label(e, entityId)}, ${e.valid_at ? `from ${fmtDay(e.valid_at)}` : 'start not stated'}${open ? ', still holds' : ` to ${fmtDay(e.invalid_at)}`}${old ? `, superseded ${fmtDay(e.expired_at)}` : ''}`;
    const g = s('g', { tabindex: 0, role: 'button', 'aria-label': words, className: `fact-row ${status}`, 'data-edge': e.id,
      onclick: () => app.showEdge(e.id),
      onkeydown: (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); app.showEdge(e.id); } } },
    s('title', {}, words),
    s('text', { x: PAD, y: y + 12, 'font-size': 12, fill: '#1d232b' }, `${label(e, entityId)}${old ? ' (superseded)' : status === 'ended' ? ' (ended)' : ''}`),
    s('rect', { x: x1, y: y + 18, width: x2 - x1, height: 12, rx: 2,
      fill: old ? 'url(#hatch)' : '#8fb3e6', stroke: '#2b4d80', 'stroke-dasharray': e.valid_at ? null : '3 2' }),
    open ? s('path', { d: `M${x2} ${y + 14} l8 10 l-8 10 z`, fill: '#2b4d80' }) : null);
    rows.push(g);
    y += ROW;
  };
  current.forEach((e) => row(e, false));
  if (superseded.length) {
    rows.push(s('text', { x: PAD, y: y + 16, 'font-size': 12, 'font-weight': 600, fill: '#5b6470' }, `Superseded (${superseded.length})`));
    rows.push(s('line', { x1: PAD, x2: W - PAD, y1: y + 22, y2: y + 22, stroke: '#d5d9de' }));
    y += 28;
    superseded.forEach((e) => row(e, true));
  }
  const height = y + 8;
  const axis = ticks(t0, t1).map(([t, text]) => s('g', {},
    s('line', { x1: x(t), x2: x(t), y1: 20, y2: height, stroke: '#eceef1' }),
    s('text', { x: x(t), y: 14, 'font-size': 11, fill: '#5b6470',
      'text-anchor': x(t) < 40 ? 'start' : x(t) > W - 40 ? 'end' : 'middle' }, text)));
  const asOf = app.asOfTime();
  const marker = asOf === null ? null : s('g', {},
    s('line', { x1: x(asOf), x2: x(asOf), y1: 18, y2: height, stroke: '#d97706', 'stroke-width': 2, 'stroke-dasharray': '4 3' }),
    s('text', { x: Math.min(x(asOf) + 3, W - 40), y: 30, 'font-size': 11, fill: '#8a4b00' }, 'as of'));
  const svg = s('svg', { viewBox: `0 0 ${W} ${height}`, role: 'group', 'aria-label': `Facts of ${entity ? entity.name : entityId} over time` },
    s('defs', {}, s('pattern', { id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
      s('rect', { width: 6, height: 6, fill: '#eef0f3' }), s('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: '#7b8794', 'stroke-width': 2 }))),
    axis, rows, marker);
  clear(panel,
    h('h2', {}, `Timeline of ${entity ? entity.name : entityId}`),
    h('p', { className: 'hint' }, `${current.length} current, ${superseded.length} superseded. Bars run from valid_at to invalid_at; an arrow: it still holds; a dashed outline: no start stated (drawn from when it was learned).`),
    h('div', { className: 'timeline' }, svg));
}
