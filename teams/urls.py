from __future__ import annotations

from django.urls import path

from teams import views

urlpatterns = [
    # Teams and their members
    path("teams/", views.team_list, name="team-list"),
    path("teams/new", views.team_create, name="team-create"),
    path("teams/<slug:slug>/", views.team_detail, name="team-detail"),
    path("teams/<slug:slug>/leave", views.team_leave, name="team-leave"),
    path("teams/<slug:slug>/invite", views.team_invite, name="team-invite"),
    path(
        "teams/<slug:slug>/invitations/<int:invitation_id>/revoke",
        views.team_invitation_revoke,
        name="team-invitation-revoke",
    ),
    path(
        "teams/<slug:slug>/members/<int:member_id>/role",
        views.team_member_role,
        name="team-member-role",
    ),
    path(
        "teams/<slug:slug>/members/<int:member_id>/remove",
        views.team_member_remove,
        name="team-member-remove",
    ),
    path("invitations/<str:token>/", views.team_invitation, name="team-invitation"),
    # Projects
    path("teams/<slug:slug>/projects/new", views.project_create, name="project-create"),
    path("projects/<slug:slug>/", views.project_detail, name="project-detail"),
    path("projects/<slug:slug>/rename", views.project_rename, name="project-rename"),
    path("projects/<slug:slug>/archive", views.project_archive, name="project-archive"),
]
