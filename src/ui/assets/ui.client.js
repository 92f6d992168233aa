// gw web UI client glue, loaded as a file (the Content-Security-Policy allows no inline script).
// The throughput chart: the dashboard's SSE stream sends an event "rates" with JSON
// {t, in, out} (bytes/s) every second; this keeps the last 5 minutes and redraws uPlot.
(function () {
  "use strict";
  var WINDOW = 300;
  var chart = null;
  var data = [[], [], []];

  function makeChart(el) {
    var style = getComputedStyle(document.documentElement);
    var text = style.getPropertyValue("--muted").trim() || "#888";
    var axis = { stroke: text, grid: { stroke: style.getPropertyValue("--line").trim() || "#ccc" } };
    var fmt = function (u, v) { return v == null ? "-" : rate(v); };
    return new uPlot({
      width: Math.max(280, el.clientWidth - 8),
      height: 200,
      series: [
        {},
        { label: "in", stroke: style.getPropertyValue("--accent").trim() || "#0b57d0", width: 2, value: fmt },
        { label: "out", stroke: style.getPropertyValue("--ok").trim() || "#146c2e", width: 2, value: fmt },
      ],
      axes: [axis, Object.assign({ values: function (u, vals) { return vals.map(function (v) { return rate(v); }); }, size: 80 }, axis)],
    }, data, el);
  }

  function rate(v) {
    var units = ["B/s", "kB/s", "MB/s", "GB/s"];
    var i = 0;
    while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
    return (i === 0 ? Math.round(v) : v.toFixed(1)) + " " + units[i];
  }

  function push(sample) {
    var el = document.getElementById("throughput-chart");
    if (!el || typeof uPlot === "undefined") return;
    if (!chart || !document.body.contains(chart.root)) { data = [[], [], []]; chart = makeChart(el); }
    data[0].push(sample.t); data[1].push(sample.in); data[2].push(sample.out);
    if (data[0].length > WINDOW) { data[0].shift(); data[1].shift(); data[2].shift(); }
    chart.setData(data);
  }

  document.addEventListener("htmx:sseBeforeMessage", function (e) {
    var message = e.detail;
    if (!message || message.type !== "rates") return;
    e.preventDefault(); // data for the chart, nothing to swap
    try { push(JSON.parse(message.data)); } catch (err) { /* a malformed sample is skipped */ }
  });

  // The user page's usage per day: bars of bytes from (rx) and to (tx) the client, from the
  // chart element's data-usage {days: ["YYYY-MM-DD"], rx: [], tx: []}.
  var usageChart = null;
  function usageWidth(el) { return Math.max(280, el.clientWidth - 8); }
  function drawUsage() {
    var el = document.getElementById("usage-chart");
    if (!el || typeof uPlot === "undefined") return;
    var figures;
    try { figures = JSON.parse(el.getAttribute("data-usage") || ""); } catch (err) { return; }
    if (!figures || !figures.days || figures.days.length === 0) return;
    var style = getComputedStyle(document.documentElement);
    var text = style.getPropertyValue("--muted").trim() || "#888";
    var axis = { stroke: text, grid: { stroke: style.getPropertyValue("--line").trim() || "#ccc" } };
    var t = figures.days.map(function (d) { return Date.parse(d + "T00:00:00Z") / 1000; });
    var fmt = function (u, v) { return v == null ? "-" : bytes(v); };
    var bars = function (align) { return uPlot.paths.bars({ size: [0.4, 40], align: align }); };
    usageChart = new uPlot({
      width: usageWidth(el),
      height: 200,
      tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"); },
      // Half a day either side of the first and last day (one day alone would otherwise span years), bytes from 0.
      scales: {
        x: { time: true, range: function () { return [t[0] - 43200, t[t.length - 1] + 43200]; } },
        y: { range: function (u, min, max) { return [0, Math.max(1, max) * 1.1]; } },
      },
      series: [
        { value: function (u, v) { return v == null ? "-" : new Date(v * 1000).toISOString().slice(0, 10); } },
        { label: "from client", stroke: style.getPropertyValue("--accent").trim() || "#0b57d0", fill: style.getPropertyValue("--accent").trim() || "#0b57d0", paths: bars(-1), points: { show: false }, value: fmt },
        { label: "to client", stroke: style.getPropertyValue("--ok").trim() || "#146c2e", fill: style.getPropertyValue("--ok").trim() || "#146c2e", paths: bars(1), points: { show: false }, value: fmt },
      ],
      axes: [axis, Object.assign({ values: function (u, vals) { return vals.map(function (v) { return bytes(v); }); }, size: 80 }, axis)],
    }, [t, figures.rx, figures.tx], el);
  }

  function bytes(v) {
    var units = ["B", "kB", "MB", "GB", "TB"];
    var i = 0;
    while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
    return (i === 0 ? Math.round(v) : v.toFixed(1)) + " " + units[i];
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", drawUsage);
  else drawUsage();

  // Forms with data-confirm (disconnect, delete) ask before they are sent.
  document.addEventListener("submit", function (e) {
    var form = e.target;
    var question = form && form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) e.preventDefault();
  });

  window.addEventListener("resize", function () {
    var el = document.getElementById("throughput-chart");
    if (chart && el) chart.setSize({ width: Math.max(280, el.clientWidth - 8), height: 200 });
    var usageEl = document.getElementById("usage-chart");
    if (usageChart && usageEl) usageChart.setSize({ width: usageWidth(usageEl), height: 200 });
  });
})();
