#!/usr/bin/env python3
"""An SSE client nobody here wrote (httpx + httpx-sse): prints one line per event,
"ID EVENT STATE REASON RESET", and exits after COUNT events.
Usage: sse_client.py URL COUNT [LAST_EVENT_ID]"""
import json
import sys

import httpx
from httpx_sse import connect_sse

url, count = sys.argv[1], int(sys.argv[2])
headers = {"Last-Event-ID": sys.argv[3]} if len(sys.argv) > 3 else {}
with httpx.Client(timeout=httpx.Timeout(30.0)) as client:
    with connect_sse(client, "GET", url, headers=headers) as source:
        print("open", source.response.headers.get("content-type"), flush=True)
        for seen, event in enumerate(source.iter_sse(), start=1):
            document = json.loads(event.data)
            print(event.id, event.event, document["state"], document["reason"], document["reset"], flush=True)
            if seen >= count:
                break
