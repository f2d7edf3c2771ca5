// A dataset as the page holds it: its entities, every fact with its history
// (live, ended and superseded ones, read through the texts that stated
// them), and the texts; and the `as of` rule that says what stood when.

import { api, allPages, pool } from './api.js';
import { ms } from './dom.js';

export const MAX_ENTITIES = 1000;
export const MAX_TEXTS = 1000;
const WIDTH = 4; // requests in flight while loading

export async function loadMemory(progress = () => {}) {
  const [ents, texts] = await Promise.all([
    allPages('/v1/gb/entities', 'entities', { max: MAX_ENTITIES }),
    allPages('/v1/gb/artifacts', 'artifacts', { max: MAX_TEXTS }),
  ]);
  const memory = {
    entities: new Map(ents.items.map((e) => [e.id, e])),
    edges: new Map(),
    texts: new Map(texts.items.map((t) => [t.id, t])),
    truncated: ents.truncated || texts.truncated,
  };
  let done = 0;
  // A text's view lists every fact it stated, superseded or not: the only
  // route that gives the whole history of a dataset.
  await pool(texts.items, WIDTH, async (t) => {
    const view = await api('GET', `/v1/gb/artifacts/${t.id}`);
    for (const e of view.entities || []) if (!memory.entities.has(e.id)) memory.entities.set(e.id, e);
    for (const e of view.edges || []) memory.edges.set(e.id, e);
    progress(++done, texts.items.length);
  });
  return memory;
}

// In words, so that no colour has to say it.
export function edgeStatus(edge) {
  if (edge.expired_at) return 'superseded';
  if (edge.invalid_at && ms(edge.invalid_at) <= Date.now()) return 'ended';
  return 'live';
}

// Whether a fact stood at instant t (ms): it held in the world then
// (valid_at <= t < invalid_at) and the memory knew it then (created_at <= t <
// expired_at). A missing start is no bound; `worldOnly` drops the second
// condition (what `query` with as_of does).
export function shownAt(edge, t, worldOnly = false) {
  const before = (iso) => !iso || ms(iso) <= t;
  const after = (iso) => !iso || t < ms(iso);
  if (!(before(edge.valid_at) && after(edge.invalid_at))) return false;
  return worldOnly || (before(edge.created_at) && after(edge.expired_at));
}

// The instants at which something changed: the stops of the `as of` slider.
export function instants(memory, worldOnly = false) {
  const fields = worldOnly ? ['valid_at', 'invalid_at'] : ['valid_at', 'invalid_at', 'created_at', 'expired_at'];
  const seen = new Set();
  for (const e of memory.edges.values()) {
    for (const f of fields) {
      const t = ms(e[f]);
      if (!Number.isNaN(t)) seen.add(t);
    }
  }
  return [...seen].sort((a, b) => a - b);
}

// What to draw: with t null, the live memory (every entity, the facts not
// superseded); at t, the facts that stood then and the entities they join
// (and, unless worldOnly, the entities already known then).
export function visibleAt(memory, t, worldOnly = false) {
  const edges = new Set();
  const nodes = new Set();
  for (const e of memory.edges.values()) {
    if (t === null ? !e.expired_at : shownAt(e, t, worldOnly)) {
      edges.add(e.id);
      nodes.add(e.source_id);
      nodes.add(e.target_id);
    }
  }
  for (const ent of memory.entities.values()) {
    if (t === null || (!worldOnly && ent.created_at && ms(ent.created_at) <= t)) nodes.add(ent.id);
  }
  return { nodes, edges };
}

// Entity names compared as the keyword search does, roughly: case and
// accents folded.
export function fold(text) {
  return (text || '').normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

export function factsOf(memory, entityId) {
  return [...memory.edges.values()].filter((e) => e.source_id === entityId || e.target_id === entityId);
}
