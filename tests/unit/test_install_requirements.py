"""``bin/install-requirements`` hands uv the package sources this machine's pip uses, so a
machine serving a local torch build to pip serves it to uv too (``make test``'s installs)."""

from __future__ import annotations

import importlib.util
from importlib.machinery import SourceFileLoader
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bin" / "install-requirements"
_loader = SourceFileLoader("install_requirements", str(SCRIPT))
install_requirements = importlib.util.module_from_spec(importlib.util.spec_from_loader(_loader.name, _loader))
_loader.exec_module(install_requirements)


def test_pips_indexes_and_wheel_folders_become_uvs_variables():
    listed = [
        ":env:.cert='/etc/ssl/certs/ca-certificates.crt'",
        "global.constraint='/etc/xdg/pip/constraints.txt'",
        "global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'",
        "global.find-links='/opt/wheels /srv/more-wheels'",
        "global.index-url='https://mirror.example/simple'",
    ]
    assert install_requirements.uv_sources(listed) == {
        "UV_INDEX": "file:///opt/pypi/simple file:///opt/pypi-more/simple",
        "UV_FIND_LINKS": "/opt/wheels,/srv/more-wheels",
        "UV_DEFAULT_INDEX": "https://mirror.example/simple",
    }


def test_a_pip_variable_wins_over_the_configuration_file_whatever_the_order():
    listed = [":env:.find-links='/from/env'", "global.find-links='/from/file'"]
    assert install_requirements.uv_sources(listed) == {"UV_FIND_LINKS": "/from/env"}
    assert install_requirements.uv_sources(list(reversed(listed))) == {"UV_FIND_LINKS": "/from/env"}


def test_no_configuration_leaves_uv_on_its_defaults():
    assert install_requirements.uv_sources([]) == {}
    assert install_requirements.uv_sources(["global.timeout='60'"]) == {}
