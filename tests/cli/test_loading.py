"""loading_modules: the collector paused while a command imports, and left as it was found, errors or not;
what the first command's imports made is frozen out of later collections."""

from __future__ import annotations

import gc
import importlib

import pytest

from orchlog.cli import loading
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


def test_what_the_first_imports_made_is_frozen_and_only_once(monkeypatch):
    monkeypatch.setattr(loading, "_frozen", False)
    gc.enable()
    before = gc.get_freeze_count()
    try:
        with loading_modules():
            made: list[list[int]] = [[] for _ in range(1000)]  # lists: objects the collector tracks
        frozen = gc.get_freeze_count()
        assert frozen >= before + len(made)
        with loading_modules():
            more: list[list[int]] = [[] for _ in range(1000)]
        assert gc.get_freeze_count() == frozen and len(more) == 1000  # a later command's objects are collected as usual
    finally:
        gc.unfreeze()
