// Vendetta's board for the famiglia replay viewer: the 13 districts with every
// seat's mafiosi, the seats' hands, boxes and points, the round, the protection
// cards and what this step's events did. It draws only what the step's snapshot
// holds (the engine's view, plus the hidden cards in the all-seeing view).
window.FamigliaBoard = (function () {
  "use strict";
  const list = (xs) => (xs.length ? xs.join(", ") : "none");

  function draw(root, step, ctx) {
    const h = ctx.h;
    const v = step.state;
    const n = v.n_players;
    // What this step's events did, district by district: one line per kind of
    // thing (a placement, a vendetta, a payment, a raid), so a busy district
    // never holds more lines than its card has room for. The card turned this
    // step shows in the district's badge, not as a line.
    const marks = {};
    const turnedNow = new Set();
    const mark = (d, kind, text) => {
      const kinds = (marks[d] = marks[d] || {});
      kinds[kind] = kinds[kind] ? kinds[kind] + ", " + text : text;
    };
    for (const e of step.events) {
      if (e.type === "revealed") turnedNow.add(e.district);
      else if (e.type === "eliminated") mark(e.district, "vendetta", "seat " + e.seat + " lost " + e.count);
      else if (e.type === "paid") mark(e.district, "paid", (e.seats.length === 1 ? "seat " : "seats ") + e.seats.join(", "));
      else if (e.type === "raided") e.districts.forEach((d) => mark(d, "raid", "emptied"));
      else if (e.type === "placed") e.placements.forEach((p) => mark(p.district, "placed", "seat " + e.seat + " +" + p.count));
    }
    const LABELS = { placed: "placed: ", vendetta: "vendetta: ", paid: "paid: ", raid: "raid: " };
    const status = h("div", { class: "v-status" },
      h("span", { "data-testid": "round" }, "Round " + v.round + " of at most " + v.round_limit),
      h("span", { "data-testid": "turn" }, v.over ? "game over" : "turn " + (v.turn + 1) + " of 11"),
      h("span", {}, "start: ", ctx.seatLabel(v.start_seat)),
      v.over ? h("span", {}, "to play: nobody") : h("span", {}, "to play: ", ctx.seatLabel(v.active_seat)),
      h("span", { class: "muted" }, "wins with " + v.target_districts + " districts or " + v.target_points + " points"));
    const cards = h("div", { class: "v-cards" },
      h("div", { "data-testid": "revealed" }, h("b", {}, "Protection cards shown this round: "), list(v.revealed), h("span", { class: "muted" }, " (" + v.pile_left + " left)")),
      h("div", { "data-testid": "last-raid" }, h("b", {}, "Last raid: "), list(v.last_raid)),
      v.hidden ? h("div", { class: "v-hidden", "data-testid": "hidden-cards" }, h("b", {}, "Hidden from every seat: "),
        "next protection cards " + list(v.hidden.pile) + "; raid this round " + list(v.hidden.raid)) : null);
    const districts = [];
    for (let d = 1; d <= 13; d++) {
      const counts = v.board[d - 1];
      const shown = v.revealed.indexOf(d) >= 0;
      const rows = [];
      for (let s = 0; s < n; s++) {
        rows.push(h("div", { class: "v-row" + (counts[s] ? "" : " zero") },
          ctx.seatLabel(s, true), h("span", { class: "v-count", "data-testid": "district-" + d + "-seat-" + s }, counts[s])));
      }
      const notes = Object.entries(marks[d] || {}).map(([kind, text]) =>
        h("div", { class: "v-mark m-" + kind, title: LABELS[kind] + text, "data-testid": "district-" + d + "-" + kind }, LABELS[kind] + text));
      const badge = shown ? h("span", { class: "v-badge" + (turnedNow.has(d) ? " now" : ""), "data-testid": "district-" + d + "-turned",
        title: "This district's protection card was turned this round: its vendetta has been fought [V1-V5]." }, "turned") : null;
      districts.push(h("div", { class: "v-district" + (shown ? " shown" : "") + (notes.length || turnedNow.has(d) ? " touched" : ""), "data-district": d },
        h("div", { class: "v-dhead" }, h("b", {}, "District " + d), badge),
        rows, h("div", { class: "v-notes", "data-testid": "district-" + d + "-notes" }, notes)));
    }
    const seatRows = [];
    for (let s = 0; s < n; s++) {
      seatRows.push(h("tr", { class: v.active_seat === s ? "active" : "" },
        h("td", {}, ctx.seatLabel(s), v.forfeited[s] ? h("span", { class: "termination" }, " forfeited") : null),
        h("td", { class: "n", "data-testid": "seat-" + s + "-hand" }, v.hands[s]),
        h("td", { class: "n", "data-testid": "seat-" + s + "-box" }, v.box[s]),
        h("td", { class: "n", "data-testid": "seat-" + s + "-points" }, ctx.number(v.points[s])),
        h("td", { class: "n", "data-testid": "seat-" + s + "-controlled" }, v.controlled[s]),
        h("td", {}, list(v.dealt[s]))));
    }
    const seats = h("table", { class: "v-seats" },
      h("thead", {}, h("tr", {}, h("th", {}, "seat"), h("th", { class: "n" }, "hand"), h("th", { class: "n" }, "box"),
        h("th", { class: "n" }, "points"), h("th", { class: "n", title: "districts controlled at the last scoring" }, "controlled"), h("th", {}, "dealt"))),
      h("tbody", {}, seatRows));
    let winner = null;
    const over = step.events.find((e) => e.type === "game_over");
    if (v.over && over) winner = h("div", { class: "v-winner" }, "Game over (" + over.ended_by + "): winner ", over.winners.map((w) => ctx.seatLabel(w)));
    root.replaceChildren(h("style", {}, STYLE), status, cards, winner || h("div", { class: "v-winner empty" }, v.over ? "Game over" : "\u00a0"),
      h("div", { class: "v-scroll" }, seats), h("div", { class: "v-grid" }, districts),
      h("p", { class: "v-key muted", "data-testid": "board-key" },
        h("span", { class: "v-badge" }, "turned"), " the district's protection card came up this round, so its vendetta has been fought; ",
        h("span", { class: "v-badge now" }, "turned"), " it came up at this decision. An outlined district is one this decision changed."));
  }

  function describeAction(action, ctx) {
    if (action.type !== "place") return null;
    if (!action.placements.length) return "places nothing";
    return "places " + action.placements.map((p) => p.count + " in district " + p.district).join(" and ");
  }

  function describeEvent(e, ctx) {
    switch (e.type) {
      case "round_start": return "Round " + e.round + " starts with " + ctx.seatName(e.start_seat);
      case "placed": return ctx.seatName(e.seat) + (e.placements.length ? " placed " + e.placements.map((p) => p.count + " in district " + p.district).join(", ") : " placed nothing");
      case "revealed": return ctx.seatName(e.seat) + " revealed the protection card of district " + e.district;
      case "eliminated": return "Vendetta in district " + e.district + ": " + ctx.seatName(e.seat) + " lost " + e.count + " mafiosi";
      case "paid": return "Protection money in district " + e.district + " to " + e.seats.map(ctx.seatName).join(", ");
      case "raided": return "Raid on districts " + e.districts.join(" and ") + "; lost: " + e.lost.map((x, s) => ctx.seatName(s) + " " + x).join(", ");
      case "scored": return "Scoring of round " + e.round + ": controlled " + e.controlled.join("/") + ", gained " + e.gained.join("/") + ", points " + e.points.join("/");
      case "reinforced": return "Reinforcements: " + e.taken.map((x, s) => ctx.seatName(s) + " +" + x).join(", ");
      case "forfeited": return ctx.seatName(e.seat) + " forfeited";
      case "game_over": return "Game over (" + e.ended_by + "): winners " + e.winners.map(ctx.seatName).join(", ");
      default: return null;
    }
  }

  const STYLE = `
.v-status { display: flex; flex-wrap: wrap; gap: 0.3rem 1.2rem; align-items: center; align-content: flex-start; font-size: 0.95rem; min-height: 2.8rem; }
.v-cards { margin: 0.4rem 0; font-size: 0.9rem; display: grid; gap: 0.15rem; }
.v-hidden { color: #6b4e00; }
.v-winner { min-height: 1.6rem; font-weight: 600; display: flex; gap: 0.5rem; align-items: center; flex-wrap: wrap; }
.v-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(9.6rem, 46%), 1fr)); gap: 0.45rem; margin: 0.3rem 0 0.5rem; }
.v-district { border: 2px solid #d9d9de; border-radius: 8px; padding: 0.3rem 0.45rem; background: #fbfbfc; font-size: 0.85rem; }
.v-district.shown { background: #eef4ff; }
.v-district.touched { border-color: #0b57d0; }
.v-dhead { display: flex; justify-content: space-between; align-items: center; margin-bottom: 0.15rem; }
.v-badge { font-size: 0.7rem; background: #0b57d0; color: #fff; border-radius: 3px; padding: 0 0.3rem; white-space: nowrap; }
.v-row { display: flex; justify-content: space-between; gap: 0.3rem; line-height: 1.35; }
.v-row.zero { opacity: 0.45; }
.v-count { font-weight: 600; min-width: 1.5rem; text-align: right; }
.v-badge.now { background: #8a1c00; }
.v-notes { height: calc(3 * 1.25 * 0.72rem); font-size: 0.72rem; line-height: 1.25; color: #333; }
.v-mark { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.v-mark.m-vendetta, .v-mark.m-raid { color: #8a1c00; font-weight: 600; }
.v-key { font-size: 0.8rem; margin: 0 0 0.8rem; line-height: 1.6; }
.v-scroll { overflow-x: auto; }
.v-seats { font-size: 0.9rem; width: 100%; margin-bottom: 0.5rem; }
@media (max-width: 820px) { .v-district { font-size: 0.78rem; padding: 0.25rem 0.3rem; } .v-grid { gap: 0.3rem; } }
.v-seats tr.active { background: #eef4ff; }
`;
  return { draw, describeAction, describeEvent };
})();
