// The Ask panel: `query` (the answer, its evidence marked in the graph, the
// passages) and `search` (the context the answer call would read, rendered
// as the server renders it, and the server's token estimate).

import { api, scope } from './api.js';
import { clear, fmtInt, fmtTime, h, linkButton } from './dom.js';
import { factLine } from './details.js';

function passageItems(app, passages) {
  return h('ul', { className: 'items', 'aria-label': 'Passages' }, passages.map((p) => {
    const textId = p.parent_id ?? p.artifact_id;
    return h('li', {},
      linkButton(p.parent_id ? `text ${p.parent_id}, chunk ${p.index}` : `text ${p.artifact_id}`, () => app.showText(textId)),
      p.summary ? h('div', { className: 'hint' }, `summary: ${p.summary}`) : null,
      p.text ? h('blockquote', {}, p.text) : null);
  }));
}

function entityItems(app, entities) {
  return h('ul', { className: 'items', 'aria-label': 'Entities' },
    entities.map((e) => h('li', {}, linkButton(e.name, () => app.showEntity(e.id)), h('span', { className: 'tag' }, e.type))));
}

// The same lines as the server's context rendering (ai/prompts.py and
// memory/context.py), from the fields the response carries.
export function renderContext(app, question, out) {
  const names = new Map(out.entities.map((e) => [e.id, e.name]));
  const lines = ['<graph>'];
  for (const e of [...out.entities].sort((a, b) => a.id - b.id)) {
    lines.push(`[entity ${e.id}] ${e.name}${e.type ? ` (${e.type})` : ''}${e.description ? `: ${e.description}` : ''}`);
  }
  for (const e of [...out.edges].sort((a, b) => a.id - b.id)) {
    const times = [e.valid_at && `valid_at=${e.valid_at}`, e.invalid_at && `invalid_at=${e.invalid_at}`].filter(Boolean);
    lines.push(`[edge ${e.id}] ${names.get(e.source_id) ?? e.source}(${e.source_id}) --${e.relation}--> ${names.get(e.target_id) ?? e.target}(${e.target_id})${e.description ? `: ${e.description}` : ''}${times.length ? ` [${times.join(', ')}]` : ''}`);
  }
  lines.push('</graph>');
  if (out.passages.length) {
    lines.push('<passages>');
    const blocks = [...out.passages].sort((a, b) => a.artifact_id - b.artifact_id).map((p) => {
      const text = app.memory && app.memory.texts.get(p.parent_id ?? p.artifact_id);
      let head = `[passage ${p.artifact_id}]${text && text.said_at ? ` ${text.said_at}` : ''}`;
      if (text && text.session_id) head += ` session ${text.session_id}`;
      if (p.parent_id) head += ` (chunk ${p.index} of text ${p.parent_id})`;
      return [head, p.summary && `summary: ${p.summary}`, p.text && `text: ${p.text}`].filter(Boolean).join('\n');
    });
    lines.push(blocks.join('\n\n'), '</passages>');
  }
  lines.push(`<question>${question}</question>`);
  return lines.join('\n');
}

export function setupAsk(app) {
  const form = document.getElementById('ask-form');
  const result = document.getElementById('ask-result');
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const mode = ev.submitter && ev.submitter.value === 'search' ? 'search' : 'query';
    const question = form.question.value.trim();
    if (!question) return;
    const local = form.as_of.value;
    const body = scope({ query: question });
    if (local) body.as_of = new Date(`${local}Z`).toISOString().replace(/\.\d+Z$/, 'Z');
    clear(result, h('p', { className: 'hint' }, mode === 'query' ? 'Asking…' : 'Searching…'));
    const out = await app.guard(() => api('POST', `/v1/gb/${mode}`, { body }));
    if (!out) { clear(result); return; }
    if (mode === 'query') {
      const ev2 = out.evidence;
      app.highlight(ev2.entities.map((e) => e.id), ev2.edges.map((e) => e.id));
      clear(result,
        h('h2', {}, 'Answer'),
        h('p', { className: 'answer', id: 'answer' }, out.answer),
        body.as_of ? h('p', { className: 'hint' }, `as of ${fmtTime(body.as_of)}`) : null,
        h('p', { className: 'hint' }, 'The evidence is marked ★ in the graph.'),
        h('h3', {}, `Evidence: facts (${ev2.edges.length})`),
        h('ul', { className: 'items', id: 'evidence-facts' }, ev2.edges.map((e) => h('li', {}, factLine(app, e)))),
        h('h3', {}, `Evidence: entities (${ev2.entities.length})`),
        entityItems(app, ev2.entities),
        h('h3', {}, `Passages (${ev2.passages.length})`),
        passageItems(app, ev2.passages));
    } else {
      clear(result,
        h('h2', {}, 'Context'),
        h('p', {}, h('strong', { id: 'context-tokens' }, fmtInt(out.context_tokens)), ' tokens (the server\'s estimate for the whole context, characters / 4).'),
        h('p', { className: 'hint' }, `${out.entities.length} entities, ${out.edges.length} facts, ${out.passages.length} passages, best first. As the answer call reads it:`),
        h('pre', { id: 'context-text', tabindex: 0 }, renderContext(app, question, out)),
        h('h3', {}, 'Facts'),
        h('ul', { className: 'items' }, out.edges.map((e) => h('li', {}, factLine(app, e)))),
        h('h3', {}, 'Passages'),
        passageItems(app, out.passages));
    }
  });
}
