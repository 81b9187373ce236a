# Shared by the scripts: Debian packages the project needs on the machine itself.

# ensure_commands COMMAND:PACKAGE ... installs each PACKAGE whose COMMAND is missing, with apt-get
# (as root, or through sudo without a password); fails naming what to install otherwise.
ensure_commands() {
    local missing=()
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair##*:}")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo -n"
        else
            echo "missing: ${missing[*]} (install with: apt-get install ${missing[*]})" >&2
            return 1
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "missing: ${missing[*]}, and apt-get is not available to install them" >&2
        return 1
    fi
    echo "installing ${missing[*]}" >&2
    $sudo apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 \
        || { $sudo apt-get update -q >/dev/null 2>&1 && $sudo apt-get install -y -q "${missing[@]}" >/dev/null; }
}
