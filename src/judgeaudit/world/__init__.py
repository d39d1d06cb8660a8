"""What a judge must be shown (blind-spot §3–7): world-aware items, arms, scoring."""
