// The pages work without this file. With it: the config form is not redrawn under the
// person's fingers, and a connector's throughput is drawn live.
(function () {
  "use strict";
  // The form is redrawn with the worker's validation after each change. A redraw that comes
  // back after the person typed again would drop what they typed, and one that comes back
  // after they opened or folded a group of fields would fold or open it again (the request
  // names the groups open when it was sent): it is skipped, and the form asks again.
  var edits = 0;
  document.addEventListener("input", function (event) {
    if (event.target.closest && event.target.closest("#config-form")) { edits += 1; }
  }, true);
  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("#config-form summary")) { edits += 1; }
  }, true);
  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt.id === "config-form") { event.detail.elt.dataset.editsAtRequest = String(edits); }
  });
  document.addEventListener("htmx:beforeSwap", function (event) {
    var form = event.detail.elt;
    if (form.id === "config-form" && form.dataset.editsAtRequest !== String(edits)) {
      event.detail.shouldSwap = false;
      htmx.trigger(form, "change");  // ask again with what the form holds now
    }
  });
})();

// A connector's throughput: the page shows the rates as they were when it was drawn; here
// they are read again every 2 s and each task's last two minutes are drawn as a small line.
(function () {
  "use strict";
  var POINTS = 60;
  var NOT_EXPOSED = "The workers running this connector's tasks expose no metrics over HTTP " +
    "(Apache Kafka Connect serves them over JMX).";
  function draw(svg, values) {
    var max = Math.max.apply(null, values.concat([1]));
    var step = 120 / (POINTS - 1);
    var start = POINTS - values.length;
    var points = values.map(function (v, i) {
      return ((start + i) * step).toFixed(1) + "," + (23 - (v / max) * 22).toFixed(1);
    });
    var line = svg.querySelector("polyline");
    if (!line) {
      line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
      svg.appendChild(line);
    }
    line.setAttribute("points", points.join(" "));
  }
  function cell(row, series) {
    var td = row.insertCell();
    if (series === null) { td.className = "muted"; td.textContent = "(source)"; return; }
    var text = document.createElement("span");
    text.className = "rate";
    text.dataset.series = series;
    var svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("class", "spark");
    svg.setAttribute("viewBox", "0 0 120 24");
    svg.setAttribute("aria-hidden", "true");
    svg.dataset.series = series;
    td.append(text, " ", svg);
  }
  function newRow(t) {
    var row = document.createElement("tr");
    row.dataset.task = t.task;
    var head = document.createElement("th");
    head.scope = "row";
    head.textContent = t.task;
    row.appendChild(head);
    cell(row, "in");
    cell(row, "out");
    cell(row, t.kind === "sink" ? "lag" : null);
    row.insertCell().textContent = t.worker;
    return row;
  }
  function start() {
    var section = document.getElementById("rates");
    if (!section || !section.querySelector("table.rates")) { return; }
    var timer = null;
    var history = {};
    function update() {
      fetch(section.dataset.url, { headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (data) {
          if (!data) { return; }
          if (data.exposed === false) {
            var wrap = section.querySelector(".table-wrap");
            if (wrap) { wrap.remove(); }
            section.querySelector("p.muted").textContent = NOT_EXPOSED;
            return;
          }
          var body = section.querySelector("table.rates tbody");
          data.tasks.forEach(function (t) {
            var row = section.querySelector('tr[data-task="' + t.task + '"]');
            if (!row) { row = body.appendChild(newRow(t)); }
            var placeholder = body.querySelector("tr.none");
            if (placeholder) { placeholder.remove(); }
            var values = { "in": t.records_in, "out": t.records_out, "lag": t.lag };
            Object.keys(values).forEach(function (series) {
              if (values[series] === null || values[series] === undefined) { return; }
              var key = t.task + ":" + series;
              var list = history[key] = (history[key] || []).concat([values[series]]).slice(-POINTS);
              var text = row.querySelector('.rate[data-series="' + series + '"]');
              if (text) { text.textContent = series === "lag" ? values[series].toFixed(0) : values[series].toFixed(1); }
              var svg = row.querySelector('svg[data-series="' + series + '"]');
              if (svg) { draw(svg, list); }
            });
          });
        })
        .catch(function () { /* the next round tries again */ });
    }
    update();
    timer = setInterval(function () {
      if (!section.querySelector("table.rates")) { clearInterval(timer); return; }
      update();
    }, 2000);
  }
  document.addEventListener("DOMContentLoaded", start);
})();
