"""Benchmark: the offline judge on rating sets shaped like issue 17's held-out ones.

    .venv/bin/python bench/bench_heldout_shapes.py [--seed 0] [--k 9]

The real sets are not in this repository. This builds two synthetic sets with their shape and
with the agreement the issue measured on them, imports them through the product's import
commands into one installation (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/pluralist_bench_heldout, emptied first), and runs
`manage.py judge_study` as a user would:

- stories: 6 experts, 11 dimensions on 0-3, every expert scores every story (120);
- summaries: 5 reviewers, 3 dimensions on 0-100, 150 items whose text carries 2,500 characters
  of a source story no other item shares (similarity is noise there); the first three
  dimension keys are the stories' too, on another scale, as two real rubrics may share keys.

Scores: each item has a quality per dimension; each reviewer has a level, a spread and noise.
The noise is set so that the reference measured in the same run, the other reviewers'
z-scores mapped onto each reviewer's scale with all of that reviewer's scores, agrees with the
reviewer at about 0.51 and 0.77, the issue's figures for the real sets. The study's
personalized and aggregate alpha at k (3 seeds, coverage at the default threshold) are printed
beside that reference and the issue's targets (0.45 and 0.65, coverage >= 90 %), then each
study's wall and CPU seconds (issue 28's target: under 30 s each on an idle core).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BENCH_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/pluralist_bench_heldout"
)
os.environ["DATABASE_URL"] = BENCH_URL
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/6")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import psycopg  # noqa: E402

WORDS = (
    "river lantern orchard winter harbour signal meadow silver engine kitchen letter garden "
    "station mirror forest candle bridge ledger violin market tide attic compass"
).split()
# name: reviewers, dimensions, items, scale, noise, the target, source characters
SETS = {
    "stories": (6, 11, 120, (0, 3), 1.4, 0.45, 0),
    "summaries": (5, 3, 150, (0, 100), 0.85, 0.65, 2500),
}


def reset_database() -> None:
    from urllib.parse import urlparse

    name = urlparse(BENCH_URL).path.lstrip("/")
    admin_url = BENCH_URL.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


def write_set(folder: Path, key: str, rng: np.random.Generator) -> pd.DataFrame:
    n_rev, n_dim, n_items, (lo, hi), noise, _, source_chars = SETS[key]
    dims = [f"d{j}" for j in range(n_dim)]
    quality = rng.normal(size=(n_items, 1)) + 0.8 * rng.normal(size=(n_items, n_dim))
    level, spread = rng.uniform(0.3, 0.7, n_rev), rng.uniform(0.12, 0.3, n_rev)

    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS, n))

    folder.mkdir(parents=True)
    rubric = {
        "key": f"{key}-rubric",
        "domains": [key],
        "dimensions": [{"key": d, "scale": {"min": lo, "max": hi}} for d in dims],
    }
    (folder / "rubric.json").write_text(json.dumps(rubric))
    ratings = []
    for r in range(n_rev):
        for i in range(n_items):
            for j, d in enumerate(dims):
                z = quality[i, j] + noise * rng.normal()
                score = int(np.clip(np.rint(lo + (hi - lo) * (level[r] + spread[r] * z)), lo, hi))
                ratings.append((f"{key}-{i}", f"{key}-r{r}", d, score))
    tables = {
        "patents.csv": [("external_id", "domain", "title", "abstract")]
        + [(f"{key}-src-{i}", key, f"Source {i}", words(30)) for i in range(n_items)],
        "ideas.csv": [("external_id", "patent", "title", "description")]
        + [
            (f"{key}-{i}", f"{key}-src-{i}", "", words(40) + " " + words(source_chars // 7))
            for i in range(n_items)
        ],
        "reviewers.csv": [("username", "domains")] + [(f"{key}-r{r}", key) for r in range(n_rev)],
        "ratings.csv": [("idea", "reviewer", "dimension", "score"), *ratings],
    }
    for name, rows in tables.items():
        with open(folder / name, "w", newline="") as f:
            csv.writer(f).writerows(rows)
    return pd.DataFrame(ratings, columns=["idea", "reviewer", "dimension", "score"])


def reference_alpha(frame: pd.DataFrame, scale: tuple[int, int]) -> float:
    """The other reviewers mapped onto each reviewer's scale with all of their scores."""
    from apps.disagreement.analysis.alpha import krippendorff_alpha

    values = list(range(scale[0], scale[1] + 1))
    alphas = []
    for _, g in frame.groupby("dimension"):
        wide = g.pivot(index="idea", columns="reviewer", values="score").astype(float)
        z = (wide - wide.mean()) / wide.std()
        pred, truth = [], []
        for r in wide.columns:
            mapped = wide[r].mean() + wide[r].std() * z.drop(columns=r).mean(axis=1)
            pred.append(np.clip(np.rint(mapped), *scale))
            truth.append(wide[r])
        pair = np.vstack([np.concatenate(pred), np.concatenate(truth)])
        alphas.append(krippendorff_alpha(pair, values=values))
    return float(np.mean(alphas))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--k", type=int, default=9)
    args = parser.parse_args()
    reset_database()
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    rng = np.random.default_rng(args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for key, (_, n_dim, _, scale, _, target, _) in SETS.items():
            frame = write_set(Path(tmp) / key, key, rng)
            for kind in ("patents", "rubric", "ideas", "reviewers", "ratings"):
                name = "rubric.json" if kind == "rubric" else f"{kind}.csv"
                extra = ["--create-domains"] if kind in ("patents", "rubric") else []
                path = str(Path(tmp) / key / name)
                call_command(f"import_{kind}", path, *extra, stdout=io.StringIO())
            out = io.StringIO()
            wall0, cpu0 = time.perf_counter(), time.process_time()
            call_command(
                "judge_study",
                *("--backend", "local", "--configs", "aggregate,personalized"),
                *("--shots", str(args.k), "--seeds", "3", "--domain", key),
                *("--dimension", ",".join(f"d{j}" for j in range(n_dim)), "--format", "json"),
                stdout=out,
            )
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            study = pd.DataFrame(json.loads(out.getvalue())["alignment"])
            mean = study.groupby("config")[["alpha", "per_reviewer_alpha", "coverage"]].mean()
            rows.append(
                {
                    "set": key,
                    "reference": reference_alpha(frame, scale),
                    "personalized": mean.loc["personalized", "alpha"],
                    "aggregate": mean.loc["aggregate", "alpha"],
                    "per-reviewer": mean.loc["personalized", "per_reviewer_alpha"],
                    "coverage": study[study["config"] == "personalized"]["coverage"].min(),
                    "target": target,
                    "study s": wall,
                    "study CPU s": cpu,
                }
            )
    print(f"offline judge (panel,text), k = {args.k}, 3 seeds, mean over dimensions:")
    print(pd.DataFrame(rows).round(3).to_string(index=False))
    print(
        "study time (manage.py judge_study, in this process; target 30 s each on an idle core): "
        + ", ".join(f"{r['set']} {r['study s']:.1f} s ({r['study CPU s']:.1f} s CPU)" for r in rows)
        + f"; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


if __name__ == "__main__":
    main()
