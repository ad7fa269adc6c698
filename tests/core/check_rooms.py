#!/usr/bin/env python3
"""Fails when a file of core/ or ui/ includes a room that may not be below it, or when a file
of core/, cli/, ui/ or python/ spells a header of its own folder by path.

The rooms depend one way (docs/architecture.md, "The rooms of core", "The rooms of ui"):
core/ <- io/ <- model/ <- plan/ <- inspect/ <- save/ <- remote/, and ui/util/ <- models/ <- views/ <- save/ <-
windows/. A room may include itself and the rooms to its left; anything else is printed with
its file and line, and the exit status is 1.
"""
import pathlib
import re
import sys

ORDER = ["", "io", "model", "plan", "inspect", "save", "remote"]
UI_ORDER = ["util", "models", "views", "save", "windows"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room_of(relative):
    """The room of a path under core/: '' for core/x.h, 'model' for core/model/x.h."""
    parts = relative.parts
    return parts[0] if len(parts) == 2 else ""


def main(core):
    core = pathlib.Path(core)
    unknown = sorted({p.parent.name for p in core.glob("*/*.*")} - set(ORDER))
    if unknown:
        print(f"{core}: rooms not in the order: {', '.join(unknown)}")
        return 1
    bad = []
    for path in sorted(core.rglob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        room = room_of(path.relative_to(core))
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            if target.startswith("core/"):
                used = room_of(pathlib.PurePath(target).relative_to("core"))
            elif "/" in target:
                continue  # a generated or third-party header
            else:
                used = room  # same room, by name
                if not (path.parent / target).exists():
                    bad.append(f"{path}:{number}: {target} is not in {path.parent}")
                    continue
            if ORDER.index(used) > ORDER.index(room):
                bad.append(f"{path}:{number}: core/{room or '.'} includes {target} "
                           f"from core/{used}, a room that depends on it")
    bad += ui_rooms(core.parent / "ui")
    bad += spelled_by_path(core.parent)
    for line in bad:
        print(line)
    return 1 if bad else 0


def ui_rooms(ui):
    """Every file of ui/ is in a room of UI_ORDER and includes no room to its right."""
    bad = []
    for path in sorted(ui.rglob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        parts = path.relative_to(ui).parts
        if len(parts) != 2 or parts[0] not in UI_ORDER:
            bad.append(f"{path}: not in a room of ui/ ({', '.join(UI_ORDER)})")
            continue
        room = parts[0]
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or not m.group(1).startswith("ui/"):
                continue
            used = pathlib.PurePath(m.group(1)).parts[1]
            if used not in UI_ORDER or UI_ORDER.index(used) > UI_ORDER.index(room):
                bad.append(f"{path}:{number}: ui/{room} includes {m.group(1)}, from a room "
                           f"that depends on it")
    return bad


def spelled_by_path(root):
    """Includes spelled one way: a header of the including file's own folder by its name
    ("save.h"), never by its path ("core/save/save.h"), in core, cli, ui and python."""
    bad = []
    for folder in ("core", "cli", "ui", "python"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".h", ".cpp"):
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                m = INCLUDE.match(line)
                if m and "/" in m.group(1) and (root / m.group(1)).parent == path.parent:
                    bad.append(f"{path}:{number}: {m.group(1)} is in this file's folder: "
                               f"include it by name")
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "core"))
