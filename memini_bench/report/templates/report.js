// memini-bench report: sorting and selectors of the leaderboard, filters and pagination of the receipts.
"use strict";
window.MB = (function () {
  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(metric, v) {
    if (v === undefined || v === null) return "-";
    if (metric.pct) return (v * 100).toFixed(1);
    if (metric.key === "ingest_ms" || metric.key === "tokens_injected@K") return v.toFixed(0);
    return v.toFixed(2);
  }

  function leaderboard() {
    const data = JSON.parse(document.getElementById("board-data").textContent);
    const metrics = Object.fromEntries(data.metrics.map(m => [m.key, m]));
    const kSel = document.getElementById("k"), mSel = document.getElementById("metric");
    const dSel = document.getElementById("dataset");
    const table = document.getElementById("board"), body = table.querySelector("tbody");
    const state = { col: "recall_any@K", desc: true };
    function value(row, col) {
      if (metrics[col]) return (row.byK[kSel.value] || {})[col];
      return row[col];
    }
    function render() {
      const k = kSel.value;
      table.querySelectorAll("th[data-col]").forEach(th => {
        const m = metrics[th.dataset.col];
        if (m) th.textContent = m.label.replace("@K", "@" + k);
        th.classList.toggle("sorted-asc", th.dataset.col === state.col && !state.desc);
        th.classList.toggle("sorted-desc", th.dataset.col === state.col && state.desc);
        th.classList.toggle("ranked", th.dataset.col === mSel.value);
      });
      const rows = data.rows.filter(r => !dSel.value || r.dataset === dSel.value);
      const best = {};
      for (const r of rows) {
        for (const m of data.metrics) {
          const v = value(r, m.key), key = r.dataset + "|" + m.key;
          if (v === undefined) continue;
          if (!(key in best) || (m.higher ? v > best[key] : v < best[key])) best[key] = v;
        }
      }
      rows.sort((a, b) => {
        const x = value(a, state.col), y = value(b, state.col);
        if (x === y) return 0;
        if (x === undefined) return 1;
        if (y === undefined) return -1;
        const c = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
        return state.desc ? -c : c;
      });
      body.replaceChildren();
      for (const r of rows) {
        const tr = el("tr", { "data-dataset": r.dataset, "data-system": r.system, "data-file": r.file });
        const ds = el("td"); ds.appendChild(el("a", { href: "ds-" + r.slug + ".html" }, r.dataset));
        tr.append(ds, el("td", {}, r.system), el("td", {}, r.file), el("td", { class: "num" }, String(r.questions)));
        for (const m of data.metrics) {
          const v = value(r, m.key);
          const cls = ["num"];
          if (v !== undefined && v === best[r.dataset + "|" + m.key]) cls.push("best");
          if (m.key === mSel.value) cls.push("ranked");
          tr.appendChild(el("td", { class: cls.join(" "), "data-col": m.key }, fmt(m, v)));
        }
        const src = el("td"); src.appendChild(el("a", { href: "provenance.html#src-" + r.source, title: "config, commit, data sha256, command" }, "src"));
        tr.appendChild(src);
        body.appendChild(tr);
      }
      document.getElementById("count").textContent = rows.length + " rows";
    }
    table.querySelectorAll("th[data-col]").forEach(th => th.addEventListener("click", () => {
      const col = th.dataset.col;
      if (state.col === col) state.desc = !state.desc;
      else { state.col = col; state.desc = metrics[col] ? metrics[col].higher : false; }
      render();
    }));
    mSel.addEventListener("change", () => { state.col = mSel.value; state.desc = metrics[mSel.value].higher; render(); });
    kSel.addEventListener("change", render);
    dSel.addEventListener("change", render);
    render();
  }

  // The overview: the boards of one data set, protocol and split (one per embedder) share a row; the row's
  // embedder cell becomes a selector (MiniLM first, the server's order) that shows that embedder's board.
  function overview() {
    const table = document.getElementById("overview");
    if (!table) return;
    const groups = {};
    table.querySelectorAll("tbody tr[data-group]").forEach(tr => (groups[tr.dataset.group] ||= []).push(tr));
    for (const rows of Object.values(groups)) {
      if (rows.length < 2) continue;
      const show = embedder => rows.forEach(tr => { tr.hidden = tr.dataset.embedder !== embedder; });
      rows.forEach(tr => {
        const td = tr.querySelector("td.embedder");
        const sel = el("select", { class: "embedder-select", "aria-label": "embedder" });
        rows.forEach(other => {
          const label = other.querySelector("td.embedder").dataset.label || other.querySelector("td.embedder").textContent;
          other.querySelector("td.embedder").dataset.label = label;
          sel.appendChild(el("option", { value: other.dataset.embedder }, label));
        });
        sel.value = tr.dataset.embedder;
        sel.addEventListener("change", () => {
          show(sel.value);
          const shown = rows.find(r => r.dataset.embedder === sel.value);
          shown.querySelector("select").value = sel.value;
          shown.querySelector("select").focus();
        });
        td.replaceChildren(sel);
      });
      show(rows[0].dataset.embedder);
    }
    table.dataset.ready = "1";
  }

  // Receipts: index.js calls MB_RECEIPTS_INDEX once; each pNNNN.js calls MB_RECEIPTS_PAGE when loaded.
  let index = null;
  const pages = {}, waiting = {};
  window.MB_RECEIPTS_INDEX = function (idx) { index = idx; };
  window.MB_RECEIPTS_PAGE = function (page) {
    pages[page.n] = page;
    (waiting[page.n] || []).forEach(f => f());
    delete waiting[page.n];
  };
  function loadPage(n) {
    return new Promise(resolve => {
      if (pages[n]) return resolve();
      if (waiting[n]) { waiting[n].push(resolve); return; }
      waiting[n] = [resolve];
      const s = document.createElement("script");
      s.src = window.MB_RECEIPTS_BASE + "p" + String(n).padStart(4, "0") + ".js";
      document.body.appendChild(s);
    });
  }

  function receipts() {
    const SHOW = 20;
    const aSel = document.getElementById("run-a"), bSel = document.getElementById("run-b");
    const kIn = document.getElementById("rk"), fSel = document.getElementById("filter");
    const out = document.getElementById("receipts");
    let view = 0;
    kIn.value = index.k;
    index.runs.forEach((label, i) => { aSel.appendChild(el("option", { value: i }, label)); bSel.appendChild(el("option", { value: i }, label)); });
    if (index.runs.length > 1) bSel.value = 1;
    document.getElementById("notes").textContent = index.notes.join("; ");
    const found = (r, k) => r !== null && r >= 0 && r < k;
    function selected() {
      const a = +aSel.value, b = +bSel.value, k = +kIn.value, f = fSel.value;
      const keep = [];
      index.questions.forEach((q, i) => {
        const ra = q[2][a], rb = q[2][b];
        if (f === "all") keep.push(i);
        else if (ra === null || rb === null) return;
        else if (f === "a-not-b" ? found(ra, k) && !found(rb, k)
          : f === "b-not-a" ? found(rb, k) && !found(ra, k) : ra !== rb) keep.push(i);
      });
      return keep;
    }
    function runBlock(label, hit, k, items) {
      const div = el("div", { class: "run" });
      div.appendChild(el("h4", {}, label));
      if (!hit) { div.appendChild(el("p", { class: "note" }, "not in this run")); return div; }
      const r = hit.rank;
      div.appendChild(el("p", { class: found(r, k) ? "found" : "miss" },
        r >= 0 ? "first gold rank " + (r + 1) : "miss (no gold within the recalled depth)"));
      const ol = el("ol");
      hit.top.slice(0, k).forEach(([ids, score, gold]) => {
        const snippet = items[ids[0]] || "";
        const li = el("li", gold ? { class: "gold" } : {});
        li.appendChild(el("code", {}, ids.join(", ")));
        li.appendChild(el("span", { class: "hit-score" }, score === null ? "" : "  score " + Number(score).toPrecision(4)));
        if (snippet) li.appendChild(el("div", {}, snippet));
        ol.appendChild(li);
      });
      div.appendChild(ol);
      return div;
    }
    async function render() {
      const keep = selected(), k = +kIn.value;
      const last = Math.max(0, Math.ceil(keep.length / SHOW) - 1);
      view = Math.min(view, last);
      const shown = keep.slice(view * SHOW, view * SHOW + SHOW);
      await Promise.all([...new Set(shown.map(i => Math.floor(i / index.page)))].map(loadPage));
      out.replaceChildren();
      const a = +aSel.value, b = +bSel.value;
      for (const i of shown) {
        const page = pages[Math.floor(i / index.page)], q = page.q[i % index.page];
        const box = el("div", { class: "receipt", "data-qid": q.id });
        box.appendChild(el("h3", {}, q.id + (q.cat ? "  (category " + q.cat + ")" : "")));
        if (q.query) box.appendChild(el("p", {}, q.query));
        const gold = el("ul");
        q.gold.forEach(([id, text]) => { const li = el("li"); li.appendChild(el("code", {}, id)); if (text) li.append(" " + text); gold.appendChild(li); });
        box.append(el("strong", {}, "gold"), gold);
        const runs = el("div", { class: "runs" });
        runs.appendChild(runBlock("A: " + index.runs[a], q.runs[a], k, page.items));
        if (b !== a) runs.appendChild(runBlock("B: " + index.runs[b], q.runs[b], k, page.items));
        box.appendChild(runs);
        out.appendChild(box);
      }
      document.getElementById("count").textContent = keep.length + " questions";
      document.getElementById("pageno").textContent = "page " + (view + 1) + " of " + (last + 1);
      out.dataset.state = [a, b, k, fSel.value, view].join("|");  // what is shown, once rendered
    }
    [aSel, bSel, kIn, fSel].forEach(x => x.addEventListener("change", () => { view = 0; render(); }));
    document.getElementById("prev").addEventListener("click", () => { view = Math.max(0, view - 1); render(); });
    document.getElementById("next").addEventListener("click", () => { view += 1; render(); });
    return render();
  }
  return { leaderboard, receipts, overview };
})();
