#!/usr/bin/env python3
# Copyright 2026 the Heartbeat authors.
# Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
"""Whether the demo servers' worker cycles run at the same moments (a development aid for issue 29's goal 1).

usage: cycle-phases.py DIR [MIN_WORK]

DIR holds one run's recordings with dev.heartbeat.HostedCycle events (timeline.jfc, see profiling.md). Prints,
per recording, its cycles that did at least MIN_WORK (default 3) requests or expiries, and the share of them (%)
that started in each sixteenth of the default 16.8 ms coalescing window (2^24 ns), by the wall clock, which every
process reads alike: servers whose shares sit in the same columns worked at the same instants. Empty recordings (a
JVM ended before JFR wrote it) are skipped. Needs the JDK's jfr tool on the PATH.
"""
import collections
import datetime
import glob
import json
import subprocess
import sys

WINDOW = 2 ** 24 / 1e9


def main(args):
    directory = args[0]
    min_work = int(args[1]) if len(args) > 1 else 3
    print('%-48s %7s  %s' % ('recording', 'cycles', ' '.join('%3d' % i for i in range(16))))
    for path in sorted(glob.glob(directory + '/*.jfr')):
        out = subprocess.run(['jfr', 'print', '--json', '--events', 'dev.heartbeat.HostedCycle', path],
                             capture_output=True, text=True).stdout
        try:
            events = json.loads(out)['recording']['events']
        except ValueError:
            print('%-48s empty, skipped' % path.split('/')[-1])
            continue
        bins = collections.Counter()
        for e in events:
            if e['values']['work'] < min_work:
                continue
            t = datetime.datetime.fromisoformat(e['values']['startTime'].replace('Z', '+00:00')).timestamp()
            bins[int((t % WINDOW) / WINDOW * 16)] += 1
        n = sum(bins.values())
        if n:
            print('%-48s %7d  %s' % (path.split('/')[-1], n, ' '.join('%3d' % (100 * bins[i] // n) for i in range(16))))


if __name__ == '__main__':
    main(sys.argv[1:])
