"""loading_modules: the collector paused while a command imports, and left as it was found, errors or not."""

from __future__ import annotations

import gc
import importlib

import pytest

from orchlog.cli.loading import loading_modules


@pytest.fixture(autouse=True)
def _collector_restored():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_the_collector_is_paused_inside_and_running_again_after():
    gc.enable()
    with loading_modules():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    with loading_modules():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_an_import_that_fails_still_restarts_the_collector():
    gc.enable()
    with pytest.raises(ImportError), loading_modules():
        importlib.import_module("orchlog.no_such_module")
    assert gc.isenabled()
