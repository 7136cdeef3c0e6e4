#!/usr/bin/env python3
"""moto's S3 server on 127.0.0.1 for Easel's tests and scripts, with signatures enforced.

Starts moto (in this process) on a free loopback port, creates the buckets named on the command
line and an IAM user whose access key may do anything in S3, then turns on moto's request
authentication: from then on every request must carry a valid AWS Signature V4 from that key.
Prints one JSON line: {"endpoint", "accessKey", "secretKey", "region"}; runs until stdin closes
(the parent exited) or SIGTERM.
"""
import json
import signal
import sys
import threading

import boto3
from moto import settings
from moto.core.authorization import ActionAuthenticatorMixin
from moto.server import ThreadedMotoServer

REGION = "us-east-1"


def canonicalise_as_aws_does() -> None:
    """AWS builds the canonical path and query from the decoded path and query values, encoded
    again (every byte but A-Z a-z 0-9 - _ . ~, and `/` in the path, as %XX). moto checks
    signatures with botocore's signer on the path and query as its web server passes them on,
    where an escape such as %2B or %2F may already be decoded (both spellings are the same URL),
    and then its canonical request differs from AWS's. This makes moto's check follow AWS's rule."""
    from urllib.parse import quote, unquote

    import botocore.auth

    def canonical(self, parts):  # noqa: ANN001 - botocore's signature
        if not parts.query:
            return ""
        pairs = []
        for pair in parts.query.split("&"):
            key, _, value = pair.partition("=")
            pairs.append((quote(unquote(key), safe="-_.~"), quote(unquote(value), safe="-_.~")))
        return "&".join(f"{key}={value}" for key, value in sorted(pairs))

    botocore.auth.SigV4Auth._canonical_query_string_url = canonical
    botocore.auth.S3SigV4Auth._normalize_url_path = lambda self, path: quote(unquote(path), safe="/-_.~")


def main() -> None:
    canonicalise_as_aws_does()
    buckets = sys.argv[1:] or ["easel-test"]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    port = server._server.server_port  # the port the OS chose
    endpoint = f"http://127.0.0.1:{port}"
    anonymous = dict(endpoint_url=endpoint, region_name=REGION, aws_access_key_id="setup", aws_secret_access_key="setup")
    iam = boto3.client("iam", **anonymous)
    iam.create_user(UserName="easel")
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
    iam.put_user_policy(UserName="easel", PolicyName="s3", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="easel")["AccessKey"]
    s3 = boto3.client("s3", **anonymous)
    for bucket in buckets:
        s3.create_bucket(Bucket=bucket)
    # From here on moto checks every request's signature against its IAM users.
    # (moto's own /moto-api/reset-auth does this over HTTP; this server runs in this process.)
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    ActionAuthenticatorMixin.request_count = 0
    print(json.dumps({"endpoint": endpoint, "accessKey": key["AccessKeyId"], "secretKey": key["SecretAccessKey"],
                      "region": REGION}), flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    done.wait()
    server.stop()


if __name__ == "__main__":
    main()
