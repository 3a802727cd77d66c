extension StatusPageAssets {
    /// The page's script: follows `/v1/events` with `EventSource` (which resumes with
    /// `Last-Event-ID` by itself after a reconnect), updates the server-rendered elements in place,
    /// samples `/v1/status` for the latency charts while the page is visible, and says honestly when
    /// reachd is away. Text goes in through `textContent` only, never as markup.
    package static let script = """
        "use strict";
        (() => {
          const data = JSON.parse(document.getElementById("page-data").textContent);
          const words = data.words;
          const $ = (id) => document.getElementById(id);
          const icon = document.querySelector(".verdict .icon");
          const windowSeconds = 600, sampleMs = 5000, maxRows = 50;
          const series = new Map();
          let current = data.status;

          const state = (code) => words.states[code] || words.states.unknown;
          const health = (code) => words.healths[code] || words.healths.unknown;
          const fault = (code) => words.faults[code] || code;
          const families = (codes) => (Array.isArray(codes) ? codes : []).map((code) => words.families[code] || code).join(", ");
          const reason = (code) => words.reasons[code] || code.replace(/_/g, " ");
          const time = (text) => text ? text.slice(0, 19).replace("T", " ") + " UTC" : "";
          const span = (seconds) => {
            const s = Math.max(0, Math.floor(seconds)), d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24, m = Math.floor(s / 60) % 60;
            if (d) return h ? `${d} d ${h} h` : `${d} d`;
            if (h) return m ? `${h} h ${m} min` : `${h} h`;
            return m ? `${m} min` : `${s} s`;
          };
          const latency = (s) => s == null ? "\\u2014" : s < 1 ? `${Math.round(s * 1000)} ms` : `${Math.round(s * 100) / 100} s`;
          const percent = (share) => `${Math.round(share * 1000) / 10} %`;
          const finding = (f) => {
            const ms = (s) => `${Math.round(s * 1000)} ms`;
            if (f.measure === "loss") return `${percent(f.value)} lost (budget ${percent(f.budget)})`;
            if (f.measure === "jitter") return `jitter ${ms(f.value)} (budget ${ms(f.budget)})`;
            return `${ms(f.value)} (budget ${ms(f.budget)})`;
          };
          // As PageWords.quality: the first paint and every event say the same.
          const quality = (target) => {
            const w = target.quality_window, q = target.quality;
            if (!w) return "";
            const measures = `median ${latency(w.latency_seconds)}, ${w.loss == null ? latency(null) : percent(w.loss)} lost`;
            if (!q) return `not judged yet (${measures})`;
            if (q.state !== "impaired") return `good (${measures})`;
            return "impaired: " + q.exceeded.map(finding).join(", ");
          };
          const element = (tag, className, text) => {
            const node = document.createElement(tag);
            if (className) node.className = className;
            if (text != null) node.textContent = text;
            return node;
          };
          const show = (id, visible) => { $(id).hidden = !visible; };

          function live(kind, text) {
            const node = $("live");
            node.dataset.state = kind;
            node.textContent = text;
          }

          function renderVerdict(doc) {
            const verdict = $("verdict");
            verdict.dataset.state = doc.state;
            $("verdict-word").textContent = state(doc.state);
            $("verdict-reason").textContent = doc.reason_detail;
            $("verdict-since").dateTime = doc.since;
            $("verdict-since").textContent = time(doc.since);
            for (const fact of data.facts) {
              const value = fact.key.split(".").reduce((object, key) => (object == null ? null : object[key]), doc);
              const codes = value == null ? [] : Array.isArray(value) ? value.map(String) : [String(value)];
              $(`verdict-${fact.id}`).textContent = codes.map((code) => fact.words[code] || code).join(", ");
              show(`verdict-${fact.id}-row`, codes.length > 0);
            }
            $("sequence").textContent = String(doc.sequence);
            document.title = `${state(doc.state)} \\u00b7 reachd`;
            tick();
          }

          function tick() {
            const since = Date.parse(current.since);
            if (!Number.isNaN(since)) $("verdict-for").textContent = span((Date.now() - since) / 1000);
          }

          function targetItem(name) {
            for (const item of document.querySelectorAll("#targets > li")) if (item.dataset.target === name) return item;
            const item = element("li", "target");
            item.dataset.target = name;
            const head = element("div", "item-head");
            const badge = element("span", "badge");
            badge.append(icon.cloneNode(true), element("span", "health-word"));
            head.append(element("h3", null, name), badge);
            const facts = element("dl", "facts");
            const row = (label, className) => {
              const div = element("div");
              div.append(element("dt", null, label), element("dd", className));
              facts.append(div);
              return div;
            };
            row("Latency", "latency");
            row("Certificate expires", "cert").className = "cert-row";
            row("Degraded address family", "families").className = "families-row";
            row("Quality", "quality").className = "quality-row";
            const chart = document.createElementNS("http://www.w3.org/2000/svg", "svg");
            chart.setAttribute("class", "chart");
            chart.setAttribute("viewBox", "0 0 300 48");
            chart.setAttribute("preserveAspectRatio", "none");
            chart.setAttribute("role", "img");
            chart.setAttribute("aria-label", `Latency of ${name} over the last minutes`);
            item.append(head, element("p", "target-detail muted"), facts, chart);
            $("targets").append(item);
            return item;
          }

          function renderTargets(doc) {
            const names = new Set();
            for (const target of doc.targets || []) {
              names.add(target.name);
              const item = targetItem(target.name);
              item.dataset.state = target.health;
              item.querySelector(".health-word").textContent = health(target.health);
              let detail = (target.kind || "").toUpperCase();
              if (target.reason) detail += " \\u00b7 " + reason(target.reason);
              if (target.detail && target.detail !== reason(target.reason || "")) detail += ": " + target.detail;
              item.querySelector(".target-detail").textContent = detail;
              item.querySelector(".latency").textContent = latency(target.latency_seconds);
              const cert = target.certificate;
              item.querySelector(".cert-row").hidden = !cert;
              if (cert) {
                const left = (Date.parse(cert.not_after) - Date.now()) / 1000;
                item.querySelector(".cert").textContent = `${time(cert.not_after)} (${left < 0 ? "expired " + span(-left) + " ago" : "in " + span(left)})`;
              }
              item.querySelector(".families").textContent = families(target.degraded_families);
              item.querySelector(".families-row").hidden = item.querySelector(".families").textContent === "";
              item.querySelector(".quality").textContent = quality(target);
              item.querySelector(".quality-row").hidden = !target.quality_window;
              record(target);
            }
            for (const item of document.querySelectorAll("#targets > li")) if (!names.has(item.dataset.target)) item.remove();
          }

          // The server's interfaceItem, built anew: the uplinks, then usable interfaces that are not uplinks.
          function renderInterfaces(doc) {
            const uplinks = Array.isArray(doc.interfaces) ? doc.interfaces : [];
            const lines = uplinks.map((link) => ({
              name: link.name, state: link.reachable == null ? "unknown" : link.reachable ? "healthy" : "unhealthy",
              reason: link.reason, fault: link.fault, latency: link.latency_seconds,
            }));
            for (const name of doc.usable_interfaces || []) if (!lines.some((line) => line.name === name)) lines.push({ name, state: "usable" });
            $("interfaces").replaceChildren(...lines.map((line) => {
              const item = element("li", "interface");
              item.dataset.interface = line.name;
              item.dataset.state = line.state;
              const head = element("div", "item-head");
              const badge = element("span", "badge");
              badge.append(icon.cloneNode(true), element("span", "interface-word", words.uplinks[line.state] || words.uplinks.unknown));
              head.append(element("h3", null, line.name), badge);
              const facts = element("dl", "facts");
              for (const [label, name, text] of [
                ["Why", "reason", line.reason ? reason(line.reason) : null],
                ["Fault", "fault", line.fault ? fault(line.fault) : null],
                ["Latency", "latency", line.latency != null ? latency(line.latency) : null],
              ]) {
                const div = element("div", name + "-row");
                div.hidden = text == null;
                div.append(element("dt", null, label), element("dd", name, text));
                facts.append(div);
              }
              item.append(head, facts);
              return item;
            }));
            show("interfaces-none", lines.length === 0);
          }

          function addTransition(doc) {
            const body = document.querySelector("#transitions tbody");
            const row = element("tr");
            row.setAttribute("role", "row");
            row.dataset.state = doc.state;
            const at = element("time", null, time(doc.since));
            at.dateTime = doc.since;
            const labels = [...document.querySelectorAll("#transitions thead th")].map((th) => th.textContent);
            const cell = (child) => { const td = element("td"); td.setAttribute("role", "cell"); td.dataset.label = labels[row.children.length]; td.append(child); row.append(td); };
            cell(at);
            const stateCell = element("span");
            stateCell.append(icon.cloneNode(true), " " + state(doc.state));
            cell(stateCell);
            cell(reason(doc.reason));
            cell(doc.fault ? fault(doc.fault) : "\\u2014");
            cell(doc.target || "\\u2014");
            body.prepend(row);
            while (body.children.length > maxRows) body.lastElementChild.remove();
          }

          function record(target) {
            if (target.latency_seconds == null || !target.last_checked_at) return;
            const at = Date.parse(target.last_checked_at) / 1000;
            const points = series.get(target.name) || [];
            if (!points.length || points[points.length - 1][0] < at) points.push([at, target.latency_seconds]);
            const oldest = Date.now() / 1000 - windowSeconds;
            while (points.length && points[0][0] < oldest) points.shift();
            series.set(target.name, points);
          }

          function drawCharts() {
            const now = Date.now() / 1000, start = now - windowSeconds;
            for (const item of document.querySelectorAll("#targets > li")) {
              const chart = item.querySelector("svg.chart");
              const points = (series.get(item.dataset.target) || []).filter((p) => p[0] >= start);
              const top = Math.max(0.001, ...points.map((p) => p[1]));
              const xy = points.map((p) => [((p[0] - start) / windowSeconds * 300).toFixed(1), (46 - p[1] / top * 44).toFixed(1)]);
              const ns = "http://www.w3.org/2000/svg";
              const axis = document.createElementNS(ns, "line");
              for (const [k, v] of [["class", "axis"], ["x1", 0], ["y1", 47], ["x2", 300], ["y2", 47]]) axis.setAttribute(k, v);
              const shapes = [axis];
              if (xy.length > 1) {
                const line = document.createElementNS(ns, "polyline");
                line.setAttribute("class", "line");
                line.setAttribute("points", xy.map((p) => p.join(",")).join(" "));
                shapes.push(line);
              } else if (xy.length === 1) {
                const dot = document.createElementNS(ns, "circle");
                for (const [k, v] of [["class", "dot"], ["r", 2], ["cx", xy[0][0]], ["cy", xy[0][1]]]) dot.setAttribute(k, v);
                shapes.push(dot);
              }
              chart.replaceChildren(...shapes);
            }
          }

          function apply(doc) {
            const changed = doc.state !== current.state || doc.since !== current.since;
            current = doc;
            renderVerdict(doc);
            renderTargets(doc);
            renderInterfaces(doc);
            if (changed) addTransition(doc);
            drawCharts();
          }

          for (const [name, points] of Object.entries(data.latency || {})) series.set(name, points.slice());
          renderTargets(current);
          drawCharts();

          let source = null;
          function connect() {
            source = new EventSource(`/v1/events?last_event_id=${encodeURIComponent(current.sequence)}`);
            source.onopen = () => live("live", "Live: following reachd\\u2019s events.");
            source.addEventListener("verdict", (event) => apply(JSON.parse(event.data)));
            source.onerror = () => {
              const since = new Date().toISOString().slice(11, 19);
              if (source.readyState === EventSource.CLOSED) {
                live("reconnecting", `Reconnecting\\u2026 reachd refused the event stream at ${since} UTC; retrying.`);
                source = null;
                setTimeout(connect, 3000);
              } else if ($("live").dataset.state !== "reconnecting") {
                live("reconnecting", `Reconnecting\\u2026 reachd has not answered since ${since} UTC; what you see may be out of date.`);
              }
            };
          }
          connect();

          async function sample() {
            if (document.visibilityState !== "visible" || !source || source.readyState !== EventSource.OPEN) return;
            try {
              const response = await fetch("/v1/status", { cache: "no-store", credentials: "same-origin" });
              if (!response.ok) return;
              const doc = await response.json();
              for (const target of doc.targets || []) record(target);
              drawCharts();
            } catch (_) { /* the event stream reports reachd's absence */ }
          }
          setInterval(sample, sampleMs);
          setInterval(tick, 1000);
        })();

        """
}
