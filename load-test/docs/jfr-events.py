#!/usr/bin/env python3
# Copyright 2026 the Heartbeat authors.
# Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
"""Wall-time durations of Heartbeat's JFR events (dev.heartbeat.HostedCycle, dev.heartbeat.BatchRun) in recordings.

usage: jfr-events.py DIR_OR_FILE...   prints, per event type: count, p50, p90, p99, p99.9, max (us), and how many
                                  ran longer than 200 us, over all recordings given (empty ones skipped).
"""
import glob, json, os, re, subprocess, sys

def seconds(d):
    m = re.match(r'PT(?:(\d+)H)?(?:(\d+)M)?([\d.]+)S', d)
    return int(m.group(1) or 0) * 3600 + int(m.group(2) or 0) * 60 + float(m.group(3)) if m else 0.0

files = []
for a in sys.argv[1:]:
    files += sorted(glob.glob(os.path.join(a, '*.jfr'))) if os.path.isdir(a) else [a]
durs = {}
fields = {}
for f in files:
    if os.path.getsize(f) == 0:
        print(f'{f}: empty, skipped'); continue
    out = subprocess.run(['jfr', 'print', '--json', '--events', 'dev.heartbeat.HostedCycle,dev.heartbeat.BatchRun', f],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print(f'{f}: {out.stderr.strip()[:200]}'); continue
    for e in json.loads(out.stdout)['recording']['events']:
        t = e['type'].split('.')[-1]
        durs.setdefault(t, []).append(seconds(e['values']['duration']) * 1e6)
        if e['values'].get('continued'):
            fields[t] = fields.get(t, 0) + 1
for t, v in sorted(durs.items()):
    v.sort(); n = len(v)
    q = lambda p: v[min(n - 1, int(p * n))]
    print(f'{t}: {n} events; p50 {q(.5):.1f} us, p90 {q(.9):.1f}, p99 {q(.99):.1f}, p99.9 {q(.999):.1f}, '
          f'max {v[-1]:.1f}; over 200 us: {sum(1 for x in v if x > 200)}; continued: {fields.get(t, 0)}')
if not durs:
    print('no Heartbeat events in', files)
