"""Mail the site sends (password-reset links): whether it can, and sending that says so when
it could not, instead of pretending.

Django's password-reset form swallows a failed send and the page then says the mail was sent
(a reset with no mail server said "sent" while the log showed the SMTP connection refused).
Here the mail connection is opened before anything else, for every request alike, so a site
without mail, or with a mail server that cannot be reached, answers the same whether the
address has an account or not; a send that fails after that is reported too.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth.forms import PasswordResetForm
from django.core.mail import EmailMultiAlternatives, get_connection
from django.core.mail.backends.base import BaseEmailBackend
from django.template import loader
from django.utils.translation import gettext

log = logging.getLogger(__name__)


class MailNotSent(Exception):
    """No mail could be sent: the site has none configured, or the mail server failed."""


def mail_configured() -> bool:
    """Whether the deployment set up mail (``EMAIL_HOST`` or ``EMAIL_BACKEND``, docs/deploy.md)."""
    return bool(settings.EMAIL_CONFIGURED)


def open_mail_connection() -> BaseEmailBackend:
    """An open connection to the configured mail backend; ``MailNotSent`` when there is no
    mail or the server cannot be reached (logged for the operator)."""
    if not mail_configured():
        raise MailNotSent(gettext("This site has no mail server configured."))
    connection = get_connection(fail_silently=False)
    try:
        connection.open()
    except Exception as exc:  # any backend's failure to connect: SMTP, a socket, a TLS error
        log.warning("mail: could not connect to the mail server: %s", exc)
        raise MailNotSent(gettext("The mail server could not be reached.")) from exc
    return connection


class PasswordResetMailForm(PasswordResetForm):
    """Django's password-reset form, sending on the connection the reset view opened
    (``open_mail_connection``) and raising ``MailNotSent`` when a send fails (Django's own
    form logs it and goes on)."""

    connection: BaseEmailBackend | None = None

    def send_mail(
        self,
        subject_template_name,
        email_template_name,
        context,
        from_email,
        to_email,
        html_email_template_name=None,
    ) -> None:
        subject = "".join(loader.render_to_string(subject_template_name, context).splitlines())
        body = loader.render_to_string(email_template_name, context)
        message = EmailMultiAlternatives(subject, body, from_email, [to_email], connection=self.connection)
        if html_email_template_name is not None:
            html = loader.render_to_string(html_email_template_name, context)
            message.attach_alternative(html, "text/html")
        try:
            message.send()
        except Exception as exc:  # the server refused or dropped the message
            log.warning("mail: the password-reset mail to user %s failed: %s", context["user"].pk, exc)
            raise MailNotSent(gettext("The mail server did not take the message.")) from exc
