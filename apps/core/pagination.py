"""The API's one pagination class (DEFAULT_PAGINATION_CLASS and paginated_response).

Its own module, importing only DRF: DRF loads the pagination setting while its generic views are
still importing, so this class must not pull in drf-spectacular (which imports those views).
"""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

# PostgreSQL's bigint: ids, LIMIT and OFFSET beyond it are refused by the database with a 500.
BIGINT_MAX = 2**63 - 1
# The largest page a list returns; a bigger ?limit= is lowered to it (DRF's documented behaviour).
MAX_PAGE_SIZE = 1000


class Pagination(LimitOffsetPagination):
    """limit/offset paging with bounds: ?limit= is capped at MAX_PAGE_SIZE, and an offset past
    what PostgreSQL can hold is a 400 instead of a database error."""

    max_limit = MAX_PAGE_SIZE

    def get_offset(self, request: Request) -> int:
        offset = super().get_offset(request)
        if offset > BIGINT_MAX:
            message = f"Ensure this value is less than or equal to {BIGINT_MAX}."
            raise exceptions.ValidationError({self.offset_query_param: [message]})
        return offset
