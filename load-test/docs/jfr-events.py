#!/usr/bin/env python3
# Copyright 2026 the Heartbeat authors.
# Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
"""Wall-time durations of Heartbeat's JFR events (dev.heartbeat.HostedCycle, dev.heartbeat.BatchRun) in recordings.

usage: jfr-events.py DIR_OR_FILE...   prints, per event type: count, p50, p90, p99, p99.9, max (us), and how many
                                  ran longer than 200 us, over all recordings given (empty ones skipped); then the
                                  same of the CPU time the thread spent in each run (the events' cpuTime, recorded
                                  since it was added; -1 where the JVM does not measure it), and how many of the
                                  runs over 200 us of wall time spent less than 200 us of CPU (off the core);
                                  where the recordings hold jdk.GarbageCollection (timeline.jfc), also how many
                                  of all runs and of those over 200 us of CPU started while a GC cycle ran.
       jfr-events.py --ages 0,48,85,115 DIR_OR_FILE...   the same p50, p99 and counts over 200 us (wall time and
                                  CPU time) for each range of the JVM's age at the event's start, in seconds (the
                                  last range open-ended), e.g. the connect phase and the two waves of pings of the
                                  100k tcp run; needs jdk.JVMInformation in the recordings, as timeline.jfc has it.
"""
import glob, json, os, re, subprocess, sys
from datetime import datetime

def seconds(d):
    m = re.match(r'PT(?:(\d+)H)?(?:(\d+)M)?([\d.]+)S', d)
    return int(m.group(1) or 0) * 3600 + int(m.group(2) or 0) * 60 + float(m.group(3)) if m else 0.0

def pct(v, p):
    """The p-quantile of the sorted list v."""
    return v[min(len(v) - 1, int(p * len(v)))]

def instant(s):
    s = s.replace('Z', '')
    if '.' in s:
        a, b = s.split('.'); s = a + '.' + b[:6]
    return datetime.fromisoformat(s)

args = sys.argv[1:]
ages = None
if args[:1] == ['--ages']:
    ages = [float(x) for x in args[1].split(',')]
    args = args[2:]
files = []
for a in args:
    files += sorted(glob.glob(os.path.join(a, '*.jfr'))) if os.path.isdir(a) else [a]
durs = {}
cpus = {}
fields = {}
by_age = {}
in_gcs = {}
for f in files:
    if os.path.getsize(f) == 0:
        print(f'{f}: empty, skipped'); continue
    out = subprocess.run(['jfr', 'print', '--json', '--events',
                          'dev.heartbeat.HostedCycle,dev.heartbeat.BatchRun,jdk.JVMInformation,jdk.GarbageCollection', f],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print(f'{f}: {out.stderr.strip()[:200]}'); continue
    events = json.loads(out.stdout)['recording']['events']
    start = [instant(e['values']['jvmStartTime']) for e in events if e['type'] == 'jdk.JVMInformation']
    if ages and not start:
        print(f'{f}: no jdk.JVMInformation, skipped'); continue
    gcs = [(instant(e['values']['startTime']), seconds(e['values']['duration']))
           for e in events if e['type'] == 'jdk.GarbageCollection']
    for e in events:
        if e['type'] in ('jdk.JVMInformation', 'jdk.GarbageCollection'):
            continue
        t = e['type'].split('.')[-1]
        wall = seconds(e['values']['duration']) * 1e6
        durs.setdefault(t, []).append(wall)
        cpu = e['values'].get('cpuTime')  # absent in older recordings; negative where not measured
        cpu = seconds(cpu) * 1e6 if cpu is not None and not str(cpu).startswith('-') else None
        if cpu is not None:
            cpus.setdefault(t, []).append((cpu, wall))
        if gcs:
            at = instant(e['values']['startTime'])
            in_gc = any(0 <= (at - g).total_seconds() <= d for g, d in gcs)
            k = in_gcs.setdefault(t, [0, 0, 0, 0])  # all, all in a GC cycle, over 200 us of CPU, those in one
            k[0] += 1; k[1] += in_gc
            if cpu is not None and cpu > 200:
                k[2] += 1; k[3] += in_gc
        if e['values'].get('continued'):
            fields[t] = fields.get(t, 0) + 1
        if ages:
            age = (instant(e['values']['startTime']) - start[0]).total_seconds()
            i = max([k for k, lo in enumerate(ages) if age >= lo], default=None)
            if i is not None:
                by_age.setdefault((t, i), []).append((wall, cpu))
for t, v in sorted(durs.items()):
    v.sort(); n = len(v)
    q = lambda p: pct(v, p)
    print(f'{t}: {n} events; p50 {q(.5):.1f} us, p90 {q(.9):.1f}, p99 {q(.99):.1f}, p99.9 {q(.999):.1f}, '
          f'max {v[-1]:.1f}; over 200 us: {sum(1 for x in v if x > 200)}; continued: {fields.get(t, 0)}')
    c = sorted(x for x, _ in cpus.get(t, []))
    if c:
        m = len(c)
        qc = lambda p: pct(c, p)
        off = sum(1 for x, w in cpus[t] if w > 200 and x < 200)
        print(f'  CPU time ({m} events): p50 {qc(.5):.1f} us, p90 {qc(.9):.1f}, p99 {qc(.99):.1f}, '
              f'p99.9 {qc(.999):.1f}, max {c[-1]:.1f}; over 200 us: {sum(1 for x in c if x > 200)}; '
              f'over 200 us of wall time but not of CPU: {off}')
    g = in_gcs.get(t)
    if g:
        print(f'  started while a GC cycle ran: {g[1]} of {g[0]} ({100 * g[1] / g[0]:.0f}%); of those over 200 us of '
              f'CPU: {g[3]} of {g[2]} ({100 * g[3] / max(1, g[2]):.0f}%)')
if ages:
    for (t, i), v in sorted(by_age.items()):
        hi = f'{ages[i + 1]:g}' if i + 1 < len(ages) else ''
        w = sorted(x for x, _ in v); c = sorted(x for _, x in v if x is not None)
        line = (f'{t}, JVM age {ages[i]:g}-{hi} s: {len(v)} events; wall p50 {pct(w, .5):.1f} us, '
                f'p99 {pct(w, .99):.1f}, over 200 us: {sum(1 for x in w if x > 200)}')
        if c:
            line += (f'; CPU p50 {pct(c, .5):.1f}, p99 {pct(c, .99):.1f}, '
                     f'over 200 us: {sum(1 for x in c if x > 200)}')
        print(line)
if not durs:
    print('no Heartbeat events in', files)
