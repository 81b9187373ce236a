# Shared by the scripts: a project-local virtualenv in .venv, kept in step with a
# requirements file (reinstalled only when the file changes).
VENV="${FLOWSITE_VENV:-.venv}"

find_python() {
    for candidate in python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1 \
            && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
            echo "$candidate"; return 0
        fi
    done
    echo "Python 3.11 is required (apt-get install python3.11 python3.11-venv)" >&2
    return 1
}

ensure_venv() {
    local requirements="$1"
    if [ ! -x "$VENV/bin/python" ]; then
        "$(find_python)" -m venv "$VENV"
    fi
    local stamp="$VENV/.installed-$(basename "$requirements")"
    local digest
    digest=$(cat requirements*.txt | sha256sum | cut -d' ' -f1)
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
        "$VENV/bin/python" -m pip install --quiet --upgrade pip
        "$VENV/bin/python" -m pip install --quiet -r "$requirements"
        echo "$digest" > "$stamp"
    fi
}
