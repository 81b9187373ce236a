# Shared by the scripts: the portal's browser libraries (package.json), installed by npm from the
# committed package-lock.json into node_modules/ (reinstalled only when the lock file changes).

ensure_node_modules() {
    ensure_commands node:nodejs npm:npm
    local stamp=node_modules/.installed-package-lock
    local digest
    digest=$(sha256sum package-lock.json | cut -d' ' -f1)
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
        npm ci --no-audit --no-fund --loglevel=error >/dev/null
        echo "$digest" > "$stamp"
    fi
}
