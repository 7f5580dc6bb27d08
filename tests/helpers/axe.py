"""axe-core in the browser tests: the checker a person auditing the pages would run, loaded
from the copy in tests/vendor/axe-core/ (nothing is downloaded when the tests run).

``serious_violations(page)`` is the one way a test asks: the page's violations of impact
serious or critical, each as a line a reader can act on (rule, impact, what to fix, where).
Minor and moderate findings are axe's advice; the tests hold the pages to no serious one."""

from __future__ import annotations

from functools import cache
from pathlib import Path

AXE_JS = Path(__file__).resolve().parents[1] / "vendor" / "axe-core" / "axe.min.js"
FAILING_IMPACTS = ("serious", "critical")
# WCAG 2.0, 2.1 and 2.2 at levels A and AA, and axe's best practices (landmarks, one h1, ...):
# the rules a WCAG 2.2 AA audit runs, experimental rules left out as axe does by default.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]

_RUN = """async (tags) => {
  const results = await axe.run(document, {
    runOnly: {type: "tag", values: tags},
    resultTypes: ["violations"],
  });
  return results.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => ({
      target: n.target.join(" "),
      impact: n.impact,
      summary: (n.failureSummary || "").replace(/\\s+/g, " ").trim(),
    })),
  }));
}"""


@cache
def _axe_source() -> str:
    return AXE_JS.read_text(encoding="utf-8")


def serious_violations(page) -> list[str]:
    """The serious and critical axe violations of the page as it is now, one line per element
    ("color-contrast (serious): Elements must meet minimum color contrast ratio thresholds —
    .tag — Fix any of the following: ..."); an empty list when the page passes.

    axe is put into the page on first use (a page of the site allows no inline script, but
    Playwright's evaluate is not a script the page's Content-Security-Policy governs)."""
    page.wait_for_load_state("load")
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(_axe_source())
    found = page.evaluate(_RUN, TAGS)
    lines = []
    for violation in found:
        for node in violation["nodes"]:
            impact = node["impact"] or violation["impact"]
            if impact in FAILING_IMPACTS:
                what = f"{violation['id']} ({impact}): {violation['help']}"
                lines.append(f"{what} — {node['target']} — {node['summary']}")
    return lines
