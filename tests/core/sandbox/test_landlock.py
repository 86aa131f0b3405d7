"""``sysprompt_core.sandbox.landlock`` on its own: a process confines itself to reading
beneath a folder and one file (a path that does not exist is left out), in a child
process of the test, on real files."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sysprompt_core.sandbox import landlock_status

STATUS = landlock_status()

CHILD = textwrap.dedent(
    """
    import json, os, sys
    from sysprompt_core.sandbox import confine_to_reading
    folder, single, other, outside = sys.argv[1:5]
    abi = confine_to_reading([folder, single, "/does/not/exist"])
    def tried(path, flags=os.O_RDONLY):
        try:
            os.close(os.open(path, flags))
        except OSError as exc:
            return exc.errno
        return 0
    print(json.dumps({
        "abi": abi,
        "folder": tried(os.path.join(folder, "a.txt")),
        "single": tried(single),
        "sibling of the single file": tried(other),
        "outside": tried(outside),
        "write in folder": tried(os.path.join(folder, "a.txt"), os.O_WRONLY),
    }))
    """
)


@pytest.mark.skipif(not STATUS.available, reason=f"no Landlock: {STATUS.reason}")
def test_confine_to_reading_allows_the_folder_and_the_file_only(tmp_path: Path) -> None:
    folder, files, outside = tmp_path / "folder", tmp_path / "files", tmp_path / "outside.txt"
    folder.mkdir()
    files.mkdir()
    (folder / "a.txt").write_text("a")
    (files / "one.txt").write_text("1")
    (files / "two.txt").write_text("2")
    outside.write_text("x")
    args = [str(folder), str(files / "one.txt"), str(files / "two.txt"), str(outside)]
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == {
        "abi": STATUS.abi,
        "folder": 0,
        "single": 0,
        "sibling of the single file": 13,
        "outside": 13,
        "write in folder": 13,
    }


def test_landlock_status_says_why_when_there_is_none() -> None:
    if STATUS.available:
        assert STATUS.abi >= 1 and STATUS.reason is None
    else:
        assert STATUS.abi == 0 and STATUS.reason
