"""Input and output shapes of the catalog API. Serializers validate and format; they never save."""

from __future__ import annotations

from rest_framework import serializers

from apps.catalog.models import EXTERNAL_ID_MAX, Domain, Idea, Patent
from apps.core import fields
from apps.screening.models import Rubric


class DomainOutputSerializer(serializers.ModelSerializer):
    rubric: serializers.SlugRelatedField[Rubric] = serializers.SlugRelatedField(
        slug_field="key", read_only=True, allow_null=True
    )

    class Meta:
        model = Domain
        fields = ["id", "key", "name", "rubric"]


class DomainInputSerializer(serializers.Serializer):
    key = serializers.SlugField(max_length=64)
    name = serializers.CharField(max_length=200)
    rubric = fields.SlugRelatedField(
        slug_field="key",
        queryset=Rubric.objects.all(),
        required=False,
        allow_null=True,
        help_text="Key of the rubric for this domain's ideas; empty = the default rubric.",
    )


class PatentOutputSerializer(serializers.ModelSerializer):
    domain: serializers.SlugRelatedField[Domain] = serializers.SlugRelatedField(
        slug_field="key", read_only=True
    )

    class Meta:
        model = Patent
        fields = [
            "id",
            "external_id",
            "domain",
            "title",
            "abstract",
            "claims",
            "created_at",
            "updated_at",
        ]


class PatentInputSerializer(serializers.Serializer):
    external_id = serializers.CharField(max_length=EXTERNAL_ID_MAX)
    domain = fields.SlugRelatedField(slug_field="key", queryset=Domain.objects.all())
    title = serializers.CharField(max_length=500)
    abstract = fields.LongTextField(required=False, allow_blank=True)
    claims = fields.LongTextField(required=False, allow_blank=True)


class IdeaOutputSerializer(serializers.ModelSerializer):
    patent: serializers.SlugRelatedField[Patent] = serializers.SlugRelatedField(
        slug_field="external_id", read_only=True
    )
    patent_id = serializers.IntegerField(read_only=True)
    domain = serializers.CharField(source="patent.domain.key", read_only=True)
    display_title = serializers.CharField(
        read_only=True, help_text="The title, or an excerpt of the description when it has none."
    )

    class Meta:
        model = Idea
        fields = [
            "id",
            "external_id",
            "patent",
            "patent_id",
            "domain",
            "title",
            "display_title",
            "description",
            "implementation",
            "differentiation",
            "source",
            "created_at",
            "updated_at",
        ]


class IdeaInputSerializer(serializers.Serializer):
    external_id = serializers.CharField(max_length=EXTERNAL_ID_MAX)
    patent = fields.SlugRelatedField(
        slug_field="external_id",
        queryset=Patent.objects.all(),
        help_text="The patent's external id.",
    )
    title = serializers.CharField(
        max_length=500,
        required=False,
        allow_blank=True,
        help_text="Optional: without one, pages show an excerpt of the description.",
    )
    description = fields.LongTextField(required=False, allow_blank=True)
    implementation = fields.LongTextField(required=False, allow_blank=True)
    differentiation = fields.LongTextField(required=False, allow_blank=True)
    # The stubs type every Field's own `source` attribute; DRF takes a field of that name.
    source = serializers.CharField(  # type: ignore[assignment]
        max_length=200, required=False, allow_blank=True
    )


class PatentFilterSerializer(serializers.Serializer):
    """Query parameters of GET /api/patents/ (CharFields refuse NUL characters)."""

    domain = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=64,
        help_text="Only rows of this domain (its key).",
    )

    class Meta:
        ref_name = "PatentFilter"


class IdeaFilterSerializer(PatentFilterSerializer):
    """Query parameters of GET /api/ideas/."""

    patent = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="Only ideas grounded in this patent (external id).",
    )

    class Meta:
        ref_name = "IdeaFilter"
