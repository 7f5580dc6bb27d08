"""A staff member makes an invitation link; the invitee opens it in another browser,
chooses a username and password, and lands on the research pages logged in."""

import pytest

from annotation.services.access import is_researcher

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GOOD_PASSWORD = "tarn-lichen-47-orbit"


def test_an_invitee_accepts_an_invitation(live_server, page, browser, screenshot, django_user_model):
    django_user_model.objects.create_user("stella", password="stella-password-1", is_staff=True)
    page.goto(f"{live_server.url}/accounts/login/?next=/research/invitations/")
    page.fill("input[name=username]", "stella")
    page.fill("input[name=password]", "stella-password-1")
    page.locator("form button[type=submit]").last.click()
    page.fill("#email", "nora@example.org")
    page.get_by_role("button", name="Create an invitation link").click()
    link = page.input_value("#invitation-link")
    assert "/research/join/#" in link  # the token in the fragment (adversarial review 3, T12)
    token = link.split("#")[1]
    screenshot("invitation-created")

    invitee = browser.new_context(viewport={"width": 1100, "height": 900}, bypass_csp=True).new_page()
    invitee.set_default_timeout(15000)
    requested: list[str] = []
    invitee.on("request", lambda request: requested.append(request.url))
    invitee.goto(link)
    invitee.wait_for_selector("text=Choose a username and a password")
    assert "#" not in invitee.url  # the script took the token out of the address bar
    invitee.fill("input[name=username]", "nora")
    invitee.fill("input[name=password1]", "12345")
    invitee.fill("input[name=password2]", "12345")
    invitee.get_by_role("button", name="Create my account").click()
    invitee.wait_for_selector("text=This password is too short")
    screenshot("invitation-bad-password", invitee)
    invitee.set_viewport_size({"width": 390, "height": 844})
    screenshot("invitation-bad-password-phone", invitee)
    invitee.set_viewport_size({"width": 1100, "height": 900})
    assert not django_user_model.objects.filter(username="nora").exists()

    invitee.fill("input[name=password1]", GOOD_PASSWORD)
    invitee.fill("input[name=password2]", GOOD_PASSWORD)
    invitee.get_by_role("button", name="Create my account").click()
    invitee.wait_for_selector("text=Your studies")
    assert "Welcome, nora" in invitee.inner_text("main")
    assert invitee.get_by_role("link", name="Research").is_visible()
    screenshot("invitation-accepted", invitee)
    assert is_researcher(django_user_model.objects.get(username="nora"))

    invitee.goto(link)
    invitee.wait_for_selector("#invitation-closed")
    assert "already been used" in invitee.inner_text("#invitation-closed")
    screenshot("invitation-used", invitee)
    assert requested and not [url for url in requested if token in url]  # in no request's address
    invitee.context.close()
