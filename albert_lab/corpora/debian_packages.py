"""What an installed Debian package says about itself: its version (`dpkg-query`) and the
licence its copyright file names. The prose corpora's provenance records and the tasks'
`source.json` quote them."""

from __future__ import annotations

import subprocess
from typing import Optional

DPKG_QUERY = "dpkg-query"  # the command asked for versions (the tests point it elsewhere)


def installed_version(package: str) -> Optional[str]:
    """The installed version of a Debian package, or None (no dpkg-query, not installed)."""
    try:
        result = subprocess.run([DPKG_QUERY, "-W", "-f=${Version}", package],
                                capture_output=True, text=True, check=False, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    version = result.stdout.strip()
    return version if result.returncode == 0 and version else None


def copyright_licence(package: str) -> Optional[str]:
    """The first `License:` of /usr/share/doc/<package>/copyright, or None."""
    path = f"/usr/share/doc/{package}/copyright"
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            for line in file:
                if line.startswith("License:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None
