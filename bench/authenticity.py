"""Authenticity signals in scripted browser runs (issue 41, docs/authenticity.md).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/roft_bench_auth REDIS_URL=redis://127.0.0.1:6379/9 \\
        .venv/bin/python bench/authenticity.py [--runs 200] [--seed 41] [--concurrency 8]

Serves the site with gunicorn as ``bench/load.py`` does (DEBUG off) against the scratch
database named by DATABASE_URL (created if missing), loads a questionnaire study whose one
question is free text, and drives headless Chromium (Playwright, /usr/bin/chromium) through
``--runs`` sessions of each of two kinds, each a new participant on a page of their own:

- **pasted**: an LLM-written answer (one of the texts below) put into the field the ways it
  arrives in practice, drawn per run: a clipboard paste (the paste event, then the text
  inserted, as Chromium delivers Ctrl+V); a paste after leaving the page for a few seconds (to
  the chatbot's tab and back: the page's visibility changes); text inserted with no paste
  event at all (a clipboard manager or a browser extension typing it in); a paste followed
  by a human-speed edit of a few words.
- **typed**: a human answer typed at human speed: keys pressed one at a time with seeded
  log-normal gaps (median about 180 ms), pauses to think, typos corrected with Backspace,
  some runs leaving the page for a while (without pasting) and some pasting a few words
  quoted from the passage.

Each run's answer is stored by the server as on any study page; the bench then reads the
``strong_sign`` the server gave each answer (thresholds: the site's settings, defaults unless
the environment sets ``AUTHENTICITY_*``) and prints the flag rate of each kind and of each
way, with Wilson 95% intervals. The claim: pasted answers flagged in at least 95% of runs,
typed ones in at most 1%. Every random draw comes from ``--seed``; the figures do not depend
on the machine's speed (the rule reads counts, not times, except the hidden time, which the
script sets).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import math
import os
import random
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._database import ensure_database  # noqa: E402 - after the path
from bench.load import HOST, free_port, start_server, stop_server  # noqa: E402 - after the path
from tests.helpers.clipboard import PASTE  # noqa: E402 - after the path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
os.environ.setdefault("SECRET_KEY", "bench-only")

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
SLUG = "bench-authenticity"

# Answers in the register chat models write in: whole, balanced, longer than people bother to type.
LLM_ANSWERS = [
    "Reply B is better because it directly addresses the question, maintains a consistent tone, "
    "and avoids the factual inaccuracy present in Reply A regarding the date of the event.",
    "While both replies are grammatically correct, Reply A provides a more comprehensive and "
    "nuanced explanation, offering relevant context that helps the reader understand the topic.",
    "Overall, Reply B demonstrates greater coherence and fluency. Its sentences flow naturally, "
    "and it stays focused on the main point without introducing unnecessary details.",
    "Reply A contains a subtle logical inconsistency in its second sentence, which undermines its "
    "credibility. Reply B, by contrast, is clear, concise, and factually accurate.",
    "Both responses have merits; however, Reply B better captures the intent of the prompt by "
    "offering a clear, well-structured answer that is easy to follow.",
    "I chose Reply A because it is more informative and engaging. It uses precise language and "
    "provides specific examples, whereas Reply B remains vague and somewhat repetitive.",
    "Reply B is preferable: it is more natural-sounding, avoids awkward phrasing, and presents "
    "the information in a logical order that enhances readability.",
    "The first reply is more fluent and coherent, with smooth transitions between ideas. The "
    "second reply, while accurate, feels abrupt and lacks sufficient elaboration.",
]
# What people type: short, plain, sometimes sloppy.
HUMAN_OPENINGS = ["B is better", "a reads nicer", "second one", "B", "first one", "I think A", "b"]
HUMAN_REASONS = [
    "it actually answers the question",
    "the other one gets the date wrong",
    "less repetitive",
    "A sounds like a robot",
    "more natural, fewer weird words",
    "it's shorter and still says everything",
    "B rambles a bit",
    "no mistakes that I could see",
]
QUOTES = ["reply B", "fine day", "Hello number", "say hello"]
NEIGHBOURS = "qwertyuiopasdfghjklzxcvbnm"

# Headless Chromium never hides a page: the bench says the page is hidden, as the browser would.
VISIBILITY = """([state]) => {
  Object.defineProperty(document, "visibilityState", {get: () => state, configurable: true});
  Object.defineProperty(document, "hidden", {get: () => state === "hidden", configurable: true});
  document.dispatchEvent(new Event("visibilitychange"));
}"""


def study_file(items: int, per_item: int) -> dict:
    passages = [
        {"id": "a", "text": "Hello number one. It is a fine day.", "system": "alpha"},
        {"id": "b", "text": "Hi. The day was fine, reply B says hello.", "system": "beta"},
    ]
    return {
        "slug": SLUG,
        "title": "Which reply is better, and why?",
        "kind": "questionnaire",
        "status": "live",
        "annotations_per_item": per_item,
        "items_per_session": 1,
        "completion_code": "BENCH-AUTH",
        "close_when_full": False,
        "config": {"questions": [{"id": "why", "type": "text", "text": "Which reply is better, and why?"}]},
        "items": [
            {"external_id": f"i{n}", "payload": {"passages": [dict(p, id=f"{p['id']}{n}") for p in passages]}}
            for n in range(items)
        ],
    }


def worker_id(seed: int, kind: str, run: int) -> str:
    return hashlib.sha256(f"auth-{seed}-{kind}-{run}".encode()).hexdigest()[:24]


def gap(rng: random.Random) -> float:
    """Seconds between two key presses of a person typing: log-normal around 180 ms, with a
    pause to think now and then."""
    seconds = math.exp(rng.gauss(math.log(0.18), 0.45))
    if rng.random() < 0.04:
        seconds += rng.uniform(0.6, 2.5)
    return seconds


async def type_like_a_person(page, rng: random.Random, text: str) -> None:
    for char in text:
        if char.isalpha() and rng.random() < 0.04:  # a typo, seen and corrected
            await page.keyboard.press(rng.choice(NEIGHBOURS))
            await asyncio.sleep(gap(rng))
            await page.keyboard.press("Backspace")
            await asyncio.sleep(gap(rng))
        await page.keyboard.type(char)
        await asyncio.sleep(gap(rng))


async def leave_the_page(page, seconds: float) -> None:
    await page.evaluate(VISIBILITY, ["hidden"])
    await asyncio.sleep(seconds)
    await page.evaluate(VISIBILITY, ["visible"])


async def pasted_run(page, rng: random.Random) -> str:
    """An LLM-written answer into the field; returns the way it arrived."""
    text = rng.choice(LLM_ANSWERS)
    way = rng.choices(["clipboard", "after leaving", "no paste event", "paste then edit"], [4, 2, 2, 2])[0]
    await asyncio.sleep(rng.uniform(0.5, 3.0))  # reading the page
    field = page.locator('textarea[name="q-why"]')
    await field.click()
    if way == "after leaving":
        await leave_the_page(page, rng.uniform(5.5, 9.0))
    if way == "no paste event":
        await page.keyboard.insert_text(text)
    else:
        await page.evaluate(PASTE, [text])
    if way == "paste then edit":
        await page.keyboard.press("End")
        await type_like_a_person(page, rng, rng.choice([" Clearly.", " I agree with that.", " B wins."]))
    return way


async def typed_run(page, rng: random.Random) -> str:
    """A person typing their own answer; returns what else they did."""
    text = f"{rng.choice(HUMAN_OPENINGS)}, {rng.choice(HUMAN_REASONS)}"
    if rng.random() < 0.4:
        text += f" and {rng.choice(HUMAN_REASONS)}"
    extra = rng.choices(["typed only", "left the page", "quoted a few words"], [7, 2, 1])[0]
    await asyncio.sleep(rng.uniform(1.0, 4.0))
    await page.locator('textarea[name="q-why"]').click()
    if extra == "quoted a few words":
        await type_like_a_person(page, rng, text[: len(text) // 2])
        await page.evaluate(PASTE, [" " + rng.choice(QUOTES) + " "])
        await type_like_a_person(page, rng, text[len(text) // 2 :])
        return extra
    cut = rng.randrange(5, len(text))
    await type_like_a_person(page, rng, text[:cut])
    if extra == "left the page":
        await leave_the_page(page, rng.uniform(2.0, 12.0))
    await type_like_a_person(page, rng, text[cut:])
    return extra


async def one_run(browser, base: str, seed: int, kind: str, run: int, gate: asyncio.Semaphore) -> tuple:
    rng = random.Random(f"{seed}-{kind}-{run}")
    async with gate:
        context = await browser.new_context(viewport={"width": 1000, "height": 800})
        page = await context.new_page()
        page.set_default_timeout(60_000)
        try:
            await page.goto(f"{base}/s/{SLUG}/?PROLIFIC_PID={worker_id(seed, kind, run)}")
            await page.get_by_role("button", name="I agree").click()
            await page.wait_for_selector('textarea[name="q-why"]')
            await page.wait_for_load_state("load")  # the deferred scripts have run
            way = await (pasted_run if kind == "pasted" else typed_run)(page, rng)
            await page.keyboard.press("Control+Enter")
            await page.wait_for_selector("#completion-code")
        finally:
            await context.close()
    return kind, run, way


async def drive(base: str, runs: int, seed: int, concurrency: int) -> list[tuple]:
    from playwright.async_api import async_playwright

    gate = asyncio.Semaphore(concurrency)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"], headless=True
        )
        kinds = ("pasted", "typed")
        jobs = [one_run(browser, base, seed, kind, run, gate) for run in range(runs) for kind in kinds]
        done = []
        for finished in asyncio.as_completed(jobs):
            done.append(await finished)
            if len(done) % 50 == 0:
                print(f"  {len(done)} of {len(jobs)} runs", flush=True)
        await browser.close()
    return done


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return math.nan, math.nan
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _line(kind: str, way: str, values: list[bool]) -> str:
    hits, n = sum(values), len(values)
    low, high = wilson(hits, n)
    return f"{kind:8} {way:20} {n:4}  {hits:7}  {hits / n:6.1%}  [{low:.1%}, {high:.1%}]"


def report(runs: list[tuple], flags: dict[str, tuple[bool, list[str]]], seed: int) -> None:
    by_kind: dict[str, list[bool]] = defaultdict(list)
    by_way: dict[tuple[str, str], list[bool]] = defaultdict(list)
    signs: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for kind, run, way in runs:
        flagged, names = flags[worker_id(seed, kind, run)]
        by_kind[kind].append(flagged)
        by_way[(kind, way)].append(flagged)
        for name in names:
            signs[kind][name] += 1
    print("\nkind     way                  runs  flagged  rate     95% interval")
    for kind in ("pasted", "typed"):
        for (k, way), values in sorted(by_way.items()):
            if k == kind:
                print(_line(kind, way, values))
        print(_line(kind, "all", by_kind[kind]))
        print(f"{'':8} signs: {dict(signs[kind]) or 'none'}")
    pasted = sum(by_kind["pasted"]) / len(by_kind["pasted"])
    typed = sum(by_kind["typed"]) / len(by_kind["typed"])
    print(
        f"\nclaim: pasted flagged >= 95%: {pasted:.1%} {'yes' if pasted >= 0.95 else 'NO'}; "
        f"typed flagged <= 1%: {typed:.1%} {'yes' if typed <= 0.01 else 'NO'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="runs of each kind (pasted, typed)")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--concurrency", type=int, default=8, help="browser pages at once")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a scratch PostgreSQL database.")
    ensure_database(url)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Response, Study
    from annotation.services.authoring.studies import load_study_file
    from annotation.services.participation.authenticity import Thresholds

    call_command("migrate", verbosity=0)
    Study.objects.filter(slug=SLUG).delete()
    load_study_file(study_file(items=40, per_item=max(2, math.ceil(2 * args.runs / 40) + 1)))
    rule = Thresholds.from_settings()
    print(f"{args.runs} runs of each kind, seed {args.seed}; thresholds: {rule}", flush=True)
    connection.close()
    port = free_port()
    server = start_server(port, args.workers, ROOT)
    try:
        runs = asyncio.run(drive(f"http://{HOST}:{port}", args.runs, args.seed, args.concurrency))
    finally:
        stop_server(server)
    stored = Response.objects.filter(study__slug=SLUG).values_list(
        "participant__platform_worker_id", "strong_sign", "authenticity"
    )
    flags = {worker: (strong, (signals or {}).get("signs", [])) for worker, strong, signals in stored}
    missing = [run for run in runs if worker_id(args.seed, run[0], run[1]) not in flags]
    if missing:
        sys.exit(f"{len(missing)} runs stored no answer")
    report(runs, flags, args.seed)


if __name__ == "__main__":
    main()
