"""Compute the findings of a domain now (in-process, nothing stored) and print them per scope."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.catalog.models import Domain, Idea
from apps.core.errors import ApplicationError
from apps.findings.models import Source
from apps.findings.presenters import scope_rows
from apps.findings.selectors import default_threshold
from apps.findings.services import findings_compute, validate_threshold

FIELDS = ("n_rationales", "n_units", "n_findings", "curve", "chao2", "coverage", "expected_new")


class Command(BaseCommand):
    help = (
        "Distinct findings in a domain's rationales: per scope n_rationales, n_units, "
        "n_findings, the discovery curve, Chao2, coverage and expected new findings."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--domain", required=True, help="domain key")
        parser.add_argument("--idea", type=int, help="idea id: print only this idea's scope")
        parser.add_argument(
            "--threshold", help="similarity threshold (default FINDINGS_SIMILARITY_THRESHOLD)"
        )
        parser.add_argument("--format", choices=["json", "table"], default="table")
        parser.add_argument(
            "--source",
            choices=Source.values,
            default=Source.REVIEWERS,
            help="reviewers' rationales (default) or judges' reasons; never mixed",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        domain = opts["domain"]
        if not Domain.objects.filter(key=domain).exists():
            raise CommandError(f"--domain: no domain with key {domain!r}")
        idea_id = opts["idea"]
        if (
            idea_id is not None
            and not Idea.objects.filter(pk=idea_id, patent__domain__key=domain).exists()
        ):
            raise CommandError(f"--idea: no idea {idea_id} in domain {domain!r}")
        try:
            threshold = (
                default_threshold()
                if opts["threshold"] is None
                else validate_threshold(opts["threshold"])
            )
        except ApplicationError as exc:
            raise CommandError(
                f"--threshold: must be a number from 0.05 to 1, got {opts['threshold']!r}"
            ) from exc
        result = findings_compute(
            threshold=threshold, domain=domain, idea_id=idea_id, source=opts["source"]
        )
        section = result["domains"].get(domain)
        scopes = scope_rows(section, domain=domain, only_idea=idea_id)
        if idea_id is not None and not any(s["scope"] == f"idea:{idea_id}" for s in scopes):
            scopes.append({"scope": f"idea:{idea_id}", **_empty()})
        if opts["format"] == "json":
            payload = {
                "domain": domain,
                "source": opts["source"],
                "threshold": threshold,
                "scopes": [{"scope": s["scope"], **{f: s[f] for f in FIELDS}} for s in scopes],
            }
            self.stdout.write(json.dumps(payload, indent=2))
            return
        self.stdout.write(f"domain {domain}, {opts['source']}, threshold {threshold:g}")
        for s in scopes:
            c = s["chao2"]
            new = s["expected_new"]
            self.stdout.write(
                f"{s['scope']}: n_rationales={s['n_rationales']} n_units={s['n_units']} "
                f"n_findings={s['n_findings']} chao2={_f(c['estimate'])} "
                f"[{_f(c['low'])}, {_f(c['high'])}] coverage={_f(s['coverage'])} "
                f"expected_new +1={_f(new['1'])} +2={_f(new['2'])} +5={_f(new['5'])}"
            )
            curve = " ".join(
                f"{p['reviewers']}:{_f(p['findings'])}[{_f(p['low'])},{_f(p['high'])}]"
                for p in s["curve"]
            )
            self.stdout.write(f"  curve {curve}")


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:g}"


def _empty() -> dict[str, Any]:
    return {
        "n_rationales": 0,
        "n_units": 0,
        "n_findings": 0,
        "curve": [],
        "chao2": {"estimate": 0.0, "low": None, "high": None},
        "coverage": None,
        "expected_new": {"1": None, "2": None, "5": None},
    }
