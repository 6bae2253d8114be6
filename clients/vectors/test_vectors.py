"""The committed clients/vectors.json equals what the module answers today.

Regenerates the vectors from a real redis-server with the module
($TICKETGATE_TEST_REDIS_SERVER or redis-server on PATH; $TICKETGATE_MODULE or
the release build) and compares them with the committed file. Vectors marked
`varies_by_redis_version` (Redis's own message text) are compared on their
error code only when the server is not the one the file was recorded with.
"""

import json
import os
import shutil

import generate
import testenv


def without_version_texts(doc: dict) -> dict:
    doc = json.loads(json.dumps(doc))
    doc.pop("recorded_with")
    for vector in doc["vectors"]:
        if vector.get("varies_by_redis_version"):
            for field in ("resp2", "resp3"):
                vector[field] = vector[field].split(" ", 1)[0]
            vector["expect"].pop("message", None)
    return doc


def test_committed_vectors_match_the_module():
    binary = os.environ.get("TICKETGATE_TEST_REDIS_SERVER") or shutil.which("redis-server")
    assert binary, "no redis-server: set TICKETGATE_TEST_REDIS_SERVER"
    fresh = generate.generate(binary, str(testenv.module_path()))
    committed = json.loads(generate.OUT.read_text())
    assert generate.render(committed) == generate.OUT.read_text(), (
        "vectors.json is not in generate.py's layout"
    )
    assert without_version_texts(fresh) == without_version_texts(committed)
    if testenv.server_version(binary) == committed["recorded_with"].split()[-1]:
        assert fresh == committed
