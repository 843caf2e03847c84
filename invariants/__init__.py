"""Named properties over a run: safety (``always``) and liveness (``eventually``)."""

from __future__ import annotations

from pathlib import Path as _Path

import models as _models

if _Path(_models.__file__ or "").resolve().parent.parent != _Path(__file__).resolve().parent.parent:
    raise ImportError(
        f"txcheck needs its own 'models' package at "
        f"{_Path(__file__).resolve().parent.parent / 'models'}, but 'models' resolves to "
        f"{_models.__file__}: another 'models' on sys.path shadows it. Rename that package or "
        "remove its folder from sys.path."
    )

__all__: list[str] = []
