"""The trained Vendetta policy as a famiglia bot: weights.json, played through training.policy_bot.

The policy sees in a match what it saw in training (the same encoding, one
masked step at a time): serve_policy builds the vector and mask from each
request. Train it first: python examples/train_vendetta/train.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from policy import Policy

from training.policy_bot import serve_policy

WEIGHTS = HERE / "weights.json"

if __name__ == "__main__":
    if not WEIGHTS.is_file():
        sys.exit(f"{WEIGHTS} is missing: train the policy first (python examples/train_vendetta/train.py)")
    try:
        policy = Policy.load(WEIGHTS)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # not JSON, no "weights", the wrong number of them
        sys.exit(f"{WEIGHTS} is not a saved policy ({exc}): train it again (python examples/train_vendetta/train.py)")
    serve_policy(policy, name="trained_vendetta")
