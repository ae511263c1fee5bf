"""Shot scripts and their replay (`python -m tools.replay`): the script parser, the line reader
shared with raw input timelines, and the unix-port runner of the same scripts.
"""
