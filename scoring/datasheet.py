"""A study's Human Evaluation Datasheet (HEDS), filled from its own record.

The questions (``scoring/data/heds.json``: HEDS's numbering, our words) are answered from
what the site holds about the study: its settings and questions, its items' systems, who
took part and through which platform, what they were paid, its attention checks and
exclusions, its frozen plan and the agreement its reports measured. What the record cannot
say (the paper, ethics approval, how the outputs were sampled) is left for the researcher,
whose answers are kept with the study (``scoring.models.Datasheet``) and win over ours.
``datasheet_of`` builds the sheet; ``save_datasheet`` stores it with the study.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

from django.db.models import Count
from django.utils import timezone

from annotation.errors import InputError
from annotation.kinds import get_kind
from annotation.kinds.base import QualityCriterion
from annotation.models import Item, Participant, PlatformStudy, Study
from annotation.services.populations import NOT_HUMAN, real_enrollments
from scoring.models import Datasheet, Report

HEDS_FILE = Path(__file__).resolve().parent / "data" / "heds.json"
FILLED_TARGET = 0.7  # the share of questions the record should answer (issue 42)
PLATFORM_SOURCES = {
    Participant.Source.PROLIFIC: "Prolific",
    Participant.Source.MTURK: "Amazon Mechanical Turk",
}


@cache
def heds() -> dict:
    return json.loads(HEDS_FILE.read_text(encoding="utf-8"))


def datasheet_of(study: Study, *, answers: dict[str, str] | None = None) -> dict:
    """The study's datasheet: every question with its answer (``None``: the researcher's
    to give), where the answer came from, and the share the record filled."""
    record = _Record(study)
    kind = get_kind(study.kind).evaluation
    general = record.general(kind)
    entries = [_entry(q, general.get(q["id"])) for q in heds()["questions"]]
    for criterion in criteria_of(study):
        filled = record.per_criterion(criterion, kind)
        for q in heds()["criterion_questions"]:
            entry = _entry(q, filled.get(q["id"]), criterion=criterion.id)
            entries.append(entry)
    own = researcher_answers(study) if answers is None else answers
    for entry in entries:
        mine = own.get(entry["key"])
        if isinstance(mine, str) and mine.strip():
            entry["answer"], entry["from"] = mine.strip(), "researcher"
    from_record = sum(1 for e in entries if e["from"] == "record")
    return {
        "study": study.slug,
        "title": study.title,
        "heds": heds()["about"],
        "generated_at": timezone.now().isoformat(),
        "version": study.version,
        "plan_digest": study.frozen_digest,
        "filled_from_record": round(from_record / len(entries), 4),
        "questions": entries,
        "to_answer": [e["key"] for e in entries if e["answer"] is None],
    }


def _entry(question: dict, answer: str | None, *, criterion: str | None = None) -> dict:
    key = f"{question['id']}:{criterion}" if criterion else question["id"]
    return {
        "key": key,
        "id": question["id"],
        "section": question.get("section") or f"Quality criterion {criterion}",
        "criterion": criterion,
        "question": question["text"],
        "answer": answer,
        "from": "record" if answer is not None else None,
    }


ANSWER_MAX = 5000  # characters of one of the researcher's answers


def save_datasheet(study: Study, *, answers: dict[str, str] | None = None) -> dict:
    """Build the sheet with ``answers`` (the researcher's, by question key; an empty one
    removes theirs) added to those kept, and store both with the study; returns the sheet.
    A key the sheet does not have, or an answer too long, is an ``InputError`` naming it."""
    keys = {entry["key"] for entry in datasheet_of(study)["questions"]}
    errors = {
        key: [
            "No such question in this study's datasheet."
            if key not in keys
            else f"An answer is text of at most {ANSWER_MAX} characters."
        ]
        for key, value in (answers or {}).items()
        if key not in keys or not isinstance(value, str) or len(value) > ANSWER_MAX
    }
    if errors:
        raise InputError(errors)
    kept = researcher_answers(study)
    for key, value in (answers or {}).items():
        if value.strip():
            kept[key] = value.strip()
        else:
            kept.pop(key, None)
    saved, _ = Datasheet.objects.update_or_create(study=study, defaults={"answers": kept})
    sheet = datasheet_of(study, answers=kept)
    saved.sheet = sheet
    saved.save(update_fields=["sheet", "saved_at"])
    return sheet


def researcher_answers(study: Study) -> dict[str, str]:
    """The researcher's saved answers by question key (none before the first save)."""
    return dict(Datasheet.objects.filter(study=study).values_list("answers", flat=True).first() or {})


def as_markdown(sheet: dict) -> str:
    lines = [
        f"# Human evaluation datasheet: {sheet['title']} (`{sheet['study']}`)",
        "",
        f"{sheet['heds']}",
        "",
        f"Study version {sheet['version']}"
        + (
            f"; plan frozen, SHA-256 `{sheet['plan_digest']}`"
            if sheet["plan_digest"]
            else "; plan not frozen"
        )
        + f". Filled from the study's record: {sheet['filled_from_record']:.0%}; "
        f"{len(sheet['to_answer'])} questions are the researcher's to answer.",
    ]
    section = None
    for entry in sheet["questions"]:
        if entry["section"] != section:
            section = entry["section"]
            lines += [*([""] if lines[-1] else []), f"## {section}", ""]
        answer = entry["answer"] if entry["answer"] is not None else "_To answer (the record cannot say)._"
        lines.append(f"**{entry['id']}** {entry['question']}  ")
        lines.append(f"{answer}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# --- the criteria --------------------------------------------------------------------------


def criteria_of(study: Study) -> list[QualityCriterion]:
    """The questions the study's pages ask, as HEDS's quality criteria (the kind says which)."""
    return get_kind(study.kind).quality_criteria(study.config or {})


# --- the record ----------------------------------------------------------------------------


class _Record:
    """What the site holds about the study, read once per sheet."""

    def __init__(self, study: Study):
        self.study = study
        enrollments = real_enrollments(study).exclude(participant__source__in=NOT_HUMAN)
        self.sources = Counter(
            dict(
                enrollments.filter(answered_count__gt=0)
                .values_list("participant__source")
                .annotate(n=Count("id"))
                .values_list("participant__source", "n")
            )
        )
        self.flagged = enrollments.filter(flagged=True, answered_count__gt=0).count()
        self.excluded = enrollments.filter(excluded=True).count()
        self.platform = PlatformStudy.objects.filter(study=study).first()
        self.per_system = dict(
            Item.objects.filter(study=study, is_attention_check=False)
            .values_list("provenance__system")
            .annotate(n=Count("id"))
            .values_list("provenance__system", "n")
        )
        self.checks = Item.objects.filter(study=study, is_attention_check=True).count()
        self.agreement = list(
            Report.objects.filter(study=study, metric="agreement.krippendorff_alpha")
            .chosen("passed")
            .values_list("group", "value", "ci_low", "ci_high", "n")
        )

    # the study-wide questions

    def general(self, kind: dict) -> dict[str, str | None]:
        s = self.study
        language = f"the study's language setting: {s.language}"
        answers: dict[str, str | None] = {
            "1.1": self._for_preregistration(),
            "1.2": f"The study file of version {s.version} (each version is kept on the site, with its "
            "SHA-256) and the study's exports (CSV, JSON Lines, SQLite, the dataset release).",
            "1.3": self._contact(),
            "2.1": kind.get("input"),
            "2.2": kind.get("output"),
            "2.3": kind.get("task"),
            "2.4": language,
            "2.5": language,
            "3.1.1": self._per_system(),
            "3.1.3": self._power(),
            "3.2.1": str(sum(self.sources.values())),
            "3.2.2": self._evaluator_kinds(),
            "3.2.3": self._recruitment(),
            "3.2.4": self._training(),
            "pay": self._pay(),
            "3.3.1": self._preregistration(),
            "3.3.2": self._collection(),
            "3.3.3": self._quality_assurance(),
            "3.3.4": f"The task page of a {get_kind(s.kind).label} study, one item a page, "
            f"{s.items_per_session} pages a session, after the instructions"
            + (" and the consent text" if s.consent else "")
            + ". The researchers' preview shows every page as participants see it.",
            "3.3.5": self._timing(),
            "3.3.6": "Evaluators are given a page of questions and answers (FAQ) beside the task."
            if s.faq
            else None,
            "exclusions": self._exclusions(),
            "5.2": self._personal_data(),
        }
        online = bool(self.sources) or bool(s.completion_code) or s.public  # crowd or volunteers, by design
        if online and not self.sources.get(Participant.Source.LAB):
            answers["3.3.7"] = (
                "Evaluation carried out by evaluators at a place of their own choosing (online)."
            )
            answers["3.3.8"] = "N/A: evaluators work online at a place of their own choosing."
        return {key: value for key, value in answers.items() if value}

    def _for_preregistration(self) -> str | None:
        s = self.study
        if s.frozen_at is not None and s.status == Study.Status.DRAFT:
            return "For preregistration: the plan is frozen and the study has not gone live."
        return None

    def _contact(self) -> str | None:
        owner = self.study.owner
        if owner is None or not owner.email:
            return None
        name = owner.get_full_name() or owner.username
        return f"{name} <{owner.email}> (the study's owner on the site)"

    def _per_system(self) -> str | None:
        systems = {k: v for k, v in self.per_system.items() if k}
        if not systems:
            total = sum(self.per_system.values())
            return f"{total} items (no system named in their provenance)" if total else None
        listed = ", ".join(f"{name}: {n}" for name, n in sorted(systems.items()))
        return f"Items per system: {listed}; each wanted {self.study.annotations_per_item} answers."

    def _power(self) -> str | None:
        size = (self.study.analysis_plan or {}).get("sample_size")
        if not size:
            return None
        return (
            f"The frozen analysis plan sets the sample size at {size} answers (the site's planning "
            "page gives the designs a pilot's figures call for)."
        )

    def _evaluator_kinds(self) -> str | None:
        if not self.sources:
            return None
        kinds = []
        labels = dict(Participant.Source.choices)
        kinds.append(", ".join(f"{labels.get(src, src)}: {n}" for src, n in sorted(self.sources.items())))
        if self.sources.get(Participant.Source.EXPERT):
            kinds.append("experts among them (source 'expert')")
        paid = any(src in PLATFORM_SOURCES for src in self.sources) or bool(self.study.completion_code)
        kinds.append("paid (a crowd platform's completion code)" if paid else "not paid through the site")
        return "; ".join(kinds) + "."

    def _recruitment(self) -> str | None:
        parts = []
        for src, name in PLATFORM_SOURCES.items():
            if self.sources.get(src):
                parts.append(f"{name} ({self.sources[src]} evaluators)")
        if self.sources.get(Participant.Source.ORGANIC):
            parts.append(f"the study's public link ({self.sources[Participant.Source.ORGANIC]} volunteers)")
        if self.sources.get(Participant.Source.LAB):
            parts.append(f"a lab (answers imported, {self.sources[Participant.Source.LAB]} annotators)")
        if not parts:
            return None
        text = "Through " + ", ".join(parts) + "."
        if self.study.qualification is not None:
            text += (
                " Only those who passed the qualification exam "
                f"{self.study.qualification.study.slug!r} could start."
            )
        return text

    def _training(self) -> str:
        s = self.study
        parts = ["the study's instructions" if s.instructions else "no written instructions"]
        if s.examples:
            parts.append(f"{len(s.examples)} worked example{'s' if len(s.examples) != 1 else ''}")
        if s.qualification is not None:
            exam = s.qualification
            parts.append(
                f"a qualification exam (pass mark {exam.pass_mark}, {exam.attempts_allowed} attempt(s), "
                f"training {'on' if exam.training else 'off'})"
            )
        return "Before the first page evaluators see " + ", ".join(parts) + "."

    def _pay(self) -> str | None:
        platform, s = self.platform, self.study
        if platform is None or not platform.reward_cents:
            if s.completion_code:
                return None  # a crowd study whose reward was set on the platform itself
            return "No payment went through the site: no crowd-platform reward is recorded for this study."
        text = f"{platform.reward_cents / 100:.2f} per session of {s.items_per_session} pages"
        if s.expected_seconds_per_page:
            hours = s.items_per_session * s.expected_seconds_per_page / 3600
            text += (
                f", about {platform.reward_cents / 100 / hours:.2f} an hour at the expected "
                f"{s.expected_seconds_per_page} s a page"
            )
        if platform.bonus_cap_cents:
            text += f"; bonuses up to {platform.bonus_cap_cents / 100:.2f}"
        return text + " (the platform's currency)."

    def _preregistration(self) -> str:
        s = self.study
        if s.frozen_at is None:
            return "No: the analysis plan was not frozen on the site."
        deviations = s.versions.filter(deviation=True).count()
        return (
            "Yes: the study file and analysis plan were frozen on the site on "
            f"{s.frozen_at:%Y-%m-%d %H:%M} UTC "
            f"(version {s.frozen_version}, SHA-256 {s.frozen_digest}); {deviations} recorded deviation(s)."
        )

    def _collection(self) -> str:
        through = [name for src, name in PLATFORM_SOURCES.items() if self.sources.get(src)]
        text = "Online, on the study's own pages on this site (an open-source human evaluation platform)"
        if through:
            text += ", with participants coming from " + " and ".join(through)
        return text + "."

    def _quality_assurance(self) -> str:
        s = self.study
        parts = []
        if s.attention_check_rate and self.checks:
            parts.append(
                f"automatic attention checks ({self.checks} check items, about "
                f"{s.attention_check_rate:.0%} of pages; "
                f"an evaluator failing more than {s.max_attention_failures} is screened out and their "
                "answers left out of the 'passed' figures)"
            )
        if s.min_seconds_per_page:
            parts.append(f"answers faster than {s.min_seconds_per_page} s a page are flagged")
        parts.append("researchers may flag or exclude evaluators by hand (their answers then count nowhere)")
        return "; ".join(parts).capitalize() + "."

    def _timing(self) -> str:
        s = self.study
        timeout = s.timeout_minutes
        text = (
            f"Each page is held for {timeout} minutes, then handed to someone else; sessions are "
            f"{s.items_per_session} pages"
        )
        if s.hold_submit and s.min_seconds_per_page:
            text += f"; the submit button waits {s.min_seconds_per_page} s"
        return text + "."

    def _exclusions(self) -> str:
        s = self.study
        rules = (
            f"attention checks on about {s.attention_check_rate:.0%} of pages, "
            f"{s.max_attention_failures} failure(s) allowed"
        )
        plan = (s.analysis_plan or {}).get("exclusion_rules")
        if plan:
            rules += f"; the frozen plan adds: {plan}"
        return (
            f"Rules: {rules}. Left out: {self.flagged} evaluator(s) flagged (failed checks or by a "
            f"researcher), {self.excluded} excluded by a researcher."
        )

    def _personal_data(self) -> str:
        s = self.study
        text = (
            "Evaluators appear in every export only under a per-study pseudonym (a salted hash); no "
            "names or emails are collected."
        )
        if s.retention_days:
            text += f" Crowd-platform ids are deleted {s.retention_days} days after arrival"
            text += " with the answers." if s.retention_erases_answers else "."
        if s.participants_may_erase:
            text += " Participants may erase their answers themselves."
        return text

    # the per-criterion questions

    def per_criterion(self, criterion: QualityCriterion, kind: dict) -> dict[str, str | None]:
        values = criterion.values or ()
        instrument = criterion.values is not None
        instructions = self.study.instructions.strip()
        definition = criterion.title or (
            f"No definition of its own; the study's instructions: {_clipped(instructions)}"
            if instructions
            else None
        )
        free_text = "qualitative feedback" in criterion.elicitation
        answers: dict[str, str | None] = {
            "4.1.1": kind.get("quality_type"),
            "4.1.2": kind.get("aspect"),
            "4.1.3": kind.get("frame"),
            "4.3.2": definition,
            "4.2.1": "objective" if kind.get("objective") else "subjective",
            "4.2.2": "relative" if criterion.relative else "absolute",
            "4.2.3": "extrinsic" if kind.get("extrinsic") else "intrinsic",
            "4.3.1": f"{criterion.title} ({criterion.id})" if criterion.title else criterion.id,
            "4.3.3": str(len(values)) if instrument else "N/A",
            "4.3.4": ", ".join(str(v) for v in values) if instrument else "N/A",
            "4.3.5": criterion.presentation if instrument else "N/A (there is no rating instrument)",
            "4.3.6": "N/A"
            if instrument
            else (kind.get("task_text") or f"Evaluators answer: {criterion.text}"),
            "4.3.7": criterion.text or None,
            "4.3.8": criterion.elicitation or None,
            "4.3.9": "Per system: the mean (or share) over the answers that count, with a 95% interval "
            "clustered by item and evaluator (docs/statistics.md names each figure's method).",
            "4.3.10": self._tests(),
            "4.3.11": "N/A: free-text answers have no agreement figure."
            if free_text
            else self._agreement(criterion.id),
        }
        return {key: value for key, value in answers.items() if value}

    def _tests(self) -> str:
        tests = (self.study.analysis_plan or {}).get("tests") or []
        base = (
            "Bootstrap and clustered intervals for each figure and for differences between systems "
            "(docs/statistics.md)"
        )
        return base + (f"; the frozen plan names: {'; '.join(tests)}." if tests else ".")

    def _agreement(self, question: str) -> str | None:
        found = [row for row in self.agreement if (row[0] or {}).get("question") == question]
        if not found:
            return None
        _, value, low, high, n = min(found, key=lambda row: len(row[0]))
        if value is None:
            return f"Krippendorff's alpha could not be estimated ({n} answers)."
        interval = f", 95% interval {low:.3f} to {high:.3f}" if low is not None and high is not None else ""
        return (
            f"Krippendorff's alpha {value:.3f}{interval} ({n} answers; evaluators whose checks "
            "failed left out)."
        )


def _clipped(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def filled_share(sheet: dict) -> float:
    return float(sheet["filled_from_record"])
