"""allauth's account adapter: confirming an address someone was invited with leads to the
invitation; account emails are signed with the product's name."""

from __future__ import annotations

from typing import Any

from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.models import EmailAddress
from allauth.core import context as allauth_context
from django.contrib.sites.shortcuts import get_current_site
from django.urls import reverse

from teams.models import Invitation

PRODUCT_NAME = "memoryapp"


class AccountAdapter(DefaultAccountAdapter):
    def send_mail(self, template_prefix: str, email: str, context: dict[str, Any]) -> None:
        """ "Thank you for using memoryapp!", not the host the page was served from."""
        site = get_current_site(allauth_context.request)
        site.name = PRODUCT_NAME
        super().send_mail(template_prefix, email, {"current_site": site, **context})

    def get_email_verification_redirect_url(self, email_address: EmailAddress) -> str:
        """Back to the newest open invitation for the confirmed address, if there is one."""
        invitations = Invitation.objects.filter(
            email__iexact=email_address.email, accepted_at__isnull=True
        ).order_by("-created_at")
        for invitation in invitations[:5]:
            if not invitation.is_expired:
                return reverse("team-invitation", args=[invitation.token])
        return str(super().get_email_verification_redirect_url(email_address))
