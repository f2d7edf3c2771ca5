// The graph drawn with Cytoscape: entities as nodes (the shape says the
// type), facts as edges (the line style says live, ended or superseded).
// The layout is computed once per dataset over every fact, so that the
// `as of` slider and the focus only show and hide: nothing moves.

import cytoscape from '../vendor/cytoscape.esm.min.mjs';
import { edgeStatus } from './memory.js';

export function shapeOf(type) {
  const t = (type || '').toLowerCase();
  if (/person|people|user|human/.test(t)) return 'ellipse';
  if (/org|company|employer|school|team|institution|business/.test(t)) return 'round-rectangle';
  if (/place|city|country|location|region|address|geo/.test(t)) return 'diamond';
  return 'hexagon';
}

const HUGE = 300; // nodes past which the layout is the cheap one
const MAX_FIT = 1.4;

const STYLE = [
  { selector: 'node', style: {
    label: 'data(label)', shape: 'data(shape)', width: 30, height: 30,
    'background-color': '#8fb3e6', 'border-width': 1.5, 'border-color': '#2b4d80',
    'font-size': 13, 'text-valign': 'bottom', 'text-margin-y': 3, 'min-zoomed-font-size': 7,
    'text-background-color': '#ffffff', 'text-background-opacity': 0.8, 'text-background-padding': 1,
    'text-wrap': 'ellipsis', 'text-max-width': 120,
  } },
  { selector: 'edge', style: {
    width: 1.6, 'line-color': '#7b8794', 'target-arrow-shape': 'triangle', 'target-arrow-color': '#7b8794',
    'curve-style': 'bezier', label: 'data(label)', 'font-size': 10, 'min-zoomed-font-size': 8,
    'text-rotation': 'autorotate', 'text-background-color': '#ffffff', 'text-background-opacity': 0.8,
    color: '#39424e',
  } },
  { selector: 'edge.ended', style: { 'line-style': 'dotted' } },
  { selector: 'edge.superseded', style: { 'line-style': 'dashed', 'line-dash-pattern': [6, 3] } },
  { selector: '.off', style: { display: 'none' } },
  { selector: 'node.evidence', style: { 'border-width': 5, 'border-style': 'double', 'border-color': '#1f5fbf' } },
  { selector: 'edge.evidence', style: { width: 4, 'line-color': '#1f5fbf', 'target-arrow-color': '#1f5fbf' } },
  { selector: '.picked', style: { 'underlay-color': '#d97706', 'underlay-opacity': 0.45, 'underlay-padding': 6 } },
];

export class Graph {
  constructor(container, { onEntity, onEdge }) {
    this.container = container;
    this.evidence = { nodes: new Set(), edges: new Set() };
    this.cy = cytoscape({
      container, elements: [], style: STYLE, minZoom: 0.05, maxZoom: 5,
      boxSelectionEnabled: false, autoungrabify: false,
    });
    this.cy.on('tap', 'node', (ev) => onEntity(Number(ev.target.data('ref'))));
    this.cy.on('tap', 'edge', (ev) => onEdge(Number(ev.target.data('ref'))));
    container.addEventListener('keydown', (ev) => this.key(ev));
  }

  key(ev) {
    const step = 60;
    const pans = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
    if (pans[ev.key]) this.cy.panBy({ x: pans[ev.key][0], y: pans[ev.key][1] });
    else if (ev.key === '+' || ev.key === '=') this.zoom(1.25);
    else if (ev.key === '-') this.zoom(0.8);
    else if (ev.key === '0') this.fit();
    else return;
    ev.preventDefault();
  }

  // Every entity and fact of the dataset, laid out once.
  setMemory(memory) {
    const nodes = [...memory.entities.values()].map((e) => ({
      group: 'nodes', data: { id: `n${e.id}`, ref: e.id, name: e.name, label: e.name, shape: shapeOf(e.type) },
    }));
    const edges = [...memory.edges.values()]
      .filter((e) => memory.entities.has(e.source_id) && memory.entities.has(e.target_id))
      .map((e) => ({
        group: 'edges', classes: edgeStatus(e),
        data: { id: `e${e.id}`, ref: e.id, source: `n${e.source_id}`, target: `n${e.target_id}`,
          relation: e.relation, label: e.relation },
      }));
    this.cy.elements().remove();
    this.cy.add([...nodes, ...edges]);
    this.evidence = { nodes: new Set(), edges: new Set() };
    // cose (force-directed) reads best; its cost grows with the square of the
    // nodes (headless Chromium, 1.5 facts a node, on a 2-core machine at load
    // 12: 1.3 s at 100 nodes, 5.7 s at 300 with 400 iterations), so past HUGE
    // rings by number of facts (1.0 s at 301 nodes, 2.0 s at 600).
    const n = nodes.length;
    const options = n > HUGE
      ? { name: 'concentric', concentric: (node) => node.degree(), levelWidth: () => 2, minNodeSpacing: 8, padding: 20 }
      : { name: 'cose', animate: false, randomize: true, nodeDimensionsIncludeLabels: true,
        idealEdgeLength: () => 60, nodeRepulsion: () => (n > 150 ? 3000 : 6000), gravity: 1.2,
        numIter: n > 150 ? 400 : 1500, componentSpacing: 40, padding: 20 };
    this.cy.layout(options).run();
  }

  // Show exactly these entity and fact IDs (sets), hide the rest.
  show(visible) {
    this.visible = visible;
    this.cy.batch(() => {
      this.cy.nodes().forEach((n) => n.toggleClass('off', !visible.nodes.has(n.data('ref'))));
      this.cy.edges().forEach((e) => e.toggleClass('off', !visible.edges.has(e.data('ref'))));
    });
  }

  // Only an entity and its neighbours (depth hops) among what is shown.
  focus(entityId, depth = 1) {
    const start = this.cy.getElementById(`n${entityId}`);
    if (start.empty()) return;
    const shown = this.cy.elements().not('.off');
    let hood = start;
    for (let i = 0; i < depth; i++) hood = hood.union(hood.closedNeighborhood().intersection(shown));
    this.cy.batch(() => shown.difference(hood).addClass('off'));
    this.fit(hood);
  }

  pick(kind, id) {
    this.cy.elements('.picked').removeClass('picked');
    const el = this.cy.getElementById(`${kind === 'entity' ? 'n' : 'e'}${id}`);
    if (el.empty()) return;
    el.addClass('picked');
    if (kind === 'entity' && !el.hasClass('off')) this.cy.animate({ center: { eles: el }, duration: 200 });
  }

  // The evidence of an answer: marked by a star in the label and a double
  // border, not by colour alone.
  highlight(entityIds, edgeIds) {
    this.evidence = { nodes: new Set(entityIds), edges: new Set(edgeIds) };
    this.cy.batch(() => {
      this.cy.nodes().forEach((n) => {
        const on = this.evidence.nodes.has(n.data('ref'));
        n.toggleClass('evidence', on);
        n.data('label', `${on ? '★ ' : ''}${n.data('name')}`);
      });
      this.cy.edges().forEach((e) => {
        const on = this.evidence.edges.has(e.data('ref'));
        e.toggleClass('evidence', on);
        e.data('label', `${on ? '★ ' : ''}${e.data('relation')}`);
      });
    });
  }

  zoom(factor) {
    const c = { x: this.container.clientWidth / 2, y: this.container.clientHeight / 2 };
    this.cy.zoom({ level: this.cy.zoom() * factor, renderedPosition: c });
  }

  // Fit what is shown, but no closer than MAX_FIT: a handful of nodes
  // would otherwise fill the canvas.
  fit(eles = null) {
    const shown = eles || this.cy.elements().not('.off');
    this.cy.fit(shown, 30);
    if (this.cy.zoom() > MAX_FIT) {
      this.cy.zoom(MAX_FIT);
      this.cy.center(shown);
    }
  }

  // What is drawn now, for the list beside the canvas and for tests.
  drawn() {
    const on = this.cy.elements().not('.off');
    return {
      nodes: on.nodes().map((n) => ({ id: n.data('ref'), name: n.data('name'), evidence: n.hasClass('evidence') })),
      edges: on.edges().map((e) => ({ id: e.data('ref'), relation: e.data('relation'), status: e.classes().find((c) => ['live', 'ended', 'superseded'].includes(c)), evidence: e.hasClass('evidence') })),
    };
  }

  // Where a node is on the screen (page coordinates), to click it.
  screenPoint(entityId) {
    const el = this.cy.getElementById(`n${entityId}`);
    if (el.empty() || el.hasClass('off')) return null;
    const box = this.container.getBoundingClientRect();
    const p = el.renderedPosition();
    return { x: box.left + p.x, y: box.top + p.y };
  }
}
