from __future__ import annotations

import pytest
from world_fixtures import tiny_items


@pytest.fixture
def items():
    return tiny_items()
