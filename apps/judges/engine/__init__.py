"""The judge method itself, as pure functions over plain Python and pandas: the request and
reply types, example sampling, prompts, reply parsing, post-processing, calibration, the item
text and alignment figures. No Django and no network here (import-linter checks it), so the
method is importable, tested and benchmarked on its own, as ``apps.disagreement.analysis`` is.
Adapters that talk to models live in ``apps.judges.backends``; Django-aware code beside them."""
