"""Training bots on famiglia's own engines: environments, a policy entered as a bot, a forward model.

The package stands above the referee's engines, beside the tournaments: it
imports ``referee`` (the games, and for real opponents the referee's bot
launching), never ``tournaments`` or ``ladder``, and they never import it.
docs/training.md is the guide.

* ``training.aec``: a PettingZoo AEC environment for every installed game
  (``env("vendetta", n_players=4)``), observations as a vector with an action
  mask or as the view a bot receives. A parallel environment waits for
  simultaneous decisions, which the engines do not have yet: every decision
  names one seat, so the AEC environment is the whole game.
* ``training.opponents``: a single-agent Gymnasium environment whose other
  seats are real famiglia bots in their sandbox, any language.
* ``training.policy_bot``: a Python function from the observation to an action
  run as a protocol bot, with the same encoding it was trained on.
* ``training.forward``: full states sampled from one seat's view, for search.
* ``training.decisions``: what all of them share, a decision taken in masked
  steps (numpy only, no learning framework).

``pettingzoo`` and ``gymnasium`` come with the extra ``famiglia[training]``;
only ``aec`` and ``opponents`` import them, so a policy bot needs numpy alone.
"""
