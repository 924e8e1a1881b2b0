(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var items = data.items, runs = data.runs, page = 0;
  var state = {run: "", control: "", test: "", group: "", outcome: "", sort: "informative", frames: ""};
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    for (var key in attrs || {}) node.setAttribute(key, attrs[key]);
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function distinct(values) { var seen = {}, out = []; values.forEach(function (v) {
    if (v !== null && v !== undefined && !seen[v]) { seen[v] = 1; out.push(v); } }); return out; }
  function select(name, label, values) {
    var wrap = el("label", {}, label), box = el("select", {id: "filter-" + name});
    values.forEach(function (v) { box.appendChild(el("option", {value: v[0]}, v[1])); });
    box.value = state[name];
    box.addEventListener("change", function () { state[name] = box.value; page = 0; render(); });
    wrap.appendChild(box); document.getElementById("controls").appendChild(wrap);
  }
  function options(values) { return [["", "all"]].concat(values.map(function (v) { return [String(v), String(v)]; })); }
  var runOptions = [["", "all"]].concat(runs.map(function (r, i) { return [String(i), r.label]; }));
  if (runs.length > 1) select("run", "run", runOptions);
  select("control", "control", options(distinct(runs.map(function (r) { return r.control; }))));
  var tests = distinct(items.map(function (i) { return i.t; }));
  if (tests.length > 1) select("test", "test", options(tests));
  var groups = distinct(items.map(function (i) { return i.g; }));
  if (groups.length) select("group", data.groupLabel, options(groups));
  select("outcome", "outcome", options(["correct", "wrong", "tied", "error"]));
  var sorts = [["margin", "margin, smallest first"], ["margin-desc", "margin, largest first"],
               ["abs", "|margin|, closest first"], ["order", "dataset order"]];
  sorts.unshift(["informative", (data.disagreeing !== null ? "runs disagree, " : "") + "tied, wrong, closest calls first"]);
  select("sort", "sort", sorts);
  select("frames", "frames", [["", "all items"], ["1", "thumbnailed only"]]);
  document.getElementById("thumbnail-note").textContent = data.thumbnailNote +
    (data.disagreeing !== null ? " Items on which the runs disagree (correct in one, not in another): " + data.disagreeing + "." : "");

  function margin(i) { return i.m === null ? Infinity : i.m; }
  function key(i) { return i.t + "\u0000" + i.id; }
  var rank = {tied: 0, wrong: 1, correct: 2, error: 3}, worst = {};
  function lexical(a, b) { for (var n = 0; n < a.length; n++) { if (a[n] < b[n]) return -1; if (a[n] > b[n]) return 1; } return 0; }
  items.forEach(function (i) {  // an item's worst run ranks all its rows: they stay together
    var k = key(i), r = [-(i.d || 0), rank[i.o], margin(i)];
    if (!(k in worst) || lexical(r, worst[k]) < 0) worst[k] = r;
  });
  function matching() {
    var list = items.filter(function (i) {
      return (state.run === "" || String(i.r) === state.run) &&
        (state.control === "" || runs[i.r].control === state.control) &&
        (state.test === "" || i.t === state.test) && (state.group === "" || String(i.g) === state.group) &&
        (state.outcome === "" || i.o === state.outcome) && (state.frames === "" || i.k !== undefined);
    });
    var keyed = list.map(function (i, n) { return [i, n]; });
    var by = {
      margin: function (a, b) { return margin(a[0]) - margin(b[0]); },
      "margin-desc": function (a, b) { return (b[0].m === null ? -Infinity : b[0].m) - (a[0].m === null ? -Infinity : a[0].m); },
      abs: function (a, b) { return Math.abs(margin(a[0])) - Math.abs(margin(b[0])); },
      order: function () { return 0; },
      informative: function (a, b) { return lexical(worst[key(a[0])], worst[key(b[0])]) ||
        lexical([a[0].t, a[0].id, a[0].r], [b[0].t, b[0].id, b[0].r]); }
    }[state.sort];
    keyed.sort(function (a, b) { return by(a, b) || a[1] - b[1]; });
    return keyed.map(function (p) { return p[0]; });
  }
  function score(s) { return s === null || s === undefined ? "—" : Number(s).toPrecision(4); }
  function texts(item, caption, cs, foils, fs, label) {
    var table = el("table", {"class": "texts"});
    var row = el("tr", {"class": "caption"});
    row.appendChild(el("td", {}, label + "caption")); row.appendChild(el("td", {"class": "score"}, score(cs)));
    row.appendChild(el("td", {}, caption)); table.appendChild(row);
    foils.forEach(function (foil, n) {
      var r = el("tr"); r.appendChild(el("td", {}, label + "foil" + (foils.length > 1 ? " " + (n + 1) : "")));
      r.appendChild(el("td", {"class": "score"}, score(fs[n]))); r.appendChild(el("td", {}, foil)); table.appendChild(r);
    });
    return table;
  }
  function card(item) {
    var box = el("div", {"class": "item " + item.o, "data-outcome": item.o});
    var head = el("div");
    head.appendChild(el("span", {"class": "badge " + item.o}, item.o));
    if (item.d) head.appendChild(el("span", {"class": "badge disagree"}, "runs disagree"));
    head.appendChild(el("b", {}, item.id + " "));
    var run = runs[item.r];
    head.appendChild(el("span", {"class": "meta"}, [runs.length > 1 ? run.label : null, "test " + item.t,
      item.g !== null && item.g !== undefined ? data.groupLabel + " " + item.g : null, "control " + run.control,
      "margin " + (item.m === null ? "—" : Number(item.m).toPrecision(3)), item.v].filter(Boolean).join(" · ")));
    box.appendChild(head);
    var strip = el("div", {"class": "strip"});
    if (item.k !== undefined) {
      item.fi.forEach(function (f, n) {
        strip.appendChild(el("img", {src: data.frames[item.k + ":" + f], alt: "frame " + f, title: "#" + (n + 1) + ": frame " + f}));
      });
    } else if (item.fi.length) {
      strip.appendChild(el("span", {"class": "meta"}, "frames seen, in order: " + item.fi.join(", ") + " (not thumbnailed)"));
    }
    box.appendChild(strip);
    if (item.e) box.appendChild(el("div", {"class": "err"}, "not scored: " + item.e));
    box.appendChild(texts(item, item.c, item.cs, item.f, item.fs, ""));
    if (item.pcs !== undefined) box.appendChild(texts(item, item.pc, item.pcs, item.pf, item.pfs, "proficiency "));
    return box;
  }
  function render() {
    var list = matching(), pages = Math.max(1, Math.ceil(list.length / data.pageSize));
    page = Math.min(page, pages - 1);
    var shown = list.slice(page * data.pageSize, (page + 1) * data.pageSize);
    var target = document.getElementById("items"); target.textContent = "";
    shown.forEach(function (item) { target.appendChild(card(item)); });
    var count = document.getElementById("item-count");
    count.setAttribute("data-total", String(items.length)); count.setAttribute("data-matching", String(list.length));
    count.setAttribute("data-rendered", String(shown.length));
    count.setAttribute("data-thumbnailed", String(shown.filter(function (i) { return i.k !== undefined; }).length));
    count.textContent = list.length + " of " + items.length + " items match; showing " +
      (list.length ? page * data.pageSize + 1 : 0) + "–" + (page * data.pageSize + shown.length) + ".";
    var pager = document.getElementById("pager"); pager.textContent = "";
    var prev = el("button", {id: "prev"}, "◀ previous"), next = el("button", {id: "next"}, "next ▶");
    prev.disabled = page === 0; next.disabled = page >= pages - 1;
    prev.addEventListener("click", function () { page -= 1; render(); });
    next.addEventListener("click", function () { page += 1; render(); });
    pager.appendChild(prev); pager.appendChild(el("span", {}, "page " + (page + 1) + " of " + pages)); pager.appendChild(next);
  }
  render();
  document.body.setAttribute("data-ready", "1");
})();
