"""Writes for the judges, split by responsibility (see each module's docstring):

- configs: the one configuration validator and the configuration writes;
- runs: requesting, starting studies, cancelling;
- scheduling: automatic runs after rating changes (debounced), the reclaim of lost work;
- dispatch: the only module that sends Celery messages;
- planning: pure; a run's work units and their examples;
- execution: a run from claim to finish (judge_run_execute), in steps of their own:
  run_plans (the stored plan), chunks (leases, judging, progress), calibration, finals (the
  seed vote);
- shortlists: the reviewer's stored shortlists, made when a prediction run finishes and rebuilt
  after a restore;
- alignment: alignment snapshots (owned by the alignment work; called when runs finish).

The names below are the public interface that views, the API, commands and tests import.
"""

from apps.judges.services.configs import (
    AUTO_SHOTS,
    CONFIG_FIELDS,
    DEFAULT_SHOTS,
    allowed_base_urls,
    base_url_error,
    config_cannot_run,
    default_backend,
    judge_config_clean,
    judge_config_create,
    judge_config_delete,
    judge_config_errors,
    judge_config_update,
    judge_configs_ensure_defaults,
)
from apps.judges.services.execution import (
    RunDeferred,
    judge_run_execute,
    judge_run_fail,
)
from apps.judges.services.planning import WorkUnit
from apps.judges.services.reclaim import judge_runs_reclaim
from apps.judges.services.runs import (
    judge_run_cancel,
    judge_run_get,
    judge_run_request,
    judge_studies_ensure,
    judge_study_start,
)
from apps.judges.services.scheduling import (
    db_now,
    judge_ratings_changed,
    judge_runs_schedule,
    judge_schedule_requests_run,
)
from apps.judges.services.shortlists import judge_shortlists_rebuild

__all__ = [
    "AUTO_SHOTS",
    "CONFIG_FIELDS",
    "DEFAULT_SHOTS",
    "RunDeferred",
    "WorkUnit",
    "allowed_base_urls",
    "base_url_error",
    "config_cannot_run",
    "db_now",
    "default_backend",
    "judge_config_clean",
    "judge_config_create",
    "judge_config_delete",
    "judge_config_errors",
    "judge_config_update",
    "judge_configs_ensure_defaults",
    "judge_ratings_changed",
    "judge_run_cancel",
    "judge_run_execute",
    "judge_run_fail",
    "judge_shortlists_rebuild",
    "judge_run_get",
    "judge_run_request",
    "judge_runs_reclaim",
    "judge_runs_schedule",
    "judge_schedule_requests_run",
    "judge_studies_ensure",
    "judge_study_start",
]
