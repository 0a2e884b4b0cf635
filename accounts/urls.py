from __future__ import annotations

from django.urls import path

from accounts import views

urlpatterns = [
    # The header's colour theme switch
    path("settings/theme", views.theme_set, name="theme-set"),
    # API tokens
    path("settings/tokens/", views.token_list, name="token-list"),
    path("settings/tokens/new", views.token_create, name="token-create"),
    path("settings/tokens/<int:token_id>/revoke", views.token_revoke, name="token-revoke"),
]
