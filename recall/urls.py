from __future__ import annotations

from django.urls import path

from recall import views

urlpatterns = [
    path("settings/access", views.access_list, name="access-list"),
    path("settings/memories/recall", views.recall_preview, name="recall-preview"),
]
