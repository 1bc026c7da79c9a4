/* Disagreement dashboards: every chart is drawn from the JSON the page embeds with json_script. */
(function () {
  "use strict";
  const TECH = "#2f5fd0", OTHER = "#8a94a6";
  const INK = "#1d2330", GRID = "#e6e9ee";

  function data(id) {
    const el = document.getElementById(id + "-data");
    return el ? JSON.parse(el.textContent) : null;
  }
  function canvas(id) { return document.getElementById(id); }
  function base(extra) {
    const opts = {
      responsive: true, maintainAspectRatio: false, animation: false,
      plugins: { legend: { position: "bottom", labels: { color: INK, usePointStyle: true } } },
      scales: {},
    };
    return Object.assign(opts, extra || {});
  }
  function fmt(v, d) { return v === null || v === undefined ? "—" : Number(v).toFixed(d === undefined ? 2 : d); }

  function overview(id) {
    const d = data(id), el = canvas(id);
    if (!d || !el) return;
    new Chart(el, {
      type: "bar",
      data: {
        labels: d.labels,
        datasets: [
          { label: "Fine agreement (Krippendorff's α)", data: d.alpha, backgroundColor: TECH, maxBarThickness: 90 },
          { label: "Coarse agreement (Jaccard of above-median sets)", data: d.jaccard, backgroundColor: "#16a34a", maxBarThickness: 90 },
        ],
      },
      options: base({
        scales: {
          y: { suggestedMin: 0, max: 1, title: { display: true, text: "agreement" }, grid: { color: GRID } },
          x: { grid: { display: false } },
        },
        plugins: {
          legend: { position: "bottom" },
          tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${fmt(c.raw)}` } },
        },
      }),
    });
  }

  function strictness(id) {
    const d = data(id), el = canvas(id);
    if (!d || !el) return;
    const ds = (label, pts, color, style) => ({
      label, data: pts, backgroundColor: color + "cc", borderColor: color, pointRadius: 5,
      pointHoverRadius: 7, pointStyle: style,
    });
    const styles = ["circle", "rectRot", "triangle", "rect", "star", "crossRot", "rectRounded"];
    new Chart(el, {
      type: "scatter",
      data: {
        datasets: d.datasets.map((g, i) => ds(g.label, g.points, g.color, styles[i % styles.length])),
      },
      options: base({
        scales: {
          x: {
            type: "linear", min: -0.6, max: d.labels.length - 0.4, grid: { display: false },
            afterBuildTicks: (axis) => { axis.ticks = d.labels.map((_, i) => ({ value: i })); },
            ticks: { callback: (v) => d.labels[v] || "", autoSkip: false, maxRotation: 0 },
          },
          y: { title: { display: true, text: d.normalised ? "mean score, scaled 0–1" : "mean score" }, grid: { color: GRID } },
        },
        plugins: {
          legend: { position: "bottom", labels: { usePointStyle: true } },
          tooltip: { callbacks: { label: (c) => `${c.raw.reviewer}: ${fmt(c.raw.y)} (${c.raw.n} scores, ${d.labels[Math.round(c.raw.x)]})` } },
        },
      }),
    });
  }

  function heatColor(v, metric) {
    if (v === null || v === undefined) return "rgba(0,0,0,0.04)";
    // alpha: -1 red .. 0 grey .. 1 blue; Jaccard: 0 red .. 0.5 grey .. 1 blue.
    const t = metric === "alpha" ? Math.max(-1, Math.min(1, v)) : Math.max(0, Math.min(1, v)) * 2 - 1;
    const mix = (a, b, f) => Math.round(a + (b - a) * f);
    const grey = [244, 244, 244], red = [192, 57, 43], blue = [47, 95, 208];
    const to = t < 0 ? red : blue, f = Math.abs(t);
    return `rgb(${mix(grey[0], to[0], f)},${mix(grey[1], to[1], f)},${mix(grey[2], to[2], f)})`;
  }

  function heatmap(id) {
    const d = data(id), el = canvas(id);
    if (!d || !el || !d.reviewers.length) return;
    const n = d.reviewers.length;
    const bgColor = (i) => (d.colors && d.colors[i]) || OTHER;
    const diag = d.reviewers.map((_, i) => ({ x: i, y: i, v: null, n: null }));
    // Every reviewer gets a readable row: the square grows with the number of reviewers.
    const box = el.parentElement;
    if (box && n > 40) {
      box.style.height = (n * 12 + 170) + "px";
      box.style.maxWidth = (n * 12 + 260) + "px";
    }
    // The diagonal is the reviewer themself: a dark hatch, never a colour of the scale.
    const hatch = (() => {
      const c = document.createElement("canvas");
      c.width = c.height = 6;
      const g = c.getContext("2d");
      g.fillStyle = "#ffffff"; g.fillRect(0, 0, 6, 6);
      g.strokeStyle = "#1d2330"; g.lineWidth = 2;
      g.beginPath(); g.moveTo(0, 6); g.lineTo(6, 0); g.stroke();
      return g.createPattern(c, "repeat");
    })();
    const cellSize = (ctx) => {
      const area = ctx.chart.chartArea;
      if (!area) return 4;
      return Math.max(2, Math.min(area.width, area.height) / n / 2);
    };
    const axis = (reverse) => ({
      type: "linear", min: -0.5, max: n - 0.5, reverse, grid: { display: false },
      afterBuildTicks: (a) => { a.ticks = d.reviewers.map((_, i) => ({ value: i })); },
      ticks: {
        autoSkip: false, font: { size: n > 25 ? 9 : 11 },
        color: (c) => bgColor(c.tick ? c.tick.value : c.index),
        callback: (v) => d.reviewers[v] || "",
      },
    });
    new Chart(el, {
      type: "scatter",
      data: {
        datasets: [
          { label: "pairs", data: d.cells, pointStyle: "rect", pointRadius: cellSize, pointHoverRadius: cellSize,
            backgroundColor: (c) => heatColor(c.raw && c.raw.v, d.metric), borderWidth: 0 },
          { label: "self", data: diag, pointStyle: "rect", pointRadius: cellSize, pointHoverRadius: cellSize,
            backgroundColor: hatch, borderColor: "#1d2330", borderWidth: 1 },
        ],
      },
      options: base({
        scales: { x: axis(false), y: axis(true) },
        plugins: {
          legend: { display: false },
          tooltip: {
            filter: (c) => c.datasetIndex === 0,
            callbacks: {
              label: (c) => `${d.reviewers[c.raw.y]} × ${d.reviewers[c.raw.x]}: ${d.metric === "alpha" ? "α" : "J"} = ${c.raw.v === null ? "no figure (too few shared ideas)" : fmt(c.raw.v)} over ${c.raw.n} shared ideas`,
            },
          },
        },
      }),
    });
  }

  function panel(id) {
    const d = data(id), el = canvas(id);
    if (!d || !el) return;
    const palette = ["#2f5fd0", "#d97706", "#16a34a", "#9333ea", "#dc2626", "#0891b2", "#4b5563", "#be185d"];
    const line = (y, label, color) => ({
      label, data: [{ x: 1, y }, { x: 20, y }], borderColor: color, borderDash: [6, 4], borderWidth: 1.5,
      pointRadius: 0, fill: false,
    });
    new Chart(el, {
      type: "line",
      data: {
        // Own colour, dash and point style per curve: identical curves stay distinguishable.
        // A curve lying on another is drawn as open markers without its own line, so the
        // curve underneath stays visible and so does this one.
        datasets: d.series.map((s, i) => ({
          label: s.label, data: s.points, borderColor: palette[i % palette.length],
          backgroundColor: s.overlap ? "rgba(255,255,255,0)" : palette[i % palette.length],
          borderDash: s.dash || [], borderWidth: 2, showLine: !s.overlap,
          pointRadius: s.overlap ? 6 : 3, pointBorderWidth: s.overlap ? 2 : 1,
          pointStyle: ["circle", "rect", "triangle", "rectRot", "star", "crossRot"][i % 6],
          tension: 0.2,
        })).concat([line(0.75, "0.75 (good)", "#6b7280"), line(0.9, "0.90 (excellent)", "#111827")]),
      },
      options: base({
        parsing: true,
        scales: {
          x: { type: "linear", min: 1, max: 20, title: { display: true, text: "reviewers per idea (k)" }, ticks: { stepSize: 1 }, grid: { color: GRID } },
          y: { min: 0, max: 1, title: { display: true, text: "reliability of the mean score" }, grid: { color: GRID } },
        },
        plugins: {
          legend: { position: "bottom", labels: { usePointStyle: true } },
          tooltip: { callbacks: { label: (c) => `${c.dataset.label}: k=${c.raw.x} → ${fmt(c.raw.y)}` } },
        },
      }),
    });
  }

  function contested(id) {
    const d = data(id), el = canvas(id);
    if (!d || !el) return;
    new Chart(el, {
      type: "scatter",
      data: { datasets: [{ label: "idea × dimension", data: d.points, backgroundColor: TECH + "99", borderColor: TECH, pointRadius: 4 }] },
      options: base({
        scales: {
          x: { title: { display: true, text: "raw spread (max − min score)" }, grid: { color: GRID }, ticks: { stepSize: 1 } },
          y: { title: { display: true, text: "calibrated spread (z)" }, grid: { color: GRID } },
        },
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: { label: (c) => `${c.raw.idea} · ${c.raw.dimension}: raw ${fmt(c.raw.x, 0)}, z ${fmt(c.raw.y)}` } },
        },
      }),
    });
  }

  function split(prefix) {
    const d = data(prefix);
    if (!d) return;
    const draw = (id, key, title, min) => {
      const el = canvas(id);
      if (!el) return;
      new Chart(el, {
        type: "bar",
        data: {
          labels: d.labels,
          datasets: d.datasets.map((g) => ({ label: g.label, data: g[key], backgroundColor: g.color })),
        },
        options: base({
          scales: { y: { suggestedMin: min, max: 1, title: { display: true, text: title }, grid: { color: GRID } }, x: { grid: { display: false } } },
          plugins: { legend: { position: "bottom" }, title: { display: true, text: title },
            tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${fmt(c.raw)}` } } },
        }),
      });
    };
    draw(prefix + "-alpha", "alpha", "Fine agreement (α)", 0);
    draw(prefix + "-jaccard", "jaccard", "Coarse agreement (Jaccard)", 0);
  }

  window.PluralistCharts = { overview, strictness, heatmap, panel, contested, split };
  // Each page embeds the data of its chart as "<id>-data"; drawing from here instead of an
  // inline script keeps the pages under a strict Content-Security-Policy (script-src 'self').
  const PAGES = { overview: "chart-overview", strictness: "chart-strictness", heatmap: "chart-heatmap",
                  panel: "chart-panel", contested: "chart-contested", split: "chart-split" };
  function drawAll() {
    Object.keys(PAGES).forEach(function (kind) {
      if (document.getElementById(PAGES[kind] + "-data")) window.PluralistCharts[kind](PAGES[kind]);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", drawAll); else drawAll();
})();
