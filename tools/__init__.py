"""Host-side tools: replay, the simulated table, the logger, deploy and bench."""
