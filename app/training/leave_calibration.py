"""How well the leave-type classifiers do on the test split they never saw: `python -m app calibrate --leave-types`.

Counted on the questions they are asked about (no leave type named by keyword, or several; app/training/leave_train.py):
how many the router's vector settled and how many of those were wrong, the same for the shared encoder's after it,
and the accuracy of the whole chain graph/leave_slots.py runs, beside the description match alone (the method before
the classifiers). The dev split, which chose the thresholds, is shown beside it.
"""

from __future__ import annotations

import json
from typing import Any

from app.settings import Settings, get_settings
from app.training.leave_train import Split, asked, load_split, outcomes
from app.training.router_train import load_router
from tools.embeddings import load_embedder


def report(settings: Settings | None = None) -> dict[str, Any]:
    """The shipped router's classifiers on the dev and test splits (the test split chooses nothing)."""
    settings = settings or get_settings()
    router = load_router(settings, standalone=True)
    assert router.leave_types is not None and router.embed is not None
    encode = router.embed.embedder.embed  # type: ignore[attr-defined]
    shared = load_embedder(settings.embedding_model).embed
    models = router.leave_types
    out: dict[str, Any] = {"thresholds": {"fast": models.fast.threshold, "full": models.full.threshold}}
    for split in ("dev", "test"):
        out[split] = outcomes(models, Split.of(asked(load_split(split)), encode, shared))
    return out


def main(as_json: bool = False) -> int:
    """Print the dev and test figures of the leave-type classifiers (training them first when needed)."""
    figures = report()
    if as_json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"leave types: thresholds {figures['thresholds']}")
    for split in ("dev", "test"):
        f = figures[split]
        fast, full = f["fast"], f["full_after_fast"]
        print(f"{split}: {f['n']} questions naming no type or several. The router's vector settled "
              f"{fast['taken']} ({fast['wrong']} wrong), the shared encoder's {full['taken']} more "
              f"({full['wrong']} wrong); accuracy {f['accuracy']:.1%}, against "
              f"{f['description_accuracy']:.1%} for the description match alone")
    return 0


