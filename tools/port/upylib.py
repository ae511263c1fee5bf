"""Install the pinned MicroPython libraries (upy-requirements.txt) for the unix port.

    python -m tools.port.upylib            # make venv runs this: fetch, check, unpack
    python -m tools.port.upylib --check    # exit 1 unless every pinned library is installed

micropython-lib's releases on PyPI are source archives made for the old `upip`, without
setup.py, so pip cannot install them. This reads the PyPI simple index (or PIP_INDEX_URL),
downloads the pinned release file, refuses it unless its sha256 is the pinned one, and
copies its modules (the `.py` files of its packages) into `.venv/upylib`, which
tools.port.upy puts on MICROPYPATH.
"""

import hashlib
import io
import os
import re
import shutil
import sys
import tarfile
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PINS = os.path.join(ROOT, "upy-requirements.txt")
TARGET = os.path.join(ROOT, ".venv", "upylib")
INDEX = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
LINE = re.compile(r"^([A-Za-z0-9._-]+)==([A-Za-z0-9._-]+)\s+--hash=sha256:([0-9a-f]{64})$")


def pins(path=PINS):
    """[(name, version, sha256)] from the requirements file."""
    found = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = LINE.match(line)
            if not m:
                raise SystemExit("%s:%d: expected NAME==VERSION --hash=sha256:HEX"
                                 % (path, number))
            found.append(m.groups())
    return found


def _normal(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _fetch(url, timeout=60):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.read()


def release_url(name, version):
    page = _fetch("%s/%s/" % (INDEX, _normal(name))).decode()
    for href in re.findall(r'href="([^"]+)"', page):
        filename = href.split("#", 1)[0].rsplit("/", 1)[-1]
        if filename in ("%s-%s.tar.gz" % (name, version),
                        "%s-%s.tar.gz" % (_normal(name), version)):
            return urllib.request.urljoin(INDEX + "/", href.split("#", 1)[0])
    raise SystemExit("upylib: %s %s is not on %s" % (name, version, INDEX))


def modules(archive):
    """{relative path: bytes} of the package modules in a release archive."""
    out = {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if (member.isfile() and len(parts) >= 3 and parts[-1].endswith(".py")
                    and parts[-1] != "setup.py" and ".." not in parts):
                out["/".join(parts[1:])] = tar.extractfile(member).read()
    return out


def stamp(name, version):
    return os.path.join(TARGET, ".%s-%s" % (_normal(name), version))


def install(target=TARGET):
    wanted = pins()
    if all(os.path.exists(stamp(n, v)) for n, v, _ in wanted):
        return 0
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    for name, version, digest in wanted:
        data = _fetch(release_url(name, version))
        got = hashlib.sha256(data).hexdigest()
        if got != digest:
            raise SystemExit("upylib: %s %s has sha256 %s, pinned %s" % (name, version, got,
                                                                        digest))
        for rel, body in modules(data).items():
            path = os.path.join(target, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(body)
        open(stamp(name, version), "w").close()
        print("upylib: %s %s" % (name, version))
    return 0


def main(argv):
    if argv == ["--check"]:
        missing = [n for n, v, _ in pins() if not os.path.exists(stamp(n, v))]
        if missing:
            print("upylib: missing %s: run make venv" % ", ".join(missing))
            return 1
        return 0
    return install()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
