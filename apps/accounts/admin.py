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
    # UserAdmin sets both; the stubs allow None for any ModelAdmin.
    fieldsets = [*(UserAdmin.fieldsets or ()), ("Pluralist", {"fields": ["role"]})]
    add_fieldsets = [*(UserAdmin.add_fieldsets or ()), ("Pluralist", {"fields": ["role"]})]
    inlines = [ReviewerProfileInline]
