"""Request types for annotations: what a view may assume about its request.

Views behind login_required/role_required, and API views behind an authenticating permission class,
always see a signed-in User; annotating them with these types says so once, instead of narrowing
`User | AnonymousUser` in every view. The classes are never instantiated: Django and DRF build the
requests, and the middleware (auth, django-htmx) sets the attributes declared here.
"""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails
from rest_framework.request import Request

from apps.accounts.models import User


class HtmxHttpRequest(HttpRequest):
    """Any page request: django-htmx's middleware adds `request.htmx`."""

    htmx: HtmxDetails


class AuthenticatedHttpRequest(HtmxHttpRequest):
    """A page request behind login_required or role_required."""

    user: User


class AuthenticatedRequest(Request):
    """A DRF request to a view whose permission classes refuse anonymous users."""

    user: User
