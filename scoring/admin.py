from django.contrib import admin

from .models import Report


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    """Read-only: reports are written by the reports task."""

    list_display = ["study", "metric", "group", "population", "value", "n", "computed_at"]
    list_filter = ["study", "metric", "population"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
