# The compiled extension module (built from native/python/kernels/ into the installed package, not
# the source tree that mypy reads): its names are typed Any here.
from typing import Any

def __getattr__(name: str) -> Any: ...
