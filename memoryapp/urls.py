from __future__ import annotations

from django.contrib import admin
from django.urls import include, path, re_path

from memoryapp.api import api
from memoryapp.views import health, pages

urlpatterns = [
    path("", pages.home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    # Accounts: allauth's sign-up, log-in, password reset; our settings pages.
    path("accounts/", include("allauth.urls")),
    path("", include("accounts.urls")),
    # JSON API
    path("api/v1/", api.urls),
    re_path(r"^api/v1/.*$", pages.api_not_found),
    path("admin/", admin.site.urls),
]
