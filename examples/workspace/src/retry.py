"""Retry a flaky call with exponential backoff."""

import time


def backoff(attempt, base=0.5, cap=8.0):
    """Seconds to wait before retry number `attempt` (1 for the first retry)."""
    return min(cap, base * 2 ** attempt)


def call_with_retries(call, attempts=4, sleep=time.sleep):
    """Call `call` until it succeeds, at most `attempts` times in all."""
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except ConnectionError:
            if attempt == attempts:
                raise
            sleep(backoff(attempt))
