from __future__ import annotations

from django.urls import path

from accounts import views

urlpatterns = [
    # My account: email, password, sessions, language, theme, erasure
    path("settings/account", views.account, name="account"),
    # The header's colour theme switch
    path("settings/theme", views.theme_set, name="theme-set"),
    # API tokens
    path("settings/tokens/", views.token_list, name="token-list"),
    path("settings/tokens/new", views.token_create, name="token-create"),
    path("settings/tokens/<int:token_id>/revoke", views.token_revoke, name="token-revoke"),
    path("settings/tokens/<int:token_id>/pause", views.token_pause, name="token-pause"),
    path("settings/tokens/<int:token_id>/resume", views.token_resume, name="token-resume"),
    # The header's privacy switch
    path("settings/privacy/pause", views.privacy_pause, name="privacy-pause"),
    path("settings/privacy/resume", views.privacy_resume, name="privacy-resume"),
]
