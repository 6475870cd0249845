"""What `atrium.client` exports: every record a caller meets, so no one imports from a private
module or from `atrium.client.records` for one event kind and from the package for the others."""

from __future__ import annotations

import atrium.client
from atrium.client import records


def test_every_event_class_is_exported() -> None:
    events = sorted(
        name
        for name, value in vars(records).items()
        if isinstance(value, type) and issubclass(value, records.RunEvent)
    )
    assert "ToolCalled" in events and "ToolReturned" in events
    for name in events:
        assert getattr(atrium.client, name, None) is getattr(records, name), name
        assert name in atrium.client.__all__, name


def test_all_names_what_the_package_holds() -> None:
    for name in atrium.client.__all__:
        assert hasattr(atrium.client, name), name
    assert len(set(atrium.client.__all__)) == len(atrium.client.__all__)
