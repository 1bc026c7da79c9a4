"""Reviewers: one row per reviewer account, upserted by username.

New accounts get the reviewer role and an unusable password (an admin sends a reset link or sets
one); existing accounts of another role are refused rather than silently demoted.
"""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from apps.accounts.models import ReviewerProfile, User
from apps.catalog.models import Domain
from apps.dataio.importers import ImportResult
from apps.dataio.importers.common import (
    INTEGER,
    Problems,
    check_columns,
    check_lengths,
    report_duplicates,
    require_values,
)
from apps.dataio.importers.reading import read_table
from apps.dataio.importers.streams import ImportContent

REQUIRED = ["username"]
OPTIONAL = ["background", "email", "name", "domains", "years_experience"]
# A CharField, so max_length is set; get_field() is typed for any field.
BACKGROUND_MAX = cast(int, ReviewerProfile._meta.get_field("background").max_length)


def _split_name(name: str) -> tuple[str, str]:
    first, _, last = name.partition(" ")
    return first.strip()[:150], last.strip()[:150]


def import_reviewers(*, content: ImportContent, filename: str, actor: Any = None) -> ImportResult:
    frame = read_table(content, filename)
    check_columns(frame, required=REQUIRED, optional=OPTIONAL, kind="reviewers")
    problems = Problems()
    require_values(frame, problems, REQUIRED)
    check_lengths(frame, problems, {"username": 150, "email": 254})
    bad_name = (frame["username"] != "") & ~frame["username"].str.match(r"^[\w.@+-]+$")
    problems.add_rows(frame, bad_name, "username", "may hold only letters, digits and @ . + - _")
    if "background" in frame.columns:
        # A free label: any text, one line, compared case-insensitively.
        frame["background"] = frame["background"].str.split().str.join(" ").str.lower()
        check_lengths(frame, problems, {"background": BACKGROUND_MAX})
    if "email" in frame.columns:
        for row, email in frame.loc[frame["email"] != "", ["_row", "email"]].itertuples(
            index=False
        ):
            try:
                validate_email(email)
            except ValidationError:
                problems.add("email", "is not an e-mail address", row=int(row), value=email)
    if "years_experience" in frame.columns:
        years = frame["years_experience"]
        bad_years = (years != "") & ~years.str.match(INTEGER)
        problems.add_rows(frame, bad_years, "years_experience", "must be a whole number of years")
        given = (years != "") & ~bad_years
        off = given & ~years.where(given, "0").astype(int).between(0, 80)
        problems.add_rows(frame, off, "years_experience", "must be between 0 and 80")

    domain_lists: list[list[str]] = []
    known = dict(Domain.objects.values_list("key", "id"))
    if "domains" in frame.columns:
        for row, cell in frame[["_row", "domains"]].itertuples(index=False):
            keys = [k.strip() for k in cell.split(";") if k.strip()]
            for k in keys:
                if k not in known:
                    problems.add(
                        "domains",
                        "is not a known domain key; import the patents first",
                        row=int(row),
                        value=k,
                    )
            domain_lists.append(keys)
    report_duplicates(frame, problems, ["username"], field_name="username")

    users = {u.username: u for u in User.objects.filter(username__in=frame["username"].tolist())}
    for row, username in frame[["_row", "username"]].itertuples(index=False):
        user = users.get(username)
        if user is not None and user.role != User.Role.REVIEWER:
            problems.add(
                "username",
                f"belongs to a {user.get_role_display().lower()} account; "
                "only reviewers are imported",
                row=int(row),
                value=username,
            )
    problems.raise_if_any("The reviewers file has errors.")

    result = ImportResult(kind="reviewers", rows=len(frame))
    profiles = {
        p.user_id: p
        for p in ReviewerProfile.objects.filter(user__in=users.values()).prefetch_related("domains")
    }
    for i, rec in enumerate(frame.to_dict("records")):
        user = users.get(rec["username"])
        created = user is None
        changed = False
        user_values: dict[str, Any] = {}
        if "email" in rec:
            user_values["email"] = rec["email"]
        if "name" in rec:
            user_values["first_name"], user_values["last_name"] = _split_name(rec["name"])
        if user is None:
            user = User(
                username=rec["username"],
                role=User.Role.REVIEWER,
                password=make_password(None),
                **user_values,
            )
            user.save()
        else:
            diff = [k for k, v in user_values.items() if getattr(user, k) != v]
            if diff:
                for k in diff:
                    setattr(user, k, user_values[k])
                user.save(update_fields=diff)
                changed = True
        profile = profiles.get(user.pk)
        years = None
        if rec.get("years_experience"):
            years = int(rec["years_experience"])
        had_profile = profile is not None
        if profile is None:
            profile = ReviewerProfile.objects.create(
                user=user, background=rec.get("background", ""), years_experience=years
            )
            changed = True
        else:
            updates = []
            if "background" in rec and profile.background != rec["background"]:
                profile.background = rec["background"]
                updates.append("background")
            if "years_experience" in rec and profile.years_experience != years:
                profile.years_experience = years
                updates.append("years_experience")
            if updates:
                profile.save(update_fields=updates)
                changed = True
        if domain_lists:
            wanted = {known[k] for k in domain_lists[i]}
            current = {d.pk for d in profile.domains.all()} if had_profile else set()
            if wanted != current:
                profile.domains.set(wanted)
                changed = True
        if created:
            result.created += 1
        elif changed:
            result.updated += 1
        else:
            result.unchanged += 1
    return result
