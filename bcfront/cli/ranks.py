"""One report per rank under ``torchrun``: the output path with the rank in its name.

torchrun starts the script once per rank with ``RANK`` and ``WORLD_SIZE`` set; each rank
runs its own ``bcfront-explain``, so each writes its own file: ``--output r.json`` becomes
``r.rank1.json``, and ``--json`` with no ``--output`` writes ``bcfront-explain.rank1.json``
(ranks printing JSON to one stdout would interleave).  Outside torchrun nothing changes.
"""

from __future__ import annotations

import os


def rank() -> int | None:
    """This process's rank under a multi-process launcher, None otherwise."""
    try:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        r = int(os.environ["RANK"])
    except (KeyError, ValueError):
        return None
    return r if world > 1 else None


def output_path(path: str | None, as_json: bool) -> str | None:
    """Where this rank writes (None: stdout)."""
    r = rank()
    if r is None:
        return path
    if path is None:
        return f"bcfront-explain.rank{r}.json" if as_json else None
    stem, dot, ext = path.rpartition(".")
    return f"{stem}.rank{r}.{ext}" if dot and "/" not in ext else f"{path}.rank{r}"
