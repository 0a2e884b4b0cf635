"""allauth's account adapter: confirming an address someone was invited with leads to the invitation."""

from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.models import EmailAddress
from django.urls import reverse

from teams.models import Invitation


class AccountAdapter(DefaultAccountAdapter):
    def get_email_verification_redirect_url(self, email_address: EmailAddress) -> str:
        """Back to the newest open invitation for the confirmed address, if there is one."""
        invitations = Invitation.objects.filter(
            email__iexact=email_address.email, accepted_at__isnull=True
        ).order_by("-created_at")
        for invitation in invitations[:5]:
            if not invitation.is_expired:
                return reverse("team-invitation", args=[invitation.token])
        return str(super().get_email_verification_redirect_url(email_address))
