"""Every benchmark stays importable: a refactor that breaks one fails here, not months later."""

import importlib
import pkgutil

import pytest

import benchmarks

MODULES = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_"))


def test_the_benchmarks_are_found():
    assert {"bench_answering", "bench_aggregate", "bench_voice"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_a_benchmark_imports_and_has_an_entry_point(name):
    module = importlib.import_module(f"benchmarks.{name}")
    assert callable(getattr(module, "main", None)), f"benchmarks.{name} has no main()"
