from django.contrib.auth.models import AbstractUser
from django.db import models


class User(AbstractUser):
    class Role(models.TextChoices):
        REVIEWER = "reviewer", "Reviewer"
        MANAGER = "manager", "Manager"
        ADMIN = "admin", "Admin"

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.REVIEWER)

    @property
    def is_admin(self) -> bool:
        return self.role == self.Role.ADMIN or self.is_superuser

    @property
    def is_manager(self) -> bool:
        return self.role == self.Role.MANAGER

    @property
    def is_reviewer(self) -> bool:
        return self.role == self.Role.REVIEWER

    @property
    def can_read_all_ratings(self) -> bool:
        return self.is_admin or self.is_manager

    @property
    def display_name(self) -> str:
        return self.get_full_name() or self.username


class ReviewerProfile(models.Model):
    class Background(models.TextChoices):
        """PBIG's two groups, used by the demo; any other label is allowed too."""

        TECHNICAL = "technical", "Technical"
        BUSINESS = "business", "Business"

    user = models.OneToOneField(User, on_delete=models.CASCADE, related_name="reviewer_profile")
    # A free, optional label grouping reviewers for the analytics ("literature", "crowd", "legal").
    # Stored lower-case so "Legal" and "legal" are one group.
    background = models.CharField(max_length=64, blank=True)
    domains = models.ManyToManyField("catalog.Domain", related_name="reviewers", blank=True)
    years_experience = models.PositiveSmallIntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.user.username} ({self.background or 'no background'})"

    @property
    def background_label(self) -> str:
        """The background as people read it: "Technical" for PBIG's groups, any other label
        capitalised, "" when none is set. (The field has no choices: any label is allowed.)"""
        if self.background in self.Background.values:
            return str(self.Background(self.background).label)
        return self.background.capitalize()


class Invitation(models.Model):
    """One invitation to choose a password: e-mailed, or a link an admin copied to pass on.

    The link itself is a Django password-reset link (it stops working once a password is set);
    this row only records who was invited, how and by whom.
    """

    class Channel(models.TextChoices):
        EMAIL = "email", "E-mail"
        LINK = "link", "Copied link"

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="invitations")
    sent_by = models.ForeignKey(
        User, null=True, on_delete=models.SET_NULL, related_name="invitations_sent"
    )
    channel = models.CharField(max_length=8, choices=Channel.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"invitation of {self.user_id} by {self.channel}"
