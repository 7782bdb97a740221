// The generic replay player: controls, the decision panel and the final result.
// The game's own script (window.FamigliaBoard, loaded first) draws the board.
// Every text that came from a bot or a replay is put in the page with
// textContent (through h()), never parsed as HTML.
(function () {
  "use strict";
  // The page's data is gzip-compressed JSON in base64 (a twentieth of its size
  // as plain JSON); the browser's own DecompressionStream unpacks it.
  async function unpack(text) {
    const bytes = Uint8Array.from(atob(text.trim()), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }
  function cannotShow(message) {
    const note = document.createElement("p");
    note.className = "problem";
    note.textContent = message;
    document.getElementById("board").replaceChildren(note);
  }
  if (typeof DecompressionStream === "undefined") {
    cannotShow("This browser cannot unpack the replay in this page; open it in a browser from 2023 or later.");
    return;
  }
  unpack(document.getElementById("famiglia-replay").textContent).then(run,
    (error) => cannotShow("The replay in this page cannot be read (" + error.message + "); the file may be damaged."));

  function run(data) {
    window.famigliaReplay = data; // what the page shows, unpacked, for tools and tests
    const steps = data.steps;
    const last = Math.max(steps.length - 1, 0);
    const board = window.FamigliaBoard || null;
    const $ = (id) => document.getElementById(id);

    function h(tag, attrs) {
      const node = document.createElement(tag);
      for (const [key, value] of Object.entries(attrs || {})) {
        if (value === null || value === undefined || value === false) continue;
        if (key === "class") node.className = value;
        else if (key === "style") node.style.cssText = value;
        else node.setAttribute(key, value === true ? "" : String(value));
      }
      for (let i = 2; i < arguments.length; i++) append(node, arguments[i]);
      return node;
    }
    function append(node, child) {
      if (child === null || child === undefined || child === false) return;
      if (Array.isArray(child)) { child.forEach((c) => append(node, c)); return; }
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    function seatName(seat) { return "seat " + seat + " " + (data.seats[seat] || "?"); }
    // A seat's colour always comes with its name; ``short`` leaves out "seat N" where room is tight.
    function seatLabel(seat, short) {
      return h("span", { class: "seat", "data-seat": seat, title: seatName(seat) },
        h("span", { class: "swatch", style: "background:" + data.colours[seat] }),
        h("span", { class: "name" }, short ? (data.seats[seat] || "?") : seatName(seat)));
    }
    // Figures as the boards write them: 1,250,000, not 1250000.
    function number(value) { return typeof value === "number" ? value.toLocaleString("en-US") : String(value); }
    function compact(value) {
      if (Array.isArray(value)) return "[" + value.map(compact).join(", ") + "]";
      if (value && typeof value === "object") {
        const parts = Object.entries(value).filter(([k]) => k !== "type").map(([k, v]) => k + "=" + compact(v));
        return (value.type ? value.type + (parts.length ? " " : "") : "") + parts.join(" ");
      }
      return String(value);
    }
    const ctx = { h, seatLabel, seatName, compact, number, seats: data.seats, colours: data.colours, view: data.view, game: data.game };

    function describe(kind, value) {
      if (board && board[kind]) {
        const text = board[kind](value, ctx);
        if (text !== null && text !== undefined) return text;
      }
      return compact(value);
    }

    let index = 0;
    let timer = null;

    function drawBoard(step) {
      const root = $("board");
      if (!board) {
        root.replaceChildren(h("p", { class: "problem" }, "This page has no board drawing for the game " + data.game + "; the decisions are listed on the right."));
        return;
      }
      try {
        board.draw(root, step, ctx);
      } catch (error) {
        root.replaceChildren(h("p", { class: "problem" }, "The board cannot be drawn at this step (" + error.message + "); the replay may be damaged."));
      }
    }

    function drawDecision(step, i) {
      const panel = $("decision");
      const rows = [];
      if (step.seat === null) {
        rows.push(h("dt", {}, "position"), h("dd", {}, "the start, before any decision"));
      } else {
        rows.push(h("dt", {}, "seat"), h("dd", { "data-testid": "decision-seat" }, seatLabel(step.seat)));
        rows.push(h("dt", {}, "decision"), h("dd", {}, step.decision));
        // One answer of a step of simultaneous moves: every asked seat answered sealed, and the step's events come with its last answer.
        if (step.together) rows.push(h("dt", {}, "step"), h("dd", { "data-testid": "decision-together" }, "simultaneous: sealed until every seat asked had answered"));
        if (step.action !== null) rows.push(h("dt", {}, "action"), h("dd", { "data-testid": "decision-action" }, describe("describeAction", step.action), step.substituted ? " (played by the referee)" : ""));
        else if (step.forfeit === null) rows.push(h("dt", {}, "action"), h("dd", { class: "muted", "data-testid": "decision-action-hidden" }, "another seat's action, which this game keeps from this seat; what it made public is in the events"));
        if (step.ms !== null) rows.push(h("dt", {}, "thinking"), h("dd", { "data-testid": "decision-ms" }, step.ms.toFixed(1) + " ms"));
        rows.push(h("dt", {}, "replay line"), h("dd", {}, step.line));
      }
      const parts = [h("h2", {}, i === 0 ? "Start" : "Decision " + i + " of " + last), h("dl", {}, rows)];
      for (const rejected of step.rejected) {
        const action = rejected.action === null ? "(its action not kept)" : compact(rejected.action);
        parts.push(h("p", { class: "termination" }, "Rejected " + action + ": " + rejected.rule + ": " + rejected.message));
      }
      if (step.forfeit) {
        parts.push(h("p", { class: "termination", "data-testid": "termination" }, "Forfeit (" + step.forfeit.kind + ")" + (step.forfeit.reason ? ": " + step.forfeit.reason : "")));
      }
      if (step.logs.length) parts.push(h("div", { class: "muted" }, "bot log"), h("pre", { class: "logs", "data-testid": "logs" }, step.logs.join("\n")));
      // What the replay left out of a seat's output (the referee's words, never a bot's).
      for (const cut of step.cuts || []) parts.push(h("p", { class: "problem", "data-testid": "cut" }, "Cut: " + cut));
      if (i === last && data.problem) parts.push(h("p", { class: "termination" }, "The replay stops making sense after this step: line " + data.problem.line + ": " + data.problem.message + "."));
      panel.replaceChildren(...parts);
    }

    function drawEvents(step) {
      $("events").replaceChildren(...step.events.map((event) => h("li", {}, describe("describeEvent", event))));
    }

    function drawFinal(i) {
      const panel = $("final");
      if (i !== last) { panel.replaceChildren(); return; }
      if (!data.final) {
        panel.replaceChildren(h("h2", {}, "No result"), h("p", {}, "The replay holds no result line, so there is no final ranking."));
        return;
      }
      const final = data.final;
      const order = data.seats.map((_, s) => s).sort((a, b) => final.ranks[a] - final.ranks[b] || a - b);
      const rows = order.map((s) => h("tr", { "data-testid": "final-row", "data-seat": s },
        h("td", { class: "n", "data-testid": "final-rank" }, final.ranks[s]), h("td", {}, seatLabel(s)),
        h("td", { class: "n", "data-testid": "final-score" }, number(final.scores[s]))));
      panel.replaceChildren(
        h("h2", {}, "Final result (" + final.ended_by + ")"),
        h("table", { id: "final-table" }, h("thead", {}, h("tr", {}, h("th", { class: "n" }, "rank"), h("th", {}, "seat"), h("th", { class: "n" }, "score"))), h("tbody", {}, rows)));
    }

    function show(i, updateHash) {
      index = Math.min(Math.max(i, 0), last);
      const step = steps[index];
      if (!step) {
        $("board").replaceChildren(h("p", { class: "problem" }, "This replay holds no position to show."));
        return;
      }
      drawBoard(step);
      drawDecision(step, index);
      drawEvents(step);
      drawFinal(index);
      $("slider").value = String(index);
      $("position").textContent = "step " + index + " / " + last;
      document.body.dataset.step = String(index);
      const hash = index === last ? "#end" : "#step=" + index;
      if (updateHash !== false && location.hash !== hash) history.replaceState(null, "", hash);
      for (const link of document.querySelectorAll("a[data-view-link]")) {
        link.setAttribute("href", link.getAttribute("href").split("#")[0] + hash);
      }
    }

    function fromHash() {
      const hash = location.hash;
      if (hash === "#end") return last;
      const match = /^#step=(\d+)$/.exec(hash);
      return match ? Number(match[1]) : 0;
    }

    function stop() { if (timer !== null) { clearInterval(timer); timer = null; } $("play").textContent = "play"; }
    function play() {
      if (timer !== null) { stop(); return; }
      if (index >= last) show(0);
      $("play").textContent = "pause";
      timer = setInterval(() => { if (index >= last) stop(); else show(index + 1); }, Number($("speed").value));
    }

    $("slider").max = String(last);
    $("slider").addEventListener("input", (e) => { stop(); show(Number(e.target.value)); });
    $("first").addEventListener("click", () => { stop(); show(0); });
    $("back").addEventListener("click", () => { stop(); show(index - 1); });
    $("forward").addEventListener("click", () => { stop(); show(index + 1); });
    $("last").addEventListener("click", () => { stop(); show(last); });
    $("play").addEventListener("click", play);
    $("speed").addEventListener("change", () => { if (timer !== null) { stop(); play(); } });
    document.addEventListener("keydown", (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey || e.target.tagName === "SELECT") return;
      const keys = { ArrowRight: () => show(index + 1), ArrowLeft: () => show(index - 1), Home: () => show(0), End: () => show(last) };
      if (e.key === " " || e.key === "Spacebar") { e.preventDefault(); play(); return; }
      if (keys[e.key] && e.target.type !== "range") { e.preventDefault(); stop(); keys[e.key](); }
    });
    window.addEventListener("hashchange", () => show(fromHash(), false));
    show(fromHash(), false);
  }
})();
