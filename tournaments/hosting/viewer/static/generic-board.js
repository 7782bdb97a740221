// The generic drawing of the famiglia replay viewer, for a game that brings no
// board.js of its own: each view the step's snapshot holds, and the step's
// events, laid out as tables. It knows nothing of any game: an object becomes
// a table of its fields, a list of objects a table with a column per field, a
// list of plain values one line. Every text goes in through ctx.h, as text.
window.FamigliaBoard = (function () {
  "use strict";

  function scalar(value, ctx) {
    if (value === null || value === undefined) return ctx.h("span", { class: "muted" }, "none");
    if (typeof value === "boolean") return value ? "yes" : "no";
    if (typeof value === "number") return ctx.number(value);
    return String(value);
  }

  function isPlain(value) { return value === null || typeof value !== "object"; }
  function plainText(ctx) {
    return (v) => (v === null ? "–" : typeof v === "boolean" ? (v ? "yes" : "no") : typeof v === "number" ? ctx.number(v) : String(v));
  }

  // Any JSON value as something to put in a table cell.
  function render(value, ctx) {
    const h = ctx.h;
    if (isPlain(value)) return scalar(value, ctx);
    if (Array.isArray(value)) {
      if (!value.length) return h("span", { class: "muted" }, "none");
      if (value.every(isPlain)) return value.map(plainText(ctx)).join(", ");
      if (value.every((v) => v && typeof v === "object" && !Array.isArray(v))) return rows(value, ctx);
      return h("table", { class: "g-table" }, h("tbody", {}, value.map((v, i) =>
        h("tr", {}, h("th", { class: "n" }, String(i)), h("td", {}, render(v, ctx))))));
    }
    return fields(value, ctx);
  }

  // An object: one row per field, its name beside its value (the "type" tag as a caption).
  function fields(object, ctx) {
    const h = ctx.h;
    const entries = Object.entries(object).filter(([key]) => key !== "type");
    return h("table", { class: "g-table g-fields" },
      object.type ? h("caption", {}, String(object.type)) : null,
      h("tbody", {}, entries.map(([key, value]) => h("tr", { "data-field": key }, h("th", {}, key), h("td", {}, render(value, ctx))))));
  }

  // A list of objects: a column per field that any of them has.
  function rows(list, ctx) {
    const h = ctx.h;
    const keys = [];
    for (const item of list) for (const key of Object.keys(item)) if (keys.indexOf(key) < 0) keys.push(key);
    return h("table", { class: "g-table" },
      h("thead", {}, h("tr", {}, keys.map((key) => h("th", {}, key)))),
      h("tbody", {}, list.map((item) => h("tr", {}, keys.map((key) => h("td", {}, key in item ? render(item[key], ctx) : ""))))));
  }

  function eventTable(events, ctx) {
    const h = ctx.h;
    if (!events.length) return h("p", { class: "muted" }, "No events at this step.");
    return h("table", { class: "g-table g-events", "data-testid": "generic-events" },
      h("thead", {}, h("tr", {}, h("th", {}, "event"), h("th", {}, "details"))),
      h("tbody", {}, events.map((event) => {
        const details = Object.entries(event).filter(([key]) => key !== "type");
        return h("tr", {}, h("td", {}, String(event.type || "?")),
          h("td", {}, details.length ? h("table", { class: "g-table g-fields" }, h("tbody", {},
            details.map(([key, value]) => h("tr", {}, h("th", {}, key), h("td", {}, render(value, ctx)))))) : ""));
      })));
  }

  function draw(root, step, ctx) {
    const h = ctx.h;
    const state = step.state || {};
    const parts = [h("style", {}, STYLE)];
    if (state.views && typeof state.views === "object") {
      // The default snapshot: the engine's view of each seat this page may show, side by side.
      parts.push(h("div", { class: "g-grid" }, Object.entries(state.views).map(([seat, view]) =>
        h("section", { class: "g-view", "data-testid": "generic-view-" + seat },
          h("h2", {}, ctx.seatLabel(Number(seat)), " ", h("span", { class: "muted" }, "— its view")),
          render(view, ctx)))));
    } else {
      // A snapshot of the game's own shape, drawn as it is.
      parts.push(h("section", { class: "g-view", "data-testid": "generic-view" }, h("h2", {}, "Position"), render(state, ctx)));
    }
    parts.push(h("section", { class: "g-view" }, h("h2", {}, "Events of this step"), eventTable(step.events, ctx)));
    root.replaceChildren(...parts);
  }

  const STYLE = `
.g-view { margin: 0 0 0.9rem; min-width: 0; overflow-x: auto; }
.g-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(19rem, 100%), 1fr)); gap: 0 1rem; }
.g-view h2 { display: flex; align-items: center; gap: 0.3rem; }
.g-table { font-size: 0.88rem; margin: 0.1rem 0; }
.g-table caption { text-align: left; font-weight: 600; color: #5f6368; padding: 0 0 0.1rem; }
.g-table th { font-weight: 600; color: #3c4043; vertical-align: top; white-space: nowrap; }
.g-table td { vertical-align: top; overflow-wrap: anywhere; }
.g-fields > tbody > tr > th { width: 1%; }
.g-events > tbody > tr > td:first-child { font-weight: 600; white-space: nowrap; }
`;
  return { draw };
})();
