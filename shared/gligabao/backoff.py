"""The waits between retries that tenacity's stock waits do not spell."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from tenacity import RetryCallState


def half_jitter(base_s: float, max_s: float = math.inf) -> Callable[[RetryCallState], float]:
    """After the n-th failed try: a random wait in [cap/2, cap), cap =
    base_s * 2**(n-1) at most max_s. Spread (a burst does not return as one)
    but never near zero (the contention it waits out needs some time)."""

    def wait(state: RetryCallState) -> float:
        cap = min(max_s, base_s * 2 ** (state.attempt_number - 1))
        return random.uniform(cap / 2, cap)

    return wait
