"""The first start on a desktop that lacks a library of Qt's X11 plugin prints the fix in
one line instead of aborting inside Qt."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from explorer import platform_check

LDD_OUTPUT = """\
\tlinux-vdso.so.1 (0x00007ffd)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-icccm.so.4 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)
"""


def test_ldd_not_found_lines_are_read_once_each():
    assert platform_check.unresolved_by_ldd(LDD_OUTPUT) == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"]


def test_the_fix_names_the_apt_and_dnf_packages_on_one_line():
    text = platform_check.fix_message(["libxcb-cursor.so.0"])
    assert "\n" not in text
    assert "apt install libxcb-cursor0" in text
    assert "dnf install xcb-util-cursor" in text


@pytest.mark.parametrize(("env", "expected"), [
    ({"DISPLAY": ":0"}, True),
    ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, False),
    ({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"}, False),
    ({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "wayland-0"}, True),
    ({}, False),
])
def test_only_an_x11_start_is_checked(env, expected):
    assert platform_check.uses_xcb(env, "linux") is expected
    assert platform_check.uses_xcb(env, "darwin") is False


def test_check_platform_reports_what_missing_libraries_finds(monkeypatch):
    monkeypatch.setattr(platform_check, "missing_libraries", lambda plugin=None: ["libxcb-cursor.so.0"])
    assert "libxcb-cursor0" in platform_check.check_platform({"DISPLAY": ":0"})
    monkeypatch.setattr(platform_check, "missing_libraries", lambda plugin=None: [])
    assert platform_check.check_platform({"DISPLAY": ":0"}) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the X11 plugin is Linux's")
def test_the_app_exits_with_the_fix_instead_of_aborting_where_libraries_are_missing():
    missing = platform_check.missing_libraries()
    if not missing:
        pytest.skip("this machine has every library of Qt's xcb plugin")
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env["DISPLAY"] = ":97"          # never reached: the check runs before Qt
    proc = subprocess.run([sys.executable, "-m", "explorer"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "apt install" in lines[0] and "dnf install" in lines[0]
    assert "Aborted" not in proc.stderr
