"""The MicroPython unix port from the host: finding and running the interpreter (`upy`), the
unix-port entry points by name (`upy.ENTRIES`), micropython-lib packages (`upylib`), the 32-bit
build (`upybuild`) and the pty pair a simulated board's serial link runs over (`linkpipe`).
"""
