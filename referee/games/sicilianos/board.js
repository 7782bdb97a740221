// Sicilianos' table for the famiglia replay viewer: the six family piles, each
// seat's hand, money and businesses, the dice, and the gang war (the one under
// way, or the last one with its outcome). A hand shows card backs in family
// colours unless the step's snapshot holds that seat's values, which it does
// only in the all-seeing view and for the seat a page follows.
window.FamigliaBoard = (function () {
  "use strict";
  const COLOURS = ["blue", "white", "black", "yellow", "red", "green"];
  const money = (x) => x.toLocaleString("en-US");
  const count = (k, one, many) => k + " " + (k === 1 ? one : many);
  const DIE = { take2: "take 2", take1: "take 1", steal: "steal" };

  function card(ctx, colour, value, extra) {
    const face = value !== null && value !== undefined;
    return ctx.h("span", { class: "s-card fam-" + colour + (face ? "" : " back") + (extra ? " " + extra : ""),
      "data-colour": colour, "data-value": face ? value : null, title: face ? colour + " " + value : colour + " (face down)" },
      h2(ctx, colour, face ? String(value) : "?"));
  }
  function h2(ctx, colour, text) { return [ctx.h("span", { class: "s-cname" }, colour), ctx.h("span", { class: "s-cval" }, text)]; }

  function draw(root, step, ctx) {
    const h = ctx.h;
    const v = step.state;
    const n = v.n_players;
    const status = h("div", { class: "s-status" },
      h("span", { "data-testid": "turns" }, "Turn " + v.turns + " of at most " + v.turn_limit),
      h("span", {}, "phase: " + v.phase),
      v.phase === "over" ? h("span", {}, "ended by " + v.ended_by) : h("span", {}, "turn of ", ctx.seatLabel(v.turn_seat)),
      v.to_move === null ? null : h("span", {}, "to decide: ", ctx.seatLabel(v.to_move), " (" + v.decision + ")"));
    const dice = h("div", { class: "s-dice", "data-testid": "dice" }, h("b", {}, "Dice: "),
      v.dice ? [ctx.seatLabel(v.dice.seat), " rolled ", v.dice.colours.map((c) => h("span", { class: "s-die fam-" + c }, c)),
        h("span", { class: "s-die action" }, "action: " + DIE[v.dice.action])] : h("span", { class: "muted" }, "not rolled yet"));
    const piles = h("div", { class: "s-piles" }, COLOURS.map((c) => {
      const known = (v.known_piles || []).find((k) => k.colour === c);
      return h("div", { class: "s-pile fam-" + c, "data-testid": "pile-" + c },
        h("b", {}, c), h("span", { "data-testid": "pile-" + c + "-cards" }, count(v.piles[c], "card", "cards")),
        h("span", { "data-testid": "pile-" + c + "-businesses" }, count(v.business_piles[c], "business", "businesses")),
        known ? h("span", { class: "s-known" }, "known: " + known.order.join(" ")) : null);
    }));
    const seats = [];
    for (let s = 0; s < n; s++) {
      const p = v.players[s];
      const hand = v.hands[String(s)];
      const cards = hand ? hand.map((c) => card(ctx, c.colour, c.value)) : p.hand.map((c) => card(ctx, c, null));
      seats.push(h("div", { class: "s-seat" + (v.to_move === s ? " active" : ""), "data-seat": s },
        h("div", { class: "s-shead" }, ctx.seatLabel(s), p.forfeited ? h("span", { class: "termination" }, "forfeited") : null),
        h("div", { class: "s-money" },
          h("span", {}, "clean ", h("b", { "data-testid": "seat-" + s + "-clean" }, money(p.clean))),
          h("span", {}, "dirty ", h("b", { "data-testid": "seat-" + s + "-dirty" }, money(p.dirty))),
          h("span", { class: "muted s-notes" }, "notes " + (p.notes.length ? p.notes.map(money).join(" ") : "none"))),
        h("div", { class: "s-hand", "data-testid": "seat-" + s + "-hand", "data-size": p.hand_size },
          h("span", { class: "muted s-hlabel" }, count(p.hand_size, "card", "cards") + (hand ? "" : ", face down")), cards),
        h("div", { class: "s-biz", "data-testid": "seat-" + s + "-businesses" }, "businesses: ",
          p.businesses.length ? p.businesses.map((b) => h("span", { class: "s-bcard fam-" + b.colour }, b.colour + " " + (b.kind || "?"))) : "none")));
    }
    let warBox;
    if (v.war) warBox = war(ctx, v.war, "Gang war under way", []);
    else if (v.last_war) warBox = war(ctx, v.last_war.table, "Last gang war", v.last_war.outcome);
    else warBox = h("div", { class: "s-war empty" }, h("b", {}, "No gang war yet"));
    // Room for every seat's row and the outcome whether or not a war is on, so the page never jumps.
    warBox.style.minHeight = (4.6 + 2.3 * n + 6.5) + "rem";
    let steal = null;
    if (v.last_steal) {
      const st = v.last_steal;
      steal = h("div", { class: "s-steal" }, "Last steal: ", ctx.seatLabel(st.thief), " took a ", card(ctx, st.colour, st.value), " from ", ctx.seatLabel(st.victim));
    }
    root.replaceChildren(h("style", {}, STYLE), status, dice, piles, h("div", { class: "s-seats" }, seats), warBox, steal || h("div", { class: "s-steal" }, "\u00a0"));
  }

  function war(ctx, table, title, outcome) {
    const h = ctx.h;
    const rows = table.participants.map((p) => h("tr", {},
      h("td", {}, ctx.seatLabel(p.seat)),
      h("td", {}, h("span", { class: "s-bcard fam-" + p.colour }, p.colour)),
      h("td", { class: "n" }, money(p.stake)),
      h("td", {}, p.cards.map((c) => card(ctx, c.colour, c.value, (c.face_down ? "down" : "") + (c.use === "renegade" ? " renegade" : "")))),
      h("td", { class: "n" }, p.strength),
      h("td", {}, [p.passed ? "passed" : "", p.stopped ? " stopped (renegade)" : "", p.ally !== null ? " ally: " : ""].join(""), p.ally !== null ? ctx.seatLabel(p.ally) : null)));
    const lines = outcome.map((e) => h("li", {}, describeEvent(e, ctx) || ctx.compact(e)));
    return h("div", { class: "s-war", "data-testid": "war" },
      h("b", {}, title + ", started by "), ctx.seatLabel(table.initiator),
      table.winners.length ? h("span", {}, " \u2014 won by ", table.winners.map((w) => ctx.seatLabel(w))) : null,
      h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "seat"), h("th", {}, "family"), h("th", { class: "n" }, "stake"), h("th", {}, "cards"), h("th", { class: "n" }, "strength"), h("th", {}, ""))), h("tbody", {}, rows)),
      h("ul", { class: "s-outcome" }, lines));
  }

  function cardText(c) { return c.colour + " " + (c.value === null || c.value === undefined ? "(face down)" : c.value); }

  function describeAction(a, ctx) {
    switch (a.type) {
      case "draw": return "draws from the " + a.colour + " pile";
      case "inspect": return "looks through the " + a.colour + " pile";
      case "pick": return "picks the " + a.value;
      case "roll": return "rolls the dice";
      case "war": return "starts a war with " + a.colour + " " + a.value + ", stake " + money(a.note);
      case "join": return "joins with " + a.colour + " " + a.value + ", stake " + money(a.note);
      case "stay_out": return "stays out";
      case "play": return "plays " + a.colour + " " + a.value;
      case "pass": return "passes";
      case "steal": return "steals a " + a.colour + " card from " + ctx.seatName(a.target);
      case "give": return "gives the " + a.value;
      case "as_family": return "counts it for the family";
      case "as_renegade": return "turns renegade";
      case "explode": return "explodes the bomb at " + a.colour + " " + a.value;
      case "spoils": return "takes the " + a.take;
      case "business": return "takes the " + a.kind;
      default: return null;
    }
  }

  function describeEvent(e, ctx) {
    const who = (s) => ctx.seatName(s);
    switch (e.type) {
      case "drew": return who(e.seat) + " drew " + cardText(e) + " (" + e.source + ")";
      case "rolled": return who(e.seat) + " rolled " + e.colours.join(" and ") + ", " + DIE[e.action];
      case "took_nothing": return who(e.seat) + " took nothing (" + e.rule + ": " + e.reason + ")";
      case "inspected": return who(e.seat) + " looked through the " + e.colour + " pile" + (e.order ? ": " + e.order.join(" ") : "");
      case "stole": return who(e.thief) + " stole " + cardText(e) + " from " + who(e.victim) + " (picked by " + e.picked_by + ")";
      case "war_started": return who(e.seat) + " started a gang war with " + cardText(e) + ", stake " + money(e.note);
      case "joined": return who(e.seat) + " joined with " + cardText(e) + ", stake " + money(e.note);
      case "stayed_out": return who(e.seat) + " stayed out (" + e.reason + ")";
      case "played": return who(e.seat) + " played " + cardText(e);
      case "passed": return who(e.seat) + " passed (" + e.reason + ")";
      case "revealed": return (e.first ? "First reveal: " : "Reveal: ") + e.cards.map((c) => who(c.seat) + " " + cardText(c)).join(", ");
      case "card_used": return who(e.seat) + "'s " + e.colour + " " + e.value + " counts as " + e.use + (e.ally !== null ? " (ally " + who(e.ally) + ")" : "");
      case "exploded": return who(e.seat) + "'s " + e.colour + " bomb removed " + cardText(e.removed) + " of " + who(e.target_seat) + (e.bodyguard ? " (bodyguard)" : "");
      case "war_resolved": return "War result: " + e.strengths.map((f) => f.colour + " " + f.strength).join(", ") + "; " + (e.winning_colour ? e.winning_colour + " wins (" + e.winners.map(who).join(", ") + ")" : "no winner");
      case "spoils_chosen": return who(e.seat) + " chose the " + e.take;
      case "business_taken": return who(e.seat) + " took a " + e.colour + " business" + (e.kind ? " (" + e.kind + ")" : "");
      case "no_business": return who(e.seat) + " got no " + e.colour + " business (" + e.reason + ")";
      case "laundered": return who(e.seat) + " laundered " + money(e.amount) + " (bank paid " + money(e.from_bank) + ")";
      case "stakes_lost": return "Stakes lost: " + e.seats.map((s, i) => who(s) + " " + money(e.notes[i])).join(", ");
      case "returned": return "Cards back under their piles: " + e.cards.map(cardText).join(", ");
      case "skipped": return who(e.seat) + " was skipped";
      case "forfeited": return who(e.seat) + " forfeited";
      case "game_ended": return "Game over (" + e.ended_by + "): scores " + e.scores.map(money).join(" / ");
      default: return null;
    }
  }

  const STYLE = `
.s-status { display: flex; flex-wrap: wrap; gap: 0.3rem 1.2rem; align-items: center; min-height: 3.2rem; align-content: flex-start; }
.s-dice { margin: 0.35rem 0; min-height: 1.8rem; display: flex; flex-wrap: wrap; gap: 0.3rem; align-items: center; }
.s-die { border-radius: 4px; padding: 0.05rem 0.45rem; border: 1px solid #555; font-size: 0.85rem; }
.s-die.action { background: #fff; }
.s-piles { display: grid; grid-template-columns: repeat(6, minmax(0, 1fr)); gap: 0.35rem; margin-bottom: 0.5rem; }
.s-pile { border-radius: 6px; padding: 0.3rem 0.4rem; display: flex; flex-direction: column; font-size: 0.8rem; border: 1px solid #444; min-height: 4.6rem; }
.s-known { font-size: 0.7rem; overflow-wrap: anywhere; }
.s-seats { display: grid; grid-template-columns: repeat(auto-fill, minmax(19rem, 1fr)); gap: 0.45rem; }
.s-seat { border: 2px solid #d9d9de; border-radius: 8px; padding: 0.35rem 0.5rem; font-size: 0.85rem; background: #fbfbfc; }
.s-seat.active { border-color: #0b57d0; }
.s-shead { display: flex; justify-content: space-between; }
.s-money { display: flex; flex-wrap: wrap; gap: 0.1rem 0.8rem; margin: 0.15rem 0; }
.s-notes { width: 100%; min-height: 2.5em; }
.s-hand { display: flex; flex-wrap: wrap; gap: 0.2rem; align-items: center; min-height: 5.4rem; align-content: flex-start; }
.s-hlabel { width: 100%; font-size: 0.75rem; }
.s-card { display: inline-flex; flex-direction: column; align-items: center; justify-content: center; width: 2.6rem; height: 2.2rem;
  border-radius: 4px; border: 1px solid #333; font-size: 0.62rem; line-height: 1.05; }
.s-card .s-cval { font-size: 0.95rem; font-weight: 700; }
.s-card.back { background-image: repeating-linear-gradient(45deg, rgba(255,255,255,0.25) 0 3px, transparent 3px 7px); }
.s-card.down { outline: 2px dashed #555; outline-offset: -4px; }
.s-card.renegade { box-shadow: 0 0 0 2px #CC79A7; }
.s-biz { margin-top: 0.2rem; min-height: 1.4rem; display: flex; flex-wrap: wrap; gap: 0.2rem; align-items: center; }
.s-bcard { border-radius: 3px; padding: 0 0.3rem; border: 1px solid #333; font-size: 0.75rem; }
.s-war { margin-top: 0.6rem; border: 1px solid #d9d9de; border-radius: 8px; padding: 0.4rem 0.6rem; min-height: 9rem; font-size: 0.85rem;
  overflow-x: auto; }
.s-war table { width: 100%; margin-top: 0.3rem; }
.s-outcome { margin: 0.3rem 0 0; padding-left: 1.2rem; height: 6rem; overflow: auto; }
.s-war td { height: 2.3rem; padding-top: 0; padding-bottom: 0; }
.s-steal { margin-top: 0.4rem; min-height: 2.4rem; display: flex; flex-wrap: wrap; gap: 0.3rem; align-items: center; font-size: 0.85rem; }
.fam-blue { background: #1f5fbf; color: #fff; }
.fam-white { background: #f7f7f7; color: #111; }
.fam-black { background: #222; color: #fff; }
.fam-yellow { background: #f2c200; color: #111; }
.fam-red { background: #c62828; color: #fff; }
.fam-green { background: #2e7d32; color: #fff; }
@media (max-width: 820px) { .s-piles { grid-template-columns: repeat(3, minmax(0, 1fr)); } .s-seats { grid-template-columns: minmax(0, 1fr); }
  .s-war th, .s-war td { padding-left: 0.25rem; padding-right: 0.25rem; } }
`;
  return { draw, describeAction, describeEvent };
})();
