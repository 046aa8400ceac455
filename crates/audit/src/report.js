"use strict";
// The report's page, drawn from the JSON in #data (see report.rs): the
// tables carry every count as the text of a span.n whose data-tier,
// data-kind, data-name and data-stance say which count it is.
(function () {
  var body = document.body;
  try {
    var D = JSON.parse(document.getElementById("data").textContent);
    var S = D.stances, L = D.labels;
    var el = function (tag, attrs) {
      var e = document.createElement(tag);
      for (var k in attrs || {}) {
        if (k === "text") e.textContent = attrs[k];
        else if (k === "class") e.className = attrs[k];
        else e.setAttribute(k, attrs[k]);
      }
      for (var i = 2; i < arguments.length; i++) e.append(arguments[i]);
      return e;
    };
    var pct = function (n, of) {
      return of ? (100 * n / of).toFixed(1) + " %" : "-";
    };
    var tiers = [{ key: "all", label: "All hosts", hosts: D.hosts,
                   of: function (line) { return line; } }];
    D.tiers.forEach(function (top, k) {
      tiers.push({ key: String(top), label: "Top " + top.toLocaleString("en"),
                   hosts: D.tier_hosts[k],
                   of: function (line) { return line.ranks[k]; } });
    });
    var lines = D.agents.concat(D.categories);
    // The undecided column only where a count is not 0.
    var shown = [0, 1, 2, 3];
    var undecided = lines.some(function (l) {
      return l.undecided > 0 || (l.ranks || []).some(function (r) {
        return r.undecided > 0;
      });
    });
    if (undecided) shown.push(4);
    // The AI-use signal columns (counts of hosts, whatever their stance),
    // only where a count is not 0.
    var signals = D.signals.map(function (key, i) {
      return { key: key, label: D.signal_labels[i] };
    }).filter(function (g) {
      return lines.some(function (l) {
        return l[g.key] > 0 || (l.ranks || []).some(function (r) {
          return r[g.key] > 0;
        });
      });
    });

    var main = document.getElementById("main");
    var legend = el("div", { class: "legend" });
    shown.forEach(function (s) {
      legend.append(el("span", {}, el("i", { class: "s" + s }), L[s]));
    });
    main.append(legend);

    var bar = function (c, hosts) {
      var b = el("div", { class: "bar", role: "img" });
      var alt = [];
      shown.forEach(function (s) {
        var n = c[S[s]];
        alt.push(L[s] + ": " + n + " (" + pct(n, hosts) + ")");
        if (n > 0) {
          b.append(el("i", { class: "s" + s,
                             style: "width:" + (100 * n / hosts) + "%" }));
        }
      });
      b.setAttribute("title", alt.join(", "));
      b.setAttribute("aria-label", alt.join(", "));
      return b;
    };
    var countCell = function (tier, kind, name, stance, n, hosts) {
      var span = el("span", { class: "n", "data-tier": tier.key,
                              "data-kind": kind, "data-name": name,
                              "data-stance": stance, text: String(n) });
      return el("td", { "data-v": n }, span,
                el("span", { class: "p", text: pct(n, hosts) }));
    };
    var sortable = function (table) {
      var heads = table.tHead.rows[0].cells;
      Array.prototype.forEach.call(heads, function (th, col) {
        if (th.classList.contains("nosort")) return;
        th.addEventListener("click", function () {
          var down = th.getAttribute("aria-sort") !== "descending";
          Array.prototype.forEach.call(heads, function (h) {
            h.removeAttribute("aria-sort");
          });
          th.setAttribute("aria-sort", down ? "descending" : "ascending");
          var rows = Array.prototype.slice.call(table.tBodies[0].rows);
          rows.sort(function (a, b) {
            var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
            var nx = Number(x), ny = Number(y);
            var c = (isNaN(nx) || isNaN(ny)) ? String(x).localeCompare(y)
                                             : nx - ny;
            return down ? -c : c;
          });
          rows.forEach(function (r) { table.tBodies[0].append(r); });
        });
      });
    };
    var head = function (first) {
      var tr = el("tr");
      first.forEach(function (h) {
        tr.append(el("th", { class: "l", text: h }));
      });
      shown.forEach(function (s) { tr.append(el("th", { text: L[s] })); });
      signals.forEach(function (g) { tr.append(el("th", { text: g.label })); });
      tr.append(el("th", { class: "l nosort", text: "share of hosts" }));
      return el("thead", {}, tr);
    };

    // Per-host stances as CSV: one column per agent, or one agent's.
    var names = D.host_names ? D.host_names.split("\n") : [];
    var quote = function (s) {
      return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
    };
    var csv = function (agent) {
      var agents = agent === null
        ? D.agents.map(function (a, i) { return i; }) : [agent];
      var out = ["host" + (D.host_ranks ? ",rank" : "") + "," +
                 agents.map(function (a) {
                   return quote(D.agents[a].agent);
                 }).join(",") + "\n"];
      for (var i = 0; i < names.length; i++) {
        var row = D.rows[D.host_rows[i]];
        var line = quote(names[i]);
        if (D.host_ranks) line += "," + (D.host_ranks[i] || "");
        for (var j = 0; j < agents.length; j++) {
          line += "," + S[row.charCodeAt(agents[j]) - 48];
        }
        out.push(line + "\n");
      }
      return out;
    };
    var download = function (agent, file) {
      var a = el("a", { href: "#", class: "csv", download: file,
                        text: agent === null ? "per-host stances (CSV)" : "CSV" });
      a.addEventListener("click", function (e) {
        e.preventDefault();
        var url = URL.createObjectURL(new Blob(csv(agent), { type: "text/csv" }));
        var t = el("a", { href: url, download: file });
        document.body.append(t);
        t.click();
        t.remove();
        setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
      });
      return a;
    };

    var tabs = el("div", { class: "tabs", role: "tablist" });
    if (tiers.length > 1) main.append(tabs);
    var dl = el("p", {}, "Download the ", download(null, "stances.csv"),
                " of all " + D.hosts + " hosts, one column per agent.");
    main.append(dl);
    tiers.forEach(function (tier, t) {
      var sec = el("section", { class: "tier", "data-tier": tier.key });
      if (t > 0) sec.hidden = true;
      var button = el("button", { type: "button", "aria-pressed": String(t === 0),
                                  text: tier.label + " (" + tier.hosts + " hosts)" });
      button.addEventListener("click", function () {
        Array.prototype.forEach.call(main.querySelectorAll("section.tier"),
          function (s) { s.hidden = s !== sec; });
        Array.prototype.forEach.call(tabs.children, function (b) {
          b.setAttribute("aria-pressed", String(b === button));
        });
      });
      tabs.append(button);
      var what = t === 0 ? D.hosts + " hosts"
        : tier.hosts + " of the top " + tier.key + " ranked domains have an entry";
      sec.append(el("p", { class: "meta", text: tier.label + ": " + what + "." }));
      if (D.categories.length) {
        sec.append(el("h2", { text: "By category" }));
        var ct = el("table", { class: "categories" }, head(["category", "agents"]));
        var cb = el("tbody");
        D.categories.forEach(function (line) {
          var c = tier.of(line);
          var tr = el("tr", {}, el("td", { class: "l", "data-v": line.category,
                                           text: line.category }),
                      el("td", { class: "l", "data-v": line.agents.length,
                                 title: line.agents.join(", "),
                                 text: String(line.agents.length) }));
          shown.forEach(function (s) {
            tr.append(countCell(tier, "category", line.category, S[s],
                                c[S[s]], tier.hosts));
          });
          signals.forEach(function (g) {
            tr.append(countCell(tier, "category", line.category, g.key,
                                c[g.key], tier.hosts));
          });
          tr.append(el("td", { class: "barcell" }, bar(c, tier.hosts)));
          cb.append(tr);
        });
        ct.append(cb);
        sortable(ct);
        sec.append(ct);
      }
      sec.append(el("h2", { text: "By agent" }));
      var at = el("table", { class: "agents" }, head(["agent", "category"]));
      at.tHead.rows[0].append(el("th", { class: "l nosort", text: "per host" }));
      var ab = el("tbody");
      D.agents.forEach(function (line, a) {
        var c = tier.of(line);
        var tr = el("tr", {}, el("td", { class: "l", "data-v": line.agent,
                                         text: line.agent }),
                    el("td", { class: "l", "data-v": line.category || "",
                               text: line.category || "-" }));
        shown.forEach(function (s) {
          tr.append(countCell(tier, "agent", line.agent, S[s], c[S[s]],
                              tier.hosts));
        });
        signals.forEach(function (g) {
          tr.append(countCell(tier, "agent", line.agent, g.key, c[g.key],
                              tier.hosts));
        });
        tr.append(el("td", { class: "barcell" }, bar(c, tier.hosts)));
        tr.append(el("td", { class: "l" }, download(a, line.agent + ".csv")));
        ab.append(tr);
      });
      at.append(ab);
      sortable(at);
      sec.append(at);
      main.append(sec);
    });
    if (location.hash === "#csv") {
      main.append(el("pre", { id: "csv-preview", text: csv(null).join("") }));
    }
    body.setAttribute("data-rendered", "yes");
  } catch (e) {
    body.setAttribute("data-error", String(e));
    var p = document.getElementById("error");
    if (p) p.textContent = "The report could not be drawn: " + e;
  }
})();
