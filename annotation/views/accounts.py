"""Account pages of our own beside ``django.contrib.auth``'s: the password reset that says
plainly when no mail could be sent."""

from __future__ import annotations

from django.contrib.auth.views import PasswordResetView
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import render

from annotation.services.mail import MailNotSent, PasswordResetMailForm, mail_configured, send_password_reset


class PasswordReset(PasswordResetView):
    """The address form; without mail, or when the mail fails, the same page says that no mail
    went out and what to do instead (503), never "sent"."""

    form_class = PasswordResetMailForm
    template_name = "registration/password_reset_form.html"

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "mail_configured": mail_configured()}

    def form_valid(self, form) -> HttpResponse:
        options = {
            "use_https": self.request.is_secure(),
            "token_generator": self.token_generator,
            "from_email": self.from_email,
            "email_template_name": self.email_template_name,
            "subject_template_name": self.subject_template_name,
            "request": self.request,
            "html_email_template_name": self.html_email_template_name,
            "extra_email_context": self.extra_email_context,
        }
        try:
            send_password_reset(form, **options)
        except MailNotSent as not_sent:
            context = {**self.get_context_data(form=form), "not_sent": str(not_sent)}
            return render(self.request, self.template_name, context, status=503)
        return HttpResponseRedirect(self.get_success_url())
