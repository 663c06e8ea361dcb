#!/usr/bin/env python3
"""Builds samples/session.jsonl, the sample session `parrot-compress replay` runs by default,
from the corpus of recorded and generated tool results (see samples/README.md).

Usage: python3 samples/make_session.py corpus > samples/session.jsonl
"""
import json
import sys
from pathlib import Path

corpus = Path(sys.argv[1])


def load(name):
    return json.loads((corpus / name).read_text(encoding="utf-8"))


calls = []


def call(tool, result, status="success"):
    calls.append({"tool": tool, "status": status, "result": result})


# Database query results: the query-result shape, at several sizes.
query = load("query-500x12.json")
for n in (500, 120, 60, 25, 8):
    call("dq_execute_database_query", dict(query, rows=query["rows"][:n]))
call("dq_execute_database_query",
     {"error": "relation \"stores_archive\" does not exist", "code": "42P01"}, status="error")

# API responses: flat rows and nested objects with URL templates and nulls.
repos = load("github-repos.json")
for n in (100, 40, 12):
    call("github_list_repos", repos[:n])
search = load("github-search-issues.json")
call("github_search_issues", search)
call("github_search_issues", dict(search, items=search["items"][:1], total_count=1))
issues = load("github-paginate-issues.json")
call("github_list_issues", issues)
call("github_list_issues", issues[:3])
call("github_get_repository", load("github-get-repository.json"))
call("github_project_cards", load("github-project-cards.json"))
call("github_labels", load("github-labels.json"))
call("github_get_repository",
     {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, status="error")

# Build logs and shell output: plain text.
log = (corpus / "build-log.txt").read_text(encoding="utf-8").splitlines(keepends=True)
error_at = next(i for i, line in enumerate(log) if line.startswith("error["))
call("shell_cargo_build", "".join(log[:400]))
call("shell_cargo_build", "".join(log[error_at - 60:error_at + 40]))
call("shell_cargo_build", "".join(log[-120:]))
call("shell_ls", "Cargo.toml\nREADME.md\ncodec-api\ncodecs\nhost\nplugins\ntests\nxtask\n")
call("shell_cargo_test", "".join(log[error_at:error_at + 3]), status="error")

# Small results that cannot shrink.
call("get_time", {"now": "2026-11-30T03:00:00Z"})
call("http_fetch", "OK")

for c in calls:
    print(json.dumps(c, ensure_ascii=False, separators=(",", ":")))
