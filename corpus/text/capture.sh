#!/usr/bin/env bash
# Re-runs every command whose output is committed in this folder, and documents how each was made.
#
#   bash corpus/text/capture.sh            # rewrites every capture here
#   bash corpus/text/capture.sh NAME...    # rewrites only the named ones (e.g. paths-tokio-find)
#
# Each capture is one `cap NAME DIR 'COMMAND'` line: COMMAND runs in DIR (with bash) and its
# standard output, nothing else, becomes NAME.txt. The README's table quotes these lines.
# On another machine, or later, the bytes will differ (other package versions, file orders,
# dates, process ids): the committed files are the reference, this script says how they came.
#
# Needs: git, cargo (reaches the crate registry), npm (reaches the npm registry), the pyenv
# checkout at /root/.pyenv with its Python 3.11.7, Debian's ripgrep and tree, and the Debian
# packages named below (nodejs, libx11-6, libxcb1, xz-utils). /root/.pyenv is only read: the
# captures that change files change a clone of it under $WORK.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$HERE}
WORK=${WORK:-/tmp/capwork}
PYENV=/root/.pyenv
PY=$PYENV/versions/3.11.7/bin/python3
REG=$(ls -d "$HOME"/.cargo/registry/src/*/ | head -n1)
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
export LC_ALL=C.UTF-8 TZ=UTC
mkdir -p "$WORK"

ONLY=" $* "
# cap NAME DIR COMMAND: run COMMAND in DIR, its standard output into NAME.txt.
cap() {
    local name=$1 dir=$2 cmd=$3
    [[ "$ONLY" == "  " || "$ONLY" == *" $name "* ]] || return 0
    echo "capturing $name" >&2
    (cd "$dir" && bash -c "$cmd") > "$OUT/$name.txt"
}

# The crate sources cargo already downloaded for this workspace (all MIT and/or Apache-2.0).
crate() { echo "$REG$1"; }

# A small binary crate with a few popular dependencies, resolved to their newest versions;
# `cargo vendor` copies every dependency's source into vendor/.
setup_cargo_project() {
    local p=$WORK/webapp
    [[ -f $p/Cargo.lock && -d $p/vendor ]] && return
    rm -rf "$p" && cargo new -q --vcs none "$p"
    cat >> "$p/Cargo.toml" <<'EOF'
anyhow = "1"
clap = { version = "4", features = ["derive"] }
reqwest = { version = "0.12", features = ["json"] }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
tokio = { version = "1", features = ["full"] }
tracing = "0.1"
tracing-subscriber = { version = "0.3", features = ["env-filter"] }
EOF
    (cd "$p" && cargo generate-lockfile -q && cargo vendor -q vendor > /dev/null)
}

# A small npm project with a few popular packages and their dependencies.
setup_npm_project() {
    local p=$WORK/webui
    [[ -d $p/node_modules ]] && return
    rm -rf "$p" && mkdir -p "$p"
    (cd "$p" && npm init -y > /dev/null &&
        npm install --no-audit --no-fund express@4 axios commander chalk@4 lodash dotenv jest@29 eslint@8 > /dev/null)
}

# A clone of /root/.pyenv with an afternoon's worth of uncommitted work in it: edits (staged,
# unstaged, both), renames, deletions, new files (staged and untracked, one name with spaces).
setup_pyenv_copy() {
    local p=$WORK/pyenv
    rm -rf "$p" && git clone -q "$PYENV" "$p"
    (
        cd "$p" || exit 1
        git config user.name "Dev" && git config user.email "dev@example.com"
        sed -i 's/PYENV_VERSION/PYENV_VERSION_NAME/g' test/*.bats
        echo '# local note' >> README.md
        sed -i '1a # checked' libexec/pyenv-version-name plugins/python-build/bin/python-build
        sed -i '2a # staged' libexec/pyenv-which CHANGELOG.md && git add libexec/pyenv-which CHANGELOG.md
        echo '<!-- again -->' >> CHANGELOG.md
        git mv libexec/pyenv-hooks libexec/pyenv-hook
        git mv test/hooks.bats test/hook.bats
        rm completions/pyenv.fish
        git rm -q man/man1/pyenv.1
        printf '#!/usr/bin/env bash\necho doctor\n' > libexec/pyenv-doctor && git add libexec/pyenv-doctor
        printf 'notes\n' > notes.txt
        printf '@test "doctor" {\n}\n' > test/doctor.bats
        printf 'draft\n' > "release notes 2.6.0.md"
        cp plugins/python-build/share/python-build/3.13.0 plugins/python-build/share/python-build/3.13.99
    )
}

# A repository with one commit per release of the semver crate (1.0.17 to 1.0.28), each commit
# the released crate's files: the author is the crate's `authors` field, the date its
# publication time, the message names the upstream commit the release was cut from.
setup_semver_releases() {
    local repo=$WORK/semver-releases v when crate sha author
    rm -rf "$repo" && git init -q -b master "$repo"
    while read -r v when; do
        local dl=$WORK/dl/semver-$v
        if [[ ! -f $dl/Cargo.toml ]]; then
            mkdir -p "$dl" && (cd "$dl" && cargo init -q --vcs none --name dl . &&
                echo "semver = \"=$v\"" >> Cargo.toml)
        fi
        (cd "$dl" && cargo fetch -q)
        crate=$(ls "$HOME"/.cargo/registry/cache/*/"semver-$v.crate" | head -n1)
        git -C "$repo" rm -rqf --ignore-unmatch . > /dev/null
        tar xzf "$crate" -C "$repo" --strip-components=1
        sha=$(sed -n 's/.*"sha1": "\(.*\)".*/\1/p' "$repo/.cargo_vcs_info.json")
        author=$(sed -n 's/^authors = \["\(.*\)"\]/\1/p' "$repo/Cargo.toml")
        git -C "$repo" add -A
        GIT_AUTHOR_NAME=${author% <*} GIT_AUTHOR_EMAIL=$(echo "${author#*<}" | tr -d '>') \
            GIT_COMMITTER_NAME=${author% <*} GIT_COMMITTER_EMAIL=$(echo "${author#*<}" | tr -d '>') \
            GIT_AUTHOR_DATE=$when GIT_COMMITTER_DATE=$when \
            git -C "$repo" commit -q -m "Release $v" -m "Upstream commit $sha."
        git -C "$repo" tag "$v"
    done <<'EOF'
1.0.17 2023-03-12T18:03:39Z
1.0.18 2023-07-15T21:06:26Z
1.0.19 2023-09-22T20:06:55Z
1.0.20 2023-10-09T22:15:50Z
1.0.21 2024-01-02T17:38:21Z
1.0.22 2024-02-19T04:51:24Z
1.0.23 2024-05-07T02:16:24Z
1.0.24 2024-12-12T22:11:13Z
1.0.25 2025-01-19T23:13:52Z
1.0.26 2025-03-04T00:15:02Z
1.0.27 2025-09-14T17:16:31Z
1.0.28 2026-04-04T00:25:14Z
EOF
}

# libX11's history, rebuilt from the upstream `git log` that Debian ships as libx11-6's
# changelog: every commit with its real author, date (and zone) and message, oldest first, as one
# linear branch of empty trees. Hashes therefore differ from upstream's; merges are flattened.
setup_libx11_history() {
    local repo=$WORK/libx11-history
    rm -rf "$repo" && git init -q -b master "$repo"
    zcat /usr/share/doc/libx11-6/changelog.gz | "$PY" -c '
import datetime, re, sys
text = sys.stdin.read()
out = sys.stdout.buffer
for n, block in enumerate(reversed(re.split(r"^commit (?=[0-9a-f]{40}\b)", text, flags=re.M)[1:]), 1):
    head, _, body = block.partition("\n\n")
    fields = dict(l.split(":", 1) for l in head.split("\n")[1:] if ":" in l)
    when = datetime.datetime.strptime(fields["Date"].strip(), "%a %b %d %H:%M:%S %Y %z")
    stamp = "%d %s" % (when.timestamp(), when.strftime("%z"))
    msg = "\n".join(l[4:] for l in body.rstrip("\n").split("\n")) + "\n"
    who = fields["Author"].strip()
    data = msg.encode()
    out.write(b"commit refs/heads/master\nmark :%d\n" % n)
    out.write(("author %s %s\ncommitter %s %s\n" % (who, stamp, who, stamp)).encode())
    out.write(b"data %d\n%s\n" % (len(data), data))
' | git -C "$repo" fast-import --quiet
}

# `ps aux` in a PID namespace of its own, so that it shows the few processes that its entrypoint
# script starts (web servers, a worker pool, idle loops) and nothing else of the machine.
ps_snapshot() {
    cat > "$WORK/entrypoint.sh" <<END
#!/usr/bin/env bash
cd $WORK
$PY -m http.server 8000 > /dev/null 2>&1 &
node -e 'require("http").createServer((q, s) => s.end("ok")).listen(3000)' &
$PY -c 'import multiprocessing as m, time; p = m.Pool(3); time.sleep(30)' &
sleep infinity &
tail -f /dev/null &
bash -c 'while sleep 1; do :; done' &
sleep 3
ps aux
kill %1 %2 %3 %4 %5 %6
END
    chmod +x "$WORK/entrypoint.sh"
    unshare --pid --fork --mount-proc "$WORK/entrypoint.sh"
}
export -f ps_snapshot
export WORK PY

setup_cargo_project
setup_npm_project
setup_pyenv_copy
setup_semver_releases
setup_libx11_history

# paths
cap paths-tokio-find "$(crate tokio-1.54.1)" 'find .'
cap paths-libc-find "$(crate libc-0.2.191)" 'find .'
cap paths-semver-find "$(crate semver-1.0.28)" 'find .'
cap paths-rustix-find-rs "$WORK" "find $WORK/webapp/vendor/rustix -name '*.rs'"
cap paths-python-build-ls "$PYENV/plugins/python-build/share/python-build" 'ls -1'
cap paths-regex-automata-ls-R "$(crate regex-automata-0.4.19)" 'ls -R'
cap paths-pyenv-ls-files "$WORK" "git -C $PYENV ls-files"
cap paths-pyenv-status "$WORK/pyenv" 'git status --porcelain'
# hits
cap hits-tokio-grep "$(crate tokio-1.54.1)" "grep -rn 'pub fn' src"
cap hits-clap-builder-grep "$(crate clap_builder-4.6.7)" "grep -rn 'pub fn' src"
cap hits-semver-grep "$(crate semver-1.0.28)" "grep -rn 'impl' src"
cap hits-bytes-grep-context "$(crate bytes-1.12.2)" "grep -rn -C2 'unsafe {' src"
cap hits-libc-grep-no-n "$(crate libc-0.2.191)" "grep -r 'pub fn' src/unix/linux_like/linux"
cap hits-hyper-grep-failure-words "$(crate hyper-1.12.0)" "grep -rnE 'error|panic|FAIL' src"
cap hits-requests-grep-py "$SITE/requests" "grep -rn 'def ' --include='*.py' ."
cap hits-pyenv-git-grep "$WORK" "git -C $PYENV grep -n PYENV_VERSION"
cap hits-rustls-rg "$(crate rustls-0.23.46)" "rg -n 'Result<'"
# tables
cap table-pip-list "$WORK" "$PY -m pip list 2> /dev/null"
cap table-dpkg-l "$WORK" 'dpkg -l'
cap table-tokio-ls-la "$(crate tokio-1.54.1)" 'ls -la'
cap table-tokio-ls-lR "$(crate tokio-1.54.1)" 'ls -lR'
cap table-ps-aux "$WORK" 'ps_snapshot'
cap table-df-h "$WORK" 'df -h / /dev /dev/shm /sys/fs/cgroup'
cap table-pyenv-blame "$WORK" "git -C $PYENV blame HEAD -- plugins/python-build/bin/pyenv-install"
# trees
cap tree-cargo-tree "$WORK/webapp" 'cargo tree'
cap tree-npm-ls "$WORK/webui" 'npm ls --all'
cap tree-rustls-tree "$(crate rustls-0.23.46)" 'tree'
# version control
cap vcs-libx11-log-oneline "$WORK/libx11-history" 'git log --oneline -n 200'
cap vcs-libx11-log-format "$WORK/libx11-history" "git log --format='%h %an %ad %s' --date=short -n 200"
cap vcs-libxcb-log "$WORK" "zcat /usr/share/doc/libxcb1/changelog.gz | awk '/^commit [0-9a-f]+\$/ { n++ } n <= 30'"
cap vcs-xz-log-stat "$WORK" "zcat /usr/share/doc/xz-utils/changelog.gz | awk '/^commit [0-9a-f]+\$/ { n++ } n <= 60'"
cap vcs-semver-diff "$WORK/semver-releases" 'git diff 1.0.23 1.0.26'
cap vcs-semver-diff-stat "$WORK/semver-releases" 'git diff --stat 1.0.17 1.0.28'
cap vcs-semver-show "$WORK/semver-releases" 'git show 1.0.27'
# html
cap html-nodejs-path "$WORK" 'cat /usr/share/doc/nodejs/api/path.html'
cap html-underscore-index "$WORK" 'cat /usr/share/doc/libjs-underscore/index.html'
# other
cap other-pyenv-install-list "$WORK" "$PYENV/bin/pyenv install --list"
cap other-pip-show-requests "$WORK" "$PY -m pip show -f requests 2> /dev/null"
cap other-pydoc-requests-session "$WORK" "$PY -m pydoc requests.Session"
