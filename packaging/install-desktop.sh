#!/bin/sh
# Desktop integration for the current user (Linux, freedesktop): a menu entry, the icon in
# every size, the Matrix Market and edge-list file types (so such files open with the app from
# a file manager) and the AppStream metadata. Nothing outside $XDG_DATA_HOME (~/.local/share).
#
#   dist/gpu-graph-explorer/install-desktop.sh      in a built bundle: the entry starts the bundle
#   packaging/install-desktop.sh                     in a source checkout: the entry starts the
#                                                    gpu-graph-explorer found on PATH (pip install)
#   ... --uninstall                                  removes what it installed
set -eu

name=gpu-graph-explorer
app_id=io.github.gpu_graph_explorer
here=$(cd "$(dirname "$0")" && pwd)

if [ -x "$here/$name" ] && [ -d "$here/_internal/gge_resources" ]; then
    resources="$here/_internal/gge_resources"           # a bundle: start this very program
    exec_line="\"$here/$name\""
    try_exec="$here/$name"
elif [ -d "$here/../resources/desktop" ]; then
    resources="$here/../resources"                      # a source checkout: the command on PATH
    exec_line=$name
    try_exec=$name
else
    echo "install-desktop.sh: cannot find the desktop files next to $here" >&2
    exit 1
fi

data=${XDG_DATA_HOME:-$HOME/.local/share}
sizes="16 24 32 48 64 128 256 512"
desktop_file="$data/applications/$name.desktop"
mime_file="$data/mime/packages/$app_id.mime.xml"
metainfo_file="$data/metainfo/$app_id.metainfo.xml"

refresh() {
    # each cache is optional: without the tool the desktop simply rescans later
    if command -v update-mime-database >/dev/null 2>&1; then update-mime-database "$data/mime"; fi
    if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q "$data/applications" || true; fi
    if command -v gtk-update-icon-cache >/dev/null 2>&1; then gtk-update-icon-cache -q -t -f "$data/icons/hicolor" 2>/dev/null || true; fi
}

if [ "${1:-}" = "--uninstall" ]; then
    rm -f "$desktop_file" "$mime_file" "$metainfo_file" "$data/icons/hicolor/scalable/apps/$name.svg"
    for s in $sizes; do rm -f "$data/icons/hicolor/${s}x${s}/apps/$name.png"; done
    refresh
    echo "removed the desktop integration of $name from $data"
    exit 0
fi

mkdir -p "$data/applications" "$data/mime/packages" "$data/metainfo" "$data/icons/hicolor/scalable/apps"
# the entry's Exec and TryExec name the program to start (quoted: the path may hold spaces)
sed -e "s|^Exec=.*|Exec=$exec_line %F|" -e "s|^TryExec=.*|TryExec=$try_exec|" \
    "$resources/desktop/$name.desktop" > "$desktop_file"
cp "$resources/desktop/$app_id.mime.xml" "$mime_file"
cp "$resources/desktop/$app_id.metainfo.xml" "$metainfo_file"
for s in $sizes; do
    mkdir -p "$data/icons/hicolor/${s}x${s}/apps"
    cp "$resources/icons/$name-$s.png" "$data/icons/hicolor/${s}x${s}/apps/$name.png"
done
cp "$resources/icons/$name.svg" "$data/icons/hicolor/scalable/apps/$name.svg"
refresh
echo "installed the desktop integration of $name in $data (menu entry, icons, file types)"
