// Small DOM helpers: build elements without innerHTML (the texts shown are
// what users told the memory, never markup), and format times and numbers.

const SVG_NS = 'http://www.w3.org/2000/svg';

function build(el, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'text') el.textContent = value;
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key === 'className' ? 'class' : key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function h(tag, attrs = {}, ...children) {
  return build(document.createElement(tag), attrs, children);
}

export function s(tag, attrs = {}, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function clear(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
  return el;
}

export function ms(iso) {
  return iso ? Date.parse(iso) : NaN;
}

export function fmtTime(iso) {
  if (!iso) return '—';
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? iso : t.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

export function fmtDay(iso) {
  return iso ? iso.slice(0, 10) : '—';
}

export function fmtInt(n) {
  return Number(n || 0).toLocaleString('en-US');
}

export function fmtUsd(n) {
  const v = Number(n || 0);
  return `$${v < 0.01 && v > 0 ? v.toFixed(5) : v.toFixed(v < 1 ? 4 : 2)}`;
}

export function fmtMs(n) {
  const v = Number(n || 0);
  return v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(v < 10 ? 1 : 0)} ms`;
}

// A button styled as a link, for the many "open this" places.
export function linkButton(label, onClick, attrs = {}) {
  return h('button', { type: 'button', className: 'link', onclick: onClick, ...attrs }, label);
}

export function meta(pairs) {
  return h('dl', { className: 'meta' },
    pairs.filter(([, v]) => v !== undefined).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]));
}
