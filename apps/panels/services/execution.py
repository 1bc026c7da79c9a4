"""Executing panel runs: work the chunks under leases, debate turn by turn, finish with the
study figures, reclaim runs whose worker died (the invariants: services/runs.py).
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Q, Sum
from django.db.models.functions import Now
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.core.leases import ChunkLeases, LeaseLost, lease_expired_before
from apps.judges.backends.openai import OpenAIBackend
from apps.judges.engine.judgment import (
    PermanentBackendError,
    RubricDimension,
    TransientBackendError,
)
from apps.judges.engine.prompting import correction_message
from apps.judges.selectors import dimensions_for_domain, rubric_dimension
from apps.panels import selectors
from apps.panels.engine import debate as engine
from apps.panels.engine.study import overall_switch_rate, study_figures
from apps.panels.models import PanelChunk, PanelDebate, PanelRun, PanelTurn
from apps.panels.services import dispatch
from apps.panels.services.llm import TURN_MAX_TOKENS, panel_backend
from apps.panels.services.runs import REASKS, BudgetReached, RunDeferred, item_text
from apps.screening.models import Dimension

logger = logging.getLogger(__name__)

# The leases of panel run chunks (apps/core/leases.py), the same rules as judge runs.
LEASES = ChunkLeases(PanelChunk, PanelRun, what="panel run")


def _tokens_used(run_id: int) -> int:
    agg = PanelTurn.objects.filter(run_id=run_id).aggregate(
        p=Sum("prompt_tokens"), c=Sum("completion_tokens")
    )
    return int((agg["p"] or 0) + (agg["c"] or 0))


class _Chunk:
    """Works one chunk: every dimension's debate on one idea, turn by turn."""

    def __init__(
        self, run: PanelRun, chunk: PanelChunk, token: str, backend: OpenAIBackend
    ) -> None:
        self.run, self.chunk, self.token, self.backend = run, chunk, token, backend
        self.used = _tokens_used(run.id)

    def ask_for(self, dim: Dimension, rubric_dim: RubricDimension) -> engine.Ask:
        stored = {
            (t.kind, t.member, t.round): t
            for t in PanelTurn.objects.filter(run=self.run, idea=self.chunk.idea, dimension=dim)
        }

        def ask(
            kind: str, member: int, round_no: int, messages: list[dict[str, str]]
        ) -> engine.TurnResult:
            turn = stored.get((kind, member, round_no))
            if turn is None:
                turn = self._call(dim, rubric_dim, kind, member, round_no, messages)
            return engine.TurnResult(score=turn.score, reason=turn.reason)

        return ask

    def _call(
        self,
        dim: Dimension,
        rubric_dim: RubricDimension,
        kind: str,
        member: int,
        round_no: int,
        messages: list[dict[str, str]],
    ) -> PanelTurn:
        if self.used >= self.run.budget_tokens:
            raise BudgetReached(
                f"The budget cap of {self.run.budget_tokens} tokens was reached "
                f"({self.used} used); the debates finished so far are analysed."
            )
        LEASES.beat(self.run.id, self.chunk.id, self.token)
        fingerprint = ""
        prompt = completion = latency = attempts = 0
        raw = ""
        result = engine.TurnResult(score=None, reason="")
        convo = list(messages)
        for _ in range(1 + REASKS):
            reply = self.backend.chat(convo, max_tokens=TURN_MAX_TOKENS, score_on=rubric_dim)
            attempts += 1
            fingerprint = fingerprint or reply.prompt_fingerprint
            prompt += reply.prompt_tokens
            completion += reply.completion_tokens
            latency += reply.latency_ms
            raw = reply.text
            result = engine.parse_turn(raw, rubric_dim)
            if result.score is not None:
                break
            convo = [
                *convo,
                {"role": "assistant", "content": raw},
                correction_message("it had no usable score", rubric_dim),
            ]
        reason = result.reason
        if kind == engine.SYNTHESIS and not reason:
            reason = " ".join(raw.split())[:600]  # a synthesis is prose even when not JSON
        self.used += prompt + completion
        try:
            with transaction.atomic():
                return PanelTurn.objects.create(
                    run=self.run,
                    idea=self.chunk.idea,
                    dimension=dim,
                    kind=kind,
                    member=member,
                    round=round_no,
                    score=result.score,
                    reason=reason,
                    raw=raw[:4000],
                    error="" if result.score is not None else "no usable score in the reply",
                    prompt_fingerprint=fingerprint,
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    latency_ms=latency,
                    attempts=attempts,
                    model=self.backend.model,
                )
        except IntegrityError:
            # Another worker stored this turn while we were calling (a lease taken over):
            # theirs stands, so both continue from the same turn.
            return PanelTurn.objects.get(
                run=self.run,
                idea=self.chunk.idea,
                dimension=dim,
                kind=kind,
                member=member,
                round=round_no,
            )

    def work(self, dims: list[Dimension], members: list[engine.Member]) -> None:
        done = set(
            PanelDebate.objects.filter(run=self.run, idea=self.chunk.idea).values_list(
                "dimension_id", flat=True
            )
        )
        text = item_text(self.chunk.idea)
        for dim in dims:
            if dim.id in done:
                continue
            rubric_dim = rubric_dimension(dim)
            result = engine.run_debate(
                members=members,
                dimension=rubric_dim,
                item_text=text,
                max_rounds=self.run.max_rounds,
                ask=self.ask_for(dim, rubric_dim),
            )
            PanelDebate.objects.get_or_create(
                run=self.run,
                idea=self.chunk.idea,
                dimension=dim,
                defaults={
                    "single_score": result.single,
                    "before_score": result.before,
                    "after_score": result.after,
                    "stop_reason": result.stop_reason,
                    "debate_rounds": result.debate_rounds,
                    "rounds": [{str(k): v for k, v in r.items()} for r in result.rounds],
                    "synthesis": result.synthesis,
                },
            )
        LEASES.done(self.chunk.id, self.token)


def _members(run: PanelRun) -> list[engine.Member]:
    return [
        engine.Member(key=p.id, name=p.name, description=p.description)
        for p in run.personas.order_by("id")
    ]


def panel_run_execute(*, run_id: int) -> str:
    """Execute (or resume, or help with) one run; returns its status. Safe to run twice."""
    PanelRun.objects.filter(id=run_id, status=PanelRun.Status.QUEUED).update(
        status=PanelRun.Status.RUNNING, heartbeat_at=Now()
    )
    run = PanelRun.objects.select_related("domain").get(id=run_id)
    if run.status != PanelRun.Status.RUNNING:
        return str(run.status)
    try:
        backend = panel_backend()
    except ApplicationError as exc:  # the endpoint was unset after the run was queued
        panel_run_fail(run_id=run.id, error=exc.message)
        return PanelRun.Status.FAILED
    dims = dimensions_for_domain(run.domain, run.dimension_keys)
    members = _members(run)
    token = uuid.uuid4().hex
    for chunk in run.chunks.select_related("idea").exclude(status=PanelChunk.Status.DONE):
        if not LEASES.claim(chunk.id, token):
            continue
        try:
            _Chunk(run, chunk, token, backend).work(dims, members)
        except BudgetReached as exc:
            _finish(run, PanelRun.Status.STOPPED, error=str(exc))
            return PanelRun.Status.STOPPED
        except TransientBackendError as exc:
            LEASES.release(chunk.id, token)
            raise RunDeferred(str(exc)) from exc
        except PermanentBackendError as exc:
            panel_run_fail(run_id=run.id, error=f"The LLM endpoint refused the calls: {exc}")
            return PanelRun.Status.FAILED
        except LeaseLost:
            return str(PanelRun.objects.get(id=run.id).status)
    if run.chunks.exclude(status=PanelChunk.Status.DONE).exists():
        return PanelRun.Status.RUNNING  # another worker holds a chunk; it finishes the run
    _finish(run, PanelRun.Status.DONE)
    return PanelRun.Status.DONE


def _figures(run: PanelRun) -> dict[str, Any]:
    frames = selectors.study_frames(run)
    per_dimension = study_figures(**frames)
    for key, usage in selectors.usage_by_dimension(run).items():
        per_dimension.setdefault(key, {}).update(usage)
    return {
        "dimensions": per_dimension,
        "overall": overall_switch_rate(frames["rounds"]),
        "debates": len(frames["debates"]),
        "stop_reasons": dict(
            PanelDebate.objects.filter(run=run)
            .order_by()
            .values_list("stop_reason")
            .annotate(n=Count("id"))
            .values_list("stop_reason", "n")
        ),
    }


def _finish(run: PanelRun, status: str, *, error: str = "") -> bool:
    """Conditional RUNNING -> status; the winner stores usage and figures."""
    won = PanelRun.objects.filter(id=run.id, status=PanelRun.Status.RUNNING).update(
        status=status, error=error, finished_at=timezone.now()
    )
    if not won:
        return False
    usage = selectors.run_usage(run)
    figures = _figures(run)
    PanelRun.objects.filter(id=run.id).update(figures=figures, **usage)
    return True


def panel_runs_reclaim() -> dict[str, int]:
    """The periodic reclaim (Celery beat), as for judge runs: running runs whose heartbeat is
    older than JUDGE_LEASE_SECONDS (their worker died) and queued runs no worker took within
    JUDGE_REQUEUE_AFTER_SECONDS (their message was lost) are sent again. Each resent run's clock
    is reset so it is not resent on every pass; a duplicate delivery is harmless (the chunk
    lease and the stored turns). Returns the counts."""
    now = timezone.now()
    requeue_before = now - timedelta(seconds=float(settings.JUDGE_REQUEUE_AFTER_SECONDS))
    with transaction.atomic():
        stale = list(
            PanelRun.objects.select_for_update(skip_locked=True)
            .filter(status=PanelRun.Status.RUNNING)
            .filter(
                Q(heartbeat_at__lt=lease_expired_before())
                | Q(heartbeat_at__isnull=True, updated_at__lt=lease_expired_before())
            )
            .values_list("id", flat=True)
        )
        lost = list(
            PanelRun.objects.select_for_update(skip_locked=True)
            .filter(status=PanelRun.Status.QUEUED, updated_at__lt=requeue_before)
            .values_list("id", flat=True)
        )
        PanelRun.objects.filter(id__in=stale).update(heartbeat_at=now)
        PanelRun.objects.filter(id__in=lost).update(updated_at=now)
        resend = stale + lost
        transaction.on_commit(lambda: _send_all(resend))
    return {"stale": len(stale), "lost": len(lost)}


def _send_all(run_ids: list[int]) -> None:
    for run_id in run_ids:
        dispatch.send_run(run_id)


def panel_run_fail(*, run_id: int, error: str) -> bool:
    run = PanelRun.objects.get(id=run_id)
    PanelRun.objects.filter(id=run_id, status=PanelRun.Status.QUEUED).update(
        status=PanelRun.Status.RUNNING
    )
    return _finish(run, PanelRun.Status.FAILED, error=error)
