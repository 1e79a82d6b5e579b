"""pkctl's verbs, one module each; `kubectl.app` registers them on the typer app."""
