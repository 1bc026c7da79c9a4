from django.db import models

from apps.core.models import TimestampedModel


class Domain(models.Model):
    key = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    # Ideas in this domain are rated on this rubric; empty means the default rubric.
    rubric = models.ForeignKey(
        "screening.Rubric", null=True, blank=True, on_delete=models.PROTECT, related_name="domains"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Patent(TimestampedModel):
    external_id = models.CharField(max_length=100, unique=True)
    domain = models.ForeignKey(Domain, on_delete=models.PROTECT, related_name="patents")
    title = models.CharField(max_length=500)
    abstract = models.TextField(blank=True)
    claims = models.TextField(blank=True)

    class Meta:
        ordering = ["external_id"]

    def __str__(self) -> str:
        return f"{self.external_id}: {self.title}"


class Idea(TimestampedModel):
    external_id = models.CharField(max_length=100, unique=True)
    patent = models.ForeignKey(Patent, on_delete=models.PROTECT, related_name="ideas")
    title = models.CharField(max_length=500)
    description = models.TextField(blank=True)
    implementation = models.TextField(blank=True)
    differentiation = models.TextField(blank=True)
    source = models.CharField(max_length=200, blank=True, help_text="The system that generated it.")

    class Meta:
        ordering = ["external_id"]

    def __str__(self) -> str:
        return f"{self.external_id}: {self.title}"
