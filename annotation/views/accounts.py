"""Account pages of our own beside ``django.contrib.auth``'s: the login that lands a researcher
on their studies, and the password reset that says plainly when no mail could be sent."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.views import LoginView, PasswordResetView
from django.http import HttpResponse
from django.shortcuts import render, resolve_url

from annotation.services.access import is_researcher
from annotation.services.web.mail import (
    MailNotSent,
    PasswordResetMailForm,
    mail_configured,
    open_mail_connection,
)


class PasswordReset(PasswordResetView):
    """The address form; without mail, or when the mail fails, the same page says that no mail
    went out and what to do instead (503), never "sent"."""

    form_class = PasswordResetMailForm
    template_name = "registration/password_reset_form.html"

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "mail_configured": mail_configured()}

    def form_valid(self, form) -> HttpResponse:
        """Django's own reset (its options, its redirect) on a connection opened first, so a
        missing or unreachable mail server is said before anything is sent."""
        try:
            form.connection = open_mail_connection()
            try:
                return super().form_valid(form)
            finally:
                form.connection.close()
        except MailNotSent as not_sent:
            context = {**self.get_context_data(form=form), "not_sent": str(not_sent)}
            return render(self.request, self.template_name, context, status=503)


class LandingLoginView(LoginView):
    """The login page: after logging in, a researcher lands on their studies (``/research/``),
    everyone else on the home page; a safe ``?next=`` wins for both (Django's own check)."""

    def get_default_redirect_url(self) -> str:
        if is_researcher(self.request.user):
            return resolve_url("research-home")
        return resolve_url(settings.LOGIN_REDIRECT_URL)
