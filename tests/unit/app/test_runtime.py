"""The process's start-up: what it leaves behind for every later request."""

import gc
import time

from app.runtime import freeze_startup_heap


def _full_collection_s() -> float:
    t0 = time.perf_counter()
    gc.collect()
    return time.perf_counter() - t0


def test_a_frozen_startup_heap_is_not_walked_by_later_collections():
    loaded = [{"row": i, "cells": [i, str(i)]} for i in range(300_000)]  # what loading models leaves behind
    before = min(_full_collection_s() for _ in range(3))
    try:
        freeze_startup_heap()
        assert gc.get_freeze_count() >= len(loaded)
        after = min(_full_collection_s() for _ in range(3))
    finally:
        gc.unfreeze()  # the rest of the test session collects as usual
    assert after < before / 5, f"a full collection took {after * 1000:.1f} ms frozen, {before * 1000:.1f} ms not"
    assert loaded[-1]["cells"] == [299_999, "299999"]  # frozen objects are kept, not freed
