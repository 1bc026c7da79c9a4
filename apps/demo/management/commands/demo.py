"""`manage.py demo`: load the demo data set and print how to sign in."""

from __future__ import annotations

import logging
import os

from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import ApplicationError
from apps.demo.services import demo_load, format_logins


class Command(BaseCommand):
    help = (
        "Load the demo: 120 patents and 300 ideas in 3 domains, 25 reviewers, about 3,000 ratings "
        "with realistic disagreement, pending assignments, and admin/manager/reviewer logins."
    )

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
        parser.add_argument("--scale", type=float, default=1.0, help="size factor (default 1.0)")
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="do nothing when ideas already exist (the logins are still printed)",
        )
        parser.add_argument(
            "--url",
            default=os.environ.get("PLURALIST_URL", "http://127.0.0.1:8000/"),
            help="the address printed for the web app",
        )

    def handle(self, *args, seed: int, scale: float, if_empty: bool, url: str, **options):
        if scale <= 0:
            raise CommandError("--scale must be positive")
        if options["verbosity"] < 2:
            # The import services log each file; the summary below says the same, once.
            logging.getLogger("apps").setLevel(logging.WARNING)
        try:
            summary = demo_load(seed=seed, scale=scale, if_empty=if_empty)
        except ApplicationError as exc:
            details = "; ".join(f"{e.field} (row {e.row}): {e.message}" for e in exc.errors[:10])
            raise CommandError(f"{exc.message} {details}") from exc
        out = self.stdout
        if summary.loaded:
            out.write(self.style.SUCCESS(f"Demo data loaded (seed {seed}, scale {scale:g})."))
            for line in summary.imports:
                out.write(f"  {line}")
        else:
            out.write("Ideas already exist; the demo data was not loaded again (--if-empty).")
        out.write("Contents: " + ", ".join(f"{v:,} {k}" for k, v in summary.counts.items()) + ".")
        out.write("")
        out.write(f"Open {url} and sign in as:")
        out.write(format_logins(summary.logins))
