#!/usr/bin/env python3
"""The S3 endpoint's own floor for peers/shared-tier.sh: the same lookups as SharedTierLookup
(a miss, then a 20 KB hit, COUNT times, one at a time) from botocore's client, the reference
SigV4 implementation. SETTINGS_JSON is what scripts/s3-test-server.py printed (endpoint,
region, keys). Prints one JSON line of per-call seconds.

    s3_floor.py SETTINGS_JSON BUCKET COUNT"""
import json
import sys
import time
import uuid

import boto3
from botocore.exceptions import ClientError

settings = json.load(open(sys.argv[1]))
bucket, count = sys.argv[2], int(sys.argv[3])
s3 = boto3.client("s3", endpoint_url=settings["endpoint"], region_name=settings["region"],
                  aws_access_key_id=settings["accessKey"], aws_secret_access_key=settings["secretKey"])
prefix = f"floor-{uuid.uuid4()}/"
s3.put_object(Bucket=bucket, Key=prefix + "hit", Body=bytes(20000))
misses, hits = [], []
for index in range(count):
    start = time.perf_counter()
    try:
        s3.get_object(Bucket=bucket, Key=f"{prefix}miss-{index}")["Body"].read()
        raise SystemExit("a hit")
    except ClientError as error:  # NoSuchKey from S3; a bare 404 from a plain store
        if error.response["ResponseMetadata"]["HTTPStatusCode"] != 404:
            raise
    misses.append(time.perf_counter() - start)
    start = time.perf_counter()
    s3.get_object(Bucket=bucket, Key=prefix + "hit")["Body"].read()
    hits.append(time.perf_counter() - start)
print(json.dumps({"miss": misses, "hit": hits}))
