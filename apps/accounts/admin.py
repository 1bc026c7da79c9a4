from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from apps.accounts.models import ReviewerProfile, User


class ReviewerProfileInline(admin.StackedInline):
    model = ReviewerProfile
    filter_horizontal = ["domains"]


@admin.register(User)
class PluralistUserAdmin(UserAdmin):
    list_display = ["username", "email", "first_name", "last_name", "role", "is_active"]
    list_filter = ["role", "is_active"]
    fieldsets = [*UserAdmin.fieldsets, ("Pluralist", {"fields": ["role"]})]
    add_fieldsets = [*UserAdmin.add_fieldsets, ("Pluralist", {"fields": ["role"]})]
    inlines = [ReviewerProfileInline]
