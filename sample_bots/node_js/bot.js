#!/usr/bin/env node
// node_js: a famiglia sample bot in plain Node.js (no npm packages).
//
// It reads the referee's JSON lines on stdin and answers on stdout, one line each:
//   start    -> {"type":"ready","name":"node_js"}
//   request  -> an action: a random one of request.options when the request lists
//               options (Sicilianos), else a Vendetta placement from a simple
//               heuristic (see vendettaPlace below)
//   rejected -> a note on stderr; end -> nothing; any other type -> ignored
// It exits when stdin closes. Choices are reproducible: the random generator is
// seeded from the match id and seat in each start message.
'use strict';

const readline = require('readline');

const NAME = 'node_js';

// --- a small seeded random generator (mulberry32) ----------------------------

let rngState = 1;

function seed(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 16777619); // FNV-1a
  }
  rngState = h >>> 0;
}

function random() {
  rngState = (rngState + 0x6d2b79f5) >>> 0;
  let t = rngState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

// --- output ------------------------------------------------------------------

function send(message) {
  // On Linux, writes to a pipe are synchronous in Node, so each line leaves now.
  process.stdout.write(JSON.stringify(message) + '\n');
}

// --- Vendetta ------------------------------------------------------------------

// A simple heuristic. For every district whose P4 minimum fits the hand it
// proposes one count and a score (value per mafioso), then places into the best
// one or two (max_districts), keeping a small reserve in hand:
//   - a district held alone but small enough for an opponent to match: grow it
//     past every opponent's hand;
//   - a district shared with one opponent and not yet revealed this round: take
//     the lead, so the next vendetta there removes the opponent;
//   - a district held alone by an opponent, not yet revealed: outnumber it;
//   - a shared district with several opponents, not yet revealed: take the lead;
//   - an empty district: claim it with 2 (better once revealed: no raid left).
// Districts already revealed and shared are left alone: no vendetta there this round.
function vendettaPlace(view, constraints) {
  const hand = constraints.hand | 0;
  const maxDistricts = constraints.max_districts | 0;
  const minimum = constraints.minimum || [];
  if (hand <= 0 || maxDistricts <= 0 || !view || !Array.isArray(view.board)) {
    return { type: 'place', placements: [] };
  }
  const me = view.seat;
  const hands = view.hands || [];
  const forfeited = view.forfeited || [];
  const revealed = new Set(view.revealed || []);
  let maxOpponentHand = 0;
  for (let s = 0; s < hands.length; s++) {
    if (s !== me && !forfeited[s]) maxOpponentHand = Math.max(maxOpponentHand, hands[s]);
  }
  const reserve = 3;
  const budget = hand - reserve;

  const proposals = [];
  view.board.forEach((row, d) => {
    const low = Math.max(1, minimum[d] | 0);
    const mine = row[me] | 0;
    let top = 0;
    let opponents = 0;
    row.forEach((count, s) => {
      if (s !== me && count > 0) {
        opponents += 1;
        top = Math.max(top, count);
      }
    });
    const open = !revealed.has(d + 1);
    let want = 0;
    let value = 0;
    if (opponents === 0 && mine > 0) {
      if (mine <= maxOpponentHand) [want, value] = [maxOpponentHand + 1 - mine, 6];
    } else if (opponents === 0) {
      [want, value] = [2, open ? 3 : 5];
    } else if (open && opponents === 1 && mine > 0) {
      [want, value] = [top + 1 - mine, 8];
    } else if (open && opponents === 1) {
      [want, value] = [top + 1, 4];
    } else if (open && mine > 0) {
      [want, value] = [top + 1 - mine, 3];
    }
    const count = Math.max(want, low);
    if (want > 0 && count <= budget) {
      // Ties broken at random so equal districts do not always go the same way.
      proposals.push({ district: d + 1, count, score: value / count + random() * 1e-6 });
    }
  });
  proposals.sort((a, b) => b.score - a.score);

  const placements = [];
  let left = budget;
  for (const p of proposals) {
    if (placements.length >= maxDistricts) break;
    if (p.count <= left) {
      placements.push({ district: p.district, count: p.count });
      left -= p.count;
    }
  }
  return { type: 'place', placements };
}

// --- the message loop ----------------------------------------------------------

function handle(message) {
  switch (message.type) {
    case 'start':
      seed(`${NAME}:${message.match}:${message.seat}`);
      send({ type: 'ready', name: NAME });
      break;
    case 'request': {
      let action;
      if (Array.isArray(message.options) && message.options.length > 0) {
        action = message.options[Math.floor(random() * message.options.length)];
      } else {
        try {
          action = vendettaPlace(message.view, message.constraints || {});
        } catch (error) {
          // A view this bot does not understand: placing nothing is always legal.
          process.stderr.write(`request ${message.id}: ${error}\n`);
          action = { type: 'place', placements: [] };
        }
      }
      send({ type: 'action', id: message.id, action });
      break;
    }
    case 'rejected':
      process.stderr.write(`rejected ${message.id}: ${message.message}\n`);
      break;
    default:
      // "end" needs no answer; unknown types are ignored (forward compatibility).
      break;
  }
}

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on('line', (line) => {
  if (!line.trim()) return;
  let message;
  try {
    message = JSON.parse(line);
  } catch (error) {
    process.stderr.write(`not JSON, ignored: ${line.slice(0, 80)}\n`);
    return;
  }
  if (message && typeof message === 'object') handle(message);
});
