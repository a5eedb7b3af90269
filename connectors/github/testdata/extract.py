#!/usr/bin/env python3
"""Extracts from GitHub's REST description the response schemas of the
endpoints the stand-in serves, dereferenced and trimmed, into openapi.json.

Usage: extract.py path/to/api.github.com.json > openapi.json
(the description as npm's @octokit/openapi ships it: generated/api.github.com.json).

Trimming: $refs are inlined; descriptions, examples and x- extensions are
dropped; OpenAPI 3.0's `nullable: true` becomes a JSON Schema type that
admits null. See README.md for what the test does with `required`.
"""
import json, sys

OPS = {
    "user": ("/user", "get", "200"),
    "list": ("/repos/{owner}/{repo}/issues", "get", "200"),
    "create": ("/repos/{owner}/{repo}/issues", "post", "201"),
    "get": ("/repos/{owner}/{repo}/issues/{issue_number}", "get", "200"),
    "edit_issue": ("/repos/{owner}/{repo}/issues/{issue_number}", "patch", "200"),
    "comments": ("/repos/{owner}/{repo}/issues/{issue_number}/comments", "get", "200"),
    "comment": ("/repos/{owner}/{repo}/issues/{issue_number}/comments", "post", "201"),
    "labels": ("/repos/{owner}/{repo}/labels", "get", "200"),
    "pulls": ("/repos/{owner}/{repo}/pulls", "get", "200"),
    "create_pull": ("/repos/{owner}/{repo}/pulls", "post", "201"),
    "pull": ("/repos/{owner}/{repo}/pulls/{pull_number}", "get", "200"),
    "update_pull": ("/repos/{owner}/{repo}/pulls/{pull_number}", "patch", "200"),
    "pull_files": ("/repos/{owner}/{repo}/pulls/{pull_number}/files", "get", "200"),
    "reviews": ("/repos/{owner}/{repo}/pulls/{pull_number}/reviews", "get", "200"),
    "submit_review": ("/repos/{owner}/{repo}/pulls/{pull_number}/reviews", "post", "200"),
    "review_comments": ("/repos/{owner}/{repo}/pulls/{pull_number}/comments", "get", "200"),
    "request_reviewers": ("/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers", "post", "201"),
    "merge_pull": ("/repos/{owner}/{repo}/pulls/{pull_number}/merge", "put", "200"),
    "check_runs": ("/repos/{owner}/{repo}/commits/{ref}/check-runs", "get", "200"),
    "status": ("/repos/{owner}/{repo}/commits/{ref}/status", "get", "200"),
    "repo": ("/repos/{owner}/{repo}", "get", "200"),
    "contents": ("/repos/{owner}/{repo}/contents/{path}", "get", "200"),
    "put_file": ("/repos/{owner}/{repo}/contents/{path}", "put", "201"),
    "commits": ("/repos/{owner}/{repo}/commits", "get", "200"),
    "commit": ("/repos/{owner}/{repo}/commits/{ref}", "get", "200"),
    "branches": ("/repos/{owner}/{repo}/branches", "get", "200"),
    "ref": ("/repos/{owner}/{repo}/git/ref/{ref}", "get", "200"),
    "create_branch": ("/repos/{owner}/{repo}/git/refs", "post", "201"),
    "releases": ("/repos/{owner}/{repo}/releases", "get", "200"),
    "latest": ("/repos/{owner}/{repo}/releases/latest", "get", "200"),
    "search_code": ("/search/code", "get", "200"),
    "search_issues": ("/search/issues", "get", "200"),
    "search_repositories": ("/search/repositories", "get", "200"),
    "runs": ("/repos/{owner}/{repo}/actions/runs", "get", "200"),
    "run": ("/repos/{owner}/{repo}/actions/runs/{run_id}", "get", "200"),
    "jobs": ("/repos/{owner}/{repo}/actions/runs/{run_id}/jobs", "get", "200"),
    "rerun_workflow_run": ("/repos/{owner}/{repo}/actions/runs/{run_id}/rerun", "post", "201"),
    "notifications": ("/notifications", "get", "200"),
}

DROP = {"description", "example", "examples", "title", "externalDocs", "deprecated", "readOnly", "writeOnly", "discriminator"}


def resolve(doc, ref):
    node = doc
    for part in ref.lstrip("#/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def clean(doc, node, depth=0):
    if depth > 60:
        raise SystemExit("schema too deep: a cycle?")
    if isinstance(node, list):
        return [clean(doc, n, depth + 1) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return clean(doc, resolve(doc, node["$ref"]), depth + 1)
    out = {}
    for k, v in node.items():
        if k in DROP or k.startswith("x-"):
            continue
        if k in ("properties", "patternProperties"):
            out[k] = {name: clean(doc, s, depth + 1) for name, s in v.items()}
        else:
            out[k] = clean(doc, v, depth + 1)
    if out.pop("nullable", False):
        if "type" in out:
            out["type"] = [out["type"], "null"]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def main():
    doc = json.load(open(sys.argv[1]))
    schemas = {}
    for op, (path, method, status) in OPS.items():
        resp = doc["paths"][path][method]["responses"][status]
        if "$ref" in resp:
            resp = resolve(doc, resp["$ref"])
        content = resp.get("content", {}).get("application/json")
        schemas[op] = clean(doc, content["schema"]) if content else {}
    out = {"source": "GitHub's REST description, api.github.com, as @octokit/openapi " + doc["info"]["version"] + " ships it (OpenAPI " + doc["openapi"] + ")",
           "endpoints": {op: " ".join((m.upper(), p, s)) for op, (p, m, s) in OPS.items()},
           "schemas": schemas}
    json.dump(out, sys.stdout, sort_keys=True, separators=(",", ":"))
    sys.stdout.write("\n")


main()
