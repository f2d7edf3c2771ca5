// The Details panel: an entity (its facts and the texts that mention it), a
// fact (its history and sources), a text (what came from it, and the button
// that forgets it).

import { api } from './api.js';
import { clear, fmtTime, h, linkButton, meta } from './dom.js';
import { provenance, renderMerges } from './facts.js';
import { edgeStatus } from './memory.js';

export function factLine(app, edge) {
  const status = edgeStatus(edge);
  return [
    linkButton(`${edge.source} —${edge.relation}→ ${edge.target}`, () => app.showEdge(edge.id),
      { 'data-edge': edge.id }),
    h('span', { className: `tag ${status}` }, status),
    app.isEvidence('edge', edge.id) ? h('span', { className: 'tag evidence' }, '★ evidence') : null,
    edge.attributes ? h('span', { className: 'tag attrs', 'data-edge-attributes': edge.id },
      Object.entries(edge.attributes).map(([k, v]) => `${k}=${v}`).join(', ')) : null,
  ];
}

// A declared type's attribute values (issue 47), each with the values it
// replaced (newest first) when the entity's page gives its history.
export function attributeList(attributes, history = {}) {
  const names = Object.keys(attributes || {}).sort();
  if (!names.length) return null;
  return h('dl', { className: 'meta attributes', id: 'attributes', 'aria-label': 'Attributes' },
    names.flatMap((name) => [
      h('dt', {}, name),
      h('dd', { 'data-attribute': name }, String(attributes[name]),
        (history[name] || []).length
          ? h('span', { className: 'was', 'data-attribute-history': name },
            ` (was ${history[name].map((old) => `${old.value} until ${fmtTime(old.until)}`).join('; ')})`)
          : null),
    ]));
}

function when(edge) {
  return `${edge.valid_at ? fmtTime(edge.valid_at) : 'start not stated'} → ${edge.invalid_at ? fmtTime(edge.invalid_at) : 'open (still holds)'}`;
}

function mentionList(app, mentions) {
  if (!mentions.length) return h('p', { className: 'hint' }, 'No text.');
  return h('ul', { className: 'items' }, mentions.map((m) => h('li', {},
    linkButton(`text ${m.artifact_id}`, () => app.showText(m.artifact_id), { 'data-text': m.artifact_id }),
    ` said ${fmtTime(m.said_at)}`, m.speaker ? ` by ${m.speaker}` : '', m.session_id ? `, session ${m.session_id}` : '',
    `, remembered ${fmtTime(m.created_at)}`)));
}

// The entity's summary, written by the model after its facts change (off the
// request path: it may not be written yet, or be stale while it is rewritten).
function summaryOf(view) {
  const text = view.summary
    ? h('p', { className: 'summary-text' }, view.summary)
    : h('p', { className: 'hint' }, 'No summary yet: the model writes it after the facts change.');
  const state = view.summary
    ? meta([['written', fmtTime(view.summary_updated_at)], ['state', view.summary_stale ? 'stale, being rewritten' : 'current']])
    : null;
  return h('section', { id: 'summary', 'aria-label': 'Summary' }, h('h3', {}, 'Summary'), text, state);
}

export async function renderEntity(app, panel, id) {
  const view = await api('GET', `/v1/gb/entities/${id}`);
  const e = view.entity;
  const merges = h('div', { className: 'merges', id: 'merges' });
  clear(panel,
    h('h2', {}, e.name, h('span', { className: 'tag' }, e.type)),
    e.description ? h('p', {}, e.description) : null,
    summaryOf(view),
    e.attributes ? h('h3', {}, 'Attributes') : null,
    attributeList(e.attributes, e.attribute_history),
    meta([['first seen', fmtTime(e.created_at)], ['last changed', fmtTime(e.updated_at)], ['id', String(e.id)]]),
    h('div', { className: 'buttons' },
      h('button', { type: 'button', onclick: () => app.focus(e.id) }, 'Focus on it and its neighbours'),
      h('button', { type: 'button', onclick: () => app.timeline(e.id) }, 'Timeline')),
    h('h3', {}, `Facts (${view.facts.length} live)`),
    view.facts.length
      ? h('ul', { className: 'items', 'aria-label': 'Facts' }, view.facts.map((f) => h('li', {}, factLine(app, f))))
      : h('p', { className: 'hint' }, 'No live fact.'),
    h('h3', {}, `Mentioned in (${view.mentions.length})`),
    mentionList(app, view.mentions),
    merges);
  await app.guard(() => renderMerges(app, merges, e.id));
}

function changeItem(app, label, change) {
  return h('li', {}, `${label}: `, factLine(app, change.edge),
    change.at ? ` at ${fmtTime(change.at)}` : '',
    change.artifact_id ? [' because of ', linkButton(`text ${change.artifact_id}`, () => app.showText(change.artifact_id))] : '',
    change.correction ? [' ', provenance(change.correction)] : '');
}

export async function renderEdge(app, panel, id) {
  const view = await api('GET', `/v1/gb/edges/${id}`);
  const e = view.edge;
  const replaced = view.replaced || [];
  clear(panel,
    h('h2', {}, 'Fact'),
    h('p', { className: 'fact' }, factLine(app, e)),
    e.correction ? h('p', { id: 'correction' }, provenance(e.correction)) : null,
    e.description ? h('p', {}, e.description) : null,
    attributeList(e.attributes),
    meta([
      ['held', when(e)],
      ['learned', fmtTime(e.created_at)],
      ['superseded', e.expired_at ? fmtTime(e.expired_at) : 'no'],
      ['id', String(e.id)],
    ]),
    h('div', { className: 'buttons' },
      linkButton(e.source, () => app.showEntity(e.source_id)), ' · ', linkButton(e.target, () => app.showEntity(e.target_id))),
    h('h3', {}, 'History'),
    h('ul', { className: 'items', 'aria-label': 'History' },
      view.replaced_by ? changeItem(app, 'replaced by', view.replaced_by) : h('li', {}, 'Nothing replaced it.'),
      replaced.length ? replaced.map((c) => changeItem(app, 'it replaced', c)) : h('li', {}, 'It replaced nothing.')),
    h('h3', {}, `Sources (${view.sources.length})`),
    mentionList(app, view.sources));
}

export async function renderText(app, panel, id) {
  const view = await api('GET', `/v1/gb/artifacts/${id}`);
  const a = view.artifact;
  const result = h('div', { 'aria-live': 'polite' });
  clear(panel,
    h('h2', {}, `Text ${a.id}`),
    h('p', { className: 'text-body' }, a.text),
    meta([['said', fmtTime(a.said_at)], ['speaker', a.speaker || '—'], ['session', a.session_id || '—'], ['remembered', fmtTime(a.created_at)]]),
    h('h3', {}, `Entities (${view.entities.length})`),
    h('ul', { className: 'items' }, view.entities.map((e) => h('li', {}, linkButton(e.name, () => app.showEntity(e.id))))),
    h('h3', {}, `Facts (${view.edges.length})`),
    h('ul', { className: 'items' }, view.edges.map((f) => h('li', {}, factLine(app, f)))),
    view.chunks.length ? h('p', { className: 'hint' }, `${view.chunks.length} chunks.`) : null,
    h('div', { className: 'buttons' },
      h('button', { type: 'button', className: 'danger', id: 'forget', onclick: () => forget(app, a, result) }, 'Forget this text…')),
    result);
}

// What a forget removed or restored, named from the memory as it was before.
function named(app, kind, ids) {
  if (!ids.length) return 'none';
  const name = (id) => {
    if (kind === 'text') return `text ${id}`;
    if (kind === 'entity') return `${app.memory.entities.get(id)?.name ?? 'entity'} (${id})`;
    const e = app.memory.edges.get(id);
    return e ? `${e.source} —${e.relation}→ ${e.target} (${id})` : `fact ${id}`;
  };
  return `${ids.length}: ${ids.map(name).join('; ')}`;
}

async function forget(app, artifact, result) {
  const dialog = document.getElementById('confirm');
  const preview = artifact.text.length > 140 ? `${artifact.text.slice(0, 140)}…` : artifact.text;
  clear(document.getElementById('confirm-body'),
    `Text ${artifact.id}: “${preview}”. The facts and entities that only it supports are removed; `,
    'facts it had superseded are restored. This cannot be undone.');
  dialog.returnValue = '';
  dialog.showModal();
  await new Promise((resolve) => dialog.addEventListener('close', resolve, { once: true }));
  if (dialog.returnValue !== 'ok') return;
  const out = await app.guard(() => api('DELETE', `/v1/gb/artifacts/${artifact.id}`));
  if (!out) return;
  const r = out.removed;
  clear(result, h('div', { className: 'removed', id: 'forgotten' },
    h('h3', {}, `Text ${out.artifact_id} forgotten`),
    meta([
      ['texts removed', named(app, 'text', r.artifacts)],
      ['facts removed', named(app, 'edge', r.edges)],
      ['entities removed', named(app, 'entity', r.entities)],
      ['chunks, vectors removed', `${r.chunks}, ${r.vectors}`],
      ['facts restored', named(app, 'edge', out.restored.edges)],
    ])));
  document.getElementById('forget').disabled = true;
  await app.reload();
}
