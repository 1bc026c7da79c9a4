"""Pluralist at scale: every job a rating change starts, timed on real Celery workers (issue 28).

    nice -n 5 .venv/bin/python bench/bench_scale.py [--sizes 10,100,300] [--workers 1,2,4]
        [--refresh-size 300] [--time-box 1800] [--page-runs 5]

For each size (a multiple of the demo's ~3,333 stored ratings: 10x, 100x, 300x is 1,000,000), a
synthetic organisation is generated and loaded into its own PostgreSQL database
(BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/pl_scale_bench; created from a
migrated template each size) through the product's import path (apps.dataio.services.imports.
import_file, the service behind the import commands, page and API). The shape is a large
organisation's: domains of 10 reviewers and 270 ideas (90 patents), each reviewer screening 170
of their domain's ideas under the PBIG gates (the importer adds the gate-closed rows), one
rationale in ten. At 300x: 98 domains, 980 reviewers, 26,460 ideas, 999,600 stored ratings, and
every reviewer has 100 unrated ideas x 6 dimensions to predict (588,000 predicted targets, 3
seeds each: 1,764,000 prediction rows), beside the leave-one-out evaluations of every scored
rating (13 units each: the three default configurations' k values x 3 seeds, the zero-shot
configuration's once: planning.seeds_judged).

Then `--workers` separate `celery worker` processes (pool solo, concurrency 1 each: separate
hosts in spirit, sharing only PostgreSQL and Redis; CELERY_BROKER_URL, default Redis db 12) are
started, and each job is started the way the product starts it and timed until it has finished
and every follow-up task it queued has run (the queues empty, no snapshot queued or running):

- metrics: `metrics_request_recompute` (the disagreement dashboards' snapshot);
- refresh: `judge_ratings_changed` for every reviewer (what an import or a submit calls): the
  scheduling task, then every automatic run of the default offline judge (the leave-one-out
  evaluations with their calibration, and the prediction runs over each reviewer's unrated
  ideas: rows stored, finals voted, shortlists, panel shortlist), and what finishing runs queue
  (alignment snapshots, the decision board);
- alignment: `alignment_request_recompute` for every scope (the overall one and each domain's);
- decisions: `decisions_request_recompute` (Decide's board);
- findings: `findings_request_recompute` (distinct findings from the rationales).

Per job and size: wall seconds, worker CPU seconds (utime + stime from /proc/<pid>/stat of every
worker process), peak worker RSS (VmRSS sampled every 0.2 s, the largest worker), and rows
written (inserts + updates, PostgreSQL's pg_stat_user_tables over the bench database). The cost
curve is the growth exponent between sizes: log(t2 / t1) / log(n2 / n1) on the stored ratings
(1: linear). Then the warm pages (median of --page-runs GETs as the manager, after one to warm
caches; Django test client in this process, so no network): the dashboards, the alignment,
Decide, predictions, findings; the database vacuumed and analysed first, as autovacuum leaves
it in production (it is off on the development VM).

At --refresh-size the first pass's refresh is the first worker count's figure; the refresh is
then repeated with each further worker count of --workers (the ratings "changed" again for every
reviewer; the previous runs are finished, so every scope runs again, the same work).

A job still running after --time-box seconds is reported as cut (the share of runs done) and
the bench goes on; its figure is then a lower bound, marked ">".

The machine is shared: every figure is printed beside the load average (`uptime`) at its start.
Workers run at the bench's niceness (WORKER_NICENESS=0: the bench itself is run with nice -n 5).
The judge's debounce is 0 (JUDGE_DEBOUNCE_SECONDS) so the refresh's clock starts at the change,
not 30 s later; the follow-ups (alignment, findings) keep the product's debounce.

Last line: `refresh 600,000 predictions: 1 worker A s, 2 workers B s (speed-up X); slowest job
at 1M ratings: NAME C s; peak worker RSS D MB` (600,000: the prediction rows the refresh at
--refresh-size stored, per-seed rows, printed as counted). When the time box cuts a refresh, the
speed-up is the ratio of units judged and stored per second instead, and says so.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BENCH_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/pl_scale_bench"
)
TEMPLATE_DB = BENCH_URL.rsplit("/", 1)[1] + "_template"
BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/12")
# Issue 28's targets.
REFRESH_TARGET_S = 90.0
SPEEDUP_TARGET = 1.5
JOB_TARGET_S = 60.0
RSS_TARGET_MB = 1536.0
PAGE_TARGET_MS = 300.0

DEMO_RATINGS = 3333  # the demo's stored ratings, about (apps.demo.services.demo_sizes)
REVIEWERS_PER_DOMAIN = 10
PATENTS_PER_DOMAIN = 90
IDEAS_PER_PATENT = 3
SCREENED_PER_REVIEWER = 170
RATIONALE_SHARE = 0.1
DIMENSIONS = [  # key, lowest, highest (PBIG)
    ("specificity", 1, 4),
    ("technical_validity", 1, 4),
    ("innovativeness", 1, 5),
    ("competitive_advantage", 1, 4),
    ("need_validity", 0, 3),
    ("market_size", 0, 3),
]

ENV = {
    "DATABASE_URL": BENCH_URL,
    "DJANGO_SETTINGS_MODULE": "config.settings.test",
    "CELERY_BROKER_URL": BROKER_URL,
    "CACHE_URL": BROKER_URL,
    "JUDGE_DEBOUNCE_SECONDS": "0",
    "WORKER_NICENESS": "0",
    # A 1M-rating file is about 120 MB; the default upload limit is 100 MB.
    "IMPORT_MAX_BYTES": str(1024 * 1024 * 1024),
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
os.environ.update(ENV)

import psycopg  # noqa: E402

# --------------------------------------------------------------------------- the organisation

GOOD = (
    "sensor fusion calibrated certified enterprise contract recurring fleet audit regulated "
    "hospital grid warehouse invoice compliance predictive maintenance"
).split()
BAD = (
    "gadget novelty consumer toy generic app vague someday lifestyle hobby fun trendy "
    "social viral maybe"
).split()
NEUTRAL = (
    "battery drone camera model cloud privacy shipping retail energy water farm school "
    "bank robot ledger speech crop clinic solar module signal filter network"
).split()
REASONS = [
    "the buyer is clear",
    "no buyer is named",
    "the claims cover the core",
    "a competitor ships this already",
    "the market is small",
    "procurement cycles are long",
    "the prototype looks feasible",
    "the patent does not fit this use",
    "the text stays vague",
    "regulation helps the incumbent",
    "integration cost is high",
    "it saves a measurable amount of time",
]


@dataclass
class Org:
    domains: int
    paths: dict[str, Path]
    reviewers: int
    ideas: int
    screenings: int


def domains_for(size: float) -> int:
    per_domain = REVIEWERS_PER_DOMAIN * SCREENED_PER_REVIEWER * len(DIMENSIONS)
    return max(1, round(size * DEMO_RATINGS / per_domain))


def _text(rng: np.random.Generator, quality: np.ndarray, n_words: int) -> list[str]:
    """Words that partly reveal the quality: a judge that reads the text can learn it."""
    out = []
    for q in quality:
        good = int(np.clip(round(n_words * (0.25 + 0.15 * q)), 0, n_words // 2))
        bad = int(np.clip(round(n_words * (0.25 - 0.15 * q)), 0, n_words // 2))
        words = list(rng.choice(GOOD, good)) + list(rng.choice(BAD, bad))
        words += list(rng.choice(NEUTRAL, n_words - len(words)))
        rng.shuffle(words)
        out.append(" ".join(words))
    return out


def generate(tmp: Path, n_domains: int, seed: int = 28) -> Org:
    rng = np.random.default_rng(seed)
    n_patents = n_domains * PATENTS_PER_DOMAIN
    n_ideas = n_patents * IDEAS_PER_PATENT
    n_reviewers = n_domains * REVIEWERS_PER_DOMAIN
    domain_of_patent = np.arange(n_patents) // PATENTS_PER_DOMAIN
    dkeys = [f"org-{d:03d}" for d in range(n_domains)]
    quality = rng.normal(size=n_ideas)  # general factor
    per_dim = 0.6 * quality[:, None] + 0.8 * rng.normal(size=(n_ideas, len(DIMENSIONS)))
    patents = pd.DataFrame(
        {
            "external_id": [f"SP{i:07d}" for i in range(n_patents)],
            "domain": [dkeys[d] for d in domain_of_patent],
            "domain_name": [f"Organisation unit {d}" for d in domain_of_patent],
            "title": [f"Method {i} for adaptive signal processing" for i in range(n_patents)],
            "abstract": _text(rng, np.zeros(n_patents), 30),
            "claims": "1. A method comprising receiving a signal and adapting a filter to it.",
        }
    )
    idea_patent = np.arange(n_ideas) // IDEAS_PER_PATENT
    ideas = pd.DataFrame(
        {
            "external_id": [f"SI{i:07d}" for i in range(n_ideas)],
            "patent": [f"SP{p:07d}" for p in idea_patent],
            "title": [f"Product idea {i}" for i in range(n_ideas)],
            "description": _text(rng, quality, 25),
            "implementation": _text(rng, per_dim[:, 1], 12),
            "differentiation": _text(rng, per_dim[:, 3], 12),
            "source": "bench-scale",
        }
    )
    reviewer_domain = np.arange(n_reviewers) // REVIEWERS_PER_DOMAIN
    reviewers = pd.DataFrame(
        {
            "username": [f"scale{i:05d}" for i in range(n_reviewers)],
            "email": [f"scale{i:05d}@example.org" for i in range(n_reviewers)],
            "name": [f"Scale Reviewer{i}" for i in range(n_reviewers)],
            "background": ["technical" if i % 2 else "business" for i in range(n_reviewers)],
            "domains": [dkeys[d] for d in reviewer_domain],
            "years_experience": 5,
        }
    )
    # Screenings: each reviewer screens SCREENED_PER_REVIEWER of their domain's ideas.
    ideas_per_domain = PATENTS_PER_DOMAIN * IDEAS_PER_PATENT
    idea_parts, reviewer_parts = [], []
    for r in range(n_reviewers):
        first = reviewer_domain[r] * ideas_per_domain
        chosen = rng.choice(ideas_per_domain, SCREENED_PER_REVIEWER, replace=False)
        idea_parts.append(first + np.sort(chosen))
        reviewer_parts.append(np.full(SCREENED_PER_REVIEWER, r))
    s_idea = np.concatenate(idea_parts)
    s_reviewer = np.concatenate(reviewer_parts)
    n_s = len(s_idea)
    level = rng.normal(0, 0.5, size=(n_reviewers, len(DIMENSIONS)))
    spread = rng.uniform(0.6, 1.3, size=(n_reviewers, len(DIMENSIONS)))
    scores = {}
    for j, (key, lo, hi) in enumerate(DIMENSIONS):
        mid = (lo + hi) / 2 + 0.4
        latent = per_dim[s_idea, j] + 0.3 * rng.normal(size=n_s)
        value = mid + level[s_reviewer, j] + spread[s_reviewer, j] * latent
        scores[key] = np.clip(np.rint(value), lo, hi).astype(int)
    spec_pass = scores["specificity"] > 2
    both_pass = spec_pass & (scores["technical_validity"] > 1)
    opened = {
        "specificity": np.ones(n_s, bool),
        "technical_validity": spec_pass,
        "innovativeness": both_pass,
        "competitive_advantage": both_pass,
        "need_validity": spec_pass,
        "market_size": spec_pass,
    }
    parts = []
    for j, (key, _, _) in enumerate(DIMENSIONS):
        m = opened[key]
        parts.append(pd.DataFrame({"s": np.flatnonzero(m), "j": j, "score": scores[key][m]}))
    long = pd.concat(parts).sort_values(["s", "j"], kind="stable")
    s = long["s"].to_numpy()
    with_reason = rng.random(len(long)) < RATIONALE_SHARE
    reasons = np.array(REASONS)
    first = reasons[rng.integers(0, len(REASONS), len(long))]
    second = reasons[rng.integers(0, len(REASONS), len(long))]
    rationale = np.where(
        with_reason, np.char.add(np.char.add(first.astype(str), "; "), second.astype(str)), ""
    )
    ratings = pd.DataFrame(
        {
            "idea": [f"SI{i:07d}" for i in s_idea[s]],
            "reviewer": [f"scale{i:05d}" for i in s_reviewer[s]],
            "dimension": np.array([d[0] for d in DIMENSIONS])[long["j"].to_numpy()],
            "score": long["score"].to_numpy(),
            "rationale": rationale,
        }
    )
    paths = {}
    for name, frame in (
        ("patents", patents),
        ("ideas", ideas),
        ("reviewers", reviewers),
        ("ratings", ratings),
    ):
        paths[name] = tmp / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return Org(n_domains, paths, n_reviewers, n_ideas, n_s)


# --------------------------------------------------------------------------- database


def admin_connect() -> psycopg.Connection:
    return psycopg.connect(BENCH_URL.rsplit("/", 1)[0] + "/postgres", autocommit=True)


def fresh_database() -> None:
    """The bench database, new for each size: a copy of a migrated template (seconds)."""
    name = BENCH_URL.rsplit("/", 1)[1]
    with admin_connect() as conn:
        if not conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [TEMPLATE_DB]
        ).fetchone():
            conn.execute(f'CREATE DATABASE "{TEMPLATE_DB}"')
        # Every time: a template made by older code lacks the newer migrations (a schema the
        # code under test does not have); when it is up to date this takes a few seconds.
        env = {**os.environ, "DATABASE_URL": BENCH_URL.rsplit("/", 1)[0] + "/" + TEMPLATE_DB}
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--verbosity=0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE_DB}"')


def rows_written() -> int:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT pg_stat_clear_snapshot()")
        cur.execute("SELECT coalesce(sum(n_tup_ins + n_tup_upd), 0) FROM pg_stat_user_tables")
        return int(cur.fetchone()[0])


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# --------------------------------------------------------------------------- workers


class Workers:
    """N `celery worker` processes (pool solo, concurrency 1), sampled from /proc."""

    def __init__(self, n: int, log_dir: Path) -> None:
        self.n = n
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []
        self._peak_kb = 0
        self._stop = threading.Event()
        self._sampler: threading.Thread | None = None

    def start(self) -> Workers:
        for i in range(self.n):
            log = self.log_dir / f"worker-{self.n}-{i}.log"
            self.logs.append(log)
            self.procs.append(
                subprocess.Popen(
                    [
                        sys.executable, "-m", "celery", "-A", "config", "worker",
                        "--pool=solo", "--concurrency=1", "--loglevel=WARNING",
                        "--without-gossip", "--without-mingle", "--without-heartbeat",
                        "-Q", "celery,judges", "-n", f"scale{i}@%h",
                    ],
                    cwd=ROOT,
                    env=os.environ.copy(),
                    stdout=log.open("wb"),
                    stderr=subprocess.STDOUT,
                )
            )  # fmt: skip
        # Ready when each answers a ping through the broker.
        from config.celery import app

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise SystemExit(f"a worker exited early: see {self.log_dir}")
            replies = app.control.ping(timeout=1.0) or []
            if len(replies) >= self.n:
                break
        else:
            raise SystemExit(f"workers did not start: see {self.log_dir}")
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            for p in self.procs:
                try:
                    for line in Path(f"/proc/{p.pid}/status").read_text().splitlines():
                        if line.startswith("VmRSS:"):
                            self._peak_kb = max(self._peak_kb, int(line.split()[1]))
                except OSError:
                    pass

    def reset_peak(self) -> None:
        self._peak_kb = 0

    def peak_mb(self) -> float:
        return self._peak_kb / 1024

    def cpu_seconds(self) -> float:
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for p in self.procs:
            try:
                fields = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # fields[11], [12]: utime, stime (fields 14 and 15 of proc(5)); the children's too.
            total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        return total / tick

    def stop(self) -> None:
        self._stop.set()
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def purge_broker() -> None:
    """Empty this bench's Redis database (its own db number: nothing else lives there)."""
    import redis

    redis.Redis.from_url(BROKER_URL).flushdb()


def broker_idle() -> bool:
    import redis

    r = redis.Redis.from_url(BROKER_URL)
    waiting = sum(r.llen(q) for q in ("celery", "judges"))
    return waiting == 0 and r.hlen("unacked") == 0


# --------------------------------------------------------------------------- jobs


@dataclass
class Result:
    size: int
    ratings: int
    job: str
    workers: int
    wall_s: float
    cpu_s: float
    rss_mb: float
    rows: int
    load: str
    cut: str = ""
    extra: dict = field(default_factory=dict)


def settled() -> bool:
    """No snapshot queued or running, no judge run or scheduling waiting, the broker empty."""
    from apps.decisions.models import DecisionSnapshot
    from apps.disagreement.models import MetricSnapshot
    from apps.findings.models import FindingSnapshot
    from apps.judges.models import AlignmentSnapshot, JudgeRun, JudgeScheduleRequest

    busy = ("queued", "running")
    return not (
        JudgeScheduleRequest.objects.exists()
        or JudgeRun.objects.filter(status__in=JudgeRun.ACTIVE).exists()
        or any(m.objects.filter(status__in=busy).exists() for m in (
            MetricSnapshot, AlignmentSnapshot, DecisionSnapshot, FindingSnapshot
        ))
    ) and broker_idle()  # fmt: skip


def run_job(
    name: str, start, workers: Workers, *, size: int, ratings: int, time_box: float, progress=None
) -> Result:
    load = load_average()
    units0 = judged_units() if name == "refresh" else 0
    rows0 = rows_written()
    cpu0 = workers.cpu_seconds()
    workers.reset_peak()
    t0 = time.perf_counter()
    start()
    cut = ""
    time.sleep(0.5)
    while not settled():
        if time.perf_counter() - t0 > time_box:
            cut = progress() if progress else "cut"
            break
        time.sleep(0.5)
    wall = time.perf_counter() - t0
    cpu = workers.cpu_seconds() - cpu0
    time.sleep(1.5)  # the workers' backends report their row counts when idle
    rows = rows_written() - rows0
    result = Result(size, ratings, name, workers.n, wall, cpu, workers.peak_mb(), rows, load, cut)
    if name == "refresh":
        # Units judged and stored per second: comparable between worker counts even when the
        # time box cut the refresh short.
        result.extra["units_per_s"] = (judged_units() - units0) / wall
    print(
        f"  {name:<10} {workers.n} worker(s): {wall:8.1f} s wall, {cpu:8.1f} s CPU, "
        f"{result.rss_mb:7.0f} MB peak RSS, {rows:>10,} rows{' CUT ' + cut if cut else ''} "
        f"(load {load})",
        flush=True,
    )
    return result


def refresh_progress():
    """How far a refresh got when the time box cut it: its own runs, not earlier refreshes'."""
    from django.db.models import Max

    from apps.judges.models import JudgeRun

    before = JudgeRun.objects.aggregate(last=Max("id"))["last"] or 0

    def progress() -> str:
        runs = JudgeRun.objects.filter(id__gt=before)
        done = runs.filter(status=JudgeRun.Status.DONE).count()
        return f"{done}/{runs.count()} runs done"

    return progress


def stop_everything_queued() -> None:
    """After a cut job: cancel what is left so the next job starts on a quiet system."""
    from apps.decisions.models import DecisionSnapshot
    from apps.disagreement.models import MetricSnapshot
    from apps.findings.models import FindingSnapshot
    from apps.judges.models import AlignmentSnapshot, JudgeRun, JudgeScheduleRequest

    purge_broker()
    JudgeScheduleRequest.objects.all().delete()
    JudgeRun.objects.filter(status__in=JudgeRun.ACTIVE).update(status=JudgeRun.Status.CANCELLED)
    for m in (MetricSnapshot, AlignmentSnapshot, DecisionSnapshot, FindingSnapshot):
        m.objects.filter(status__in=("queued", "running")).update(status="failed", error="bench")


def prediction_rows() -> int:
    from apps.judges.models import JudgePrediction, JudgeRun

    return JudgePrediction.objects.filter(run__purpose=JudgeRun.Purpose.PREDICTION).count()


def judged_units() -> int:
    """Every per-seed prediction stored (evaluations' and predictions'): a refresh's work done."""
    from apps.judges.models import JudgePrediction

    return JudgePrediction.objects.count()


def jobs(manager, reviewer_ids: list[int]) -> dict[str, object]:
    from apps.catalog.models import Domain
    from apps.decisions.services import decisions_request_recompute
    from apps.disagreement.services import metrics_request_recompute
    from apps.findings.services import findings_request_recompute
    from apps.judges.services.alignment import alignment_request_recompute, scope_for_source
    from apps.judges.services.scheduling import judge_ratings_changed

    def alignment_all() -> None:
        alignment_request_recompute(actor=manager, scope=scope_for_source(source="auto"))
        for key in Domain.objects.order_by("key").values_list("key", flat=True):
            alignment_request_recompute(
                actor=manager, scope=scope_for_source(source="auto", domain_key=key)
            )

    return {
        "metrics": lambda: metrics_request_recompute(actor=manager),
        "refresh": lambda: judge_ratings_changed(reviewer_ids=reviewer_ids),
        "alignment": alignment_all,
        "decisions": lambda: decisions_request_recompute(actor=manager),
        "findings": lambda: findings_request_recompute(actor=manager),
    }


PAGES = [
    ("dashboard", "/disagreement/"),
    ("agreement", "/disagreement/agreement/"),
    ("alignment", "/judges/"),
    ("decide", "/decisions/decide/"),
    ("predictions", "/judges/predictions/"),
    ("findings", "/findings/"),
]


def vacuum_database() -> float:
    """VACUUM ANALYZE the bench database; returns its seconds. PostgreSQL's autovacuum does this
    in production after a burst of writes (and it is off on the development VM): counts over
    millions of fresh rows read every heap page until the visibility map is set (the
    predictions page at 1M ratings: 307 ms before, 179 ms after)."""
    t0 = time.perf_counter()
    with psycopg.connect(BENCH_URL, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
    return time.perf_counter() - t0


def page_times(manager, runs: int) -> dict[str, float]:
    from django.test import Client

    client = Client()
    client.force_login(manager)
    out = {}
    for name, url in PAGES:
        response = client.get(url)
        if response.status_code != 200:
            out[name] = float("nan")
            print(f"  page {url} answered {response.status_code}", flush=True)
            continue
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            client.get(url)
            times.append((time.perf_counter() - t0) * 1000)
        out[name] = statistics.median(times)
    return out


# --------------------------------------------------------------------------- one size


def import_org(org: Org) -> dict[str, float]:
    from apps.dataio.services.imports import import_file

    seconds = {}
    for kind in ("patents", "ideas", "reviewers", "ratings"):
        path = org.paths[kind]
        t0 = time.perf_counter()
        with path.open("rb") as fh:
            import_file(kind=kind, content=fh, filename=path.name, actor=None, create_domains=True)
        seconds[kind] = time.perf_counter() - t0
    return seconds


def quiet_after_import() -> None:
    """The import told the judges and the dashboards that ratings changed, with no worker
    running: drop those messages and rows, so each job below is started (and timed) alone."""
    from apps.decisions.models import DecisionSnapshot
    from apps.disagreement.models import MetricSnapshot
    from apps.findings.models import FindingSnapshot
    from apps.judges.models import AlignmentSnapshot, JudgeScheduleRequest

    purge_broker()
    JudgeScheduleRequest.objects.all().delete()
    for m in (MetricSnapshot, AlignmentSnapshot, DecisionSnapshot, FindingSnapshot):
        m.objects.filter(status__in=("queued", "running")).delete()


def setup_django() -> None:
    import django

    django.setup()
    # The pages are timed in this process: loaded as the web's are (config/wsgi.py).
    from apps.core.gc_freeze import freeze_startup_objects

    freeze_startup_objects()


def one_size(size: int, args, log_dir: Path) -> tuple[list[Result], dict[str, float], int]:
    from django.db import connections

    connections.close_all()
    fresh_database()
    from apps.accounts.models import User
    from apps.screening.models import Rating

    n_domains = domains_for(size)
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        t0 = time.perf_counter()
        org = generate(Path(tmp), n_domains)
        gen_s = time.perf_counter() - t0
        imported = import_org(org)
    ratings = Rating.objects.count()
    print(
        f"\n{size}x the demo: {n_domains} domains, {org.reviewers:,} reviewers, {org.ideas:,} "
        f"ideas, {ratings:,} stored ratings (generated in {gen_s:.1f} s; imported: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in imported.items())
        + f"; load {load_average()})",
        flush=True,
    )
    quiet_after_import()
    manager, _ = User.objects.get_or_create(
        username="scale-manager", defaults={"role": User.Role.MANAGER}
    )
    reviewer_ids = list(
        User.objects.filter(role=User.Role.REVIEWER).order_by("id").values_list("id", flat=True)
    )
    results: list[Result] = []
    first = args.workers[0]
    workers = Workers(first, log_dir).start()
    try:
        for name, start in jobs(manager, reviewer_ids).items():
            result = run_job(
                name,
                start,
                workers,
                size=size,
                ratings=ratings,
                time_box=args.time_box,
                progress=refresh_progress() if name == "refresh" else None,
            )
            if name == "refresh":
                result.extra["predictions"] = prediction_rows()
                result.extra["repeat"] = size == args.refresh_size
            results.append(result)
            if result.cut:
                stop_everything_queued()
        print(f"  vacuum analyze before the pages: {vacuum_database():.1f} s", flush=True)
        pages = page_times(manager, args.page_runs)
        print(
            "  warm pages (ms): "
            + ", ".join(f"{k} {v:.0f}" for k, v in pages.items())
            + f" (load {load_average()})",
            flush=True,
        )
        if size == args.refresh_size:
            for n in args.workers[1:]:
                if n != workers.n:
                    workers.stop()
                    workers = Workers(n, log_dir).start()
                before = prediction_rows()
                result = run_job(
                    "refresh",
                    jobs(manager, reviewer_ids)["refresh"],
                    workers,
                    size=size,
                    ratings=ratings,
                    time_box=args.time_box,
                    progress=refresh_progress(),
                )
                result.extra["predictions"] = prediction_rows() - before
                result.extra["repeat"] = True
                results.append(result)
                if result.cut:
                    stop_everything_queued()
    finally:
        workers.stop()
    return results, pages, ratings


# --------------------------------------------------------------------------- report


def exponent(a: Result, b: Result) -> float:
    if a.wall_s <= 0 or b.wall_s <= 0 or a.ratings == b.ratings:
        return float("nan")
    return math.log(b.wall_s / a.wall_s) / math.log(b.ratings / a.ratings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,300", help="multiples of the demo's ratings")
    parser.add_argument("--workers", default="1,2,4", help="worker counts for the refresh")
    parser.add_argument("--refresh-size", type=int, default=None, help="default: largest size")
    parser.add_argument("--time-box", type=float, default=1800.0, help="seconds per job")
    parser.add_argument("--page-runs", type=int, default=5)
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    args.workers = [int(w) for w in args.workers.split(",")]
    if args.refresh_size is None:
        args.refresh_size = max(args.sizes)
    # A terminated bench still stops its workers (the `finally` in one_size).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated (the workers were stopped)"))
    setup_django()
    log_dir = Path(tempfile.mkdtemp(prefix="bench-scale-logs-"))
    print(
        f"bench_scale: sizes {args.sizes} x the demo's {DEMO_RATINGS:,} ratings, workers "
        f"{args.workers}, refresh repeated at {args.refresh_size}x; {os.cpu_count()} CPUs, "
        f"load {load_average()}; worker logs in {log_dir}",
        flush=True,
    )
    all_results: list[Result] = []
    pages_by_size: dict[int, dict[str, float]] = {}
    ratings_by_size: dict[int, int] = {}
    for size in args.sizes:
        try:
            results, pages, ratings = one_size(size, args, log_dir)
        except KeyboardInterrupt:
            raise SystemExit("interrupted (the workers were stopped)") from None
        all_results += results
        pages_by_size[size] = pages
        ratings_by_size[size] = ratings

    # The table: one row per (job, size), first pass on the first worker count.
    first = [r for r in all_results if r.workers == args.workers[0]]
    print("\njob         size   ratings    workers  wall s   CPU s   peak RSS MB      rows  "
          "growth  target   load")  # fmt: skip
    by_job: dict[str, list[Result]] = {}
    for r in first:
        by_job.setdefault(r.job, []).append(r)
    for job, rows in by_job.items():
        previous = None
        for r in rows:
            # A job the time box cut has no growth figure: its time is a lower bound.
            growth = (
                f"{exponent(previous, r):6.2f}"
                if previous and not previous.cut and not r.cut
                else "     -"
            )
            mark = ">" if r.cut else " "
            print(
                f"{job:<10} {r.size:>4}x {r.ratings:>9,} {r.workers:>7} {mark}{r.wall_s:7.1f} "
                f"{r.cpu_s:7.1f} {r.rss_mb:13.0f} {r.rows:>9,}  {growth}  "
                f"{JOB_TARGET_S:5.0f}   {r.load}"
            )
            previous = r
    for size, pages in pages_by_size.items():
        print(
            f"pages      {size:>4}x {ratings_by_size[size]:>9,} warm ms: "
            + ", ".join(f"{k} {v:.0f}" for k, v in pages.items())
            + f" (target {PAGE_TARGET_MS:.0f})"
        )
    repeats = [r for r in all_results if r.extra.get("repeat")]
    for r in repeats:
        mark = ">" if r.cut else ""
        print(
            f"refresh at {r.size}x with {r.workers} worker(s): {mark}{r.wall_s:.1f} s wall, "
            f"{r.cpu_s:.1f} s CPU, {r.extra.get('predictions', 0):,} predictions stored, "
            f"{r.extra.get('units_per_s', 0):.0f} units judged and stored a second, "
            f"peak RSS {r.rss_mb:.0f} MB (target {REFRESH_TARGET_S:.0f} s on one worker; "
            f"load {r.load})"
        )
    by_workers = {r.workers: r for r in repeats}
    one = by_workers.get(1)
    two = by_workers.get(2)
    largest = max(args.sizes)
    at_largest = [r for r in first if r.size == largest]
    slowest = max(at_largest, key=lambda r: r.wall_s)
    peak = max(r.rss_mb for r in all_results)
    predictions = (one or two or slowest).extra.get("predictions", 0) if (one or two) else 0
    a = f"{'>' if one and one.cut else ''}{one.wall_s:.1f}" if one else "n/a"
    b = f"{'>' if two and two.cut else ''}{two.wall_s:.1f}" if two else "n/a"
    if one and two and not one.cut and not two.cut:
        speedup = f"{one.wall_s / two.wall_s:.2f}x"
    elif one and two and one.extra.get("units_per_s"):
        # Cut by the time box: the speed-up in units judged and stored per second.
        speedup = f"{two.extra['units_per_s'] / one.extra['units_per_s']:.2f}x in units a second"
    else:
        speedup = "n/a"
    million = (
        f"{ratings_by_size[largest] / 1e6:.1f}M"
        if ratings_by_size[largest] >= 950_000
        else (f"{ratings_by_size[largest]:,}")
    )
    print(
        f"refresh {predictions:,} predictions: 1 worker {a} s, 2 workers {b} s (speed-up "
        f"{speedup}); slowest job at {'1M' if million.endswith('M') else million} ratings: "
        f"{slowest.job} {'>' if slowest.cut else ''}{slowest.wall_s:.1f} s; peak worker RSS "
        f"{peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
