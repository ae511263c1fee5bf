"""Board profiles: one data module per board, naming the pins and buses it is wired with."""
