"""Training bots on famiglia's own engines: environments, a policy entered as a bot, a forward model.

The package stands above the referee's engines, beside the tournaments: it
imports ``referee`` (the games, and for real opponents the referee's bot
launching), never ``tournaments`` or ``ladder``, and they never import it.
docs/training.md is the guide.

* ``training.aec``: a PettingZoo AEC environment for every installed game
  (``env("vendetta", n_players=4)``), observations as a vector with an action
  mask or as the view a bot receives; a step that asks several seats at once
  is taken seat by seat, each answer held out of the others' views.
* ``training.parallel``: a PettingZoo parallel environment for a game with
  steps that ask several seats at once, each step's answers played together.
* ``training.opponents``: a single-agent Gymnasium environment whose other
  seats are real famiglia bots in their sandbox, any language.
* ``training.policy_bot``: a Python function from the observation to an action
  run as a protocol bot, with the same encoding it was trained on.
* ``training.forward``: full states sampled from one seat's view, for search.
* ``training.decisions``: what all of them share, a decision taken in masked
  steps (numpy only, no learning framework).

``pettingzoo`` and ``gymnasium`` come with the extra ``famiglia[training]``;
only ``aec``, ``parallel`` and ``opponents`` import them, so a policy bot needs numpy alone.
"""
