from __future__ import annotations

from django.urls import path

from accounts import views, views_teams

urlpatterns = [
    # API tokens
    path("settings/tokens/", views.token_list, name="token-list"),
    path("settings/tokens/new", views.token_create, name="token-create"),
    path("settings/tokens/<int:token_id>/revoke", views.token_revoke, name="token-revoke"),
    # Teams and their members
    path("teams/", views_teams.team_list, name="team-list"),
    path("teams/new", views_teams.team_create, name="team-create"),
    path("teams/<slug:slug>/", views_teams.team_detail, name="team-detail"),
    path("teams/<slug:slug>/leave", views_teams.team_leave, name="team-leave"),
    path("teams/<slug:slug>/invite", views_teams.team_invite, name="team-invite"),
    path(
        "teams/<slug:slug>/invitations/<int:invitation_id>/revoke",
        views_teams.team_invitation_revoke,
        name="team-invitation-revoke",
    ),
    path(
        "teams/<slug:slug>/members/<int:member_id>/role",
        views_teams.team_member_role,
        name="team-member-role",
    ),
    path(
        "teams/<slug:slug>/members/<int:member_id>/remove",
        views_teams.team_member_remove,
        name="team-member-remove",
    ),
    path("invitations/<str:token>/", views_teams.team_invitation, name="team-invitation"),
    # Projects
    path("teams/<slug:slug>/projects/new", views_teams.project_create, name="project-create"),
    path("projects/<slug:slug>/", views_teams.project_detail, name="project-detail"),
    path("projects/<slug:slug>/rename", views_teams.project_rename, name="project-rename"),
    path("projects/<slug:slug>/archive", views_teams.project_archive, name="project-archive"),
]
