#!/usr/bin/env python3
"""Prints how many objects the shared tier holds under a prefix (moto's S3 on loopback, signed
with the credentials in the JSON file scripts/s3-test-server.py printed)."""
import json
import sys

import boto3

settings = json.load(open(sys.argv[1]))
bucket, prefix = sys.argv[2], sys.argv[3]
s3 = boto3.client("s3", endpoint_url=settings["endpoint"], region_name=settings["region"],
                  aws_access_key_id=settings["accessKey"], aws_secret_access_key=settings["secretKey"])
count = 0
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
    count += page.get("KeyCount", 0)
print(count)
