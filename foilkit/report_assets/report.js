(function () {
  "use strict";
  // The item browser: one card per item (test, id) with a row per run. Filters, the search box
  // and the page live in the URL's fragment (#q=...&outcome=wrong&page=2), so a link opens the
  // same view; the counts, each run's accuracy on the matching items and the CSV export follow
  // the filters.
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var items = data.items, runs = data.runs, LETTERS = "ABCDEFGHIJ";
  // id: one item exactly (a permalink; q searches words, and "direction-1" is in "direction-10")
  var DEFAULTS = {run: "", control: "", test: "", group: "", outcome: "", sort: "informative",
                  frames: "", q: "", id: "", page: "0"};
  var state = {};
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    for (var key in attrs || {}) node.setAttribute(key, attrs[key]);
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function distinct(values) { var seen = {}, out = []; values.forEach(function (v) {
    if (v !== null && v !== undefined && !seen[v]) { seen[v] = 1; out.push(v); } }); return out; }

  // --- URL state -------------------------------------------------------------------------------
  function readHash() {
    state = {};
    for (var k in DEFAULTS) state[k] = DEFAULTS[k];
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var eq = part.indexOf("="); if (eq < 0) return;
      var name = decodeURIComponent(part.slice(0, eq)), value = decodeURIComponent(part.slice(eq + 1).replace(/\+/g, " "));
      if (name in DEFAULTS) state[name] = value;
    });
  }
  function hashOf(s) {
    var parts = [];
    for (var k in DEFAULTS) if (s[k] !== DEFAULTS[k]) parts.push(k + "=" + encodeURIComponent(s[k]));
    return parts.length ? "#" + parts.join("&") : "#browser";
  }
  function writeHash() {
    var hash = hashOf(state);
    if (hash !== location.hash && history.replaceState) history.replaceState(null, "", hash);
  }
  function change(name, value) { state[name] = value; if (name !== "page") state.page = "0"; writeHash(); render(); }
  readHash();

  // --- controls --------------------------------------------------------------------------------
  var controls = document.getElementById("controls"), boxes = {};
  function select(name, label, values) {
    var wrap = el("label", {}, label), box = el("select", {id: "filter-" + name});
    values.forEach(function (v) { box.appendChild(el("option", {value: v[0]}, v[1])); });
    box.addEventListener("change", function () { change(name, box.value); });
    boxes[name] = box; wrap.appendChild(box); controls.appendChild(wrap);
  }
  function options(values) { return [["", "all"]].concat(values.map(function (v) { return [String(v), String(v)]; })); }
  var search = el("input", {id: "search", type: "search", size: "28", placeholder: "id or words of a caption/foil"});
  search.addEventListener("input", function () { change("q", search.value); });
  var searchLabel = el("label", {}, "search "); searchLabel.appendChild(search); controls.appendChild(searchLabel);
  boxes.q = search;
  if (runs.length > 1) select("run", "run", [["", "all"]].concat(runs.map(function (r, i) { return [String(i), r.label]; })));
  select("control", "control", options(distinct(runs.map(function (r) { return r.control; }))));
  var tests = distinct(items.map(function (i) { return i.t; }));
  if (tests.length > 1) select("test", "test", options(tests));
  // a multi-label group column (Vinoground's categories) lists each label once
  var groups = distinct([].concat.apply([], items.map(function (i) { return i.g; })));
  if (groups.length) select("group", data.groupLabel, options(groups));
  select("outcome", "outcome", options(["correct", "wrong", "tied", "unanswered", "error"]));
  var sorts = [["margin", "margin, smallest first"], ["margin-desc", "margin, largest first"],
               ["abs", "|margin|, closest first"], ["order", "dataset order"]];
  sorts.unshift(["informative", (data.disagreeing !== null ? "runs disagree, " : "") + "tied, wrong, closest calls first"]);
  select("sort", "sort", sorts);
  select("frames", "frames", [["", "all items"], ["1", "thumbnailed only"]]);
  var exportButton = el("button", {id: "export", type: "button"}, "export matching rows as CSV");
  var exportLink = el("a", {id: "export-link", download: "foilkit-items.csv", style: "display:none"});
  exportButton.addEventListener("click", function () { exportCsv(); });
  controls.appendChild(exportButton); controls.appendChild(exportLink);
  document.getElementById("thumbnail-note").textContent = data.thumbnailNote +
    (data.disagreeing !== null ? " Items on which the runs disagree (correct in one, not in another): " + data.disagreeing + "." : "");

  // --- cards: one per (test, id), a row per run ------------------------------------------------
  var cards = [], byKey = {}, rank = {tied: 0, unanswered: 1, wrong: 2, correct: 3, error: 4};
  items.forEach(function (i) {
    var k = i.t + "\u0000" + i.id;
    if (!(k in byKey)) { byKey[k] = {t: i.t, id: i.id, g: i.g, first: i, n: cards.length, rows: []}; cards.push(byKey[k]); }
    byKey[k].rows.push(i);
  });
  function margin(i) { return i.m === null ? Infinity : i.m; }
  function lexical(a, b) { for (var n = 0; n < a.length; n++) { if (a[n] < b[n]) return -1; if (a[n] > b[n]) return 1; } return 0; }
  cards.forEach(function (c) {  // the card's worst run ranks it
    c.rows.sort(function (a, b) { return a.r - b.r; });
    c.worst = null;
    c.rows.forEach(function (i) { var r = [-(i.d || 0), rank[i.o], margin(i)]; if (!c.worst || lexical(r, c.worst) < 0) c.worst = r; });
    c.text = [c.id, c.first.c].concat(c.first.f || [], c.first.pc ? [c.first.pc] : [], c.first.pf || [],
      c.first.qa ? [c.first.qa.q] : []).join("\n").toLowerCase();
  });
  function rowMatches(i) {
    return (state.run === "" || String(i.r) === state.run) && (state.control === "" || runs[i.r].control === state.control) &&
      (state.outcome === "" || i.o === state.outcome) && (state.frames === "" || i.k !== undefined);
  }
  function cardMatches(c) {  // every word of the search is in the id or a text
    if (state.test !== "" && c.t !== state.test) return false;
    if (state.id !== "" && String(c.id) !== state.id) return false;
    if (state.group !== "" && !(Array.isArray(c.g) ? c.g.map(String).indexOf(state.group) >= 0
                                : String(c.g) === state.group)) return false;
    var words = state.q.toLowerCase().split(/\s+/).filter(Boolean);
    for (var w = 0; w < words.length; w++) if (c.text.indexOf(words[w]) < 0) return false;
    return c.rows.some(rowMatches);
  }
  function extreme(c, f, pick) { return c.rows.filter(rowMatches).map(f).reduce(function (a, b) { return pick(a, b); }); }
  function matching() {
    var list = cards.filter(cardMatches);
    var by = {
      margin: function (a, b) { return extreme(a, margin, Math.min) - extreme(b, margin, Math.min); },
      "margin-desc": function (a, b) {
        var m = function (i) { return i.m === null ? -Infinity : i.m; };
        return extreme(b, m, Math.max) - extreme(a, m, Math.max); },
      abs: function (a, b) { var m = function (i) { return Math.abs(margin(i)); };
        return extreme(a, m, Math.min) - extreme(b, m, Math.min); },
      order: function () { return 0; },
      informative: function (a, b) { return lexical(a.worst, b.worst) || lexical([a.t, a.id], [b.t, b.id]); }
    }[state.sort] || function () { return 0; };
    list.sort(function (a, b) { return by(a, b) || a.n - b.n; });
    return list;
  }

  // --- numbers ---------------------------------------------------------------------------------
  function digits(values) {  // at least 4 significant digits, more until distinct values differ
    var nums = distinct(values.filter(function (v) { return v !== null && v !== undefined && isFinite(v); }).map(Number));
    for (var p = 4; p < 17; p++) {
      var seen = {}, clash = false;
      nums.forEach(function (v) { var s = v.toPrecision(p); if (seen[s]) clash = true; seen[s] = 1; });
      if (!clash) return p;
    }
    return 17;
  }
  function fmt(s, p) { return s === null || s === undefined ? "—" : Number(s).toPrecision(p); }
  function fmtMargin(m) { return m === null ? "—" : m === 0 ? "0" : Number(m).toPrecision(3); }
  function percent(a, b) { return b ? (100 * a / b).toFixed(1) + "%" : "—"; }

  function strip(item) {
    var box = el("div", {"class": "strip"});
    if (item.k !== undefined) {
      item.fi.forEach(function (f, n) {
        var time = data.times[item.k + ":" + f], when = time === undefined ? "" : time.toFixed(2) + " s";
        var fig = el("span", {"class": "frame"});
        fig.appendChild(el("img", {src: data.frames[item.k + ":" + f], alt: "frame " + f,
          title: "#" + (n + 1) + ": frame " + f + (when ? " at " + when : "")}));
        fig.appendChild(el("span", {"class": "time"}, when || "frame " + f));
        box.appendChild(fig);
      });
    } else if (item.fi.length) {
      box.appendChild(el("span", {"class": "meta"}, "frames seen, in order: " + item.fi.join(", ") + " (not thumbnailed)"));
    }
    return box;
  }
  function textRows(table, label, caption, foils) {
    var head = el("tr", {"class": "caption"}); head.appendChild(el("td", {}, label + "caption")); head.appendChild(el("td", {}, caption));
    table.appendChild(head);
    (foils || []).forEach(function (foil, n) {
      var r = el("tr"); r.appendChild(el("td", {}, label + "foil" + (foils.length > 1 ? " " + (n + 1) : ""))); r.appendChild(el("td", {}, foil));
      table.appendChild(r);
    });
  }
  function orders(item) {  // each text's letter probability in each cyclic option order
    var n = item.po.length, parts = [], p = digits([].concat.apply([], item.po));
    if (item.qa) {  // its own question: one order, the question's labels
      return el("div", {"class": "orders"}, (item.a ? "share of answers choosing it" : "probability of its answer") + " — " +
        item.po.map(function (probs, text) { return textName(item, text) + ": " + probs.map(function (v) { return fmt(v, p); }).join(", "); }).join("; "));
    }
    item.po.forEach(function (probs, text) {
      parts.push((text === 0 ? "caption" : "foil" + (n > 2 ? " " + text : "")) + ": " + probs.map(function (v, k) {
        return "as (" + LETTERS[(text - k + n) % n] + ") " + fmt(v, p); }).join(", "));
    });
    var what = item.a ? "share of answers choosing it by option order" : "letter probability by option order";
    return el("div", {"class": "orders"}, what + " — " + parts.join("; "));
  }
  function textName(item, t) {  // a text by the label its question gives it, else caption / foil n
    if (item.qa && item.qa.ta[t] !== undefined && item.qa.ta[t] !== null) return item.qa.ta[t];
    return t === 0 ? "caption" : "foil" + (item.fs.length > 1 ? " " + t : "");
  }
  function answers(item) {  // generate mode: every answer as written, order-major, its outcome and choice
    var orders = item.po ? item.po[0].length : 1, per = item.a.length / orders;  // po: per text, per order
    return el("div", {"class": "answers"}, "answer" + (item.a.length > 1 ? "s" : "") + " — " + item.a.map(function (text, k) {
      var choice = item.ac ? item.ac[k] : null;
      var where = orders > 1 ? "order " + (Math.floor(k / per) + 1) + (per > 1 ? " sample " + (k % per + 1) : "") + ": " :
        per > 1 ? "sample " + (k + 1) + ": " : "";
      return where + JSON.stringify(text) + " (" + item.ao[k] +
        (choice === null || choice === undefined ? ", chose no option" : ": " + textName(item, choice)) + ")"; }).join("; "));
  }
  function question(qa) {  // the row's own question and its options, lettered as the model saw them
    var box = el("div", {"class": "question"});
    box.appendChild(el("div", {"class": "question-text"}, qa.q));
    var table = el("table", {"class": "options"});
    qa.o.forEach(function (option, k) {
      var row = el("tr", k === qa.k ? {"class": "caption"} : {});
      row.appendChild(el("td", {"class": "label"}, qa.l[k]));
      row.appendChild(el("td", {}, qa.l[k] === option ? "" : option));  // yes / no: the label is the option
      row.appendChild(el("td", {"class": "meta"}, k === qa.k ? "true answer" : ""));
      table.appendChild(row);
    });
    box.appendChild(table);
    return box;
  }
  function foilVideo(item) {  // a pair row (Vinoground): every text on the video and on the foil video
    var fv = item.fv, n = item.fs.length, p = digits([item.cs, fv.cs].concat(item.fs, fv.fs));
    var box = el("div", {"class": "foil-video"}), table = el("table", {"class": "pair-scores"});
    var head = el("tr"), texts = ["caption"].concat(item.fs.map(function (_, k) { return "foil" + (n > 1 ? " " + (k + 1) : ""); }));
    ["scores: text × video"].concat(texts).forEach(function (h) { head.appendChild(el("th", {}, h)); });
    table.appendChild(head);
    [["the video", item.cs, item.fs], ["the foil video", fv.cs, fv.fs]].forEach(function (video) {
      var row = el("tr"); row.appendChild(el("td", {}, video[0]));
      [video[1]].concat(video[2]).forEach(function (v) { row.appendChild(el("td", {"class": "score"}, fmt(v, p))); });
      table.appendChild(row);
    });
    box.appendChild(table);
    box.appendChild(el("div", {"class": "meta"}, "foil video" + (fv.v ? " " + fv.v : "") +
      (fv.fi.length ? ", frames seen, in order: " + fv.fi.join(", ") : "")));
    return box;
  }
  function videoQuestion(item) {  // Vinoground's video-score question: which segment a text describes
    var flat = function (a) { return a.reduce(function (x, y) { return x.concat(Array.isArray(y) ? flat(y) : [y]); }, []); };
    var vq = item.vq, n = vq.s.length, p = digits(flat([vq.s, vq.o]));
    var name = function (t) { return t === 0 ? "caption" : "foil" + (n > 2 ? " " + t : ""); };
    var video = ["the video", "the foil video"], box = el("div", {"class": "video-question"});
    box.appendChild(el("div", {"class": "orders"}, "video question (which segment of the joined video a text describes), " +
      (vq.a ? "share of answers" : "probability") + " naming each video — " + vq.s.map(function (pair, t) {
        return name(t) + ": " + pair.map(function (v, k) {
          var shown = vq.o[t][k], order = shown[0] === null || shown[0] === undefined ? "" :
            " (shown first " + fmt(shown[0], p) + ", second " + fmt(shown[1], p) + ")";
          return video[k] + " " + fmt(v, p) + order; }).join(", "); }).join("; ")));
    if (vq.fr.length) box.appendChild(el("div", {"class": "meta"}, "joined views' frames (first video + separator + second video): " +
      ["video first", "foil video first"].map(function (view, k) { return view + " " + (vq.fr[k] || []).join(" + "); }).join(", ")));
    if (vq.a) {
      var per = vq.a.length / (2 * n);
      box.appendChild(el("div", {"class": "meta"}, "video question answers — " + vq.a.map(function (text, k) {
        var choice = vq.ac ? vq.ac[k] : null, view = Math.floor(k / per) % 2;
        return name(Math.floor(k / (2 * per))) + ", " + (view ? "foil video first" : "video first") +
          (per > 1 ? " sample " + (k % per + 1) : "") + ": " + JSON.stringify(text) + " (" + vq.ao[k] +
          (choice === null || choice === undefined ? "" : ": " + video[choice]) + ")"; }).join("; ")));
    }
    return box;
  }
  function prompts(item, open) {
    var template = runs[item.r].prompts && runs[item.r].prompts[String(item.q.length)];
    var box = el("details", open ? {"class": "prompt", open: ""} : {"class": "prompt"});
    box.appendChild(el("summary", {}, "rendered prompt" + (item.q.length > 1 ? "s, " + item.q.length + " option orders" : "")));
    item.q.forEach(function (question, k) {
      box.appendChild(el("div", {"class": "meta"}, "order " + (k + 1) + (k === 0 ? " (caption is A)" : "")));
      box.appendChild(el("pre", {}, template ? template.split("{question}").join(question) : question));
    });
    return box;
  }
  function runRow(table, item, width, matches, single) {
    var row = el("tr", {"class": "run " + item.o + (matches ? "" : " out"), "data-run": String(item.r), "data-outcome": item.o});
    var label = el("td", {}); label.appendChild(el("span", {"class": "badge " + item.o}, item.o));
    label.appendChild(el("span", {}, runs.length > 1 ? runs[item.r].label : "control " + runs[item.r].control));
    row.appendChild(label);
    var p = digits([item.cs].concat(item.fs));
    row.appendChild(el("td", {"class": "score"}, fmt(item.cs, p)));
    for (var n = 0; n < width; n++) row.appendChild(el("td", {"class": "score"}, fmt(item.fs[n], p)));
    row.appendChild(el("td", {"class": "score"}, fmtMargin(item.m)));
    var more = el("td", {}); more.appendChild(strip(item));
    if (item.e) more.appendChild(el("div", {"class": "err"}, "not scored: " + item.e));
    if (item.pcs !== undefined) {
      var pp = digits([item.pcs].concat(item.pfs));
      more.appendChild(el("div", {"class": "meta"}, "proficiency: caption " + fmt(item.pcs, pp) + ", foils " +
        item.pfs.map(function (v) { return fmt(v, pp); }).join(", ")));
    }
    if (item.po) more.appendChild(orders(item));
    if (item.a) more.appendChild(answers(item));
    if (item.fv) more.appendChild(foilVideo(item));
    if (item.vq) more.appendChild(videoQuestion(item));
    if (item.q) more.appendChild(prompts(item, single));
    row.appendChild(more);
    table.appendChild(row);
  }
  function card(c, single) {  // single: the only card shown (a deep link): prompts open
    var first = c.first, box = el("div", {"class": "item " + c.worstOutcome, id: "item-" + c.t + "-" + c.id});
    var head = el("div");
    if (c.rows.some(function (i) { return i.d; })) head.appendChild(el("span", {"class": "badge disagree"}, "runs disagree"));
    head.appendChild(el("b", {}, c.id + " "));
    head.appendChild(el("span", {"class": "meta"}, ["test " + c.t, c.g !== null && c.g !== undefined ? data.groupLabel + " " + c.g : null,
      first.v].filter(Boolean).join(" · ") + " "));
    var link = el("a", {"class": "permalink", href: hashOf({id: String(c.id), test: tests.length > 1 ? c.t : "", run: "", control: "",
      group: "", outcome: "", sort: "informative", frames: "", q: "", page: "0"}), title: "a link to this item"}, "link");
    head.appendChild(link); box.appendChild(head);
    if (first.qa) box.appendChild(question(first.qa));
    else {
      var texts = el("table", {"class": "texts"}); textRows(texts, "", first.c, first.f);
      if (first.pc !== undefined) textRows(texts, "proficiency ", first.pc, first.pf);
      box.appendChild(texts);
    }
    var width = Math.max.apply(null, c.rows.map(function (i) { return i.fs.length; }));
    var table = el("table", {"class": "runs"}), header = el("tr");
    var named = function (t, plain) { return first.qa ? plain + " (" + textName(first, t) + ")" : plain; };
    [runs.length > 1 ? "run" : "outcome", named(0, "caption")].concat(width > 1 ? c.rows[0].fs.map(function (_, n) { return named(n + 1, "foil " + (n + 1)); })
      : [named(1, "foil")]).concat(["margin", "frames seen"]).forEach(function (h) { header.appendChild(el("th", {}, h)); });
    table.appendChild(header);
    c.rows.forEach(function (i) { runRow(table, i, width, rowMatches(i), single); });
    box.appendChild(table);
    return box;
  }

  // --- counts, accuracy, CSV -------------------------------------------------------------------
  function accuracy(list) {
    var per = runs.map(function () { return {correct: 0, scored: 0, tied: 0, unanswered: 0, rows: 0}; });
    list.forEach(function (c) { c.rows.filter(rowMatches).forEach(function (i) {
      var a = per[i.r]; a.rows += 1; if (i.o !== "error") a.scored += 1;
      if (i.o === "correct") a.correct += 1; if (i.o === "tied") a.tied += 1;
      if (i.o === "unanswered") a.unanswered += 1; }); });
    var box = document.getElementById("subset-accuracy"); box.textContent = "";
    box.appendChild(el("span", {}, "Accuracy on the matching items (correct / scored; a tie or an unanswered item is not correct here): "));
    per.forEach(function (a, r) {
      if (!a.rows) return;
      box.appendChild(el("span", {"class": "acc", "data-run": String(r), "data-correct": String(a.correct), "data-scored": String(a.scored)},
        (runs.length > 1 ? runs[r].label + " " : "") + percent(a.correct, a.scored) + " (" + a.correct + "/" + a.scored +
        (a.tied ? ", " + a.tied + " tied" : "") + (a.unanswered ? ", " + a.unanswered + " unanswered" : "") + ")"));
    });
  }
  function csvCell(v) {
    var s = v === null || v === undefined ? "" : Array.isArray(v) ? JSON.stringify(v) : String(v);
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  function exportCsv() {
    var lines = [["run", "model", "control", "test", "id", data.groupLabel || "group", "outcome", "margin", "caption_score",
      "foil_scores", "caption", "foils", "error", "video", "frame_indices", "frame_seconds", "proficiency_caption_score",
      "proficiency_foil_scores", "order_probabilities", "foil_video_caption_score", "foil_video_foil_scores",
      "video_question_scores"].map(csvCell).join(",")];
    matching().forEach(function (c) { c.rows.filter(rowMatches).forEach(function (i) {
      var run = runs[i.r];
      var seconds = i.k === undefined ? null : i.fi.map(function (f) { var t = data.times[i.k + ":" + f]; return t === undefined ? null : t; });
      lines.push([run.label, run.model, run.control, i.t, i.id, i.g, i.o, i.m, i.cs, i.fs, i.c, i.f, i.e, i.v, i.fi, seconds,
        i.pcs, i.pfs, i.po, i.fv ? i.fv.cs : null, i.fv ? i.fv.fs : null, i.vq ? i.vq.s : null].map(csvCell).join(","));
    }); });
    var blob = new Blob([lines.join("\r\n") + "\r\n"], {type: "text/csv;charset=utf-8"});
    if (exportLink.href) URL.revokeObjectURL(exportLink.href);
    exportLink.href = URL.createObjectURL(blob); exportLink.setAttribute("data-rows", String(lines.length - 1));
    exportLink.click();
  }

  function render() {
    for (var name in boxes) if (boxes[name].value !== state[name]) boxes[name].value = state[name];
    var list = matching(), pages = Math.max(1, Math.ceil(list.length / data.pageSize));
    var page = Math.max(0, Math.min(parseInt(state.page, 10) || 0, pages - 1));
    var shown = list.slice(page * data.pageSize, (page + 1) * data.pageSize);
    var target = document.getElementById("items"); target.textContent = "";
    shown.forEach(function (c) {
      c.worstOutcome = ["tied", "unanswered", "wrong", "correct", "error"][c.worst[1]];
      target.appendChild(card(c, shown.length === 1));
    });
    var rows = 0; list.forEach(function (c) { rows += c.rows.filter(rowMatches).length; });
    var count = document.getElementById("item-count");
    count.setAttribute("data-total", String(cards.length)); count.setAttribute("data-matching", String(list.length));
    count.setAttribute("data-rendered", String(shown.length)); count.setAttribute("data-rows", String(rows));
    count.setAttribute("data-thumbnailed", String(shown.filter(function (c) { return c.rows.some(function (i) { return i.k !== undefined; }); }).length));
    count.textContent = list.length + " of " + cards.length + " items match" + (runs.length > 1 ? " (" + rows + " run rows)" : "") +
      "; showing " + (list.length ? page * data.pageSize + 1 : 0) + "–" + (page * data.pageSize + shown.length) + ".";
    accuracy(list);
    var pager = document.getElementById("pager"); pager.textContent = "";
    var prev = el("button", {id: "prev"}, "◀ previous"), next = el("button", {id: "next"}, "next ▶");
    prev.disabled = page === 0; next.disabled = page >= pages - 1;
    prev.addEventListener("click", function () { change("page", String(page - 1)); });
    next.addEventListener("click", function () { change("page", String(page + 1)); });
    pager.appendChild(prev); pager.appendChild(el("span", {id: "page"}, "page " + (page + 1) + " of " + pages)); pager.appendChild(next);
  }
  window.addEventListener("hashchange", function () { readHash(); render(); });
  render();
  if (hashOf(state) !== "#browser") document.getElementById("browser").scrollIntoView();  // a deep link
  document.body.setAttribute("data-ready", "1");
})();
