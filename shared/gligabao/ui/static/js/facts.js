// Issue 44 on the page: a correction's provenance in a fact's history, an
// entity's merges, and the Conflicts panel with its resolve buttons (forget
// the fact, or end it now).

import { api, scope } from './api.js';
import { clear, fmtTime, h, linkButton } from './dom.js';

// "corrected by u1 at …: reason" (a fact a person wrote, or the change it made).
export function provenance(correction) {
  if (!correction) return null;
  return h('span', { className: 'tag correction' },
    `correction by ${correction.who} at ${fmtTime(correction.at)}${correction.reason ? `: ${correction.reason}` : ''}`);
}

export async function renderMerges(app, box, entityId) {
  const out = await api('GET', `/v1/gb/entities/${entityId}/merges`);
  clear(box,
    h('h3', {}, `Merged into it (${out.merges.length})`),
    out.merges.length
      ? h('ul', { className: 'items', 'aria-label': 'Merges' }, out.merges.map((m) => h('li', { 'data-merge': m.artifact_id },
        `“${m.names.join('”, “')}” (${m.match}) from `,
        linkButton(`text ${m.artifact_id}`, () => app.showText(m.artifact_id), { 'data-merge-text': m.artifact_id }),
        ` at ${fmtTime(m.at)}`)))
      : h('p', { className: 'hint' }, 'No text named it otherwise.'));
}

export async function renderConflicts(app, panel) {
  const out = await api('GET', '/v1/gb/conflicts');
  const result = h('div', { 'aria-live': 'polite', id: 'conflict-result' });
  clear(panel,
    h('h2', {}, `Conflicts (${out.conflicts.length})`),
    h('p', { className: 'hint' }, 'Live facts that cannot all hold: one source with two current values of a relation that holds one at a time.'),
    out.conflicts.length
      ? h('ul', { className: 'items', 'aria-label': 'Conflicts' }, out.conflicts.map((c) => h('li', { className: 'conflict' },
        h('strong', {}, `${c.source.name} —${c.relation}→`),
        h('ul', {}, c.facts.map((f) => h('li', { 'data-conflict-edge': f.id },
          linkButton(f.target, () => app.showEdge(f.id), { 'data-edge': f.id }),
          f.texts.length ? ` (“${f.texts[0].text}”)` : '',
          ' ',
          h('button', { type: 'button', className: 'end', onclick: () => resolve(app, panel, result, f, 'end') }, 'End it now'),
          ' ',
          h('button', { type: 'button', className: 'danger forget-fact', onclick: () => resolve(app, panel, result, f, 'forget') }, 'Forget it')))))))
      : h('p', { className: 'hint', id: 'no-conflicts' }, 'No conflict.'),
    result);
}

async function resolve(app, panel, result, fact, how) {
  const done = await app.guard(() => (how === 'forget'
    ? api('DELETE', `/v1/gb/edges/${fact.id}`)
    : api('PATCH', `/v1/gb/edges/${fact.id}`, { body: scope({ invalid_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), reason: 'resolved a conflict' }) })));
  if (!done) return;
  await app.reload();
  await app.guard(() => renderConflicts(app, panel));
  clear(document.getElementById('conflict-result') || result,
    h('p', { id: 'resolved' }, how === 'forget' ? `Fact ${fact.id} forgotten.` : `Fact ${fact.id} ended.`));
}
