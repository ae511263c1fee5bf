"""For builders: deploy the firmware (`python -m tools.deploy`), check a board, write board.cfg
(`tools.config`), draw the wiring and the quick card, and configure the club's broker.
Each keeps its old `python -m tools.NAME` command.
"""
