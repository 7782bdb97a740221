"""The ladder's web app (Starlette, served by Hypercorn's Trio worker beside the match loop).

- ``app``: ``make_app``, the composition: routes, middleware, the answer to a refusal.
- ``pages``: the HTML pages (the leaderboard, an entrant's and its games, a game's replay, login, registration).
- ``logs``: a version's build output and check-bot report, for its owner.
- ``charts``: the entrant page's rating chart, as SVG shapes; ``look``: times in words, badges, rating bands.
- ``api``: the JSON API under ``/api``: the pages' values for scripts, submissions and challenges.
- ``admin``: the host's pages under ``/admin`` and API under ``/api/admin``: pause, resume, retire, requeue.
- ``auth``: who a request comes from: the ``AuthenticationBackend`` making an entrant, the admin or a
  stranger of a token, so endpoints say ``requires("entrant")`` or ``requires("admin")``.
- ``guard``: what a request may send: where its token is read, a bounded body, a throttle on guesses.
- ``site``: what every endpoint shares: the state at ``app.state.site``, pages and JSON answers.
- ``cache``: anonymous pages kept a second, in front of everything.

The pages' templates are ``ladder/templates``; what they show, as plain values,
is ``ladder.views`` (which the match loop uses too).
"""
