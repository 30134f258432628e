// Line charts on a canvas: a few series, one x axis, labels drawn as text (never HTML).
"use strict";

const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"];

function drawChart(canvas, series, xLabel, yLabel) {
  const ctx = canvas.getContext("2d"), dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  canvas.width = w * dpr; canvas.height = h * dpr;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  const L = 48, R = 12, T = 12, B = 34;
  const xs = series.flatMap(s => s.x), ys = series.flatMap(s => s.y);
  const xmax = Math.max(1e-9, ...xs, 0), ymax = Math.max(1, ...ys);
  const X = x => L + (w - L - R) * x / xmax, Y = y => h - B - (h - T - B) * y / ymax;
  ctx.strokeStyle = "#888"; ctx.lineWidth = 1; ctx.beginPath();
  ctx.moveTo(L, T); ctx.lineTo(L, h - B); ctx.lineTo(w - R, h - B); ctx.stroke();
  ctx.fillStyle = "#333"; ctx.font = "11px sans-serif";
  for (let k = 0; k <= 4; k++) {
    const y = ymax * k / 4; ctx.fillText((100 * y).toFixed(0) + "%", 6, Y(y) + 4);
    const x = xmax * k / 4; ctx.fillText(x < 10 ? x.toFixed(2) : x.toFixed(0), X(x) - 10, h - B + 14);
  }
  ctx.fillText(xLabel, w / 2 - 30, h - 4);
  series.forEach((s, k) => {
    ctx.strokeStyle = s.color || PALETTE[k % PALETTE.length];
    ctx.setLineDash(s.dash ? [5, 4] : []); ctx.lineWidth = 2; ctx.beginPath();
    s.x.forEach((x, i) => { if (i) ctx.lineTo(X(x), Y(s.y[i])); else ctx.moveTo(X(x), Y(s.y[i])); });
    ctx.stroke(); ctx.setLineDash([]);
    // Legend bottom right: curves that climb early leave that corner free.
    ctx.fillStyle = ctx.strokeStyle;
    ctx.fillText(s.label, w - R - 8 - ctx.measureText(s.label).width, h - B - 10 - 14 * (series.length - 1 - k));
  });
}
window.drawChart = drawChart;
window.PALETTE = PALETTE;
