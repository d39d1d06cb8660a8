"""Reports: one self-contained HTML page per run (plots embedded), plus JSON and Markdown."""
