// The Costs panel: the dataset's inferences per day and per stage as stacked
// bars (tokens or dollars; each stage has its own hatching as well as its
// colour, and the table below holds the same numbers), then the latest calls
// with their steps and durations.

import { allPages, api, pool, settings } from './api.js';
import { clear, fmtDay, fmtInt, fmtMs, fmtTime, fmtUsd, h, s } from './dom.js';

const MAX_ROWS = 1000;
const CALLS = 8;
const FILLS = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#e15759', '#76b7b2', '#9c755f'];
const PATTERNS = [null, 'M0 6 L6 0', 'M0 0 L6 6', 'M3 0 L3 6', 'M0 3 L6 3', 'M0 0 L6 6 M0 6 L6 0', 'M1 1 h1 v1 h-1 z'];

export function perDayAndStage(rows) {
  const days = new Map();
  const stages = new Set();
  for (const r of rows) {
    const day = fmtDay(r.created_at);
    stages.add(r.stage);
    if (!days.has(day)) days.set(day, new Map());
    const cell = days.get(day).get(r.stage) || { tokens: 0, usd: 0, n: 0 };
    cell.tokens += (r.input_tokens || 0) + (r.output_tokens || 0);
    cell.usd += r.cost_usd || 0;
    cell.n += 1;
    days.get(day).set(r.stage, cell);
  }
  return { days: [...days.entries()].sort(([a], [b]) => a.localeCompare(b)), stages: [...stages].sort() };
}

function swatch(i) {
  const id = `pat-${i}`;
  return { id, fill: PATTERNS[i % PATTERNS.length] ? `url(#${id})` : FILLS[i % FILLS.length] };
}

function patternDefs(stages) {
  return s('defs', {}, stages.map((_, i) => {
    const d = PATTERNS[i % PATTERNS.length];
    return d ? s('pattern', { id: `pat-${i}`, width: 6, height: 6, patternUnits: 'userSpaceOnUse' },
      s('rect', { width: 6, height: 6, fill: FILLS[i % FILLS.length] }),
      s('path', { d, stroke: '#ffffff', 'stroke-width': 1.4 })) : null;
  }));
}

function chart(data, measure) {
  const W = 560;
  const H = 220;
  const left = 56;
  const bottom = 36;
  const value = (c) => (measure === 'usd' ? c.usd : c.tokens);
  const totals = data.days.map(([, m]) => [...m.values()].reduce((a, c) => a + value(c), 0));
  const top = Math.max(...totals, measure === 'usd' ? 0.0001 : 1);
  const slot = (W - left - 8) / Math.max(data.days.length, 1);
  const bar = Math.min(48, slot * 0.7);
  const y = (v) => H - bottom - (v / top) * (H - bottom - 14);
  const fmt = measure === 'usd' ? fmtUsd : fmtInt;
  const bars = data.days.map(([day, cells], i) => {
    let acc = 0;
    const x = left + i * slot + (slot - bar) / 2;
    const parts = data.stages.map((stage, k) => {
      const c = cells.get(stage);
      if (!c || value(c) <= 0) return null;
      const y0 = y(acc);
      acc += value(c);
      return s('rect', { x, y: y(acc), width: bar, height: Math.max(y0 - y(acc), 0.5), fill: swatch(k).fill, stroke: '#1d232b', 'stroke-width': 0.5, 'data-stage': stage, 'data-day': day },
        s('title', {}, `${day} ${stage}: ${fmt(value(c))} (${c.n} requests)`));
    });
    return s('g', { 'data-day': day }, parts,
      s('text', { x: x + bar / 2, y: H - bottom + 14, 'font-size': 10, 'text-anchor': 'middle', fill: '#5b6470' }, day.slice(5)),
      s('text', { x: x + bar / 2, y: y(acc) - 3, 'font-size': 10, 'text-anchor': 'middle', fill: '#1d232b' }, fmt(acc)));
  });
  const grid = [0, 0.5, 1].map((f) => s('g', {},
    s('line', { x1: left, x2: W - 4, y1: y(top * f), y2: y(top * f), stroke: '#eceef1' }),
    s('text', { x: left - 4, y: y(top * f) + 4, 'font-size': 10, 'text-anchor': 'end', fill: '#5b6470' }, fmt(top * f))));
  return s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', id: 'costs-chart',
    'aria-label': `${measure === 'usd' ? 'Dollars' : 'Tokens'} per day and stage; the table below gives the numbers` },
  patternDefs(data.stages), grid, bars);
}

function legend(stages) {
  return h('ul', { className: 'legend-keys', 'aria-label': 'Stages' }, stages.map((stage, k) => h('li', {},
    s('svg', { viewBox: '0 0 16 9', 'aria-hidden': 'true' }, s('rect', { width: 16, height: 9, fill: swatch(k).fill })),
    ` ${stage}`)));
}

function table(data) {
  return h('table', { id: 'costs-table' },
    h('caption', { className: 'visually-hidden' }, 'Inferences per day and stage'),
    h('thead', {}, h('tr', {}, h('th', {}, 'day'), h('th', {}, 'stage'), h('th', { className: 'num' }, 'requests'),
      h('th', { className: 'num' }, 'tokens'), h('th', { className: 'num' }, 'dollars'))),
    h('tbody', {}, data.days.flatMap(([day, cells]) => [...cells.entries()].map(([stage, c]) => h('tr', {},
      h('td', {}, day), h('td', {}, stage), h('td', { className: 'num' }, fmtInt(c.n)),
      h('td', { className: 'num' }, fmtInt(c.tokens)), h('td', { className: 'num' }, fmtUsd(c.usd)))))));
}

function callView(call) {
  const total = Math.max(call.duration_ms || 0, ...call.steps.map((st) => st.ms || 0), 1);
  return h('div', { className: 'call', 'data-call': call.call_id, 'data-total': total },
    h('h3', {}, `${call.type} · ${call.status}`, h('span', { className: 'tag' }, fmtMs(call.duration_ms))),
    h('p', { className: 'hint' }, `${fmtTime(call.started_at)} · call ${call.call_id}${call.session_id ? ` · session ${call.session_id}` : ''}`),
    h('div', { className: 'steps', role: 'list', 'aria-label': 'Steps' }, call.steps.flatMap((st) => [
      h('span', { role: 'listitem' }, st.name),
      h('div', { 'aria-hidden': 'true' }, h('div', { className: 'bar', 'data-w': st.ms })),
      h('span', { className: 'mono' }, fmtMs(st.ms)),
    ])),
  );
}

export async function renderCosts(app, panel) {
  clear(panel, h('p', { className: 'hint' }, 'Loading the inferences…'));
  const { items, truncated } = await allPages('/v1/gb/inferences', 'inferences', { max: MAX_ROWS, limit: 200, cursorField: 'next' });
  const data = perDayAndStage(items);
  const totals = items.reduce((a, r) => ({ tokens: a.tokens + r.input_tokens + r.output_tokens, usd: a.usd + r.cost_usd }), { tokens: 0, usd: 0 });
  const holder = h('div', { className: 'chart' });
  let measure = 'tokens';
  const draw = () => clear(holder, chart(data, measure));
  const radio = (value, text) => h('label', {}, h('input', { type: 'radio', name: 'measure', value, checked: value === measure,
    onchange: () => { measure = value; draw(); } }), ` ${text}`);
  draw();
  const calls = h('div', { id: 'calls' }, h('p', { className: 'hint' }, 'Loading the calls…'));
  clear(panel,
    h('h2', {}, 'Costs'),
    h('p', {}, `${fmtInt(items.length)} inferences${truncated ? ` (the latest ${MAX_ROWS})` : ''} in ${settings.dataset}: ${fmtInt(totals.tokens)} tokens, ${fmtUsd(totals.usd)}.`),
    h('fieldset', { className: 'chart-controls' }, h('legend', {}, 'Show'), radio('tokens', 'tokens'), radio('usd', 'dollars')),
    holder, legend(data.stages), table(data),
    h('h2', {}, 'Latest calls'), calls);
  // No route lists calls: the latest ones that made inferences, newest first.
  const ids = [...new Set(items.map((r) => r.call_id))].slice(0, CALLS);
  const found = await pool(ids, 4, (id) => api('GET', `/v1/gb/calls/${id}`, { query: { dataset: null } }).catch(() => null));
  clear(calls, found.filter(Boolean).map(callView));
  // Widths set through the CSSOM: the page's CSP allows no inline style.
  for (const bar of calls.querySelectorAll('.bar')) {
    const total = Number(bar.closest('.call').dataset.total) || 1;
    bar.style.width = `${Math.max((Number(bar.dataset.w) / total) * 100, 0.5)}%`;
  }
}
