#!/usr/bin/env python3
# Copyright 2026 the Heartbeat authors.
# Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
"""Wall-time durations of Heartbeat's JFR events (dev.heartbeat.HostedCycle, dev.heartbeat.BatchRun) in recordings.

usage: jfr-events.py DIR_OR_FILE...   prints, per event type: count, p50, p90, p99, p99.9, max (us), and how many
                                  ran longer than 200 us, over all recordings given (empty ones skipped); then the
                                  same of the CPU time the thread spent in each run (the events' cpuTime, recorded
                                  since it was added; -1 where the JVM does not measure it), and how many of the
                                  runs over 200 us of wall time spent less than 200 us of CPU (off the core).
"""
import glob, json, os, re, subprocess, sys

def seconds(d):
    m = re.match(r'PT(?:(\d+)H)?(?:(\d+)M)?([\d.]+)S', d)
    return int(m.group(1) or 0) * 3600 + int(m.group(2) or 0) * 60 + float(m.group(3)) if m else 0.0

files = []
for a in sys.argv[1:]:
    files += sorted(glob.glob(os.path.join(a, '*.jfr'))) if os.path.isdir(a) else [a]
durs = {}
cpus = {}
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
        wall = seconds(e['values']['duration']) * 1e6
        durs.setdefault(t, []).append(wall)
        cpu = e['values'].get('cpuTime')
        if cpu is not None and not str(cpu).startswith('-'):
            cpus.setdefault(t, []).append((seconds(cpu) * 1e6, wall))
        if e['values'].get('continued'):
            fields[t] = fields.get(t, 0) + 1
for t, v in sorted(durs.items()):
    v.sort(); n = len(v)
    q = lambda p: v[min(n - 1, int(p * n))]
    print(f'{t}: {n} events; p50 {q(.5):.1f} us, p90 {q(.9):.1f}, p99 {q(.99):.1f}, p99.9 {q(.999):.1f}, '
          f'max {v[-1]:.1f}; over 200 us: {sum(1 for x in v if x > 200)}; continued: {fields.get(t, 0)}')
    c = sorted(x for x, _ in cpus.get(t, []))
    if c:
        m = len(c)
        qc = lambda p: c[min(m - 1, int(p * m))]
        off = sum(1 for x, w in cpus[t] if w > 200 and x < 200)
        print(f'  CPU time ({m} events): p50 {qc(.5):.1f} us, p90 {qc(.9):.1f}, p99 {qc(.99):.1f}, '
              f'p99.9 {qc(.999):.1f}, max {c[-1]:.1f}; over 200 us: {sum(1 for x in c if x > 200)}; '
              f'over 200 us of wall time but not of CPU: {off}')
if not durs:
    print('no Heartbeat events in', files)
