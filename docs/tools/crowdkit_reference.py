"""Print crowd-kit's Dawid–Skene and MACE on the data sets of ``tests/unit/test_competence.py``:
the expected values that test holds (crowd-kit 1.4.2, Toloka's library; the platform does not
depend on it).

Run it in a virtual environment of its own, never the project's:

    python -m venv /tmp/ck-venv && /tmp/ck-venv/bin/pip install crowd-kit==1.4.2 pytest
    PYTHONPATH=. /tmp/ck-venv/bin/python docs/tools/crowdkit_reference.py

Two things about crowd-kit shape the calls below. Its Dawid–Skene stops on a bound that
counts the class priors once per answer, which can stop EM early, so the full-convergence
values come from it with the stopping rule off (``tol=-1``) and the 10-iteration ones with
``n_iter=10, tol=0``. Its MACE keeps its parameters in the order workers and labels first
appear but sums its counts in sorted order, so the answers are given sorted by worker and
the labels named so that both orders agree.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from crowdkit.aggregation import MACE, DawidSkene

from tests.unit.test_competence import TOY, reference_answers


def toy() -> None:
    frame = pd.DataFrame(
        [(f"w{a}", f"t{u}", ("no", "yes")[label]) for a, u, label in TOY], columns=["worker", "task", "label"]
    )
    ds = DawidSkene(n_iter=100, tol=1e-5).fit(frame)
    print("toy DS probas", ds.probas_.sort_index()[["no", "yes"]].to_numpy().round(8).tolist())
    print("toy DS errors\n", ds.errors_)
    for method in ("vb", "em"):
        mace = MACE(method=method).fit(frame)
        print(
            f"toy MACE {method} probas", mace.probas_.sort_index()[["no", "yes"]].to_numpy().round(8).tolist()
        )
        print(f"toy MACE {method} spamming_ (spam, know)", mace.spamming_.round(8).tolist())


def reference() -> None:
    answers = reference_answers()
    rows = sorted(
        zip(answers.unit.tolist(), answers.annotator.tolist(), answers.label.tolist(), strict=True),
        key=lambda r: (r[1], r[0]),
    )
    seen = list(dict.fromkeys(label for _, _, label in rows))
    name = {label: "abc"[i] for i, label in enumerate(seen)}
    frame = pd.DataFrame(
        [(f"a{a}", f"u{u:02d}", name[label]) for u, a, label in rows], columns=["worker", "task", "label"]
    )
    columns = [name[0], name[1], name[2]]

    def show(tag: str, probas: pd.DataFrame, extra) -> None:
        p = probas.sort_index()[columns].to_numpy()
        print(tag, "labels", "".join(str(i) for i in p.argmax(1)))
        print(tag, "unsure", {int(u): p[u].round(4).tolist() for u in np.flatnonzero(p.max(1) < 0.999)})
        print(tag, "extra", np.round(extra, 4).tolist())

    ds = DawidSkene(n_iter=1000, tol=-1).fit(frame)
    errors = ds.errors_
    competence = [
        sum(
            ds.priors_[k] * (errors.loc[(f"a{a}", k), k] if (f"a{a}", k) in errors.index else 0.0)
            for k in columns
        )
        for a in range(6)
    ]
    show("DS", ds.probas_, competence)
    print("DS priors", ds.priors_[columns].round(4).tolist())
    print(
        "DS 10 iterations priors", DawidSkene(n_iter=10, tol=0).fit(frame).priors_[columns].round(6).tolist()
    )
    show("MACE", MACE().fit(frame).probas_, MACE().fit(frame).spamming_[:, 1])
    em = MACE(method="em").fit(frame)
    show("MACE-em", em.probas_, em.spamming_[:, 1])


if __name__ == "__main__":
    toy()
    reference()
