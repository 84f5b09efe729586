"""The SQL screen's hint line once the editor's text is the researcher's own: a named query's
"runs it with the parameters below" no longer holds after its SQL was edited (issue 34 §9)."""

from __future__ import annotations

from typing import Protocol

from textual.widgets import TextArea

from haf_tui.reports import NamedQuery
from haf_tui.tui.sql_text import sql_params
from haf_tui.tui.widgets.sql_editor import SqlEditor
from haf_tui.tui.widgets.sql_params import ParamsForm

OWN_SQL_HINT = "your own SQL · ctrl+r runs it"
OWN_SQL_PARAMS_HINT = "your own SQL · ctrl+r asks for its $parameters"


def own_sql_hint(sql: str) -> str:
    """The hint line for SQL the researcher typed (its ``$parameters`` are asked for)."""
    return OWN_SQL_PARAMS_HINT if sql_params(sql) else OWN_SQL_HINT


class OwnSqlHost(Protocol):
    """What the mixin uses of the SQL screen."""

    selected: NamedQuery | None

    @property
    def editor(self) -> SqlEditor: ...

    def show_hint(self, message: str) -> None: ...


class OwnSqlHint:
    """Mixin of the SQL screen: when the editor's text stops being the named query picked,
    the query is no longer the selected one and the hint line says whose SQL runs."""

    selected: NamedQuery | None
    """The named query picked, while the editor holds its SQL (the screen sets it)."""

    def on_text_area_changed(self: OwnSqlHost, event: TextArea.Changed) -> None:
        """The editor's text changed: a named query edited is the researcher's own SQL."""
        editor = self.editor
        if event.text_area is not editor or self.selected is None:
            return
        if editor.text.strip() == self.selected.sql.strip():
            return
        self.selected = None
        if not sql_params(editor.text):
            form = editor.screen.query_one(ParamsForm)
            form.close()
        self.show_hint(own_sql_hint(editor.text))
