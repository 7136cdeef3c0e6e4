#!/usr/bin/env python3
"""An OTLP/HTTP trace receiver on 127.0.0.1 for the tracing tests.

Decodes each `POST /v1/traces` (binary protobuf, or JSON; gzip or not) with OpenTelemetry's own
message definitions (PyPI `opentelemetry-proto`) and appends every span to SPANS_FILE, one JSON
object a line: trace_id, span_id, parent_span_id (hex), name, kind, start and end (ns since the
epoch), attributes, status, and the resource's service.name. Answers an
ExportTraceServiceResponse, as a collector does; anything it cannot decode is a 400.

Usage: otlp-receiver.py SPANS_FILE. Prints {"endpoint": "http://127.0.0.1:PORT/v1/traces"}
once listening; exits when its standard input closes (the test process ended).
"""
import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

SPANS_FILE = sys.argv[1]
WRITE_LOCK = threading.Lock()


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    value = getattr(any_value, kind)
    if kind == "array_value":
        return [value_of(v) for v in value.values]
    if kind == "kvlist_value":
        return {kv.key: value_of(kv.value) for kv in value.values}
    if kind == "bytes_value":
        return value.hex()
    return value


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        if self.path != "/v1/traces":
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding", "") == "gzip":
            body = gzip.decompress(body)
        request = ExportTraceServiceRequest()
        content_type = self.headers.get("Content-Type", "")
        try:
            if content_type.startswith("application/json"):
                json_format.Parse(body, request)
            else:
                request.ParseFromString(body)
        except Exception as error:  # a receiver refuses what it cannot decode
            self.send_error(400, str(error))
            return
        lines = []
        for resource_spans in request.resource_spans:
            resource = {kv.key: value_of(kv.value) for kv in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    lines.append(json.dumps({
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": span.kind,
                        "start": span.start_time_unix_nano,
                        "end": span.end_time_unix_nano,
                        "attributes": {kv.key: value_of(kv.value) for kv in span.attributes},
                        "status": span.status.code,
                        "service": resource.get("service.name"),
                    }))
        with WRITE_LOCK, open(SPANS_FILE, "a") as spans:
            for line in lines:
                spans.write(line + "\n")
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps({"endpoint": f"http://127.0.0.1:{server.server_port}/v1/traces"}), flush=True)
    sys.stdin.read()  # until the test process ends
    server.shutdown()


if __name__ == "__main__":
    main()
