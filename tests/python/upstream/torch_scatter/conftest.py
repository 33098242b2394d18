"""torch_scatter's own tests (copied files; provenance in each file's header). They need torch:
without it (a build without torch support) nothing here is collected."""

import importlib.util

if importlib.util.find_spec("torch") is None:
    collect_ignore_glob = ["*.py"]
