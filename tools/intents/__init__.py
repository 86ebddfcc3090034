"""The help desk's intents, one module each: everything that adding an intent writes in code.

A module holds its tool's argument model and entry (`ToolSpec`), its intent's entry (`IntentSpec`) with the renderer
that writes its answer (and, for a monthly intent, its answer over a period), and the answer the unit tests' fake
backend gives. It exports `SPECS` (its entries, in the order the registry lists them) and `FAKES` (tool name ->
fake answer). `tools/registry.py` collects the modules it lists; `tests/unit/conftest.py` collects their fakes.
What stays outside is data: the intent's labelled questions (`data/router/`) and the backend's route.
"""
