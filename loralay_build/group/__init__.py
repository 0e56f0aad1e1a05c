"""Layout groups from the words' geometry: visual lines and blocks (docs/layout-groups.md).

`group_layout(doc)` regroups an extracted document's words; `poppler_groups(doc)` keeps
Poppler's own `<line>`/`<block>` ids (the `groups: poppler` choice); `regroup(doc, how)`
picks one by name.
"""

from __future__ import annotations

from .regions import GROUP_RULE, GROUPINGS, Grouping, group_layout, poppler_groups, regroup

__all__ = ["GROUPINGS", "GROUP_RULE", "Grouping", "group_layout", "poppler_groups", "regroup"]
