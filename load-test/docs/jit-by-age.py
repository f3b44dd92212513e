#!/usr/bin/env python3
# Copyright 2026 the Heartbeat authors.
# Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
"""When the demo servers' JIT compiled, and what (a development aid for issue 29's goal 2).

Record one implementation at a time, as for jfr-summary.py:

  mkdir -p /tmp/jfr-h
  java -jar load-test/target/load-test.jar --compare heartbeat --out /tmp/rep-h \
    "--jvm-arg=-XX:StartFlightRecording:filename=/tmp/jfr-h/,settings=$PWD/load-test/docs/compilation.jfc"

then:

  jit-by-age.py DIR [FROM TO]

prints, per demo server (the mean of the recorded ones), the compilations (jdk.Compilation) started in each
10 s of the JVM's age, how many of them were Heartbeat's own (dev.heartbeat.core and dev.heartbeat.netty)
and their wall time, and the deoptimizations (jdk.Deoptimization); then, for those started FROM to TO s after
the JVM started (default 50 to 70, the first wave of pings with the load test's defaults), the code they
compiled by origin (Heartbeat, Netty, the demo server, the rest by package), Heartbeat's classes, the
deoptimizations by origin and reason, and over the whole recording the C2 recompilations (a method compiled at
level 4 more than once: after a deoptimization, or as a new root) by origin. Needs the JDK's jfr tool on the PATH.
"""
import collections
import datetime
import glob
import json
import subprocess
import sys


def stamp(text):
    return datetime.datetime.fromisoformat(text.replace('Z', '+00:00')).timestamp()


def seconds(duration):
    return float(duration[2:-1]) if duration.startswith('PT') and duration.endswith('S') else 0.0


def origin(cls):
    if cls.startswith('dev.heartbeat.netty') or cls.startswith('dev.heartbeat.core'):
        return 'Heartbeat'
    if cls.startswith('io.netty'):
        return 'Netty'
    if cls.startswith('dev.heartbeat.demo'):
        return 'demo server'
    return '.'.join(cls.split('.')[:3]).split('$')[0]


def main(args):
    directory = args[0]
    low, high = (float(args[1]), float(args[2])) if len(args) > 2 else (50.0, 70.0)
    count, own, wall = collections.Counter(), collections.Counter(), collections.Counter()
    origins, classes = collections.Counter(), collections.Counter()
    deopts, deopt_origins, recompiled = collections.Counter(), collections.Counter(), collections.Counter()
    servers = skipped = 0
    for path in sorted(glob.glob(directory + '/*.jfr')):
        out = subprocess.run(['jfr', 'print', '--json', '--events',
                              'jdk.Compilation,jdk.Deoptimization,jdk.JVMInformation', path],
                             capture_output=True, text=True).stdout
        events = json.loads(out)['recording']['events'] if out.strip() else []
        info = [e for e in events if e['type'] == 'jdk.JVMInformation']
        if not info:
            skipped += 1
            continue
        if 'demo' not in json.dumps(info[0]['values']):
            continue  # a client
        servers += 1
        start = stamp(info[0]['values']['jvmStartTime'])
        c2 = collections.Counter()
        for e in events:
            if e['type'] == 'jdk.Deoptimization':
                age = stamp(e['values']['startTime']) - start
                cls = e['values']['method']['type']['name'].replace('/', '.')
                deopts[int(age // 10 * 10)] += 1
                if low <= age < high:
                    deopt_origins['%s %s' % (origin(cls), e['values'].get('reason', '?'))] += 1
                continue
            if e['type'] != 'jdk.Compilation':
                continue
            age = stamp(e['values']['startTime']) - start
            cls = e['values']['method']['type']['name'].replace('/', '.')
            if e['values'].get('compileLevel') == 4 and not e['values'].get('isOsr'):
                c2[(cls, e['values']['method']['name'], e['values']['method'].get('descriptor'))] += 1
            bucket = int(age // 10 * 10)
            count[bucket] += 1
            wall[bucket] += seconds(e['values']['duration'])
            if origin(cls) == 'Heartbeat':
                own[bucket] += 1
            if low <= age < high:
                origins[origin(cls)] += 1
                if origin(cls) == 'Heartbeat':
                    classes[cls.split('.')[-1].split('$')[0]] += 1
        for (cls, _, _), n in c2.items():
            if n > 1:
                recompiled[origin(cls)] += n - 1
    if servers == 0:
        print('%s: no demo server recording (%d empty)' % (directory, skipped))
        return
    print('%s: %d servers (%d empty recordings skipped); per server' % (directory, servers, skipped))
    print('  JVM age (s)  compilations  of them Heartbeat\'s  wall (s)  deoptimizations')
    for bucket in sorted(count):
        print('  %11d  %12.1f  %18.1f  %8.2f  %15.1f' % (bucket, count[bucket] / servers, own[bucket] / servers,
                                                        wall[bucket] / servers, deopts[bucket] / servers))
    print('  started %g to %g s: %s' % (low, high, ', '.join(
        '%s %.1f' % (k, v / servers) for k, v in origins.most_common(12))))
    print('  Heartbeat\'s classes then: %s' % ', '.join(
        '%s %.1f' % (k, v / servers) for k, v in classes.most_common(14)))
    print('  deoptimized %g to %g s (origin, reason): %s' % (low, high, ', '.join(
        '%s %.1f' % (k, v / servers) for k, v in deopt_origins.most_common(12))))
    print('  C2 recompilations, whole recording (origin): %s' % ', '.join(
        '%s %.1f' % (k, v / servers) for k, v in recompiled.most_common(8)))


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
