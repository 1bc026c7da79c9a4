"""What the judges store per item: TF-IDF item vectors and each domain's chosen item text parts."""

from __future__ import annotations

from django.db import models


class ItemVector(models.Model):
    """The offline judge's vector of one idea (with its patent), computed once and kept.

    ``model`` names the representation (apps.judges.engine.item_text.VECTOR_MODEL). It is fitted on
    all ideas of the idea's domain together, so ``corpus_sha256`` (the fingerprint of every
    idea text of that domain) says which fit a row belongs to: rows whose fingerprint differs
    from the domain's current one are stale and recomputed, in bulk, by
    apps.judges.vectors.item_vectors. ``text_sha256`` is the idea's own rendered text
    (prompting.patent_text + idea_text) when the vector was computed.
    """

    idea = models.ForeignKey("catalog.Idea", on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=64)
    text_sha256 = models.CharField(max_length=64)
    corpus_sha256 = models.CharField(max_length=64)
    dimensions = models.PositiveIntegerField()
    # A sparse L2-normalised row: int32 column indices, then float32 values (little-endian);
    # ``dimensions`` is its width (apps.judges.vectors).
    vector = models.BinaryField()
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["idea", "model"], name="unique_item_vector"),
        ]

    def __str__(self) -> str:
        return f"{self.model} vector of idea {self.idea_id}"


class ItemTextChoice(models.Model):
    """Which parts of an item (idea, source document) the offline judge's text fallback reads
    in one domain, chosen by measurement (apps.judges.engine.item_parts) and written by
    apps.judges.services.item_parts; apps.judges.vectors reads it when it fits the domain's
    item vectors. No row: the full text (item_text.DEFAULT_PARTS)."""

    PARTS_CHOICES = [
        ("idea+source", "Idea and source document"),
        ("idea", "Idea only"),
        ("source", "Source document only"),
    ]

    domain = models.OneToOneField(
        "catalog.Domain", on_delete=models.CASCADE, related_name="item_text_choice"
    )
    parts = models.CharField(max_length=16, choices=PARTS_CHOICES, default="idea+source")
    # The measurement behind the choice: figures per candidate, the baseline, k, the reason
    # (engine.item_parts.PartsChoice.to_dict()).
    measurement = models.JSONField(default=dict, blank=True)
    measured_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"item text of domain {self.domain_id}: {self.parts}"
