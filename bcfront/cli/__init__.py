"""The `bcfront-explain` command line tool.

explain — argument parsing and `main`; runner — run a script as ``__main__``;
collect — gather the reports of every capture that ran; render — the rich
rendering of a `report.Report`; advice — recompile-storm warnings and fixes;
target — resolve ``path.py:function`` / ``module:function``; static — the
static graph-break predictor; schema — the documented JSON schema, checked.
"""
