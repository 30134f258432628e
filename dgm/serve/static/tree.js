// The lineage tree on a canvas: one draw call per frame for 10,000 nodes (SVG with that
// many elements is slow to build and to pan). Layout: depth down, leaves left to right,
// a parent centred over its children. Collapsed nodes hide their subtree.
"use strict";

class LineageTree {
  constructor(canvas, onSelect) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.onSelect = onSelect;
    this.data = null;
    this.collapsed = new Set();
    this.filters = { tampered: false, improve: false, minScore: 0 };
    this.selected = null;
    this.view = { kx: 1, ky: 1, tx: 20, ty: 20 }; // x and y scale apart: wide trees fit
    this.fitted = false;
    this.pos = new Map(); // id -> [x, y] in tree units (leaf index, depth)
    this.visible = [];
    this.dirty = true;
    this._wire();
    const loop = () => { if (this.dirty) { this.dirty = false; this._draw(); } requestAnimationFrame(loop); };
    requestAnimationFrame(loop);
  }

  setData(data) {
    this.data = data;
    this.index = new Map(data.id.map((id, i) => [id, i]));
    this.kids = new Map();
    data.id.forEach((id, i) => {
      const p = data.parent[i];
      if (p !== null) { if (!this.kids.has(p)) this.kids.set(p, []); this.kids.get(p).push(id); }
    });
    this._layout();
    if (!this.fitted) { this.fit(); this.fitted = true; }
    this.dirty = true;
  }

  _layout() {
    const d = this.data, pos = new Map(), visible = [];
    if (!d.id.length) { this.pos = pos; this.visible = visible; return; }
    let leaf = 0;
    // Iterative post-order: deep trees must not overflow the stack.
    const stack = [[d.id[0], 0, false]];
    while (stack.length) {
      const [id, depth, done] = stack.pop();
      const kids = this.collapsed.has(id) ? [] : (this.kids.get(id) || []);
      if (!done && kids.length) {
        stack.push([id, depth, true]);
        for (let k = kids.length - 1; k >= 0; k--) stack.push([kids[k], depth + 1, false]);
        continue;
      }
      let x;
      if (!kids.length) x = leaf++;
      else x = (pos.get(kids[0])[0] + pos.get(kids[kids.length - 1])[0]) / 2;
      pos.set(id, [x, depth]);
      visible.push(id);
    }
    this.pos = pos; this.visible = visible;
    this.width = Math.max(1, leaf); this.depth = Math.max(1, ...Array.from(pos.values(), p => p[1]));
  }

  // -- geometry ----------------------------------------------------------------------
  static get DX() { return 14; }
  static get DY() { return 46; }
  toScreen(x, y) {
    const v = this.view;
    return [v.tx + x * LineageTree.DX * v.kx, v.ty + y * LineageTree.DY * v.ky];
  }
  screenPos(id) { // page coordinates of a node (tests click here)
    const p = this.pos.get(id); if (!p) return null;
    const [sx, sy] = this.toScreen(p[0], p[1]);
    const r = this.canvas.getBoundingClientRect();
    return [r.left + sx, r.top + sy];
  }
  fit() {
    const w = this.canvas.clientWidth || 800, h = this.canvas.clientHeight || 600;
    this.view.kx = Math.max(0.005, Math.min(2, (w - 40) / (this.width * LineageTree.DX)));
    this.view.ky = Math.max(0.05, Math.min(1.5, (h - 40) / ((this.depth + 1) * LineageTree.DY)));
    this.view.tx = 20; this.view.ty = 20; this.dirty = true;
  }
  zoom(factor, cx, cy) {
    const v = this.view;
    cx = cx ?? this.canvas.clientWidth / 2; cy = cy ?? this.canvas.clientHeight / 2;
    const f = Math.max(0.005, Math.min(8, v.kx * factor)) / v.kx;
    v.tx = cx - (cx - v.tx) * f; v.ty = cy - (cy - v.ty) * f;
    v.kx *= f; v.ky *= f; this.dirty = true;
  }
  centerOn(id) {
    // Open every collapsed ancestor first, so the node is on the canvas.
    let i = this.index.get(id); if (i === undefined) return false;
    let p = this.data.parent[i];
    while (p !== null) { this.collapsed.delete(p); p = this.data.parent[this.index.get(p)]; }
    this._layout();
    const v = this.view;
    v.kx = Math.max(v.kx, 1.6); v.ky = Math.max(v.ky, 1);
    const [x, y] = this.pos.get(id);
    v.tx = this.canvas.clientWidth / 2 - x * LineageTree.DX * v.kx;
    v.ty = this.canvas.clientHeight / 2 - y * LineageTree.DY * v.ky;
    this.select(id); return true;
  }
  select(id) { this.selected = id; this.dirty = true; this.onSelect(id); }
  toggleCollapse(id) {
    if (!(this.kids.get(id) || []).length) return;
    if (this.collapsed.has(id)) this.collapsed.delete(id); else this.collapsed.add(id);
    this._layout(); this.dirty = true;
  }
  matches(i) {
    const d = this.data, f = this.filters;
    if (f.tampered && !d.tampered[i]) return false;
    if (f.improve && !d.improve[i]) return false;
    if (f.minScore > 0 && (!d.total[i] || 100 * d.passed[i] / d.total[i] < f.minScore)) return false;
    return true;
  }
  hit(px, py) {
    let best = null, bestD = 144;
    for (const id of this.visible) {
      const [x, y] = this.pos.get(id), [sx, sy] = this.toScreen(x, y);
      const dd = (sx - px) ** 2 + (sy - py) ** 2;
      if (dd < bestD) { bestD = dd; best = id; }
    }
    return best;
  }

  // -- drawing -----------------------------------------------------------------------
  _draw() {
    const c = this.canvas, ctx = this.ctx, dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth, h = c.clientHeight;
    if (c.width !== w * dpr || c.height !== h * dpr) { c.width = w * dpr; c.height = h * dpr; }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    if (!this.data) return;
    const d = this.data, r = Math.max(1.5, Math.min(7, 5 * Math.min(2 * this.view.kx, this.view.ky)));
    ctx.strokeStyle = "#b8c0cc"; ctx.lineWidth = 1; ctx.beginPath();
    for (const id of this.visible) {
      const i = this.index.get(id), p = d.parent[i];
      if (p === null) continue;
      const [x1, y1] = this.toScreen(...this.pos.get(p)), [x2, y2] = this.toScreen(...this.pos.get(id));
      if ((x1 < -50 && x2 < -50) || (x1 > w + 50 && x2 > w + 50) || y2 < -50 || y1 > h + 50) continue;
      const ym = (y1 + y2) / 2;
      ctx.moveTo(x1, y1); ctx.lineTo(x1, ym); ctx.lineTo(x2, ym); ctx.lineTo(x2, y2);
    }
    ctx.stroke();
    for (const id of this.visible) {
      const i = this.index.get(id), [sx, sy] = this.toScreen(...this.pos.get(id));
      if (sx < -10 || sx > w + 10 || sy < -10 || sy > h + 10) continue;
      ctx.globalAlpha = this.matches(i) ? 1 : 0.12;
      const rate = d.total[i] ? d.passed[i] / d.total[i] : null;
      ctx.fillStyle = rate === null ? "#ccc" : `hsl(${Math.round(120 * rate)}, 65%, 45%)`;
      if (d.status[i] !== "active") ctx.fillStyle = "#999";
      ctx.beginPath(); ctx.arc(sx, sy, r, 0, 6.2832); ctx.fill();
      if (d.tampered[i]) { ctx.strokeStyle = "#d00"; ctx.lineWidth = 2.5; ctx.stroke(); }
      if (d.mark[i] === "pinned") { ctx.strokeStyle = "#06c"; ctx.lineWidth = 2.5; ctx.stroke(); }
      if (d.mark[i] === "banned") {
        ctx.strokeStyle = "#000"; ctx.lineWidth = 2; ctx.beginPath();
        ctx.moveTo(sx - r, sy - r); ctx.lineTo(sx + r, sy + r); ctx.moveTo(sx + r, sy - r); ctx.lineTo(sx - r, sy + r); ctx.stroke();
      }
      if (d.improve[i]) { ctx.fillStyle = "#80f"; ctx.fillRect(sx + r, sy - r - 2, 3, 3); }
      if (this.collapsed.has(id)) { ctx.fillStyle = "#333"; ctx.fillText("+" + this._count(id), sx + r + 2, sy + 3); }
      if (id === d.best) { ctx.strokeStyle = "#e0a000"; ctx.lineWidth = 3; ctx.beginPath(); ctx.arc(sx, sy, r + 3, 0, 6.2832); ctx.stroke(); }
      if (id === this.selected) { ctx.strokeStyle = "#000"; ctx.lineWidth = 1.5; ctx.beginPath(); ctx.arc(sx, sy, r + 6, 0, 6.2832); ctx.stroke(); }
      if (this.view.kx > 1.2) { ctx.fillStyle = "#333"; ctx.font = "10px sans-serif"; ctx.fillText(String(id), sx + r + 2, sy - 3); }
    }
    ctx.globalAlpha = 1;
  }
  _count(id) {
    let n = 0; const stack = [...(this.kids.get(id) || [])];
    while (stack.length) { const k = stack.pop(); n++; stack.push(...(this.kids.get(k) || [])); }
    return n;
  }

  _wire() {
    const c = this.canvas; let drag = null, moved = false;
    c.addEventListener("mousedown", e => { drag = [e.offsetX, e.offsetY]; moved = false; });
    window.addEventListener("mouseup", () => { drag = null; });
    c.addEventListener("mousemove", e => {
      if (!drag) return;
      const dx = e.offsetX - drag[0], dy = e.offsetY - drag[1];
      if (Math.abs(dx) + Math.abs(dy) > 3) moved = true;
      this.view.tx += dx; this.view.ty += dy; drag = [e.offsetX, e.offsetY]; this.dirty = true;
    });
    c.addEventListener("click", e => {
      if (moved) return;
      const id = this.hit(e.offsetX, e.offsetY);
      if (id !== null) this.select(id);
    });
    c.addEventListener("dblclick", e => {
      const id = this.hit(e.offsetX, e.offsetY); if (id !== null) this.toggleCollapse(id);
    });
    c.addEventListener("wheel", e => { e.preventDefault(); this.zoom(e.deltaY < 0 ? 1.2 : 1 / 1.2, e.offsetX, e.offsetY); }, { passive: false });
    window.addEventListener("resize", () => { this.dirty = true; });
  }
}
window.LineageTree = LineageTree;
