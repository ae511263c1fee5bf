"""The club's pages beside the live ones (results, games, players, names).

    routes()   # Starlette routes that tools.club.app mounts
"""


def routes():
    return []
