"""CLI verb groups, one module per analysis; mounted by judgeaudit.cli."""
