#!/usr/bin/env python3
# Copyright 2026 the Heartbeat authors.
# Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
"""What the JIT compiled, or what the server threads allocated, from JFR recordings (a development aid).

Record with the load test, one implementation at a time, into a directory that exists (JDK 17's JFR
names each process's file in a directory; it has no %p):

  mkdir -p /tmp/jfr-heartbeat
  java -jar load-test/target/load-test.jar --compare heartbeat --out reports/jfr-heartbeat \
    '--jvm-arg=-XX:StartFlightRecording:filename=/tmp/jfr-heartbeat/,settings=load-test/docs/compilation.jfc'

then:

  jfr-summary.py compilation DIR [FROM TO]   the demo servers' JIT compilations (jdk.Compilation), all of
                                             them or those that started FROM to TO seconds after their
                                             JVM started; per server: count, inlined bytes, wall time
                                             (a compile's duration is wall time, so it includes waiting
                                             for a core), the wall time by the compiled method's
                                             package (Heartbeat's, the demo's, Netty's channel package,
                                             Netty's others, JCTools', JFR's, the JDK's), and the methods
                                             C2 spent longest on
  jfr-summary.py allocation FILE [SKIP]      one JVM's allocation samples (jdk.ObjectAllocationSample,
                                             recorded with allocation.jfc; for --transport local, whose
                                             one JVM holds servers and clients), skipping the first SKIP
                                             seconds: MB/s by thread, and the server threads' classes
                                             and allocation sites; then the idle handling's own sites
                                             (a sample with a frame of Heartbeat, IdleStateHandler or
                                             the demo's PingOnIdle among its first 8), with the ping
                                             message and Netty's close apart (both do that work)

Processes whose recording is empty (a JVM ended before JFR wrote it) are skipped and counted.
Needs the JDK's jfr tool on the PATH.
"""
import collections
import datetime
import glob
import json
import os
import re
import subprocess
import sys


def events(path, kinds, depth=None):
    """The events of the given kinds in one recording, as JSON values."""
    cmd = ['jfr', 'print', '--json']
    if depth:
        cmd += ['--stack-depth', str(depth)]
    out = subprocess.run(cmd + ['--events', ','.join(kinds), path], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)['recording']['events']


def seconds(iso_duration):
    """An ISO-8601 duration as JFR prints it (PT0.0123S, PT1M2.5S) in seconds."""
    m = re.match(r'PT(?:(\d+)H)?(?:(\d+)M)?([\d.]+)S', iso_duration)
    return int(m.group(1) or 0) * 3600 + int(m.group(2) or 0) * 60 + float(m.group(3)) if m else 0.0


def instant(iso):
    """An instant as JFR prints it, in seconds since the epoch (microseconds kept)."""
    return datetime.datetime.fromisoformat(re.sub(r'(\.\d{6})\d*', r'\1', iso.rstrip('Z'))).timestamp()


def method(m):
    return m['type']['name'].replace('/', '.') + '.' + m['name']


PACKAGES = [('dev/heartbeat/demo/', 'demo'), ('dev/heartbeat/', 'heartbeat'), ('io/netty/channel/', 'netty.channel'),
            ('io/netty/', 'netty (others)'), ('org/jctools/', 'jctools'), ('jdk/jfr/', 'jfr')]


def package(m):
    name = m['type']['name']
    return next((label for prefix, label in PACKAGES if name.startswith(prefix)), 'jdk and others')


def compilation(directory, lo=None, hi=None):
    servers = skipped = 0
    count = inlined = 0
    wall = collections.Counter()
    by_package = collections.Counter()
    per_method = collections.Counter()
    compiles = collections.Counter()
    code = collections.Counter()
    for path in sorted(glob.glob(os.path.join(directory, '*.jfr'))):
        if os.path.getsize(path) == 0:
            skipped += 1
            continue
        evs = events(path, ['jdk.Compilation', 'jdk.JVMInformation'])
        info = [e['values'] for e in evs if e['type'] == 'jdk.JVMInformation']
        if not info or 'demo-server' not in info[0]['javaArguments']:
            continue  # a client process
        servers += 1
        start = instant(info[0]['jvmStartTime'])
        for e in evs:
            v = e['values']
            if e['type'] != 'jdk.Compilation':
                continue
            at = instant(v['startTime']) - start
            if lo is not None and not lo <= at < hi:
                continue
            t = seconds(v['duration'])
            count += 1
            inlined += v.get('inlinedBytes') or 0
            wall[v['compiler']] += t
            by_package[(package(v['method']), v['compiler'])] += t
            if v['compiler'] == 'c2':
                name = method(v['method'])
                per_method[name] += t
                compiles[name] += 1
                code[name] += v.get('codeSize') or 0
    if servers == 0:
        sys.exit('no demo server recording in ' + directory)
    window = 'all' if lo is None else '%g to %g s after JVM start' % (lo, hi)
    print('%s: %d servers (%d empty recordings skipped), compilations %s' % (directory, servers, skipped, window))
    print('  per server: %.0f compilations, %.0f KiB inlined, wall time %s' % (
        count / servers, inlined / servers / 1024,
        ', '.join('%s %.1f s' % (c, t / servers) for c, t in sorted(wall.items()))))
    print('  per server, wall time by package (s):')
    for pkg in sorted({k for k, _ in by_package}, key=lambda k: -by_package[(k, 'c2')]):
        print('    %-18s c2 %.3f  c1 %.3f' % (pkg, by_package[(pkg, 'c2')] / servers, by_package[(pkg, 'c1')] / servers))
    print('  C2, longest in all servers (wall s, compilations, mean code size in bytes):')
    for name, t in per_method.most_common(20):
        print('    %7.2f  %3d  %7d  %s' % (t, compiles[name], code[name] // compiles[name], name))


# Frames of the idle handling itself: Heartbeat's classes, IdleStateHandler's, the demo's ping logic beside it.
OWN_PREFIXES = ('dev/heartbeat/netty/', 'dev/heartbeat/core/', 'io/netty/handler/timeout/IdleStateHandler')
OWN_CLASSES = ('NettyIdlePolicies$PingOnIdle',)
SHARED = 'apart, the same work in both: '


def allocation(path, skip=0.0):
    evs = events(path, ['jdk.ObjectAllocationSample'], depth=8)
    if not evs:
        sys.exit('no allocation samples in ' + path)
    times = [instant(e['values']['startTime']) for e in evs]
    t0, t1 = min(times), max(times)
    span = t1 - t0 - skip
    by_thread = collections.Counter()
    by_class = collections.Counter()
    by_site = collections.Counter()
    own = collections.Counter()
    for e, t in zip(evs, times):
        if t - t0 < skip:
            continue
        v = e['values']
        thread = v['eventThread']['javaName'] if v.get('eventThread') else '?'
        group = re.sub(r'[-#]?\d+$', '', thread)
        weight = v['weight']
        by_thread[group] += weight
        if not group.startswith('server') and 'heartbeat' not in group:
            continue
        cls = v['objectClass']['name'].replace('/', '.') if v.get('objectClass') else '?'
        frames = v['stackTrace']['frames'] if v.get('stackTrace') else []
        site = ' < '.join(f['method']['type']['name'].split('/')[-1] + '.' + f['method']['name'] for f in frames[:6])
        by_class[cls] += weight
        by_site[cls + ' <- ' + site] += weight
        names = [f['method']['type']['name'] for f in frames]
        methods = [f['method']['name'] for f in frames]
        mine = next((n.split('/')[-1] for n in names if n.startswith(OWN_PREFIXES) or n.endswith(OWN_CLASSES)), None)
        if 'newPing' in methods:
            own[SHARED + 'the ping message (the demo\'s probe)'] += weight
        elif mine and 'close' in methods and any(n.endswith('AbstractChannel$AbstractUnsafe') for n in names):
            own[SHARED + 'the channel\'s close in Netty (its exceptions and tasks)'] += weight
        elif mine:
            own[cls.split('.')[-1] + ' (' + mine + ')'] += weight
        elif 'fetchFromScheduledTaskQueue' in methods:
            own['the task queue\'s nodes of scheduled tasks when due (whoever scheduled them)'] += weight
    print('%s: %.0f s of samples after the first %g s' % (path, span, skip))
    print('  MB/s by thread (numbers dropped):')
    for group, w in by_thread.most_common(8):
        print('    %7.2f  %s' % (w / span / 1e6, group))
    print('  the server threads, MB/s by class:')
    for cls, w in by_class.most_common(12):
        print('    %7.2f  %s' % (w / span / 1e6, cls))
    print('  the server threads, MB/s by site:')
    for site, w in by_site.most_common(15):
        print('    %7.2f  %s' % (w / span / 1e6, site[:240]))
    print('  the idle handling\'s own sites (a frame of Heartbeat, IdleStateHandler or the demo\'s PingOnIdle among the'
          ' first 8; the work both do apart), MB/s: %.2f in all' % (sum(w for k, w in own.items()
                                                                     if not k.startswith(SHARED)) / span / 1e6))
    for site, w in own.most_common(10):
        print('    %7.2f  %s' % (w / span / 1e6, site))


def main(argv):
    if len(argv) >= 2 and argv[0] == 'compilation' and len(argv) in (2, 4):
        compilation(argv[1], *(float(a) for a in argv[2:]))
    elif len(argv) in (2, 3) and argv[0] == 'allocation':
        allocation(argv[1], float(argv[2]) if len(argv) == 3 else 0.0)
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv[1:])
