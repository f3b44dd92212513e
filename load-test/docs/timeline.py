#!/usr/bin/env python3
# Copyright 2026 the Heartbeat authors.
# Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
"""One timeline per implementation, a line per second of its run window: the echo latency of the lines
intended in that second (from report.json's echo_per_second), and what the demo servers' JVMs did in it
(from JFR recordings): GC pauses (jdk.GarbageCollection), JIT compilations (jdk.Compilation) and, where
the build has them, Heartbeat's own events dev.heartbeat.HostedCycle and dev.heartbeat.BatchRun (a
development aid; profiling.md says how to record).

  timeline.py REPORT JFR_DIR [IMPL...] [--match TEXT]

REPORT is a run's --out folder (or its report.json); JFR_DIR holds the recordings of that run (JDK 17's
JFR names each process's file in a directory). IMPL: heartbeat, netty, none (default: every one in the
report). --match: which JVMs count as servers, by a substring of their java arguments (default
demo-server, the tcp servers; --match '' takes every JVM, as the one JVM of --transport local).

Columns, per second of the window (seconds from the first second with an echo):
  echoes, p50/p99/max ms   the echoes of lines intended in that second, all clients together
  gc n, pause ms (max)     GC cycles that started in that second in any server, their pauses summed
                           (sumOfPauses) and the longest (longestPause)
  jit n, ms                compilations that started in that second, their durations summed (wall time:
                           a compile waiting for a core counts)
  cycles n, ms (max us)    dev.heartbeat.HostedCycle events, their durations summed, the longest
  batches n, ms (max us)   dev.heartbeat.BatchRun events, the same
The two last columns are "-" when no recording holds such an event. Empty recordings (a JVM ended
before JFR wrote it) are skipped and counted. Needs the JDK's jfr tool on the PATH.
"""
import collections
import datetime
import glob
import json
import os
import re
import subprocess
import sys

KINDS = ['jdk.GarbageCollection', 'jdk.Compilation', 'dev.heartbeat.HostedCycle', 'dev.heartbeat.BatchRun']
CUSTOM = ['dev.heartbeat.HostedCycle', 'dev.heartbeat.BatchRun']


def seconds(iso_duration):
    """An ISO-8601 duration as JFR prints it (PT0.0123S, PT1M2.5S) in seconds; 0 for none."""
    m = re.match(r'PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?$', iso_duration or '')
    if not m:
        return 0.0
    return int(m.group(1) or 0) * 3600 + int(m.group(2) or 0) * 60 + float(m.group(3) or 0)


def instant(iso):
    """An instant as JFR prints it (with its offset, or Z for UTC) in seconds since the epoch."""
    s = re.sub(r'(\.\d{6})\d*', r'\1', iso)
    if s.endswith('Z'):
        s = s[:-1] + '+00:00'
    t = datetime.datetime.fromisoformat(s)
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    return t.timestamp()


def recording(path):
    """The JVM's java arguments and the timeline's events of one recording."""
    out = subprocess.run(['jfr', 'print', '--json', '--events', ','.join(KINDS + ['jdk.JVMInformation']), path],
                         capture_output=True, text=True, check=True)
    evs = json.loads(out.stdout)['recording']['events']
    info = [e['values'] for e in evs if e['type'] == 'jdk.JVMInformation']
    return (info[0].get('javaArguments') or '') if info else '', [e for e in evs if e['type'] in KINDS]


def load_report(path):
    if os.path.isdir(path):
        path = os.path.join(path, 'report.json')
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def main(argv):
    match = 'demo-server'
    if '--match' in argv:
        i = argv.index('--match')
        match = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 2:
        sys.exit(__doc__)
    report, jfr_dir, impls = load_report(argv[0]), argv[1], argv[2:]
    by_second = collections.defaultdict(lambda: collections.defaultdict(list))  # epoch second -> kind -> events
    servers = skipped = 0
    seen = set()
    for path in sorted(glob.glob(os.path.join(jfr_dir, '*.jfr'))):
        if os.path.getsize(path) == 0:
            skipped += 1
            continue
        args, evs = recording(path)
        if match not in args:
            continue
        servers += 1
        for e in evs:
            v = e['values']
            at = instant(v['startTime'])
            seen.add(e['type'])
            by_second[int(at)][e['type']].append((at, v))
    print('%s: %d server recordings (%d empty skipped); Heartbeat events %s' % (
        jfr_dir, servers, skipped, ', '.join(k for k in CUSTOM if k in seen) or 'absent'))
    for impl, transports in report['results'].items():
        if impls and impl not in impls:
            continue
        for transport, run in transports.items():
            timeline(impl, transport, run.get('echo_per_second') or [], by_second, seen)


def span(events):
    """Count, summed duration in ms and the longest in us of events with a duration."""
    d = [seconds(v.get('duration')) for _, v in events]
    return len(d), sum(d) * 1e3, (max(d) * 1e6 if d else 0)


def timeline(impl, transport, series, by_second, seen):
    if not series:
        print('\n%s/%s: no echo_per_second in the report (a report from before it, or no active connection)'
              % (impl, transport))
        return
    t0 = series[0]['epoch_seconds']
    print('\n%s/%s: %d s from %s (UTC)' % (impl, transport, len(series),
                                           datetime.datetime.fromtimestamp(t0, datetime.timezone.utc)
                                           .strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]))
    print('%4s %7s %7s %7s %8s | %3s %8s %7s | %4s %7s | %12s | %12s' % (
        's', 'echoes', 'p50 ms', 'p99 ms', 'max ms', 'gc', 'pause ms', 'max', 'jit', 'jit ms',
        'cycles ms max', 'batches ms max'))
    for s in series:
        start = s['epoch_seconds']
        events = collections.defaultdict(list)
        for sec in (int(start), int(start) + 1):  # the window's seconds straddle two epoch seconds
            for kind, evs in by_second.get(sec, {}).items():
                events[kind] += [(at, v) for at, v in evs if start <= at < start + 1]
        gcs = events['jdk.GarbageCollection']
        pauses = [seconds(v.get('sumOfPauses')) for _, v in gcs]
        longest = [seconds(v.get('longestPause')) for _, v in gcs]
        jit_n, jit_ms, _ = span(events['jdk.Compilation'])
        custom = []
        for kind in CUSTOM:
            if kind not in seen:
                custom.append('-')
                continue
            n, ms, mx = span(events[kind])
            custom.append('%d %.1f %.0f' % (n, ms, mx))
        print('%4.0f %7d %7.2f %7.2f %8.2f | %3d %8.2f %7.2f | %4d %7.0f | %12s | %12s' % (
            start - t0, s['count'], s['p50_us'] / 1e3, s['p99_us'] / 1e3, s['max_us'] / 1e3,
            len(gcs), sum(pauses) * 1e3, max(longest, default=0) * 1e3, jit_n, jit_ms, custom[0], custom[1]))


if __name__ == '__main__':
    main(sys.argv[1:])
