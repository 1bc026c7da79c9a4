/* Draw every judge chart on the page from its json_script payload. */
(function () {
  function fmt(v) { return v === null || v === undefined ? "n/a" : Number(v).toFixed(2); }
  function pctf(v) { return v === null || v === undefined ? "n/a" : Math.round(100 * v) + "%"; }
  function coverageChart(canvas, spec) {
    var pts = spec.points;
    return new Chart(canvas, {type: "line", data: {labels: pts.map(function (p) { return p.threshold; }), datasets: [
      {label: "coverage", data: pts.map(function (p) { return p.coverage; }), borderColor: spec.color, backgroundColor: spec.color, tension: 0, pointRadius: 2},
      {label: "accuracy (exactly right)", data: pts.map(function (p) { return p.accuracy; }), borderColor: "#1f9d55", backgroundColor: "#1f9d55", borderDash: [5, 3], tension: 0, pointRadius: 2, spanGaps: false}
    ]}, options: {maintainAspectRatio: false, animation: false,
      scales: {x: {title: {display: true, text: "confidence threshold"}}, y: {min: 0, max: 1, title: {display: true, text: "share"}}},
      plugins: {legend: {position: "bottom"}, tooltip: {callbacks: {label: function (c) {
        var p = pts[c.dataIndex]; return c.dataset.label + ": " + pctf(c.raw) + " (" + p.n_kept + " kept)"; }}}}}});
  }
  function alphaChart(canvas, spec) {
    var datasets = spec.datasets.map(function (d) {
      return {label: d.label, model: d.model, data: d.points.map(function (p) { return {x: p.x, y: p.y, n: p.n, c: p.coverage, pooled: p.pooled, baseline: p.baseline}; }),
              borderColor: d.color, backgroundColor: d.color, spanGaps: true, tension: 0,
              pointRadius: 4, pointHoverRadius: 6, showLine: true};
    });
    return new Chart(canvas, {type: "scatter", data: {datasets: datasets}, options: {
      maintainAspectRatio: false, animation: false,
      scales: {x: {title: {display: true, text: "few-shot examples (k)"}, ticks: {stepSize: 1}},
               y: {title: {display: true, text: "per-reviewer alpha"}, suggestedMin: -0.2, suggestedMax: 1}},
      plugins: {legend: {position: "bottom"},
                tooltip: {callbacks: {label: function (c) { return c.dataset.label + (c.dataset.model ? " [" + c.dataset.model + "]" : "") + ", k=" + c.raw.x + ": per-reviewer alpha " + fmt(c.raw.y) + ", pooled " + fmt(c.raw.pooled) + ", level-only " + fmt(c.raw.baseline) + " (n=" + c.raw.n + ", coverage " + pctf(c.raw.c) + ")"; }}}}
    }});
  }
  function scatterChart(canvas, spec) {
    return new Chart(canvas, {type: "scatter", data: {datasets: [{
      label: spec.label, borderColor: spec.color, backgroundColor: spec.color + "99",
      data: spec.points.map(function (p) { return {x: p.agreement, y: p.similarity, a: p.reviewer_a, b: p.reviewer_b}; })
    }]}, options: {maintainAspectRatio: false, animation: false,
      // Fixed ranges: an auto-zoomed axis (0.865-0.915) made a flat cloud look like a trend.
      scales: {x: {title: {display: true, text: "reviewer agreement (mean alpha)"}, suggestedMin: -1, suggestedMax: 1},
               y: {title: {display: true, text: "reason similarity (cosine)"}, suggestedMin: 0, suggestedMax: 1}},
      plugins: {legend: {display: false},
                title: {display: true, text: spec.label + ": Pearson r = " + fmt(spec.pearson_r)},
                tooltip: {callbacks: {label: function (c) { return c.raw.a + " & " + c.raw.b + ": " + fmt(c.raw.x) + ", " + fmt(c.raw.y); }}}}
    }});
  }
  function barChart(canvas, spec) {
    return new Chart(canvas, {type: "bar", data: {labels: spec.labels, datasets: spec.datasets.map(function (d) {
      return {label: d.label, data: d.data, backgroundColor: d.color};
    })}, options: {maintainAspectRatio: false, animation: false,
      scales: {y: {min: 0, max: 1, title: {display: true, text: spec.ylabel}}},
      plugins: {legend: {position: "bottom"}}}});
  }
  function draw() {
    document.querySelectorAll("canvas[data-judge-chart]").forEach(function (canvas) {
      if (canvas.dataset.drawn) return;
      var spec = JSON.parse(document.getElementById(canvas.dataset.judgeChart).textContent);
      var kind = canvas.dataset.type;
      var chart = kind === "scatter" ? scatterChart(canvas, spec) : kind === "bar" ? barChart(canvas, spec) : kind === "coverage" ? coverageChart(canvas, spec) : alphaChart(canvas, spec);
      canvas.dataset.drawn = "1";
      canvas.closest(".jg-chart") && canvas.closest(".jg-chart").setAttribute("data-ready", "1");
      window.judgeCharts = (window.judgeCharts || []).concat([chart]);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", draw); else draw();
})();
