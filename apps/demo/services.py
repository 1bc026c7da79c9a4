"""Loading the demo: generated files go through the same import services an admin uses."""

from __future__ import annotations

import csv
import io
import logging
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.contrib.auth.hashers import make_password
from django.db import transaction

from apps.accounts.models import User
from apps.catalog.models import IDEA_FIELDS, Idea, Patent
from apps.dataio.services.imports import import_file
from apps.demo.generator import DemoData, generate_demo
from apps.screening.models import Assignment, Rating
from apps.screening.services.assignments import assignment_create

logger = logging.getLogger(__name__)

DEMO_PASSWORD = "pluralist-demo"
# One fixed salt so the demo password hashes to the same string every run: loading twice leaves
# identical rows, and checking a password costs one hash instead of one per account. Demo only.
_DEMO_SALT = "pluralistdemo"

# (kind, columns) in import order; each kind refers to the ones before it.
FILES: list[tuple[str, list[str]]] = [
    ("patents", ["external_id", "domain", "domain_name", "title", "abstract", "claims"]),
    ("ideas", list(IDEA_FIELDS)),
    ("reviewers", ["username", "email", "name", "background", "domains", "years_experience"]),
    ("ratings", ["idea", "reviewer", "dimension", "score", "rationale", "created_at"]),
]


@dataclass
class DemoLogin:
    role: str
    username: str
    name: str
    password: str
    note: str


@dataclass
class DemoSummary:
    loaded: bool
    counts: dict[str, int] = field(default_factory=dict)
    imports: list[str] = field(default_factory=list)
    logins: list[DemoLogin] = field(default_factory=list)


def demo_sizes(*, scale: float) -> dict[str, int]:
    """Generator sizes for a scale factor.

    1.0 gives 120 patents, 300 ideas, 25 reviewers and about 3,000 ratings.
    """
    if scale <= 0:
        raise ValueError("scale must be positive")
    n_patents = max(3, round(120 * scale))
    return {
        "n_patents": n_patents,
        "n_ideas": max(n_patents, round(300 * scale)),
        "n_reviewers": max(6, round(25 * scale)),
        "ratings_target": max(60, round(3000 * scale)),
    }


def write_demo_files(data: DemoData, directory: Path) -> dict[str, Path]:
    """Write the generated rows as the CSV files an admin would upload; returns kind -> path."""
    paths: dict[str, Path] = {}
    for kind, columns in FILES:
        rows = getattr(data, kind)
        path = directory / f"demo-{kind}.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
            writer.writeheader()
            for row in rows:
                writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in columns})
        paths[kind] = path
    return paths


def _demo_password_hash() -> str:
    return make_password(DEMO_PASSWORD, salt=_DEMO_SALT)


def _ensure_staff(*, username: str, role: str, first: str, last: str, encoded: str) -> User:
    user, _ = User.objects.get_or_create(username=username, defaults={"role": role})
    wanted = {
        "role": role,
        "first_name": first,
        "last_name": last,
        "email": f"{username}@demo.pluralist.example",
        "is_staff": role == User.Role.ADMIN,
        "is_superuser": role == User.Role.ADMIN,
        "is_active": True,
        "password": encoded,
    }
    changed = [k for k, v in wanted.items() if getattr(user, k) != v]
    for k in changed:
        setattr(user, k, wanted[k])
    if changed:
        user.save(update_fields=changed)
    return user


@transaction.atomic
def demo_load(
    *,
    seed: int = 0,
    scale: float = 1.0,
    if_empty: bool = False,
    pending_per_reviewer: int = 4,
    now: datetime | None = None,
) -> DemoSummary:
    """Load the demo data set through the import services and create the demo logins.

    Idempotent: every import upserts by natural key, passwords hash to a fixed string and
    assignments are unique, so loading twice (on the same day, which anchors the rating dates)
    leaves the same data. With `if_empty`, nothing is written when ideas already exist.
    """
    if if_empty and Idea.objects.exists():
        return DemoSummary(loaded=False, counts=demo_counts(), logins=demo_logins())
    data = generate_demo(
        seed=seed, pending_per_reviewer=pending_per_reviewer, now=now, **demo_sizes(scale=scale)
    )
    encoded = _demo_password_hash()
    admin = _ensure_staff(
        username="admin", role=User.Role.ADMIN, first="Ada", last="Admin", encoded=encoded
    )
    _ensure_staff(
        username="manager", role=User.Role.MANAGER, first="Mona", last="Manager", encoded=encoded
    )

    summary = DemoSummary(loaded=True)
    with tempfile.TemporaryDirectory(prefix="pluralist-demo-") as tmp:
        for kind, path in write_demo_files(data, Path(tmp)).items():
            # actor=None: the system loads the demo (no admin is signed in from a command line).
            result = import_file(
                kind=kind,
                content=path.read_bytes(),
                filename=path.name,
                actor=None,
                create_domains=True,  # the demo's own domains
            )
            summary.imports.append(result.summary())

    usernames = [r["username"] for r in data.reviewers]
    User.objects.filter(username__in=usernames).exclude(password=encoded).update(password=encoded)

    reviewers = {
        u.username: u
        for u in User.objects.filter(username__in=usernames).select_related("reviewer_profile")
    }
    ideas = {
        i.external_id: i
        for i in Idea.objects.filter(
            external_id__in=[p["idea"] for p in data.pending]
        ).select_related("patent__domain")
    }
    for row in data.pending:
        assignment_create(reviewer=reviewers[row["reviewer"]], idea=ideas[row["idea"]], actor=None)

    summary.counts = demo_counts()
    summary.logins = demo_logins()
    logger.info(
        "demo loaded (seed %s, scale %s): %s; admin %s", seed, scale, summary.counts, admin.username
    )
    return summary


def demo_counts() -> dict[str, int]:
    return {
        "patents": Patent.objects.count(),
        "ideas": Idea.objects.count(),
        "reviewers": User.objects.filter(role=User.Role.REVIEWER).count(),
        "ratings": Rating.objects.count(),
        "scored ratings": Rating.objects.filter(status=Rating.Status.SCORED).count(),
        "pending assignments": Assignment.objects.filter(status=Assignment.Status.PENDING).count(),
    }


def demo_logins(*, reviewers_per_background: int = 2) -> list[DemoLogin]:
    """The accounts to try the demo with: the admin, the manager and a few reviewers of each
    background, preferring reviewers with ideas waiting in their queue."""
    logins: list[DemoLogin] = []
    for username, note in (
        ("admin", "imports, assignments, judges; Django admin at /admin/"),
        ("manager", "disagreement dashboards, judges, all ratings (read-only)"),
    ):
        user = User.objects.filter(username=username).first()
        if user is not None:
            logins.append(
                DemoLogin(
                    role=user.get_role_display().lower(),
                    username=username,
                    name=user.display_name,
                    password=DEMO_PASSWORD,
                    note=note,
                )
            )
    pending = set(
        Assignment.objects.filter(status=Assignment.Status.PENDING).values_list(
            "reviewer_id", flat=True
        )
    )
    candidates = (
        User.objects.filter(
            role=User.Role.REVIEWER,
            reviewer_profile__isnull=False,
            email__endswith="@demo.pluralist.example",
        )
        .select_related("reviewer_profile")
        .prefetch_related("reviewer_profile__domains")
        .order_by("username")
    )
    for background in ("technical", "business"):
        group = [u for u in candidates if u.reviewer_profile.background == background]
        group.sort(key=lambda u: (u.pk not in pending, u.username))
        for user in group[:reviewers_per_background]:
            domains = ", ".join(d.name for d in user.reviewer_profile.domains.all())
            logins.append(
                DemoLogin(
                    role=f"reviewer ({background})",
                    username=user.username,
                    name=user.display_name,
                    password=DEMO_PASSWORD,
                    note=f"rates {domains}",
                )
            )
    return logins


def format_logins(logins: list[DemoLogin]) -> str:
    """The logins as a plain-text table for a terminal."""
    header = ("Role", "Username", "Password", "Name", "What to look at")
    rows = [header] + [(x.role, x.username, x.password, x.name, x.note) for x in logins]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    out = io.StringIO()
    for n, r in enumerate(rows):
        out.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n")
        if n == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")
    return out.getvalue()
