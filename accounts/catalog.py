"""Strings the catalog must hold though no code of ours says them literally.

makemessages finds only literal strings. memories/memory_list.py translates its row
actions by name (``gettext(name)``), so they are listed here. allauth's Chinese catalog
speaks to the reader as 您 where the app says 你 throughout: its strings shown on our
sign-up, log-in, password and email pages (and in its emails) are repeated here so the
project's catalog, which Django consults first (LOCALE_PATHS), gives them in one register,
and so are those it leaves half in English ("Email地址"): the app says 邮箱.
"""

from __future__ import annotations

from django.utils.translation import gettext_noop

ROW_ACTIONS = [
    gettext_noop("Restore"),
    gettext_noop("Pin"),
    gettext_noop("Unpin"),
    gettext_noop("Accept"),
    gettext_noop("Reject"),
    gettext_noop("Delete"),
]

ALLAUTH_IN_OUR_REGISTER = [
    gettext_noop("You cannot remove your primary email address."),
    gettext_noop("The email address and/or password you specified are not correct."),
    gettext_noop("The phone number and/or password you specified are not correct."),
    gettext_noop("Please type your current password."),
    gettext_noop("The password reset token was invalid."),
    gettext_noop("You cannot add more than %d email addresses."),
    gettext_noop("Your primary email address must be verified."),
    gettext_noop("The username and/or password you specified are not correct."),
    gettext_noop("Be patient, you are sending too many requests."),
    gettext_noop("Use your password"),
    gettext_noop("Please reauthenticate to safeguard your account."),
    gettext_noop("The following email addresses are associated with your account:"),
    gettext_noop("Do you really want to remove the selected email address?"),
    gettext_noop(
        "You are receiving this email because you or someone else tried to signup for an\naccount using email address:\n\n%(email)s\n\nHowever, an account using that email address already exists.  In case you have\nforgotten about this, please use the password forgotten procedure to recover\nyour account:\n\n%(password_reset_url)s"
    ),
    gettext_noop("Thank you for using %(site_name)s!\n%(site_domain)s"),
    gettext_noop(
        "You are receiving this mail because the following change was made to your account:"
    ),
    gettext_noop(
        "If you do not recognize this change then please take proper security precautions immediately. The change to your account originates from:\n\n- IP address: %(ip)s\n- Browser: %(user_agent)s\n- Date: %(timestamp)s"
    ),
    gettext_noop("Your email has been changed from %(from_email)s to %(to_email)s."),
    gettext_noop("Your email has been confirmed."),
    gettext_noop(
        "You're receiving this email because user %(user_display)s has given your email address to register an account on %(site_domain)s."
    ),
    gettext_noop(
        "Your email verification code is listed below. Please enter it in your open browser window."
    ),
    gettext_noop("Please Confirm Your Email Address"),
    gettext_noop("Email address %(deleted_email)s has been removed from your account."),
    gettext_noop("Your sign-in code is listed below. Please enter it in your open browser window."),
    gettext_noop("This mail can be safely ignored if you did not initiate this action."),
    gettext_noop("Your password has been changed."),
    gettext_noop(
        "Your password reset code is listed below. Please enter it in your open browser window."
    ),
    gettext_noop(
        "You're receiving this email because you or someone else has requested a password reset for your user account.\nIt can be safely ignored if you did not request a password reset. Click the link below to reset your password."
    ),
    gettext_noop("In case you forgot, your username is %(username)s."),
    gettext_noop("Your password has been reset."),
    gettext_noop("Your password has been set."),
    gettext_noop(
        "You are receiving this email because you, or someone else, tried to access an account with email %(email)s. However, we do not have any record of such an account in our database."
    ),
    gettext_noop("If it was you, you can sign up for an account using the link below."),
    gettext_noop("Your email address is still pending verification."),
    gettext_noop(
        "If you have not created an account yet, then please %(link)ssign up%(end_link)s first."
    ),
    gettext_noop("Are you sure you want to sign out?"),
    gettext_noop("You cannot remove your primary email address (%(email)s)."),
    gettext_noop("You have confirmed %(email)s."),
    gettext_noop("You have signed out."),
    gettext_noop("You have verified phone number %(phone)s."),
    gettext_noop(
        "Forgotten your password? Enter your email address below, and we'll send you an email allowing you to reset it."
    ),
    gettext_noop(
        "We have sent you an email. If you have not received it please check your spam folder. Otherwise contact us if you do not receive it in a few minutes."
    ),
    gettext_noop("Your password is now changed."),
    gettext_noop("Your phone number is still pending verification."),
    gettext_noop("Enter your password:"),
    gettext_noop("You will receive a special code for a password-free sign-in."),
    gettext_noop("You are already logged in as %(user_display)s."),
    gettext_noop(
        "You currently do not have any email address set up. You should really add an email address so you can receive notifications, reset your password, etc."
    ),
    gettext_noop("Verify Your Email Address"),
    gettext_noop(
        "We have sent an email to you for verification. Follow the link provided to finalize the signup process. If you do not see the verification email in your main inbox, check your spam folder. Please contact us if you do not receive the verification email within a few minutes."
    ),
    gettext_noop(
        "This part of the site requires us to verify that\nyou are who you claim to be. For this purpose, we require that you\nverify ownership of your email address. "
    ),
    gettext_noop(
        "We have sent an email to you for\nverification. Please click on the link inside that email. If you do not see the verification email in your main inbox, check your spam folder. Otherwise\ncontact us if you do not receive it within a few minutes."
    ),
    gettext_noop(
        '<strong>Note:</strong> you can still <a href="%(email_url)s">change your email address</a>.'
    ),
]

ALLAUTH_EMAIL_WORDING = [
    gettext_noop("Email Addresses"),
    gettext_noop("Primary"),
    gettext_noop("Re-send Verification"),
    gettext_noop("Add Email Address"),
    gettext_noop("Add Email"),
    gettext_noop("Email Changed"),
    gettext_noop("Email Confirmation"),
    gettext_noop("Email Removed"),
    gettext_noop("Email Address"),
    gettext_noop("Current email"),
    gettext_noop("Change Email"),
    gettext_noop("Confirm Email Address"),
    gettext_noop("Removed email address %(email)s."),
    gettext_noop("Primary email address set."),
]
