"""A study's ``language``: its participant pages speak it (consent, pages, errors, the code),
the researcher's own texts stay as written, and the language never leaks into the next
request, the research pages or the API. The game's public pages follow the browser."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from django.test import Client

from annotation.errors import InputError
from annotation.models import Study
from annotation.research.views.builder_form import form_values
from annotation.services.authoring.builder import as_new_study, builder_templates, template_named
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.game_helpers import boundary_study_file, guess, play_round, start_game
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.flow import task_action

pytestmark = pytest.mark.django_db


def page(response) -> str:
    return html_lib.unescape(response.content.decode())


def test_a_german_study_speaks_german_on_every_participant_page_and_keeps_its_own_texts(make_claim_study):
    study = make_claim_study(language="de", items=2, items_per_session=2, title="Behauptungen prüfen")
    client = Client()

    arrived = client.get(
        f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('p1')}&STUDY_ID=s&SESSION_ID=x", follow=True
    )
    assert arrived["Content-Language"] == "de"
    consent = page(arrived)
    assert '<html lang="de">' in consent
    assert "Bevor Sie beginnen" in consent and "Sind Sie mit der Teilnahme einverstanden?" in consent
    assert "Ich bin einverstanden – los geht’s" in consent and "2 Seiten." in consent
    assert "Label each claim." in consent  # the study's instructions, as the researcher wrote them
    assert "Before you start" not in consent and "I agree" not in consent

    task = page(
        client.post(
            f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('p1')}", {"decision": "agree"}, follow=True
        )
    )
    assert "Seite 1 von 2" in task and "Absenden und weiter" in task
    assert "Der Text stützt die Behauptung" in task and "Wie verhält sich der Text zur Behauptung?" in task
    assert "Claim number" in task  # the item's own text is never translated
    action = task_action(task)

    refused = client.post(action, {"label": "supports"})
    assert refused.status_code == 400
    errors = page(refused)
    assert "Bitte korrigieren Sie Folgendes, bevor Sie weitermachen:" in errors
    assert "Wählen Sie den Satz oder die Sätze, die die Behauptung stützen oder ihr widersprechen." in errors
    missing_label = page(client.post(action, {"evidence": "0"}))
    assert "Dieses Feld darf nicht leer sein." in missing_label or "ist keine gültige Option" in missing_label

    client.post(action, {"label": "supports", "evidence": "0"})
    # The same page posted again (another tab): the notice is stored in the study's language.
    again = page(client.post(action, {"label": "supports", "evidence": "0"}, follow=True))
    assert "Diese Seite wurde schon in einem anderen Tab beantwortet" in again

    done = page(client.post(task_action(again), {"label": "neutral"}, follow=True))
    assert "Geschafft – vielen Dank!" in done and "Ihr Code:" in done and "DONE-123" in done
    assert "Code kopieren" in done and 'data-copied-text="Kopiert"' in done
    assert "Behauptungen prüfen" in page(client.get(f"/s/{study.slug}/instructions/"))


def test_a_spanish_study_and_an_english_one_side_by_side(make_claim_study):
    spanish = make_claim_study(slug="es-claims", language="es")
    english = make_claim_study(slug="en-claims")
    assert english.language == "en"  # the default
    assert "Antes de empezar" in page(Client().get(f"/s/{spanish.slug}/consent/"))
    html = page(Client().get(f"/s/{english.slug}/consent/"))
    assert "Before you start" in html and '<html lang="en">' in html


def test_the_language_of_a_study_does_not_leak_into_the_next_request(make_claim_study, researcher, client):
    study = make_claim_study(language="de")
    assert "Bevor Sie beginnen" in page(client.get(f"/s/{study.slug}/consent/"))
    # Same thread, next requests: the home page and the research pages are back in English.
    assert "Studies open to everyone" in page(client.get("/"))
    assert "Bevor Sie beginnen" in page(client.get(f"/s/{study.slug}/consent/"))
    overview = client.get("/research/", HTTP_ACCEPT_LANGUAGE="de")
    assert overview.status_code == 200 and "Abmelden" not in page(overview) and "Log out" in page(overview)


def test_the_public_pages_follow_the_browser_and_the_api_stays_english(make_claim_study):
    german = page(Client().get("/play/", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9"))
    assert "Wo hat die Maschine übernommen?" in german and "Wählen Sie eine Kategorie" in german
    spanish = page(Client().get("/", HTTP_ACCEPT_LANGUAGE="es"))
    assert "Estudios abiertos a todo el mundo" in spanish
    assert "Where did the machine take over?" in page(Client().get("/play/"))
    api = Client().get("/api/v1/studies/", HTTP_ACCEPT_LANGUAGE="de")
    assert api.status_code in (401, 403)
    assert "credentials" in api.json()["detail"].lower()  # DRF's own message, not its German one


def test_a_study_file_names_a_language_the_site_translates():
    with pytest.raises(InputError) as refused:
        load_study_file(claim_study_file(slug="fr-claims", language="fr"))
    assert "language" in str(refused.value.errors)
    assert "en, de, es" in str(refused.value.errors)
    assert not Study.objects.filter(slug="fr-claims").exists()


def test_a_german_player_gets_german_rounds_and_a_chart_that_still_draws():
    """A game category whose study is in German: the round's steps and the verdict are
    German; the profile (a public page: the browser's language) localises its figures but
    keeps the chart's SVG coordinates as plain numbers (a German comma would break them)."""
    load_study_file(boundary_study_file(slug="spiel", items=2, language="de"))
    client = Client(HTTP_ACCEPT_LANGUAGE="de")
    start_game(client, "spiel")
    assignment_id, result = play_round(client, "spiel", mark=2)
    verdict = page(result)
    assert "Die Lösung" in verdict and "Nächster Text" in verdict
    assert "Zu früh" in verdict or "Genau getroffen" in verdict or "Sie haben sie" in verdict
    refused = page(guess(client, "spiel", assignment_id, 2))
    assert "Diese Runde ist vorbei und ihre Antwort gespeichert" in refused

    profile = page(client.get("/play/profile/"))
    assert "Punkte pro Runde" in profile
    coordinates = re.findall(r'<rect class="bar p\d" x="([^"]+)" y="([^"]+)" width="([^"]+)"', profile)
    assert coordinates and all("," not in value for row in coordinates for value in row)


def test_the_builder_offers_the_languages_and_saves_the_one_chosen(client, researcher):
    """The study builder shows a study's language as a choice of the site's languages; a
    study saved with "de" is German, one saved with the choice left out keeps the default."""
    template = next(t.name for t in builder_templates() if t.data.get("items"))
    builder = page(client.get(f"/research/builder/?template={template}"))
    assert re.search(r'<select name="language" id="setting-language">.*?value="de".*?value="es"', builder)
    values = form_values(as_new_study(template_named(template)))
    fields = {
        "template": template,
        "use_template_items": "yes",
        **{name: values[name] for name in ("title", "description", "instructions", "consent")},
        **values["settings"],
        **({"extras_json": values["extras_json"]} if values["extras_json"] else {}),
        "action": "save",
    }
    if values["questions"]:
        fields.update({f"q_{k}": [str(q[k]) for q in values["questions"]] for k in values["questions"][0]})
    else:
        fields["config_json"] = values["config_json"]
    for slug, language in (("built-de", "de"), ("built-default", "")):
        saved = client.post("/research/builder/", {**fields, "slug": slug, "language": language})
        assert saved.status_code == 302
    assert Study.objects.get(slug="built-de").language == "de"
    assert '<td id="study-language">de</td>' in page(client.get("/research/s/built-de/"))
    assert Study.objects.get(slug="built-default").language == "en"
